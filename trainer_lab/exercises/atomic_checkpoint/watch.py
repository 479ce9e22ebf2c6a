"""What durable_commit sees of a save (no torch): its syncs, renames and file creations, in order.

Renames and creations come from Python's audit events ("os.rename" is raised by os.rename,
os.replace, Path.rename/replace and shutil.move; "open" by open() and os.open), so they are seen
however the user's code reached them. Syncs raise no audit event, so os.fsync, os.fdatasync and
os.sync are wrapped: in os, and wherever the user's module bound them when it was imported (a
name imported from os, a functools.partial of one, a class attribute or staticmethod holding
one). A call records what it made durable: the file or directory behind the descriptor (its
inode and size at that moment), or for os.sync every file under the watched directory.
"""

from __future__ import annotations

import functools
import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SYNCS = ("fsync", "fdatasync", "sync")  # os functions that make data durable
Ident = tuple[int, int]  # (st_dev, st_ino)

_sink: list[list[dict[str, Any]]] = []  # the calls list of the active watch (at most one)


def files(root: Path) -> dict[Ident, tuple[str, int, int]]:
    """Regular files under `root`: (dev, inode) -> (path relative to root, size, mtime_ns)."""
    found: dict[Ident, tuple[str, int, int]] = {}
    for p in root.rglob("*") if root.is_dir() else ():
        try:
            st = p.lstat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found[(st.st_dev, st.st_ino)] = (str(p.relative_to(root)), st.st_size, st.st_mtime_ns)
    return found


def ident_of(path: Any) -> Ident | None:
    try:
        st = os.stat(path)
    except (OSError, TypeError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _sink or event not in ("os.rename", "open"):
        return
    calls = _sink[-1]
    if event == "os.rename" and isinstance(args[0], str | bytes | os.PathLike):
        src, dst = os.path.abspath(os.fsdecode(args[0])), os.path.abspath(os.fsdecode(args[1]))
        calls.append({"op": "rename", "src": src, "dst": dst, "id": ident_of(src)})
    elif event == "open" and isinstance(args[0], str | bytes | os.PathLike):
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        if flags & os.O_CREAT:
            path = os.path.abspath(os.fsdecode(args[0]))
            calls.append({"op": "create", "path": path, "existed": os.path.lexists(path)})


_hooked: list[bool] = []


def _rebind(user: Any, wrappers: dict[Any, Callable[..., Any]]) -> list[Callable[[], None]]:
    """Point the user's module-level bindings of the originals at the wrappers; the undo steps."""
    undo: list[Callable[[], None]] = []

    def replace(owner: Any, key: str, value: Any) -> None:
        old = vars(owner)[key]
        setattr(owner, key, value)
        undo.append(lambda: setattr(owner, key, old))

    def swapped(value: Any) -> Any:
        if any(value is o for o in wrappers):
            return next(w for o, w in wrappers.items() if value is o)
        if isinstance(value, functools.partial) and any(value.func is o for o in wrappers):
            return functools.partial(swapped(value.func), *value.args, **value.keywords)
        if isinstance(value, staticmethod) and swapped(value.__func__) is not value.__func__:
            return staticmethod(swapped(value.__func__))
        return value

    for key, value in list(vars(user).items()):
        if swapped(value) is not value:
            replace(user, key, swapped(value))
        elif isinstance(value, type) and value.__module__ == user.__name__:
            for name, member in list(vars(value).items()):
                if swapped(member) is not member:
                    replace(value, name, swapped(member))
    return undo


@contextmanager
def watch(user: Any, root: Path, calls: list[dict[str, Any]]) -> Iterator[None]:
    """Record the save's syncs, renames and creations into `calls` while active."""
    if not _hooked:
        sys.addaudithook(_audit)
        _hooked.append(True)
    originals = {name: getattr(os, name) for name in SYNCS}

    def synced(fd: Any, op: str) -> None:
        try:
            st = os.fstat(fd if isinstance(fd, int) else fd.fileno())
            calls.append({"op": op, "id": (st.st_dev, st.st_ino), "size": st.st_size,
                          "dir": stat.S_ISDIR(st.st_mode)})  # fmt: skip
        except (OSError, AttributeError, ValueError):
            pass

    def fsync(fd: Any) -> None:
        originals["fsync"](fd)
        synced(fd, "fsync")

    def fdatasync(fd: Any) -> None:
        originals["fdatasync"](fd)
        synced(fd, "fdatasync")

    def sync() -> None:
        originals["sync"]()
        now = {ident: size for ident, (_, size, _) in files(root).items()}
        calls.append({"op": "sync", "sizes": now, "dir": True})

    wrappers = {"fsync": fsync, "fdatasync": fdatasync, "sync": sync}
    undo = _rebind(user, {originals[name]: wrappers[name] for name in SYNCS})
    _sink.append(calls)
    try:
        for name, wrapper in wrappers.items():
            setattr(os, name, wrapper)
        yield
    finally:
        _sink.remove(calls)
        for name, original in originals.items():
            setattr(os, name, original)
        for step in reversed(undo):
            step()


def synced_at(call: dict[str, Any], ident: Ident) -> int | None:
    """The size at which `call` made the file `ident` durable, None when it did not."""
    if call["op"] == "sync":
        return call["sizes"].get(ident)
    if call["op"] in ("fsync", "fdatasync") and call["id"] == ident:
        return call["size"]
    return None


def syncs_folder(call: dict[str, Any], folder: Ident | None) -> bool:
    """Whether `call` made the directory `folder`'s entries durable."""
    if call["op"] == "sync":
        return True
    return call["op"] in ("fsync", "fdatasync") and call["dir"] and call["id"] == folder


def describe(call: dict[str, Any]) -> str:
    if call["op"] == "rename":
        return f"rename {os.path.basename(call['src'])} -> {os.path.basename(call['dst'])}"
    if call["op"] == "create":
        return f"create {os.path.basename(call['path'])}"
    if call["op"] == "sync":
        return "os.sync()"
    what = call.get("label", "a directory") if call["dir"] else f"a file of {call['size']:,} B"
    return f"{call['op']}({what})"
