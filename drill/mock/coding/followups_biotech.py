"""The biotech data-pipeline round's follow-up table (drill.mock.coding.catalogue joins it with
trainer_lab's entry "biotech"): the question each failed check asks, the harder question a phase
that held leads to, and the round's time table. Placeholders are followup_table.FACT_KEYS."""

from __future__ import annotations

from drill.mock.coding.followup_table import Template
from drill.mock.coding.phases import CodingPhase

MASK_CARDS = ("bio-variable-length-collation", "frontier-packing-document-masks")
SPLIT_CARDS = ("bio-data-leakage", "bio-scaffold-split")
EPOCH_CARDS = ("map-sampler-state-correctness", "hard-resume-correctness")

FAILED: dict[str, Template] = {
    "masks.trains": Template(
        "bio-trains",
        'Your script did not train as the contract asks: "{evidence}". Walk me through one '
        "step, as one process and as two: what each rank reads, pads, feeds to the loss and "
        "all-reduces, and what it prints.",
        (
            "Each rank pads its share of the global batch and computes a masked loss sum",
            "The dataset's labels are the targets, so other labels give other gradients",
            "The printed loss is the mean over the real residues, not a sum",
            "Without torchrun it runs as one process: no process group, no all-reduce",
        ),
        MASK_CARDS,
    ),
    "masks.padding_never_in_loss": Template(
        "bio-padding",
        'With another pad token your gradients changed: "{evidence}". Where does padding '
        "reach your loss, and which masks keep it out?",
        (
            "The loss counts real residues only (mask or ignore_index on padded labels)",
            "The attention ignores padded keys (key_padding_mask), packed rows a block mask",
            "The mean divides by the real residues of the global batch, not the padded length",
            "The mask comes from the lengths, not from comparing tokens with a pad value",
        ),
        MASK_CARDS,
    ),
    "masks.batched_by_length": Template(
        "bio-batching",
        'Your batches were neither grouped by length nor packed: "{evidence}". What does '
        "padding every batch to its longest sequence cost here, and how would you batch?",
        (
            "Padding to the batch's longest wastes compute on every padded slot",
            "Bucketing: sort by length within a shuffled pool, cut batches of neighbours",
            "Packing: several sequences in one row with a block-diagonal attention mask",
            "One sequence per forward avoids padding but gives up the batch's parallelism",
        ),
        MASK_CARDS,
    ),
    "split.by_cluster": Template(
        "bio-split-cluster",
        'A cluster is on both sides of your split: "{evidence}". Why does that inflate the '
        "validation numbers, and how do you split instead?",
        (
            "Near-duplicates in training make validation a memorization test",
            "Assign whole clusters (from the index, e.g. by a hash of the cluster id)",
            "The same split in every run and on every rank, decided before any read",
        ),
        SPLIT_CARDS,
    ),
    "split.validates_held_out": Template(
        "bio-split-validation",
        'Your validation did not cover the held-out set: "{evidence}". How do you shard it '
        "so that every held-out sequence is scored once?",
        (
            "Each rank takes its own shard (ids rank::W), none repeated, none left out",
            "Sums of loss and residue counts are all-reduced, divided once",
            "The reported count is the number of sequences validated",
        ),
        SPLIT_CARDS,
    ),
    "epoch.exactly_once": Template(
        "bio-exactly-once",
        'Your epoch did not read every training sequence once across ranks: "{evidence}". '
        "How do your buckets and your ranks divide the sequences?",
        (
            "drop_last in a length-sorted order loses the same (longest) sequences every epoch",
            "Every rank builds the same buckets from one seed and takes its own part",
            "A smaller last step keeps every sequence; a rank with nothing still steps",
        ),
        EPOCH_CARDS,
    ),
    "epoch.reshuffled": Template(
        "bio-reshuffle",
        'Your second epoch repeated the first one\'s order: "{evidence}". Where does your '
        "order come from, and what changes it each epoch?",
        (
            "A generator seeded by (seed, epoch): DistributedSampler.set_epoch does this",
            "Bucketing shuffles within similar lengths and the order of the buckets",
            "The order is a function of the epoch only: a resume can rebuild it",
        ),
        EPOCH_CARDS,
    ),
    "epoch.resume_continues": Template(
        "bio-resume-position",
        'After the restart your relaunch repeated or skipped sequences: "{evidence}". What is '
        "the data position in your checkpoint, and how do you restore it?",
        (
            "The position is the step (or epoch and offset), saved with the model",
            "The relaunch rebuilds the epoch's order and skips the batches already done",
            "A fresh DataLoader iterator starts the epoch over: it repeats the done batches",
        ),
        EPOCH_CARDS,
    ),
}

WHAT_IF: dict[str, Template] = {
    "masks": Template(
        "bio-what-if-packing",
        "With sequences of 50 to 2,000 residues, would you bucket or pack, and what must the "
        "attention know when you pack?",
        (
            "Bucketing wastes little padding; packing wastes none but mixes sequences in a row",
            "Packed rows need a block-diagonal mask (or varlen attention with cu_seqlens)",
            "Positions restart at every sequence; the loss is per real residue",
        ),
        MASK_CARDS,
        check="masks.padding_never_in_loss",
        lead="Your padding never reached the loss.",
    ),
    "split": Template(
        "bio-what-if-leakage",
        "What if the clusters were made at 90% identity and the test proteins come from a new "
        "family?",
        (
            "Cluster at a lower identity (30%) or split by family or fold",
            "Check the nearest-neighbour identity of each validation sequence to training",
            "Report numbers per identity bucket: the leak shows as a gradient",
        ),
        SPLIT_CARDS,
        check="split.by_cluster",
        lead="No cluster was on both sides of your split.",
    ),
    "epoch": Template(
        "bio-what-if-workers",
        "What changes with 8 DataLoader workers per rank, and with a restart at another world "
        "size?",
        (
            "Each worker reads a disjoint part of the rank's share (worker_info)",
            "The position counts sequences consumed globally, not per rank or per worker",
            "Prefetched batches not trained on are not consumed: save the trained position",
        ),
        (*EPOCH_CARDS, "infra-iterable-worker-split"),
        check="epoch.resume_continues",
        lead="Your relaunch continued its epoch without repeating or skipping a sequence.",
    ),
}

WHAT_IF_ORDER = ("epoch", "masks", "split")

# The round's time table (45 min, as its catalogue entry says): one round phase per grader
# phase, then the pushback while everything is graded; talked through as the standard round's
# phases of the same kind.
PHASES = (
    CodingPhase("clarify", "Clarify assumptions", 5, ()),
    CodingPhase("masks", "Batches with correct masks", 12, ("masks",)),
    CodingPhase("split", "A split by cluster", 8, ("split",)),
    CodingPhase("epoch", "Exact epochs across ranks and a resume", 10, ("epoch",)),
    CodingPhase("pushback", "Full grading and pushback", 10, ("masks", "split", "epoch")),
)
TALK = {
    "clarify": "clarify",
    "masks": "skeleton",
    "split": "operate",
    "epoch": "distributed",
    "pushback": "pushback",
}
TOPICS = ("biotech", "sequences", "splits", "leakage", "dataloader")
RUN_ARGS = "--steps 16 --ckpt-dir ckpt --ckpt-every 4"
