"""A text file the user edits both in drill and elsewhere: an exercise file, a coding round's
train.py. UI-free; the exercise screen and the coding round screen share it.

A `WatchedFile` remembers what it last read or wrote here (the text, and the file's stamp:
mtime, ctime, size and inode, since an editor may replace the file), so that:

- `poll(shown)` picks up a save made elsewhere: RELOADED with the file's text when `shown` (the
  editor's text) has no unsaved edits, else CONFLICT, and the user chooses (`save(shown,
  force=True)` keeps the editor's text, `load()` takes the file's);
- `save(shown)` never writes over a file that changed since it was read: it polls first, and
  news from the disk is returned with nothing written (`force` overrides only a conflict the
  user was already told of, never a new one). It writes only text the user changed (an
  unedited file that is not UTF-8 keeps its bytes), as UTF-8, atomically (a temporary file
  renamed over the target; through a symlink to the file it names, whose mode is kept), and
  never over something that is not a regular file;
- every read goes through drill.files (read_regular: a FIFO, a directory, a link to a device or
  a file over the bound is REFUSED with its reason, never waited on; decode_text: bytes that are
  not UTF-8 are shown decoded, with a notice).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from drill.files import FileRefused, decode_text, read_regular

Stamp = tuple[int, int, int, int]
ChangeKind = Literal["reloaded", "conflict", "refused"]


def stamp_of(path: Path | None) -> Stamp | None:
    """What changes when a file is saved (mtime, ctime, size, inode); None when it is absent."""
    if path is None:
        return None
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)


@dataclass(frozen=True)
class Change:
    """What the disk said: `reloaded` (text: the file's, to show now), `conflict` (the file
    changed under unsaved edits), `refused` (reason: why it cannot be read or written)."""

    kind: ChangeKind
    text: str = ""
    reason: str = ""


class WatchedFile:
    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.text: str | None = None  # as last read or written here; None: not readable
        self.stamp: Stamp | None = None
        self.notice: str | None = None  # how the text was decoded, or why the file was refused
        self.refused = False  # the file on disk cannot be read (the editor's text stays)
        self.conflict = False  # changed on disk while the editor had unsaved edits
        self._failed: str | None = None  # the last write's failure, said once

    def load(self) -> str | None:
        """Read the file now; what the editor shows from here on. None when it is refused
        (`notice` says why). A missing file reads as empty (the first save writes it)."""
        stamp = stamp_of(self.path)  # before the read: a save during the read shows next time
        self.conflict = False
        try:
            data = read_regular(self.path, self.max_bytes)
        except FileNotFoundError:
            data = b""
        except FileRefused as error:
            self.text, self.stamp, self.refused, self.notice = None, stamp, True, str(error)
            return None
        decoded = decode_text(data, self.path.name)
        self.text, self.stamp, self.notice = decoded.text, stamp, decoded.notice
        self.refused = False
        return self.text

    def edited(self, shown: str) -> bool:
        """Whether `shown` differs from the file as last read or written here."""
        return self.text is not None and shown != self.text

    def poll(self, shown: str) -> Change | None:
        """Look at the disk (a stat; the file is read only when its stamp changed). None when
        nothing needs saying."""
        stamp = stamp_of(self.path)
        if stamp == self.stamp or stamp is None:  # unchanged, or removed: a save writes it
            self.stamp = stamp
            return None
        self.stamp = stamp
        if self.text is None:  # refused when loaded: the editor was never given it
            return Change("reloaded", text) if (text := self.load()) is not None else None
        try:
            decoded = decode_text(read_regular(self.path, self.max_bytes), self.path.name)
        except FileNotFoundError:
            return None
        except FileRefused as error:
            if self.refused:
                return None  # said already
            self.refused, self.notice = True, str(error)
            return Change("refused", reason=str(error))
        was_refused, self.refused = self.refused, False
        if decoded.text == self.text and not was_refused:
            return None
        if self.conflict or shown != self.text:
            self.conflict = True
            return Change("conflict")
        self.text, self.notice = decoded.text, decoded.notice
        return Change("reloaded", decoded.text)

    def pending(self) -> Change | None:
        """The standing conflict or refusal, if any: what keeps `save` from writing."""
        if self.conflict:
            return Change("conflict")
        if self.refused:
            return Change("refused", reason=self.notice or f"{self.path} cannot be read")
        return None

    def save(self, shown: str, *, force: bool = False) -> Change | None:
        """Write `shown` when the user changed it. It polls first, and news from the disk
        (reloaded, a new conflict or refusal) is returned with nothing written: the user hears
        it before anything is replaced. A standing conflict or refusal (`pending()`) also
        writes nothing, unless `force` (the user chose the editor's text). A write that fails
        returns its reason (once per reason). None: saved, nothing to save, or blocked."""
        if self.text is None:
            return None
        change = self.poll(shown)
        if change is not None:
            return change
        if (self.conflict or self.refused) and not force:
            return None
        if not (self.edited(shown) or self.conflict or self.refused):
            return None
        problem = self._write(shown)
        if problem is not None:
            said, self._failed = self._failed, problem
            return Change("refused", reason=problem) if problem != said else None
        self.text, self.stamp = shown, stamp_of(self.path)
        self.conflict = self.refused = False
        self.notice = self._failed = None
        return None

    def _write(self, text: str) -> str | None:
        """Replace the file by `text` (UTF-8) atomically; the reason when it cannot be."""
        target = Path(os.path.realpath(self.path))  # a symlink stays, the file it names changes
        try:
            info: os.stat_result | None = target.stat()
        except FileNotFoundError:
            info = None
        except OSError as error:
            return f"not saved: {self.path}: {error.strerror or error}"
        if info is not None and not stat.S_ISREG(info.st_mode):
            return f"not saved: {self.path} is not a regular file"
        temporary = target.with_name(f".{target.name}.{os.getpid()}.drill-save")
        try:
            temporary.unlink(missing_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            with os.fdopen(os.open(temporary, flags, 0o666), "wb") as out:
                out.write(text.encode("utf-8", "replace"))
            if info is not None:
                os.chmod(temporary, stat.S_IMODE(info.st_mode))
            os.replace(temporary, target)
        except OSError as error:
            temporary.unlink(missing_ok=True)
            return f"not saved: {self.path}: {error.strerror or error}"
        return None
