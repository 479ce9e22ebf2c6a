"""One replica process of replica-recovery (imports torch): train data-parallel with the other
replicas over a gloo group rebuilt for every quorum.

Before every step the replica asks the lighthouse for the quorum (TCPStore keys under the mode's
prefix). A new quorum id means a new `ProcessGroupGloo` on `PrefixStore("pg/<epoch>")`. A member
behind the quorum's furthest step receives weights, momentum and the step from the source peer
with send/recv on that group (live recovery: no disk). The step's gradient is averaged with
`allreduce` over the quorum's members; when it raises (a peer died), the replica either asks for a
new quorum and retries the same gradient (its local copy: a failed all-reduce may have left
partial sums in its buffer), or exits with code 3 so its supervisor restarts it from the last
disk checkpoint (the restart-the-job baseline).

A background thread heartbeats `hb/<replica id>` = "pid:count" on its own store connection.
Events go to RUN/replicas/<mode>/r<rid>-i<incarnation>/; at exit the weights and momentum of every
step it committed are saved beside them (trajectory.pt) for the reference replay.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from trainer_lab.events import EventWriter
from trainer_lab.labs.replica_recovery.quorum import Ask, Round
from trainer_lab.procs import die_with_parent

FEATURES, HIDDEN = 8, 16
HEARTBEAT_S = 0.1
FATAL_EXIT = 3  # a replica that gives up on a collective error: its supervisor restarts it


def build(spec: dict[str, Any], device: torch.device) -> tuple[torch.nn.Module, Any]:
    torch.manual_seed(spec["seed"])
    model = torch.nn.Sequential(
        torch.nn.Linear(FEATURES, HIDDEN), torch.nn.Tanh(), torch.nn.Linear(HIDDEN, 1)
    ).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=spec["lr"], momentum=spec["momentum"])
    return model, opt


def batch(spec: dict[str, Any], step: int, rid: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Replica `rid`'s batch for `step` (1-based): a function of both, so any process can
    rebuild it (the reference replay, a replacement)."""
    gen = torch.Generator().manual_seed(spec["seed"] * 1_000_003 + step * 1009 + rid)
    truth = torch.linspace(-1.0, 1.0, FEATURES)
    x = torch.randn(spec["batch"], FEATURES, generator=gen)
    y = torch.sin(x @ truth)[:, None] + 0.05 * torch.randn(spec["batch"], 1, generator=gen)
    return x, y


def local_grad(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, Any]:
    """(loss, flat CPU gradient) of one batch at the model's weights."""
    device = next(model.parameters()).device
    model.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x.to(device)), y.to(device))
    loss.backward()
    grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()]).cpu()
    return float(loss.detach()), grad


def set_grads(model: torch.nn.Module, vector: torch.Tensor) -> None:
    offset = 0
    for p in model.parameters():
        p.grad = vector[offset : offset + p.numel()].view_as(p).to(p.device).clone()
        offset += p.numel()


def params_of(model: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).cpu()


def momentum_of(model: torch.nn.Module, opt: Any) -> torch.Tensor:
    """SGD's momentum buffers, flat (zeros where a buffer does not exist yet)."""
    parts = []
    for p in model.parameters():
        buf = opt.state.get(p, {}).get("momentum_buffer")
        parts.append(torch.zeros(p.numel()) if buf is None else buf.detach().reshape(-1).cpu())
    return torch.cat(parts)


def install(model: torch.nn.Module, opt: Any, params: Any, momentum: Any) -> None:
    """Load flat weights and (when given) flat momentum buffers into model and optimizer."""
    offset = 0
    with torch.no_grad():
        for p in model.parameters():
            n = p.numel()
            if params is not None:
                p.copy_(params[offset : offset + n].view_as(p))
            if momentum is not None:
                opt.state[p]["momentum_buffer"] = momentum[offset : offset + n].view_as(p).to(p)
            offset += n


def digest(vector: torch.Tensor) -> str:
    return hashlib.sha256(vector.contiguous().numpy().tobytes()).hexdigest()[:16]


def checkpoint_dir(cfg: dict[str, Any]) -> Path:
    return Path(cfg["run_dir"]) / "checkpoints" / cfg["mode"]


def save_checkpoint(cfg: dict[str, Any], step: int, model: Any, opt: Any) -> None:
    """step-NNNN.pt written whole, then renamed into place."""
    folder = checkpoint_dir(cfg)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".step-{step:04d}.tmp"
    torch.save({"step": step, "params": params_of(model), "momentum": momentum_of(model, opt)}, tmp)
    os.replace(tmp, folder / f"step-{step:04d}.pt")


def load_latest(cfg: dict[str, Any], model: Any, opt: Any) -> tuple[int, int]:
    """(step, bytes read) of the newest checkpoint loaded; (0, 0) when there is none."""
    saved = sorted(checkpoint_dir(cfg).glob("step-*.pt"))
    if not saved:
        return 0, 0
    state = torch.load(saved[-1])
    install(model, opt, state["params"], state["momentum"])
    return int(state["step"]), saved[-1].stat().st_size


class Heartbeat(threading.Thread):
    """Bumps hb/<rid> every HEARTBEAT_S on its own store connection until stopped."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        super().__init__(daemon=True)
        self.store = dist.PrefixStore(cfg["mode"], connect(cfg))
        self.key, self.pid = f"hb/{cfg['rid']}", os.getpid()
        self.stop = threading.Event()

    def run(self) -> None:
        count = 0
        while not self.stop.is_set():
            self.store.set(self.key, f"{self.pid}:{count}")
            count += 1
            self.stop.wait(HEARTBEAT_S)


def connect(cfg: dict[str, Any]) -> Any:
    timeout = timedelta(seconds=cfg["spec"]["quorum_timeout_s"])
    return dist.TCPStore(cfg["host"], cfg["port"], is_master=False, timeout=timeout)


class Replica:
    """One replica's model, optimizer, committed step and current quorum group."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        self.cfg, self.spec = cfg, cfg["spec"]
        self.rid, self.pid = cfg["rid"], os.getpid()
        self.device = torch.device(cfg["device"])
        self.store = dist.PrefixStore(cfg["mode"], connect(cfg))
        folder = Path(cfg["run_dir"]) / "replicas" / cfg["mode"] / f"r{self.rid}-i{cfg['inc']}"
        self.folder = folder
        self.events = EventWriter(folder, self.rid)
        self.model, self.opt = build(self.spec, self.device)
        self.step, self.seq, self.epoch = 0, 0, -1
        self.group: Any = None
        self.groups: list[Any] = []  # old groups stay referenced: a dead peer's may not tear down
        self.trajectory: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def ask(self) -> Round:
        """Post this replica's ask (committed step) and wait for the lighthouse's answer."""
        self.seq += 1
        ask = Ask(self.rid, self.pid, self.seq, self.step)
        number = self.store.add("ask_seq", 1)
        self.store.set(f"ask/{number}", json.dumps(ask.__dict__))
        key = f"ans/{self.rid}/{self.pid}/{self.seq}"
        self.store.wait([key], timedelta(seconds=self.spec["quorum_timeout_s"]))
        return Round.from_dict(json.loads(self.store.get(key)))

    def join(self, quorum: Round) -> None:
        """A new quorum: a new gloo group over its members, keyed by the quorum id."""
        if quorum.epoch == self.epoch:
            return
        self.epoch = quorum.epoch
        prefixed = dist.PrefixStore(f"pg/{quorum.epoch}", self.store)
        timeout = timedelta(seconds=self.spec["group_timeout_s"])
        self.group = dist.ProcessGroupGloo(
            prefixed, quorum.rank_of(self.rid), len(quorum.members), timeout
        )
        self.groups.append(self.group)
        self.events.write(
            "quorum",
            epoch=quorum.epoch,
            members=[r for r, _ in quorum.members],
            pids=[p for _, p in quorum.members],
            step=self.step,
        )

    def recover(self, quorum: Round) -> None:
        """Live recovery over the quorum's group: the source sends, the lagging receive."""
        weights_only = self.spec["sabotage"] == "weights_only"
        size = len(params_of(self.model)) * (1 if weights_only else 2)
        tag = quorum.epoch
        if self.rid == quorum.src:
            payload = params_of(self.model)
            if not weights_only:
                payload = torch.cat([payload, momentum_of(self.model, self.opt)])
            for rid in quorum.lagging:
                dst = quorum.rank_of(rid)
                self.group.send([torch.tensor([self.step])], dst, tag).wait()
                self.group.send([payload], dst, tag).wait()
            self.events.write(
                "sent_state",
                step=self.step,
                to=list(quorum.lagging),
                params_digest=digest(params_of(self.model)),
                momentum_digest=digest(momentum_of(self.model, self.opt)),
            )
            return
        step, payload = torch.zeros(1, dtype=torch.long), torch.empty(size)
        src = quorum.rank_of(quorum.src)
        self.group.recv([step], src, tag).wait()
        self.group.recv([payload], src, tag).wait()
        n = len(payload) if weights_only else len(payload) // 2
        if self.spec["sabotage"] != "fresh_init":  # that sabotage keeps its fresh weights
            install(self.model, self.opt, payload[:n], None if weights_only else payload[n:])
        before, self.step = self.step, int(step)
        self.record()
        self.events.write(
            "recovered",
            step=self.step,
            from_step=before,
            src=quorum.src,
            bytes=(payload.numel() * payload.element_size() + step.element_size()),
            params_digest=digest(params_of(self.model)),
            momentum_digest=digest(momentum_of(self.model, self.opt)),
        )

    def record(self) -> None:
        self.trajectory[self.step] = (params_of(self.model), momentum_of(self.model, self.opt))

    def train(self) -> int:
        """Ask, (re)join, recover if behind, step; 0 when done, FATAL_EXIT when it gave up."""
        cfg, spec = self.cfg, self.spec
        grad: torch.Tensor | None = None
        loss, retried = 0.0, False
        while self.step < spec["steps"]:
            quorum = self.ask()
            self.join(quorum)
            if quorum.lagging and (self.rid == quorum.src or self.rid in quorum.lagging):
                self.recover(quorum)
                if self.rid in quorum.lagging:
                    grad = None  # new weights: a gradient computed before is stale
            if grad is None:
                x, y = batch(spec, self.step + 1, self.rid)
                loss, grad = local_grad(self.model, x, y)
                retried = False
                if self.killed_here():
                    self.store.set("kill_me", str(self.pid))  # the supervisor SIGKILLs us now
                    self.store.wait(["never"], timedelta(seconds=spec["quorum_timeout_s"]))
            buffer = grad.clone()
            try:
                self.group.allreduce([buffer]).wait()
            except RuntimeError as error:
                self.events.write(
                    "collective_error",
                    step=self.step + 1,
                    epoch=self.epoch,
                    message=str(error).strip().splitlines()[0][:300],
                    buffer_changed=not torch.equal(buffer, grad),
                )
                if cfg["on_error"] == "exit":
                    return FATAL_EXIT
                retried = True
                continue  # ask for a new quorum, all-reduce the same local gradient again
            size = len(quorum.members)
            divisor = spec["replicas"] if spec["sabotage"] == "old_divisor" else size
            set_grads(self.model, buffer / divisor)
            self.opt.step()
            self.step += 1
            grad = None
            self.record()
            params, momentum = self.trajectory[self.step]
            self.events.write(
                "step",
                step=self.step,
                loss=loss,
                epoch=self.epoch,
                members=[r for r, _ in quorum.members],
                divisor=divisor,
                global_batch=size * spec["batch"],
                retried=retried,
                params_digest=digest(params),
                momentum_digest=digest(momentum),
            )
            if self.rid == 0 and self.step % spec["checkpoint_every"] == 0:
                save_checkpoint(cfg, self.step, self.model, self.opt)
        return 0

    def killed_here(self) -> bool:
        """The fault schedule: the victim's first process dies in step kill_after_step + 1,
        after its backward, before the all-reduce (the peers are in it or about to be)."""
        return (
            self.rid == self.cfg["victim"]
            and self.cfg["inc"] == 0
            and self.step == self.spec["kill_after_step"]
        )

    def save_trajectory(self) -> None:
        steps = sorted(self.trajectory)
        torch.save(
            {
                "steps": steps,
                "params": torch.stack([self.trajectory[s][0] for s in steps]),
                "momentum": torch.stack([self.trajectory[s][1] for s in steps]),
            },
            self.folder / "trajectory.pt",
        )


def replica_main(cfg: dict[str, Any]) -> None:
    """A replica process's entry point (forked, or spawned on CUDA machines)."""
    die_with_parent(cfg["parent"])
    torch.set_num_threads(1)
    beat = Heartbeat(cfg)
    beat.start()
    replica = Replica(cfg)
    if cfg["init"] == "disk":
        replica.step, read = load_latest(cfg, replica.model, replica.opt)
        replica.events.write("loaded_checkpoint", step=replica.step, bytes=read)
    elif cfg["init"] == "peer":
        replica.step = -1  # no state: the quorum makes it recover from a peer
    if replica.step >= 0:
        replica.record()
    replica.events.write(
        "start", pid=replica.pid, inc=cfg["inc"], init=cfg["init"], step=replica.step
    )
    try:
        code = replica.train()
    except Exception as error:  # the supervisor reports the exit code; the reason is kept here
        replica.events.write("crash", message=f"{type(error).__name__}: {error}"[:500])
        raise
    replica.save_trajectory()
    replica.events.write("exit", code=code, step=replica.step)
    replica.events.close()
    beat.stop.set()
    os._exit(code)


if __name__ == "__main__":  # the CUDA path: `python -m ...replica CFG_JSON`
    replica_main(json.loads(sys.argv[1]))
