"""Follow one rank's console output while its launch runs (torch-free).

torchrun (and the warm agent) redirect each rank's stdout to
RUN/logs/<run id>/attempt_<n>/<local rank>/stdout.log; the ranks write it unbuffered
(PYTHONUNBUFFERED, `ctx.log` flushes). Nothing read those files until the launch ended, so a
lab's live log showed only the launcher's own lines. `RankOutputTail.poll()` hands over the new
whole lines since the last call, attempt after attempt (a restarted job starts a new one).
"""

from __future__ import annotations

from pathlib import Path

from trainer_lab.files import read_head

MAX_LINE_CHARS = 500  # a runaway line is cut, not streamed whole
MAX_READ_BYTES = 256 * 1024  # per file and poll: a burst is taken in pieces


class RankOutputTail:
    def __init__(self, log_dir: Path, rank: int = 0, limit: int = 1000) -> None:
        self.log_dir = log_dir
        self.rank = rank
        self.limit = limit  # lines handed over at most; then one line says so
        self.handed = 0
        self._offsets: dict[Path, int] = {}

    def _files(self) -> list[Path]:
        try:
            found = list(self.log_dir.glob(f"*/attempt_*/{self.rank}/stdout.log"))
        except OSError:
            return []
        return sorted(found, key=lambda p: int(p.parent.parent.name.rpartition("_")[2] or 0))

    def poll(self) -> list[str]:
        """New whole lines of the rank's stdout (oldest first), without line ends."""
        lines: list[str] = []
        for path in self._files():
            offset = self._offsets.get(path, 0)
            try:  # a FIFO or a link planted there is refused, never waited on (trainer_lab.files)
                chunk, _ = read_head(path, MAX_READ_BYTES, offset)
            except OSError:
                continue
            end = chunk.rfind(b"\n") + 1
            if end == 0 and len(chunk) == MAX_READ_BYTES:  # one line longer than a read
                end = len(chunk)
            self._offsets[path] = offset + end
            for raw in chunk[:end].splitlines():
                text = raw.decode("utf-8", errors="replace").rstrip()
                if text:
                    lines.append(text[:MAX_LINE_CHARS])
        return self._bounded(lines)

    def _bounded(self, lines: list[str]) -> list[str]:
        room = self.limit - self.handed
        if room <= 0:
            return []
        if len(lines) >= room:
            lines = [*lines[: room - 1], f"... more output in {self.log_dir}"]
        self.handed += len(lines)
        return lines
