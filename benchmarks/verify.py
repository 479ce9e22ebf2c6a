"""Cold `drill verify` wall time: --jobs 1 against the default core budget.

Each run uses a throwaway DRILL_HOME (so the cache is empty: every lab really runs). The machine
is shared: the 1-minute load average is printed before each run; compare only quiet runs.

    python benchmarks/verify.py                      # every bundled card (minutes)
    python benchmarks/verify.py --deck biotech       # one deck
    python benchmarks/verify.py --deck biotech --strength
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def cold_run(extra: list[str], jobs: int | None) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="drill-verify-bench-") as home:
        env = {**os.environ, "DRILL_HOME": home, "COLUMNS": "200"}
        entry = "import sys; from drill.cli.main import main; sys.exit(main(sys.argv[1:]))"
        command = [sys.executable, "-c", entry, "verify", *extra]
        if jobs is not None:
            command += ["--jobs", str(jobs)]
        started = time.monotonic()
        proc = subprocess.run(command, env=env, capture_output=True, text=True)
        elapsed = time.monotonic() - started
    summary = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
    print(f"    {summary}")
    return elapsed, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deck")
    parser.add_argument("--strength", action="store_true")
    args = parser.parse_args()
    extra = (["--deck", args.deck] if args.deck else []) + (["--strength"] if args.strength else [])
    print(f"cores: {os.cpu_count()}  scope: {args.deck or 'all bundled cards'}")
    results = {}
    for jobs in (1, None):
        label = "--jobs 1" if jobs == 1 else "default"
        print(f"{label}: load average {os.getloadavg()[0]:.2f} before")
        elapsed, code = cold_run(extra, jobs)
        results[label] = elapsed
        print(f"{label}: {elapsed:.1f} s (exit {code})")
    print(f"speed-up default vs --jobs 1: {results['--jobs 1'] / results['default']:.2f}x")


if __name__ == "__main__":
    main()
