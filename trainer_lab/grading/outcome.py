"""What a grading returns: the lab result it wrote (out_dir/result.json), read through typed
fields (torch-free). It is also that mapping, so code written against the lab result contract
(the run history, `--json`) takes it as it is: `dict(grading)` is the result file's content."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # trainer_lab.result reads package metadata: the app imports this early
    from trainer_lab.result import Check, LabResult, Status


@dataclass(frozen=True, eq=False)  # eq=False: Mapping's __eq__, so it equals its result dict
class Grading(Mapping[str, Any]):
    result: LabResult
    out_dir: Path

    @property
    def status(self) -> Status:
        """ok (every check held) | failed | cancelled."""
        return self.result["status"]

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def checks(self) -> list[Check]:
        return self.result["checks"]

    @property
    def failed(self) -> list[str]:
        """The names of the checks that did not hold, in check order."""
        return [c["name"] for c in self.checks if not c["passed"]]

    @property
    def passed(self) -> int:
        return int(self.result["observations"]["checks_passed"])

    @property
    def total(self) -> int:
        return int(self.result["observations"]["checks_total"])

    @property
    def likely_causes(self) -> list[str]:
        return list(self.result["observations"].get("likely_causes") or [])

    @property
    def seed(self) -> int | None:
        """The seed the fault plan was drawn from (`grade(..., seed=)` reproduces it); None for
        a result written before gradings had one."""
        seed = self.result.get("seed")
        return seed if isinstance(seed, int) and not isinstance(seed, bool) else None

    @property
    def duration_s(self) -> float:
        return self.result["duration_s"]

    def __getitem__(self, key: str) -> Any:
        return self.result[key]  # type: ignore[literal-required]

    def __iter__(self) -> Iterator[str]:
        return iter(self.result)

    def __len__(self) -> int:
        return len(self.result)
