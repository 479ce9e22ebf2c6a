"""Resource limits for user code (torch-free), set in the child before the user's script runs.

Limits only ever go down. RLIMIT_NPROC counts every task of the user id, so it is set to what the
user already runs plus a margin: a fork bomb stops at the margin instead of filling the machine.
"""

from __future__ import annotations

import os
import resource

ADDRESS_SPACE_BYTES = 3 * 1024**3  # a torch+gloo worker maps about 1 GiB
FILE_SIZE_BYTES = 64 * 1024**2  # any one file, stdout logs included (SIGXFSZ beyond)
EXTRA_TASKS = 256

LIMITS_TEXT = (
    f"address space {ADDRESS_SPACE_BYTES // 1024**3} GiB, files {FILE_SIZE_BYTES // 1024**2} MiB, "
    f"{EXTRA_TASKS} more processes or threads"
)


def user_task_count(uid: int | None = None) -> int:
    """Processes and threads the user id runs now (what RLIMIT_NPROC counts)."""
    uid = os.getuid() if uid is None else uid
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid == uid:
                count += len(os.listdir(f"/proc/{entry}/task"))
        except OSError:
            continue
    return count


def _lower(which: int, value: int) -> None:
    _soft, hard = resource.getrlimit(which)
    new_hard = value if hard == resource.RLIM_INFINITY else min(hard, value)
    resource.setrlimit(which, (new_hard, new_hard))


def apply_limits() -> None:
    _lower(resource.RLIMIT_AS, ADDRESS_SPACE_BYTES)
    _lower(resource.RLIMIT_FSIZE, FILE_SIZE_BYTES)
    _lower(resource.RLIMIT_CORE, 0)
    _lower(resource.RLIMIT_NPROC, user_task_count() + EXTRA_TASKS)
