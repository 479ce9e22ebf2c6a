"""Helpers shared by the lab tests: which checks failed, undeclared observations, processes left."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def processes_mentioning(path: Path) -> list[int]:
    """Live processes whose command line names `path` (workers carry RUN/spec.json), wherever
    they were reparented to: none may survive a lab."""
    found = []
    needle = str(path).encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmdline and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def checks(result: dict[str, Any]) -> dict[str, bool]:
    return {c["name"]: c["passed"] for c in result["checks"]}


def undeclared(result: dict[str, Any]) -> list[str]:
    """Observation paths a lab reported without declaring them in its SPEC (cards' claims can
    only name declared observations)."""
    from drill.decks.links import observation_known
    from trainer_lab.catalogue import get_lab

    spec = get_lab(result["lab"])
    missing: list[str] = []

    def walk(value: Any, path: str) -> None:
        if path and observation_known(spec, path):
            return
        if isinstance(value, dict) and value:
            for key, child in value.items():
                walk(child, f"{path}.{key}" if path else key)
        else:
            missing.append(path)

    walk(result["observations"], "")
    return missing


def cluster_leftovers() -> list[str]:
    """Namespaces and links (`ip netns list`, `ip link`) of an emulated cluster whose owner has
    ended: a lab that ran must leave none (a cluster still running elsewhere is not counted)."""
    from trainer_lab.cluster.network import existing_names, owner_of
    from trainer_lab.procs import is_alive

    return [
        name
        for name in existing_names()
        if (owner := owner_of(name)) is not None and not is_alive(owner)
    ]
