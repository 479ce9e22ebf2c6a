"""A script run from the warm launcher sees what it sees under a fresh interpreter and torchrun:
the probe script reports its process (signals, threads, random state, multiprocessing, logging,
environment) and a seeded training's digest, once per launcher; the reports must agree."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from trainer_lab.usercode.harness import ScriptLaunch, run_script

pytestmark = pytest.mark.lab

PROBE = Path(__file__).parent / "fixtures" / "probe.py"
# Differ by construction: where the run lives, and the random draws (checked apart below).
PER_RUN = ("cwd", "path0", "python_random", "torch_seed")


def probe(tmp_path: Path, launcher: str, world_size: int) -> dict[int, dict[str, Any]]:
    workspace = tmp_path / launcher / "ws"
    workspace.mkdir(parents=True)
    script = workspace / "train.py"
    shutil.copy(PROBE, script)
    launch = ScriptLaunch(
        "probe",
        script,
        ("--steps", "3"),
        world_size,
        tmp_path / launcher / "run",
        tmp_path / launcher / "ckpt",
        120.0,
        launcher=launcher,  # type: ignore[arg-type]
    )
    run = run_script(launch)
    assert run.status == "ok", run.summary()
    ranks = range(max(world_size, 1))
    return {r: json.loads((workspace / f"probe-rank{r}.json").read_text()) for r in ranks}


@pytest.mark.parametrize("world_size", [0, 2])
def test_a_forked_rank_sees_what_a_fresh_one_sees(tmp_path, world_size):
    cold = probe(tmp_path, "torchrun", world_size)
    warm = probe(tmp_path, "warm", world_size)
    for rank in cold:
        fresh = {k: v for k, v in cold[rank].items() if k not in PER_RUN}
        forked = {k: v for k, v in warm[rank].items() if k not in PER_RUN}
        # the preload imported more of torch than the probe: a warning filter more (sympy's)
        assert set(fresh.pop("warning_filters")) <= set(forked.pop("warning_filters"))
        assert forked == fresh, sorted(k for k in fresh if fresh[k] != forked.get(k))
        assert warm[rank]["path0"] == warm[rank]["cwd"]
        assert forked["mp_process"] == "MainProcess" and forked["signals"]["SIGINT"] != "None"
    # random state is the process's own: never the same in two ranks or two runs
    draws = [(r["python_random"], r["torch_seed"]) for run in (cold, warm) for r in run.values()]
    assert len({d[0] for d in draws}) == len(draws)
    assert len({d[1] for d in draws}) == len(draws)
