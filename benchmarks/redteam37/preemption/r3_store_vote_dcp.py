"""RIGHT (style C): SIGTERM handler sets a local flag; the ranks agree through the c10d key-value
store (no collective): after step s every rank writes its vote to key vote/<s>/<rank> and waits
for all W votes, then stops if any is 1. DDP; checkpoints with torch.distributed.checkpoint
(get_state_dict for model + optimizer, the step, and each rank's RNG state under its own key) into
dcp-<step>/, complete only once DCP's .metadata exists (written last, tmp + rename)."""

import argparse
import os
import signal

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.nn.parallel import DistributedDataParallel

from drill_data import BATCH_SIZE, CLASSES, DATASET_SIZE, FEATURES, TrainSet, epoch_order

_term = {"flag": False}


def _handler(signum, frame):
    _term["flag"] = True


def agree_stop(store, step, rank, world):
    if store is None:
        return _term["flag"]
    store.set(f"vote/{step}/{rank}", "1" if _term["flag"] else "0")
    keys = [f"vote/{step}/{r}" for r in range(world)]
    store.wait(keys)
    return any(store.get(k) == b"1" for k in keys)


def newest_complete(d):
    cands = []
    for n in os.listdir(d):
        if n.startswith("dcp-") and os.path.exists(os.path.join(d, n, ".metadata")):
            cands.append(int(n[4:]))
    return max(cands) if cands else None


def main():
    signal.signal(signal.SIGTERM, _handler)
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, required=True)
    args = ap.parse_args()

    distributed = "RANK" in os.environ
    store = None
    if distributed:
        dist.init_process_group("gloo")
        store = dist.PrefixStore("preempt", dist.distributed_c10d._get_default_store())
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1

    torch.manual_seed(2024)
    base = nn.Sequential(nn.Linear(FEATURES, 20), nn.GELU(), nn.Dropout(0.2), nn.Linear(20, CLASSES))
    model = DistributedDataParallel(base) if distributed else base
    opt = torch.optim.Adam(model.parameters(), lr=0.03)

    def state(step):
        msd, osd = get_state_dict(model, opt)
        return {"model": msd, "optim": osd, "step": torch.tensor(step),
                f"rng_rank{rank}": torch.get_rng_state()}

    os.makedirs(args.ckpt_dir, exist_ok=True)
    step = 0
    last = newest_complete(args.ckpt_dir)
    if last is not None:
        sd = state(0)
        dcp.load(sd, checkpoint_id=os.path.join(args.ckpt_dir, f"dcp-{last}"))
        set_state_dict(model, opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
        step = int(sd["step"])
        torch.set_rng_state(sd[f"rng_rank{rank}"])

    ds = TrainSet()
    g = world * BATCH_SIZE
    steps_per_epoch = DATASET_SIZE // g
    while step < args.steps:
        ep, k = divmod(step, steps_per_epoch)
        ids = epoch_order(ep)[k * g:(k + 1) * g][rank * BATCH_SIZE:(rank + 1) * BATCH_SIZE]
        rows = ds.__getitems__(ids)
        x = torch.stack([r[1] for r in rows])
        y = torch.stack([r[2] for r in rows])
        model.train()
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if rank == 0:
            print(f'{{"step": {step}, "loss": {loss.item():.6f}}}', flush=True)
        stop = agree_stop(store, step, rank, world)
        if step % args.ckpt_every == 0 or stop:
            dcp.save(state(step), checkpoint_id=os.path.join(args.ckpt_dir, f"dcp-{step}"))
        if stop:
            break
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
