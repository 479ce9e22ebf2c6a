"""Grading a notebook against grading the same file: `drill mock grade round.ipynb` vs `drill mock
grade train.py`, the model answer in both.

    python benchmarks/notebook_grading.py [--repeat 3] [--phases skeleton] [--extract 200]

Runs the CLI command in this process (DRILL_HOME a temporary folder, --json so nothing is
printed), alternating file and notebook (ABBA) so that a change in the machine's load hits both
alike; prints the median of --repeat runs each (after --warmup untimed ones of each) and the
ratio notebook / file, with the load average. The notebook is the round's notebook (`drill
mock notebook OUT.ipynb`) with the model answer in its `%%writefile train.py` cell. Then it
times what the notebook adds on its own (reading and validating the notebook, finding the cell,
writing it out as train.py), --extract times.
The issue's target: grading a notebook takes no longer than grading the same file (ratio ~1;
the reading is milliseconds against seconds of torchrun launches).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def model_notebook(path: Path) -> Path:
    """The round's notebook with the model answer in its train.py cell."""
    import nbformat

    from drill.mock.coding.notebook import write_round_notebook
    from trainer_lab.grading import model_answer_source

    write_round_notebook(path)
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if c.source.startswith("%%writefile train.py"))
    cell.source = "%%writefile train.py\n" + model_answer_source()
    nbformat.write(notebook, path)
    return path


def time_command(path: Path, phases: list[str]) -> float:
    from drill.cli.main import main

    argv = ["mock", "grade", str(path), "--json"]
    for phase in phases:
        argv += ["--phase", phase]
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    elapsed = time.monotonic() - start
    if code != 0:
        print(f"  WARNING: {path.name} graded with exit {code}: {err.getvalue()[-300:]}")
    return elapsed


def time_extraction(notebook: Path, out: Path, repeat: int) -> float:
    """Median seconds of what the notebook adds: read, validate, find the cell, write train.py."""
    from drill.mock.coding.notebook import find_train_cell

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        cell = find_train_cell(notebook)
        (out / "train.py").write_text(cell.source, encoding="utf-8")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--phases", default="skeleton", help="comma-separated; all: every phase")
    parser.add_argument("--extract", type=int, default=200, help="times the extraction alone")
    parser.add_argument("--warmup", type=int, default=1, help="untimed gradings of each first")
    args = parser.parse_args()
    from trainer_lab.grading import PHASES, model_answer_source

    phases = list(PHASES) if args.phases == "all" else [p for p in args.phases.split(",") if p]
    with tempfile.TemporaryDirectory(prefix="drill-nb-bench-") as tmp:
        root = Path(tmp)
        os.environ["DRILL_HOME"] = str(root / "home")
        script = root / "file" / "train.py"
        script.parent.mkdir()
        script.write_text(model_answer_source())
        notebook = model_notebook(root / "nb" / "round.ipynb")
        load = os.getloadavg()
        print(f"phases {','.join(phases)}; repeat {args.repeat}; cores {os.cpu_count()}; "
              f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}", flush=True)  # fmt: skip
        for _ in range(args.warmup):  # imports, the warm launcher's first fork: not timed
            time_command(script, phases)
            time_command(notebook, phases)
        files, notebooks = [], []
        for run in range(args.repeat):  # ABBA: neither kind always runs right after the other
            if run % 2:
                notebooks.append(time_command(notebook, phases))
            files.append(time_command(script, phases))
            if not run % 2:
                notebooks.append(time_command(notebook, phases))
            print(f"  run {run + 1}: file {files[-1]:.2f} s, notebook {notebooks[-1]:.2f} s",
                  flush=True)  # fmt: skip
        extract = time_extraction(notebook, root, args.extract)
    file_s, notebook_s = statistics.median(files), statistics.median(notebooks)
    print(f"file      median {file_s:7.2f} s  ({', '.join(f'{t:.2f}' for t in files)})")
    print(f"notebook  median {notebook_s:7.2f} s  ({', '.join(f'{t:.2f}' for t in notebooks)})")
    print(f"ratio notebook / file: {notebook_s / file_s:.3f}")
    print(f"the notebook's own part (read, validate, find the cell, write): {extract * 1e3:.1f} ms"
          f" median of {args.extract}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
