"""sparse-rows: batches come out of CSR reading only their own entries; graph batches offset ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_csr_batches_hold_and_read_only_what_they_need(tmp_path: Path) -> None:
    params = {"cells": 4000, "genes": 1000, "density": 0.02, "batch": 128}
    result = run_lab("sparse-rows", params, 1, tmp_path, timeout_s=180)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    nnz = obs["nnz"]
    assert obs["bytes"]["dense"] == 4000 * 1000 * 4
    # float32 values + int64 column indices + int64 row pointers, nothing densified
    assert obs["bytes"]["csr"] == nnz * 12 + (4000 + 1) * 8 == obs["dataset"]["held_bytes"]
    assert obs["dataset_over_dense"] < 0.1
    touched = obs["touched_bytes"]
    assert touched["csr"] == obs["batch"]["nnz"] * 12 + 128 * 16
    # CSC must scan every row index of the matrix to find the batch's rows
    assert touched["csc"] > nnz * 8 and obs["csc_read_amplification"] > 10
    assert obs["batch"]["max_abs_diff"] == 0
    g = obs["graph_batch"]
    assert g["misassigned_edges"] == 0 and g["max_rel_diff_vs_single"] <= 1e-5
    assert g["padded_over_csr"] > 1
    assert set(obs["time_ratio"]) == {"densify_over_csr", "csc_over_csr"}


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("densify", {"dataset_stays_sparse", "row_reads_touch_only_the_batch"}),
        ("csc", {"row_reads_touch_only_the_batch"}),
        ("bad_indptr", {"rows_match_dense"}),
        ("no_offset", {"graph_batch_matches_single_graphs"}),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, sabotage: str, failing: set[str]
) -> None:
    params = {"cells": 4000, "genes": 1000, "sabotage": sabotage}
    result = run_lab("sparse-rows", params, 1, tmp_path, timeout_s=180)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing


def test_read_counter_counts_what_the_ops_read_out_of_held_tensors() -> None:
    import torch

    from trainer_lab.labs.sparse_rows.worker import ReadCounter

    held, other = torch.arange(100), torch.ones(10)
    with ReadCounter([held]) as gather:
        held[torch.tensor([1, 2, 3])]  # a gather reads what it returns: 3 int64
    assert gather.bytes == 24
    with ReadCounter([held]) as scans:
        held.sum()  # a whole read
        held[10:20]  # a view reads nothing
        other.sum()  # not held
        other[held[:5] % 10]  # the held slice is read once, as an operand
    assert scans.bytes == 800 + 40
