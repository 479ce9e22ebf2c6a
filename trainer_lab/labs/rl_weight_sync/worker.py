"""rl-weight-sync worker (imports torch): learners, generators, and the weight sync between them.

Ranks 0..L-1 learn, ranks L..W-1 generate. Generator g ships its batches to learner
(g - L) % L with send/recv on the world group. Learner 0 pushes new weights to every generator
with bucketed broadcasts over one group (learner 0 + generators) created once, before the runs.
After applying a sync a generator sends its weights back to learner 0 (the audit; not counted as
sync traffic), which compares them bitwise with the version it broadcast.

A rollout batch travels as one float64 tensor [n, 4 + max_len] (prompt id, length, recorded
log-prob, version, tokens padded with -1): float64 carries the fp32 log-prob and the small ints
exactly.

Decoding is static batching: every decode step runs the policy on all n slots until the last
rollout has finished, so the batch waits for its longest rollout (counted, not timed).
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F

from trainer_lab.labs.rl_weight_sync import RUNS
from trainer_lab.train.worker import WorkerContext

VOCAB, EOS, DIM, HIDDEN = 8, 0, 16, 32
BOS = VOCAB  # the previous-token embedding has one more row: the start of a rollout
HEADER = 4  # prompt id, length, recorded log-prob, version
EARLY_STOP_SHARE = 0.75


class Policy(torch.nn.Module):
    """logits(prompt, position, previous token): a one-hidden-layer MLP over summed embeddings."""

    def __init__(self, prompts: int, max_len: int) -> None:
        super().__init__()
        self.prompt = torch.nn.Embedding(prompts, DIM)
        self.pos = torch.nn.Embedding(max_len, DIM)
        self.prev = torch.nn.Embedding(VOCAB + 1, DIM)
        self.hidden = torch.nn.Linear(DIM, HIDDEN)
        self.out = torch.nn.Linear(HIDDEN, VOCAB)

    def forward(self, prompt: torch.Tensor, pos: torch.Tensor, prev: torch.Tensor) -> torch.Tensor:
        x = self.prompt(prompt) + self.pos(pos) + self.prev(prev)
        return self.out(torch.tanh(self.hidden(x)))


def build_policy(spec: dict[str, Any], device: torch.device) -> Policy:
    torch.manual_seed(spec["seed"])
    policy = Policy(spec["prompts"], spec["max_len"])
    with torch.no_grad():
        policy.out.bias[EOS] = 0.5  # EOS a little likelier than the rest: a long tail of lengths
    return policy.to(device)


def flat(model: torch.nn.Module) -> torch.Tensor:
    """All parameters as one fp32 vector (a copy)."""
    return torch.cat([p.detach().float().reshape(-1) for p in model.parameters()])


def load_flat(model: torch.nn.Module, vector: torch.Tensor) -> None:
    offset = 0
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(vector[offset : offset + p.numel()].view_as(p))
            offset += p.numel()


def digest(vector: torch.Tensor) -> str:
    return hashlib.sha256(vector.detach().cpu().contiguous().numpy().tobytes()).hexdigest()[:16]


def buckets(model: torch.nn.Module, bucket_bytes: int) -> list[list[torch.nn.Parameter]]:
    """Parameters in registration order, packed into buckets of at most bucket_bytes (a tensor
    larger than a bucket gets one of its own)."""
    out: list[list[torch.nn.Parameter]] = [[]]
    size = 0
    for p in model.parameters():
        nbytes = p.numel() * 4
        if out[-1] and size + nbytes > bucket_bytes:
            out.append([])
            size = 0
        out[-1].append(p)
        size += nbytes
    return out


def decode(
    policy: Policy, spec: dict[str, Any], gen: torch.Generator, version: int
) -> tuple[torch.Tensor, dict[str, int]]:
    """One static batch: every prompt `samples` times, until EOS or max_len (or early stop)."""
    device = next(policy.parameters()).device
    n, max_len = spec["prompts"] * spec["samples"], spec["max_len"]
    prompt = torch.arange(spec["prompts"], device=device).repeat_interleave(spec["samples"])
    tokens = torch.full((n, max_len), -1, dtype=torch.long, device=device)
    token_logp = torch.zeros(n, max_len, device=device)
    lengths = torch.zeros(n, dtype=torch.long, device=device)
    done = torch.zeros(n, dtype=torch.bool, device=device)
    ended = torch.zeros(n, dtype=torch.bool, device=device)  # by EOS or the cap
    prev = torch.full((n,), BOS, dtype=torch.long, device=device)
    steps = 0
    with torch.no_grad():
        for t in range(max_len):
            if spec["sabotage"] == "early_stop" and done.float().mean() >= EARLY_STOP_SHARE:
                break
            pos = torch.full((n,), t, dtype=torch.long, device=device)
            logp = F.log_softmax(policy(prompt, pos, prev).float(), -1)
            tok = torch.multinomial(logp.exp(), 1, generator=gen).squeeze(1)
            live = ~done
            token_logp[live, t] = logp.gather(1, tok[:, None]).squeeze(1)[live]
            tokens[live, t] = tok[live]
            lengths += live.long()
            done |= tok == EOS
            ended |= live & (tok == EOS)
            prev = tok
            steps += 1
            if bool(done.all()):
                break
    ended |= lengths == max_len
    recorded = token_logp.sum(1)
    batch = torch.cat(
        [
            prompt[:, None].double(),
            lengths[:, None].double(),
            recorded[:, None].double(),
            torch.full((n, 1), float(version), dtype=torch.float64, device=device),
            tokens.double(),
        ],
        1,
    )
    stats = {
        "steps": steps,
        "tokens": int(lengths.sum()),
        "longest": int(lengths.max()),
        "truncated": int((~ended).sum()),
    }
    return batch, stats


def stepwise_logp(policy: Policy, batch: torch.Tensor) -> torch.Tensor:
    """Log-probs of the batch's rollouts recomputed in the generator's decode shapes: one forward
    over all n slots per position, up to the longest rollout."""
    prompt, lengths, tokens = batch[:, 0].long(), batch[:, 1].long(), batch[:, HEADER:].long()
    n = len(batch)
    total = torch.zeros(n, tokens.shape[1], device=batch.device)
    prev = torch.full((n,), BOS, dtype=torch.long, device=batch.device)
    with torch.no_grad():
        for t in range(int(lengths.max())):
            pos = torch.full((n,), t, dtype=torch.long, device=batch.device)
            logp = F.log_softmax(policy(prompt, pos, prev).float(), -1)
            live = lengths > t
            tok = tokens[:, t].clamp(min=0)
            total[live, t] = logp.gather(1, tok[:, None]).squeeze(1)[live]
            prev = torch.where(live, tok, prev)
    return total.sum(1)


def teacher_forced_logp(policy: Policy, batch: torch.Tensor) -> torch.Tensor:
    """The training path: every position of every rollout in one forward (with autograd)."""
    prompt, lengths, tokens = batch[:, 0].long(), batch[:, 1].long(), batch[:, HEADER:].long()
    n, max_len = tokens.shape
    tok = tokens.clamp(min=0)
    prev = torch.cat(
        [torch.full((n, 1), BOS, device=batch.device, dtype=torch.long), tok[:, :-1]], 1
    )
    pos = torch.arange(max_len, device=batch.device).expand(n, max_len)
    logits = policy(prompt[:, None].expand(n, max_len), pos, prev).float()
    logp = F.log_softmax(logits, -1).gather(2, tok[..., None]).squeeze(2)
    live = torch.arange(max_len, device=batch.device)[None, :] < lengths[:, None]
    return torch.where(live, logp, torch.zeros_like(logp)).sum(1)


def rewards(batch: torch.Tensor) -> torch.Tensor:
    """Tokens equal to the prompt's target token (prompt id mod 7 + 1), per rollout."""
    prompt, tokens = batch[:, 0].long(), batch[:, HEADER:].long()
    target = prompt % (VOCAB - 1) + 1
    return (tokens == target[:, None]).float().sum(1) / tokens.shape[1]


class Sync:
    """Learner 0 -> generators, flat buckets over one long-lived group."""

    def __init__(self, ctx: WorkerContext, group: Any, model: Policy, spec: dict[str, Any]) -> None:
        self.ctx, self.group, self.model, self.spec = ctx, group, model, spec
        self.buckets = buckets(model, spec["bucket_bytes"])
        if spec["sabotage"] == "first_bucket":
            self.buckets = self.buckets[:1]
        self.dtype = torch.bfloat16 if spec["sabotage"] == "bf16_copy" else torch.float32
        self.received: list[dict[str, int]] = []

    def send(self) -> None:
        for bucket in self.buckets:
            vector = torch.cat([p.detach().reshape(-1) for p in bucket]).to(self.dtype)
            dist.broadcast(vector, src=0, group=self.group)

    def post_receive(self) -> tuple[list[Any], list[torch.Tensor]]:
        """Start receiving every bucket (async); apply() copies them in once they arrived."""
        works, vectors = [], []
        for bucket in self.buckets:
            numel = sum(p.numel() for p in bucket)
            vector = torch.empty(numel, dtype=self.dtype, device=self.ctx.device)
            works.append(dist.broadcast(vector, src=0, group=self.group, async_op=True))
            vectors.append(vector)
        return works, vectors

    def apply(self, pending: tuple[list[Any], list[torch.Tensor]]) -> None:
        works, vectors = pending
        for work in works:
            work.wait()
        self.received.append(
            {
                "bytes": sum(v.numel() * v.element_size() for v in vectors),
                "elements": sum(v.numel() for v in vectors),
                "buckets": len(vectors),
            }
        )
        if self.spec["sabotage"] == "no_reload":
            return  # received, never loaded: the generator keeps its old weights
        with torch.no_grad():
            for bucket, vector in zip(self.buckets, vectors, strict=True):
                offset = 0
                for p in bucket:
                    p.copy_(vector[offset : offset + p.numel()].view_as(p))
                    offset += p.numel()


def send_tensor(tensor: torch.Tensor, dst: int) -> None:
    """A tensor of unknown shape: its shape first, then the data."""
    dist.send(torch.tensor(tensor.shape, dtype=torch.long, device=tensor.device), dst)
    dist.send(tensor.contiguous(), dst)


def recv_tensor(src: int, dims: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    shape = torch.empty(dims, dtype=torch.long, device=device)
    dist.recv(shape, src)
    out = torch.empty(*shape.tolist(), dtype=dtype, device=device)
    dist.recv(out, src)
    return out


def generate(ctx: WorkerContext, spec: dict[str, Any], run: int, sync: Sync) -> dict[str, Any]:
    """A generator's run: decode, ship, take the new weights (now, or in the background while
    the next batch decodes), and send them back for the audit after each sync."""
    learners, policy = spec["learners"], sync.model
    learner = (ctx.rank - learners) % learners
    gen = torch.Generator(device=ctx.device).manual_seed(spec["seed"] * 1000 + run * 100 + ctx.rank)
    version, decoded, pending = 0, [], None
    on_policy = RUNS[run] == "on_policy"

    def take_sync() -> None:
        nonlocal version
        assert pending is not None
        sync.apply(pending)
        if spec["sabotage"] != "no_reload":
            version += 1
        dist.send(torch.tensor([version], device=ctx.device), 0)
        dist.send(flat(policy), 0)

    for i in range(spec["iterations"]):
        batch, stats = decode(policy, spec, gen, version)
        decoded.append(stats)
        send_tensor(batch, learner)
        if on_policy:
            pending = sync.post_receive()
            take_sync()
        else:
            if i >= 1:
                take_sync()
            pending = sync.post_receive()  # lands while the next batch decodes
    if not on_policy:
        take_sync()
    return {"decode": decoded, "received": sync.received}


def learn(
    ctx: WorkerContext, spec: dict[str, Any], run: int, sync_group: Any, learner_group: Any
) -> dict[str, Any]:
    """A learner's run: consume batches, check their log-probs, step, push the weights."""
    learners, world, device = spec["learners"], ctx.world_size, ctx.device
    policy = build_policy(spec, device)
    sync = Sync(ctx, sync_group, policy, spec) if ctx.rank == 0 else None
    scratch = build_policy(spec, device)
    opt = torch.optim.Adam(policy.parameters(), lr=spec["lr"])
    mine = [g for g in range(learners, world) if (g - learners) % learners == ctx.rank]
    versions = {0: flat(policy)}
    on_policy = RUNS[run] == "on_policy"
    batches_seen: list[dict[str, Any]] = []
    audits: list[dict[str, Any]] = []

    def audit(version: int) -> None:
        for g in range(learners, world):
            claimed = torch.empty(1, dtype=torch.long, device=device)
            dist.recv(claimed, g)
            weights = torch.empty_like(versions[version])
            dist.recv(weights, g)
            audits.append(
                {
                    "sent": version,
                    "claimed": int(claimed),
                    "max_abs_diff": float((weights - versions[version]).abs().max()),
                    "same_digest": digest(weights) == digest(versions[version]),
                }
            )

    for i in range(spec["iterations"]):
        batches = [recv_tensor(g, 2, torch.float64, device) for g in mine]
        if not on_policy and i >= 1 and ctx.rank == 0:
            audit(i)
        current = len(versions) - 1
        terms = []
        for batch in batches:
            tag = int(batch[0, 3])
            recorded = batch[:, 2].float()
            load_flat(scratch, versions[tag])
            now = stepwise_logp(policy, batch)
            new = teacher_forced_logp(policy, batch)
            ratio = torch.exp(new - recorded)
            reward = rewards(batch)
            group = reward.view(spec["prompts"], -1)
            adv = (group - group.mean(1, keepdim=True)).flatten()
            clipped = ratio.clamp(1 - spec["clip"], 1 + spec["clip"])
            terms.append(torch.minimum(ratio * adv, clipped * adv))
            batches_seen.append(
                {
                    "lag": current - tag,
                    "tagged": float((stepwise_logp(scratch, batch) - recorded).abs().max()),
                    "current": float((now - recorded).abs().max()),
                    "teacher_forced": float((new.detach() - now).abs().max()),
                    "ratio_dev": float((ratio.detach() - 1).abs().max()),
                    "clipped": int(((ratio.detach() - 1).abs() > spec["clip"]).sum()),
                    "rollouts": len(batch),
                    "reward": float(reward.mean()),
                    "iteration": i,
                }
            )
        loss = -torch.cat(terms).mean()
        opt.zero_grad()
        loss.backward()
        if learner_group is not None:
            for p in policy.parameters():
                dist.all_reduce(p.grad, group=learner_group)
                p.grad.div_(learners)
        opt.step()
        versions[current + 1] = flat(policy)
        if sync is not None:
            sync.send()
            if on_policy:
                audit(current + 1)
    if sync is not None and not on_policy:
        audit(len(versions) - 1)
    return {"batches": batches_seen, "audits": audits}


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)  # one thread: reductions do not depend on the core count
    learners, world = spec["learners"], ctx.world_size
    # every rank takes part in creating a group, members or not: once, before any run
    sync_group = dist.new_group([0, *range(learners, world)])
    learner_group = dist.new_group(list(range(learners))) if learners > 1 else None
    template = build_policy(spec, ctx.device)
    reports = []
    for run in range(len(RUNS)):
        if ctx.rank < learners:
            mine = learn(ctx, spec, run, sync_group, learner_group)
        else:
            policy = build_policy(spec, ctx.device)
            if spec["sabotage"] == "bf16_copy":
                policy = policy.to(torch.bfloat16)
            mine = generate(ctx, spec, run, Sync(ctx, sync_group, policy, spec))
        gathered: list[Any] = [None] * world
        dist.all_gather_object(gathered, {"rank": ctx.rank, **mine})
        reports.append(gathered)
    if ctx.rank == 0:
        numel = sum(p.numel() for p in template.parameters())
        ctx.events().write(
            "rl_weight_sync",
            model_elements=numel,
            model_bytes=numel * 4,
            runs={name: reports[i] for i, name in enumerate(RUNS)},
        )
