"""Wall time of grading each stretch phase's model answer, and the throughput phase's ratio of the
model answer against itself (how much room the target leaves on this machine).

    python benchmarks/stretch.py [--runs N] [--phases accum,amp,fsdp2,throughput]

Results: benchmarks/RESULTS-stretch.md.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

from trainer_lab.grading import STRETCH_PHASES, grade, stretch_model_answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--phases", default=",".join(STRETCH_PHASES))
    args = parser.parse_args()
    print("| phase | runs | passed | median s | min s | max s | notes |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for phase in args.phases.split(","):
        times, passed, ratios = [], 0, []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                script = Path(tmp) / "train.py"
                script.write_text(stretch_model_answer(phase))
                start = time.monotonic()
                grading = grade(script, Path(tmp) / "out", (phase,))
                times.append(time.monotonic() - start)
                passed += grading.ok
                for c in grading.checks:
                    found = re.search(r"runs each\): ([0-9.]+)x", c["detail"])
                    if found:
                        ratios.append(float(found.group(1)))
        notes = f"self-ratio {min(ratios):.2f}-{max(ratios):.2f}x" if ratios else ""
        print(
            f"| {phase} | {args.runs} | {passed} | {statistics.median(times):.1f} | "
            f"{min(times):.1f} | {max(times):.1f} | {notes} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
