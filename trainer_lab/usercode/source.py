"""Read a user's file before running it (torch-free): size and encoding limits, and a syntax check
that compiles the text without running it. Shared by the coding round and the exercises."""

from __future__ import annotations

from pathlib import Path

from trainer_lab.files import FileRefused, read_head

MAX_SCRIPT_BYTES = 1024**2


class ScriptError(ValueError):
    """The file cannot be run at all (missing, too large, not text)."""


def read_script(path: Path) -> str:
    """The user's file as text; ScriptError when it is missing, not a regular file (a FIFO or a
    device is refused, never waited on: trainer_lab.files), too large or not UTF-8. The user's
    own file may be a symlink to their file elsewhere: it is followed."""
    try:
        data, capped = read_head(path, MAX_SCRIPT_BYTES, follow_symlinks=True)
    except FileRefused as error:
        raise ScriptError(str(error)) from None
    except OSError as error:
        raise ScriptError(f"cannot read {path}: {error.strerror or error}") from None
    if capped:
        raise ScriptError(f"{path} is larger than {MAX_SCRIPT_BYTES // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ScriptError(f"{path} is not UTF-8 text") from None


def syntax_error(source: str, name: str) -> str | None:
    """`NAME:LINE: SyntaxError: message` when the source does not compile (compiled, never run)."""
    try:
        compile(source, name, "exec", dont_inherit=True)
    except SyntaxError as error:
        return f"{name}:{error.lineno}: SyntaxError: {error.msg}"
    except (ValueError, RecursionError, MemoryError) as error:
        return f"{name}: does not compile: {type(error).__name__}"
    return None
