"""The biotech data-pipeline round: variable-length protein sequences batched with correct
masks, a train/validation split by sequence cluster, every training sequence once per epoch
across ranks and a resume mid-epoch (torch-free; its given files are in biotech_files/).

    grading = grade_biotech(Path("train.py"), run_dir, phases=("masks",))

Graded by the coding round's harness: the launches run through grader.run_launches (the
usercode runner, the same limits), each built by grader.launch_for; the checks are
checks_biotech.py's, the result a lab result like the other rounds'.
"""

from __future__ import annotations

import ast
import random
from dataclasses import replace
from pathlib import Path

from trainer_lab.grading.contract import LaunchPlan
from trainer_lab.grading.data_plans import group_seed
from trainer_lab.grading.graded_table import graded_table
from trainer_lab.grading.prompts.checks_biotech import epoch_checks, mask_checks, split_checks
from trainer_lab.grading.prompts.checks_same_batch import SAME_BATCH_TOLERANCE
from trainer_lab.grading.prompts.prompt_grading import Launches, PromptSpec, prompt_grader
from trainer_lab.result import Check
from trainer_lab.usercode.dataplan import DataPlan
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun
from trainer_lab.usercode.verdict import check

FILES = Path(__file__).parent / "biotech_files"
LAB = "mock-coding-biotech"
SCRIPT_NAME = "train.py"
NUM_SEQUENCES = 60  # mirrors biotech_files/drill_data.py (a test keeps them equal)
AMINO_IDS = (1, 21)  # the amino acids' token ids: [1, 21) (drill_data.py)
SPECIAL_IDS = (0, 21, 22, 23)  # the token ids that are not amino acids: PAD_ID is drawn here
VOCAB = 24  # drill_data.VOCAB: the token embedding's size (a position embedding is not remapped)
RELABEL_BIT = 2**32  # drill_data._sample: seed // RELABEL_BIT shifts every label
STEPS = 16  # over two epochs at W=2 for any split that trains on more than 32 sequences
CKPT_EVERY = 4
BATCH_SIZE = 4  # drill_data.BATCH_SIZE (a test keeps them equal)
KILL_AFTER = 2 * CKPT_EVERY + 1  # the relaunch resumes at step 8: inside the second epoch
TIMEOUT_S = 90.0  # per launch
# step 1's printed loss over ln(CLASSES): an untrained tagger's mean cross-entropy per residue
# (a sum, or a mean per sequence, is tens to thousands of times larger)
LOSS_BAND = (0.5, 3.0)

PHASES = ("masks", "split", "epoch")
CHECK_NAMES: dict[str, tuple[str, ...]] = {
    "masks": ("masks.trains", "masks.padding_never_in_loss", "masks.batched_by_length"),
    "split": ("split.by_cluster", "split.validates_held_out"),
    "epoch": ("epoch.exactly_once", "epoch.reshuffled", "epoch.resume_continues"),
}

# phase -> its row of the "How it is graded" table (trainer_lab.grading.graded_table)
GRADED: dict[str, str] = {
    "masks": f"""\
W=2, N={STEPS}, C={CKPT_EVERY}: exits 0 after N optimizer steps on each rank (replicas
identical), and as one process (python train.py): N steps, loss lines for steps
1..N, a checkpoint in DIR; step 1's printed loss is a mean per residue (an
untrained tagger's: x{LOSS_BAND[0]:g}-{LOSS_BAND[1]:g} of ln 3); every printed loss is what the
ranks' backward passes began from (their sum, / W, or / the step's residues);
run again on the same residues with other labels: step 1's gradients differ
(the labels reach the loss); as one process with BATCH_SIZE = W x {BATCH_SIZE}, when its
step 1 reads the sequences the W=2 run's step 1 read: the same step-1 gradient
(within {SAME_BATCH_TOLERANCE:g}, relative: the loss is the mean over the global batch's
residues, not a mean of the ranks' means; in these runs and the next every
dropout is the identity); and on the
same sequences with another PAD_ID (in both runs the model's token embedding
reads every id that is not an amino acid as an id that is not that run's PAD_ID,
another in each run, also with padding_idx): every step's gradients
and printed loss are the same (padding never reaches the loss); on most steps a
rank embeds its sequences in fewer forwards than sequences, and either packs
several into a row or batches similar lengths (padded to each batch's longest,
at most 3/4 of the padding random batches of the same sizes would need)""",
    "split": """\
from the sequences the W=2 run read for steps 1..N (training) and after step N
(validation): no cluster on both sides; every sequence of a held-out cluster
validated (its residues through the model's token embedding), val_sequences
their number""",
    "epoch": f"""\
the same run: every training sequence read once per epoch across the ranks, the
second epoch in another order; a rank is SIGKILLed after step {KILL_AFTER} and the run
relaunched: its reads continue the checkpoint's epoch (nothing repeated or skipped)""",
}

CONTRACT = f"""\
Build the data pipeline for protein sequences, in one file, train.py.

Given: drill_data.py: `ProteinSet()` ({NUM_SEQUENCES} sequences of 6 to 40 residues); item i
is (i, tokens, labels, cluster): amino-acid token ids, one label per residue (3 classes) and
its sequence cluster (a cluster's sequences are near-duplicates). `dataset.lengths` and
`dataset.clusters` are the index (read without reading a sequence). Pad with drill_data.PAD_ID
and use drill_data.BATCH_SIZE sequences per rank per step (import both, never write their
values). Seed everything: two runs on the same data must train the same. Use a torch.optim
optimizer. Keep the starter's model (Tagger: an nn.Embedding reads the tokens; it takes a
key_padding_mask and an attn_mask).

Your script must:
  1. run as `python train.py --steps N --ckpt-dir DIR --ckpt-every C` and under `torchrun
     --nproc-per-node W` (gloo on CPU), train until global step N, save a checkpoint into DIR
     after every C-th step and resume by itself from the newest one when started again;
  2. batch sequences of similar length (bucketing) or pack several into a row, with masks:
     padding never reaches the loss (not as a target, not as a key a residue attends to); the
     loss is the mean cross-entropy over the real residues of the global batch; rank 0 prints
     one JSON line per step: {{"step": 3, "loss": 1.02}};
  3. split the sequences into training and validation by cluster (a cluster is on one side
     only; every sequence on one side), the same split in every run and on every rank;
  4. read every training sequence exactly once per epoch across the ranks (an epoch ends with
     a step; its last step may be smaller), in a new order each epoch; a relaunch continues at
     the checkpoint's position in its epoch (no sequence repeated or skipped);
  5. after step N, evaluate the validation sequences (sharded across the ranks) and print from
     rank 0 {{"val_loss": 1.1, "val_sequences": 17}}. Read sequences only through the dataset
     (the grader observes the reads). Under torchrun, destroy the process group at the end.

How it is graded (real runs, observed from outside):
{graded_table(GRADED)}"""


def given_file(name: str) -> str:
    return (FILES / name).read_text()


def given_index(name: str) -> list[int]:
    """A literal list of drill_data.py's index (LENGTHS, CLUSTERS), read without torch."""
    for node in ast.parse(given_file("drill_data.py")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            name
        ]:
            return list(ast.literal_eval(node.value))
    raise KeyError(name)


def launch_plans(seed: int) -> tuple[dict[str, LaunchPlan], dict[str, int]]:
    """Every launch of the round and its PAD_ID; the killed rank and the two pad ids are drawn
    from the grading's seed."""
    draw = random.Random(seed)
    kill_rank = draw.choice((0, 1))
    pad, other_pad = draw.sample(SPECIAL_IDS, 2)
    base = LaunchPlan("train", 2, STEPS, CKPT_EVERY, data="train")
    compared = replace(base, dropout_off=True)  # the runs whose gradients are compared
    plans = (
        compared,
        replace(base, name="kill", kill=(kill_rank, KILL_AFTER)),
        replace(compared, name="pad"),
        replace(compared, name="labels"),
        # not "single": the DDP round's fail-fast (a hang there stops every other launch)
        replace(base, name="one_process", world_size=0),
        replace(base, name="resume", continues="kill"),
        # one process served the W=2 run's global batch size (checks_same_batch.py)
        replace(compared, name="same_batch", world_size=0, batch_size=2 * BATCH_SIZE),
    )
    pads = {name: pad for name in ("one_process", "train", "labels", "kill", "resume")}
    pads["same_batch"] = pad
    pads["pad"] = other_pad
    return {plan.name: plan for plan in plans}, pads


def decoy_id(pad_id: int) -> int:
    """The id the token embedding reads padding as, in a launch whose PAD_ID is `pad_id`: the
    next special id after it (cyclic), so never PAD_ID itself (a `padding_idx=PAD_ID` row of
    zeros would hide attention to padding) and another for each PAD_ID."""
    return SPECIAL_IDS[(SPECIAL_IDS.index(pad_id) + 1) % len(SPECIAL_IDS)]


PHASE_LAUNCHES: dict[str, tuple[str, ...]] = {
    "masks": ("train", "one_process", "labels", "pad", "same_batch"),
    "split": ("train",),
    "epoch": ("train", "kill", "resume"),
}


def to_launch(
    plan: LaunchPlan, pad_id: int, script: Path, out_dir: Path, seed: int, timeout_s: float
) -> ScriptLaunch:
    """The launch of `plan`, its PAD_ID `pad_id`; in the launches the masks checks compare,
    every non-amino-acid id the model's token embedding (an nn.Embedding of VOCAB rows) reads is
    read as that launch's decoy (decoy_id: a non-amino-acid id other than its PAD_ID, another in
    each of the two launches compared), so the padding differs whatever value the script padded
    with, also under `padding_idx=PAD_ID`; launch "labels" reads the train launch's residues
    with every label shifted (drill_data._sample)."""
    from trainer_lab.grading.grader import launch_for

    masks = plan.name in PHASE_LAUNCHES["masks"]
    remap = (*AMINO_IDS, pad_id, decoy_id(pad_id), VOCAB) if masks else None
    relabel = RELABEL_BIT if plan.name == "labels" else 0
    return launch_for(
        plan,
        script,
        out_dir,
        timeout_s,
        seed=seed,
        ckpt_of=plan.continues or plan.name,
        data=DataPlan(
            seed=group_seed(seed, plan.data) + relabel,
            batch_size=plan.batch_size,
            pad_id=pad_id,
            token_remap=remap,
        ),
    )


def phase_checks(phase: str, runs: dict[str, ScriptRun]) -> list[Check]:
    missing = [n for n in PHASE_LAUNCHES[phase] if n not in runs]
    if missing:
        return [
            check(n, False, f"not run: {missing}", {"not_run": True}) for n in CHECK_NAMES[phase]
        ]
    if phase == "masks":
        return mask_checks(runs, STEPS, LOSS_BAND, given_index("LENGTHS"))
    if phase == "split":
        return split_checks(runs["train"], given_index("CLUSTERS"), given_index("LENGTHS"))
    clusters = given_index("CLUSTERS")
    return epoch_checks(runs["train"], runs["kill"], runs["resume"], STEPS, KILL_AFTER, clusters)


SPEC = PromptSpec(
    LAB, PHASES, CHECK_NAMES, SCRIPT_NAME, (FILES / "drill_data.py",), PHASE_LAUNCHES, phase_checks
)


def _launches(seed: int, out_dir: Path, timeout_s: float) -> Launches:
    plans, pads = launch_plans(seed)
    return Launches(
        plans,
        lambda plan, script: to_launch(plan, pads[plan.name], script, out_dir, seed, timeout_s),
        lambda runs: {"kill": plans["kill"].kill, "pad_ids": pads},
    )


grade_biotech = prompt_grader(SPEC, _launches, TIMEOUT_S)
"""Grade the script as this round's train.py; write out_dir/result.json."""
