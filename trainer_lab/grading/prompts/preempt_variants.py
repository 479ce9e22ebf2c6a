"""The preemption round's known-wrong variants of its model answer (preempt_files/train.py), for
tests: name -> (the checks it must fail, the edits that make it). Each edit's old text occurs
once in the model answer."""

from __future__ import annotations

from typing import NamedTuple

from trainer_lab.grading.prompts.preemption import given_file


class Variant(NamedTuple):
    fails: tuple[str, ...]
    edits: tuple[tuple[str, str], ...]


STOP_EXIT = "stop.exits_0_in_grace"
STOP_TOGETHER = "stop.stop_together"
RESUMES = "requeue.resumes_where_stopped"
BIT_FOR_BIT = "requeue.bit_for_bit"
AGAIN_EXIT = "again.exits_0_in_grace"
AGAIN_RESUMES = "again.resumes_complete"
DRILL_ORDER = "requeue.drill_data_order"
SAVES_EVERY_C = "requeue.saves_every_c"
HANDLER = "    signal.signal(signal.SIGTERM, on_sigterm)\n"
AGREE = "        if distributed:\n            dist.all_reduce(stop, op=dist.ReduceOp.MAX)\n"
ATOMIC = '    torch.save(state, path + ".tmp")\n    os.replace(path + ".tmp", path)\n'
STOP_SAVE = "(step % args.ckpt_every == 0 or stop.item())"
SAVED_STEP = '"step": step,\n'
BREAK = "        if stop.item():\n            break\n"
RNG = '        torch.set_rng_state(state["rng"])\n'
RESTORE = '        step, epoch, position = state["step"], state["epoch"], state["position"]\n'

VARIANTS: dict[str, Variant] = {
    # no handler at all: SIGTERM's default action ends every rank at once
    "no_handler": Variant((STOP_EXIT, RESUMES, AGAIN_EXIT), ((HANDLER, ""),)),
    # the handler is set on rank 0 only: the other ranks die of their SIGTERM
    "handler_rank0_only": Variant(
        (STOP_EXIT, RESUMES, AGAIN_EXIT),
        (
            (HANDLER, ""),
            (
                "    world = dist.get_world_size() if distributed else 1\n",
                "    world = dist.get_world_size() if distributed else 1\n"
                "    if rank == 0:\n"
                "        signal.signal(signal.SIGTERM, on_sigterm)\n",
            ),
        ),
    ),
    # SIGTERM ignored: the job trains on to the end, nothing is saved at the notice
    "ignores_sigterm": Variant(
        (STOP_TOGETHER, RESUMES, BIT_FOR_BIT, AGAIN_RESUMES),
        ((HANDLER, "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"),),
    ),
    # each rank stops on its own flag: SIGTERM reaches them a step apart
    "no_agreement": Variant((STOP_EXIT, STOP_TOGETHER, RESUMES, AGAIN_EXIT), ((AGREE, ""),)),
    # the stop leaves without a checkpoint: the requeue redoes the steps since the last one
    "exits_without_saving": Variant(
        (RESUMES, AGAIN_RESUMES), ((STOP_SAVE, "step % args.ckpt_every == 0"),)
    ),
    # the shell convention 128 + SIGTERM: the scheduler reads a failure
    "exits_nonzero": Variant(
        (STOP_EXIT, AGAIN_EXIT),
        ((BREAK, "        if stop.item():\n            raise SystemExit(143)\n"),),
    ),
    # waits before leaving (for an upload, for logs): past the grace period
    "sleeps_past_grace": Variant(
        (STOP_EXIT, AGAIN_EXIT),
        (
            (
                BREAK,
                "        if stop.item():\n"
                "            __import__('time').sleep(7)  # let the logs flush\n"
                "            break\n",
            ),
        ),
    ),
    # a one-shot handler (the default restored, so a second signal kills) and a save in place
    "one_shot_handler_save_in_place": Variant(
        (AGAIN_EXIT, AGAIN_RESUMES),
        (
            (
                "    preempted = True\n",
                "    preempted = True\n    signal.signal(signal.SIGTERM, signal.SIG_DFL)\n",
            ),
            (ATOMIC, "    torch.save(state, path)\n"),
        ),
    ),
    # a one-shot handler with an atomic save: nothing torn, but the second SIGTERM kills
    "one_shot_handler": Variant(
        (AGAIN_EXIT,),
        (
            (
                "    preempted = True\n",
                "    preempted = True\n    signal.signal(signal.SIGTERM, signal.SIG_DFL)\n",
            ),
        ),
    ),
    # the saved step is one ahead of the saved model: the requeue skips a step
    "resumes_at_step_plus_one": Variant(
        (RESUMES, BIT_FOR_BIT), ((SAVED_STEP, '"step": step + 1,\n'),)
    ),
    # the saved step is one behind: the requeue replays a step
    "replays_a_step": Variant((RESUMES, BIT_FOR_BIT), ((SAVED_STEP, '"step": step - 1,\n'),)),
    # torch's RNG state is not restored: other dropout masks after the requeue
    "rng_not_restored": Variant((BIT_FOR_BIT,), ((RNG, ""),)),
    # the step is restored, the place in drill_data's order is not: the epoch starts over
    "data_position_not_restored": Variant(
        (BIT_FOR_BIT,), ((RESTORE, '        step, epoch, position = state["step"], 0, 0\n'),)
    ),
    # its own shuffle per epoch, not drill_data's epoch_order (the same after a requeue)
    "shuffles_its_own_order": Variant(
        (DRILL_ORDER,),
        (
            (
                "epoch_order(epoch)[start : start + BATCH_SIZE]",
                "torch.randperm(DATASET_SIZE, generator=torch.Generator().manual_seed(epoch))"
                ".tolist()[start : start + BATCH_SIZE]",
            ),
        ),
    ),
    # a checkpoint only at SIGTERM, none after every C-th step
    "saves_only_on_sigterm": Variant((SAVES_EVERY_C,), ((STOP_SAVE, "stop.item()"),)),
}


def variant_source(name: str) -> str:
    source = given_file("train.py")
    for old, new in VARIANTS[name].edits:
        if source.count(old) != 1:
            raise ValueError(f"variant {name}: {old!r} occurs {source.count(old)} times")
        source = source.replace(old, new)
    return source
