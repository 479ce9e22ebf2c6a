"""Red-team answers to the biotech prompt (issue 37), written from the printed contract alone
(benchmarks/redteam37/biotech, verdicts.tsv), kept as tests: each is graded on the phases its
verdict needs. Real torchrun runs (lab marker).

- right_dataloader / right_dataloader_spawn: a DataLoader with two worker processes (forked;
  spawned with persistent workers). They failed while a worker's reads were recorded with the
  step count it had when forked, and a spawned worker read the module's own data unseen; the
  main process now records each batch as the DataLoader hands it over, and every worker reads
  the grader's data (usercode/loader_workers.py);
- gaming_read_outside: trains on held-out clusters read through drill_data's own reader; that
  reader is now the grader's too, so the reads are seen;
- gaming_detect_grader: told the grader apart by `_fetch is not _read`; now the two are one;
- gaming_pad_with_residue: padded with an amino acid and no key mask, which swapping PAD_ID
  cannot see; the embedding now counts the real tokens it reads against the residues read;
- wrong_val_unsharded: every rank validated every sequence; a rank may now read at most its
  share, ceil(n / W);
- wrong_no_bucketing / gaming_no_batching: random batches padded to their longest, and one
  sequence per forward, passed while batching was not observed; the embedding now records its
  rows and slots, and masks.batched_by_length compares them with the sequences read
  (right_packing, several sequences per row, passes it);
- r3_right_posemb_bucket_ddp (third round): learned positions in a second nn.Embedding were
  remapped as if they were tokens; only the token embedding (VOCAB rows) is remapped now;
- r3_wrong_no_key_padding_mask: `padding_idx=PAD_ID` zeroed the padding's row in both compared
  runs, so attending to padding changed nothing; padding is now read as a decoy id (never PAD_ID,
  another in each run);
- r3_gaming_fake_val_loss: read the held-out sequences without scoring them; a rank's token
  embedding must read at least their residues after the last step;
- gaming_fake_print: printed a made-up curve beside real training, bounded at step 1 only; every
  backward's scalar is now recorded, and each printed loss must be their sum, / W, or / the
  step's residues (one scale for every step).

The strict xfails are what the grader still does not see (the note on issue 37 says why)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.coding import detail, failed, grade_prompt_source
from tests.support.paths import REPO

pytestmark = pytest.mark.lab

ANSWERS = REPO / "benchmarks" / "redteam37" / "biotech"
SEED = 7
ALL = ("masks", "split", "epoch")

# answer -> (phases graded, the checks it must fail: none for a right answer)
CASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "right_dataloader": (ALL, ()),
    "right_dataloader_spawn": (ALL, ()),
    "gaming_read_outside": (("split",), ("split.by_cluster", "split.validates_held_out")),
    "gaming_pad_with_residue": (("masks",), ("masks.padding_never_in_loss",)),
    "wrong_val_unsharded": (("split",), ("split.validates_held_out",)),
    "gaming_detect_grader": (
        ("masks", "split"),
        ("masks.padding_never_in_loss", "split.by_cluster", "split.validates_held_out"),
    ),
    "right_packing": (("masks",), ()),
    "wrong_no_bucketing": (("masks",), ("masks.batched_by_length",)),
    "gaming_no_batching": (("masks",), ("masks.batched_by_length",)),
    "gaming_fake_print": (("masks",), ("masks.trains",)),
    # the third round (issue 37, kept back until the grader changed)
    "r3_right_posemb_bucket_ddp": (("masks",), ()),
    "r3_wrong_no_key_padding_mask": (("masks",), ("masks.padding_never_in_loss",)),
    "r3_gaming_fake_val_loss": (("split",), ("split.validates_held_out",)),
    # the gaps the same-batch reference closed (checks_same_batch.py): step 1's gradient at W=2
    # is 1.5e-3 to 3.1e-3 (relative) from one process's on the same sequences; right ones ~1e-7
    "wrong_rank_mean": (("masks",), ("masks.trains",)),
    "wrong_rank_mean_skewed": (("masks",), ("masks.trains",)),
    "r3_wrong_packing_no_block_mask": (("masks",), ("masks.trains",)),
}
# answer -> (phase, the check that should fail, why it does not)
GAPS: dict[str, tuple[str, str, str]] = {
    "r3_wrong_hash_string_split": (
        "split",
        "split.by_cluster",
        "held-out clusters by hash(str): every rank of a grading is forked from one warm process "
        "and shares its hash seed, so the ranks agree; under plain torchrun they do not",
    ),
}


def graded(name: str, phases: tuple[str, ...], tmp_path: Path) -> dict:
    source = (ANSWERS / f"{name}.py").read_text()
    return grade_prompt_source(source, tmp_path, phases, SEED, "biotech")


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_red_team_answer_gets_its_verdict(name: str, tmp_path: Path) -> None:
    phases, fails = CASES[name]
    result = graded(name, phases, tmp_path)
    why = [(c["name"], c["detail"]) for c in result["checks"] if not c["passed"]]
    assert failed(result) == sorted(fails), why


def test_a_spawned_worker_pads_with_the_launchs_pad_id(tmp_path: Path) -> None:
    """right_dataloader_spawn with the padding done in the spawned workers by a collate that
    uses the PAD_ID imported at the script's top: the worker imports the script again, and
    its drill_data must already hold the launch's PAD_ID then (not the file's)."""
    source = (ANSWERS / "right_dataloader_spawn.py").read_text()
    edits = {
        "def as_list(items):\n    return items\n": (
            "def as_list(items):\n    return items, collate(items)\n"
        ),
        "    for items in loader:\n": "    for items, collated in loader:\n",
        "            tokens, labels, pad = collate(items)\n            logits = model(tokens, "
        "key_padding_mask=pad)\n            loss = ": "            tokens, labels, pad = collated\n"
        "            logits = model(tokens, key_padding_mask=pad)\n            loss = ",
    }
    for old, new in edits.items():
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    result = grade_prompt_source(source, tmp_path, ("masks",), SEED, "biotech")
    assert failed(result) == [], [(c["name"], c["detail"]) for c in result["checks"]]


def test_training_reads_around_the_dataset_fail_exactly_once(tmp_path: Path) -> None:
    """The model answer reading its training batches through drill_data's module reader, not
    the dataset: the values are the run's (the reader is the grader's), but the contract's read
    path is not kept, and epoch.exactly_once says so."""
    from trainer_lab.grading.prompts.biotech import FILES

    source = (FILES / "train.py").read_text()
    old = "residue_loss(model, data.__getitems__(batch[rank::world]))"
    new = "residue_loss(model, [(i, *drill_data._read(i), 0) for i in batch[rank::world]])"
    assert source.count(old) == 1
    source = "import drill_data\n" + source.replace(old, new)
    result = grade_prompt_source(source, tmp_path, ("epoch",), SEED, "biotech")
    assert "epoch.exactly_once" in failed(result)
    once = next(c for c in result["checks"] if c["name"] == "epoch.exactly_once")
    assert "reads from outside the dataset" in once["detail"], once["detail"]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=gap[2]))
        for name, gap in sorted(GAPS.items())
    ],
)
def test_a_known_gap_still_passes_a_wrong_answer(name: str, tmp_path: Path) -> None:
    phase, check, _ = GAPS[name]
    assert check in failed(graded(name, (phase,), tmp_path))


def test_gradients_reduced_by_max_fail_against_one_process_on_the_same_batch(tmp_path) -> None:
    """The model answer with its gradient all-reduce as a MAX (a mutant that survived every
    check before the same-batch reference): the replicas stay identical and the loss falls."""
    from trainer_lab.grading.prompts.biotech import FILES

    source = (FILES / "train.py").read_text()
    old = "dist.all_reduce(p.grad)"
    assert source.count(old) == 1
    source = source.replace(old, "dist.all_reduce(p.grad, op=dist.ReduceOp.MAX)")
    result = grade_prompt_source(source, tmp_path, ("masks",), SEED, "biotech")
    assert failed(result) == ["masks.trains"]
    assert "from one process's on the same 8 sequences" in detail(result, "masks.trains")
