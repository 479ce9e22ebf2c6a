from datetime import datetime
from pathlib import Path

from drill.paths import new_run_dir


def test_new_run_dir_never_returns_a_used_directory(tmp_path: Path) -> None:
    when = datetime(2026, 3, 10, 12, 0, 5)
    first = new_run_dir(tmp_path, "resume", when)
    assert first == tmp_path / "resume-20260310-120005"
    first.mkdir()
    second = new_run_dir(tmp_path, "resume", when)
    assert second == tmp_path / "resume-20260310-120005-2"
    second.mkdir()
    assert new_run_dir(tmp_path, "resume", when).name == "resume-20260310-120005-3"
