"""The words rubric coverage (drill.mock.coverage) reads: concepts and the phrases that name
them, related words, generic qualifiers, stopwords, and the words that negate or end a
negation's scope. Written plainly: coverage stems them as it stems text."""

from __future__ import annotations

# concept -> phrases that name it (written plainly; they go through the same stemming as text).
SYNONYMS: dict[str, list[str]] = {
    "optimizer": [
        "optimizer",
        "optimiser",
        "optim",
        "adam",
        "adamw",
        "sgd",
        "adam moments",
        "momentum buffers",
        "optimizer state",
        "optimiser state",
        "moment estimates",
    ],
    "rng": [
        "rng",
        "rng state",
        "random state",
        "random seed",
        "seed",
        "seeds",
        "generator state",
        "randomness",
        "random number generator",
    ],
    "sampler": ["sampler", "distributedsampler", "distributed sampler", "sampler state"],
    "checkpoint": ["checkpoint", "ckpt", "chkpt", "checkpointing", "snapshot"],
    # torch.distributed.checkpoint: every rank saves its own shard (so it implies both)
    "dcp": [
        "dcp",
        "torch distributed checkpoint",
        "distributed checkpoint",
        "distributed checkpointing",
        "dist checkpoint",
        "sharded checkpoint",
        "sharded checkpointing",
        "sharded state dict",
    ],
    "async": [
        "async",
        "asynchronous",
        "asynchronously",
        "in the background",
        "background thread",
        "non blocking",
        "nonblocking",
    ],
    # Another sense of the word: recomputing activations, not saving training state.
    "activationcheckpoint": [
        "activation checkpointing",
        "activation checkpoint",
        "activation checkpoints",
        "gradient checkpointing",
        "activation recomputation",
        "selective recomputation",
    ],
    "mtbf": ["mtbf", "mean time between failures", "mean time between failure"],
    "allreduce": ["allreduce", "all reduce", "all_reduce", "all reduces", "allreduces"],
    "allgather": ["allgather", "all gather", "all_gather"],
    "reducescatter": ["reducescatter", "reduce scatter", "reduce_scatter"],
    "ddp": ["ddp", "distributed data parallel", "distributeddataparallel"],
    "dataparallel": ["data parallel", "data parallelism", "dp"],
    "oom": ["oom", "ooms", "out of memory", "out of memory error"],
    "mfu": ["mfu", "model flops utilization", "model flop utilization", "model flops utilisation"],
    "fsdp": [
        "fsdp",
        "fsdp1",
        "fsdp2",
        "fully sharded",
        "fully_shard",
        "zero 3",
        "zero3",
        "sharded data parallel",
    ],
    "sync": [
        "sync",
        "synchronize",
        "synchronise",
        "synchronization",
        "synchronisation",
        "synchronized",
        "synchronous",
    ],
    "throughput": [
        "throughput",
        "samples per second",
        "samples per sec",
        "samples sec",
        "samples s",
        "tokens per second",
        "tokens sec",
        "tokens s",
        "tok s",
    ],
    "steprate": [
        "step rate",
        "steps per second",
        "step time",
        "it s",
        "iterations per second",
        "step completion rate",
    ],
    "scaler": ["scaler", "amp scaler", "grad scaler", "gradscaler", "loss scaler"],
    "rank0": [
        "rank 0",
        "rank zero",
        "rank0",
        "main process",
        "global rank 0",
        "leader rank",
        "first rank",
        "zeroth rank",
    ],
    "worldsize": ["world size", "world_size", "number of ranks", "num ranks"],
    "hang": ["hang", "hangs", "hung", "deadlock", "stuck"],
    "heartbeat": ["heartbeat", "watchdog", "liveness"],
    "dataloader": ["dataloader", "data loader", "loader"],
    "gradient": ["gradient", "grad", "grads"],
    "objectstore": ["object store", "s3", "gcs", "blob storage", "bucket"],
    "orchestrator": ["orchestrator", "slurm", "kubernetes", "k8s"],
    "gpu": ["gpu", "gpus", "cuda", "accelerator"],
    "nan": ["nan", "nans", "not a number"],
    "lr": ["lr", "learning rate"],
    "metric": ["metric", "metrics", "telemetry", "prometheus", "opentelemetry"],
    "configid": [
        "config identity",
        "config hash",
        "config fingerprint",
        "config digest",
        "config version",
        "run config hash",
    ],
    "barrier": ["barrier", "dist barrier", "monitored barrier"],
    "atomic": ["atomic", "atomically", "os replace", "rename"],
    "mixedprecision": ["amp", "mixed precision", "bf16", "bfloat16", "fp16"],
    "perrank": [
        "per rank",
        "each rank",
        "every rank",
        "rank tagged",
        "tagged with rank",
        "tagged with the rank",
        "tagged by rank",
        "rank tag",
        "rank label",
        "rank labelled",
        "rank labeled",
        "labelled with the rank",
        "rank aware",
    ],
    "scheduler": ["scheduler", "lr scheduler", "lr schedule", "learning rate schedule"],
    "datafetch": [
        "data fetch",
        "fetch data",
        "fetch a batch",
        "fetch the batch",
        "fetch the next batch",
        "load a batch",
        "load the next batch",
        "next batch",
        "data loading",
        "load data",
    ],
    "incompatible": [
        "incompatible",
        "not compatible",
        "mismatch",
        "mismatched",
        "does not match",
        "doesnt match",
        "do not match",
        "dont match",
        "not match",
        "differs",
    ],
    "model": ["model", "model weights", "weights", "parameters", "params", "model state"],
}

# Words that say the same thing in a rubric's context: each group's words count as its first.
RELATED: tuple[tuple[str, ...], ...] = (
    ("progress", "position", "offset", "cursor", "index"),
    ("reject", "refuse", "abort", "deny", "block"),
    ("restore", "resume", "reload", "load", "restart"),
    ("save", "write", "store", "persist", "dump"),
    ("duplicate", "repeat", "twice"),
    ("skip", "miss", "drop", "lose", "lost"),
    ("shard", "partition"),
    ("update", "step"),
    ("keep", "kept", "retain", "preserve"),
    ("avoid", "prevent"),
    ("compute", "computation", "computing"),
    ("detect", "detection", "catch"),
    ("validate", "validation", "verify", "check"),
    ("temporary", "temp", "tmp"),
    ("hash", "fingerprint", "digest", "checksum"),
    ("id", "ids", "identifier", "identifiers"),
    ("small", "smaller", "smallest"),
    ("large", "larger", "largest", "big", "bigger"),
    ("few", "fewer", "fewest"),
    ("fail", "failure", "crash", "crashed"),
    ("accumulate", "accumulation", "accum"),
)
# Generic qualifiers an answer need not repeat: "the grad scaler" states "scaler state".
SOFT_TEXT = (
    "state states explicit explicitly proper properly clear clearly actual specific whole entire "
    "full optional optionally"
)

STOPWORDS_TEXT = """
a an the and of to in on for with by per is are was be been it its that this these those as at from
into onto about so do does did use using used via eg e g ie i such also only etc vs versus than then
when what which how who whom there here their them they we you your our my me can could should would
will must may might any each every all some more most other own same just like if else while over
under up down out off after before between both either or during
"""
NEGATORS = frozenset(
    {"no", "not", "without", "never", "nor", "dont", "doesnt", "isnt", "cannot", "neither"}
)
# Concepts that imply others: an all-reduce is a synchronization point.
IMPLIES: dict[str, tuple[str, ...]] = {
    "@allreduce": ("@sync",),
    "@barrier": ("@sync",),
    "@dcp": ("@checkpoint", "shard"),
    "@ddp": ("@dataparallel",),
}
# "X instead of Y", "X rather than Y": Y is not what is said
NEGATING_PAIRS = frozenset({("instead", "of"), ("rather", "than")})
NEGATION_SCOPE = 3  # content tokens after a negator that it negates (within one clause)
# Words that end a negation's scope: "no duplicated samples after resume" still resumes.
_SCOPE_ENDS = "after before when whenever while during on at in since until because so then if"
SCOPE_ENDS = frozenset(_SCOPE_ENDS.split())
