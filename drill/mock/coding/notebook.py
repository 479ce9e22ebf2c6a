"""The coding round as a Jupyter notebook, as the real interview (a Colab notebook) is.

    write_round_notebook(folder / "round.ipynb")   # + drill_data.py beside it (the workspace)
    source = extract_train_py(path)                # the train.py the notebook's cell writes
    cell = find_train_cell(path)                   # the same, with the cell's number
    notes = notes_cell_text(path)                  # what the user wrote in the notes cell

The notebook has, per phase of the coding round (its prompt's time table), a Markdown
cell with the phase's prompt (the standard round's, as the coding round's talk track
uses) and the contract's lines that grade it, then one `%%writefile train.py` cell holding the
starter, a `!torchrun` cell and a Markdown notes cell (the talk track; a notebook round reads it
as its notes). At pushback the follow-up questions come as one more Markdown cell at the end
(`append_follow_ups`), answered there: the notebook is the round's one place for notes. Grading
reads the notebook as untrusted data (a bounded regular file, valid nbformat) and takes the last
code cell that writes train.py; nothing in a notebook is ever run here. UI-free and torch-free
(nbformat only).
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from drill.files import FileRefused, read_regular
from drill.mock.coding.catalogue import RoundPrompt, round_prompt
from drill.mock.coding.phases import ROUND
from drill.mock.errors import MockError
from drill.text import printable
from trainer_lab.grading import DATASET_MODULE_FILE, SCRIPT_NAME

MAX_NOTEBOOK_BYTES = 16 * 1024**2  # outputs (plots) make notebooks large; this is generous
NOTEBOOK_NAME = "round.ipynb"  # the default workspace's notebook
WORLD_SIZE = 2
STEPS = 16
CKPT_DIR = "ckpt"
# how people run torchrun from Colab: a shell command in a code cell
RUN_COMMAND = (
    f"!torchrun --nproc-per-node {WORLD_SIZE} {SCRIPT_NAME} --steps {STEPS} --ckpt-dir {CKPT_DIR}"
)
# The first line of the graded cell: a cell magic that writes train.py into the notebook's folder.
WRITE_MAGICS = ("%%writefile", "%%file")
TARGETS = (SCRIPT_NAME, f"./{SCRIPT_NAME}")
LOOKS_FOR = (
    f"a code cell whose first line is `%%writefile {SCRIPT_NAME}` "
    f"(or `%%writefile ./{SCRIPT_NAME}`, `%%file {SCRIPT_NAME}`)"
)


@dataclass(frozen=True)
class TrainCell:
    """The graded cell: its number among the notebook's cells (1-based), its magic line and the
    train.py it writes (the cell's body, ending in a newline as %%writefile writes it)."""

    number: int
    cells: int
    magic: str
    source: str
    first_line: int = 2  # the cell's line that is train.py's line 1


# --- writing ---------------------------------------------------------------------------------


def phase_length(minutes: float, scale: float = 1.0) -> str:
    """A phase's length on the round's clock: "5 min", or m:ss when a scaled round
    (`--minutes 3`) makes it a part of a minute."""
    from drill.mock.report import clock

    seconds = round(minutes * 60 * scale)
    return f"{seconds // 60} min" if seconds % 60 == 0 else clock(seconds)


def _phase_cells(notebook_name: str, scale: float, entry: RoundPrompt) -> list[tuple[str, str]]:
    from drill.mock.loader import find_round

    standard = {p.id: p for p in find_round(ROUND).phases}
    sections = dict(entry.entry.graded)  # phase -> its row of the contract's table, as data
    shown: set[str] = set()
    cells = []
    for number, phase in enumerate(entry.round_phases, 1):
        theirs = standard.get(entry.talk_phases.get(phase.id, phase.id))
        parts = [f"## {number}. {phase.title} ({phase_length(phase.minutes, scale)})"]
        if theirs is not None and theirs.focus:
            parts.append(f"*{' '.join(theirs.focus.split())}*")
        for prompt in theirs.prompts if theirs is not None else []:
            parts.append("> " + " ".join(prompt.text.split()))
        new = [g for g in phase.grades if g not in shown]
        if new:
            table = "\n".join(sections[g] for g in new)
            parts.append(f"Graded by (`drill mock contract`):\n\n```text\n{table}\n```")
        elif phase.grades:
            parts.append(
                f"Graded by: every phase above, `drill mock grade {notebook_name}` "
                f"({', '.join(phase.grades)})."
            )
        shown.update(phase.grades)
        cells.append((f"phase-{phase.id}", "\n\n".join(parts)))
    return cells


def _notes_text(prompt: RoundPrompt) -> str:
    """The notes cell as written: a heading per round phase of the prompt."""

    heads = "\n\n".join(f"### {p.title}" for p in prompt.round_phases)
    return f"## Notes (talk track)\n\nWhat you would say in each phase.\n\n{heads}\n"


def round_notebook(
    notebook_name: str = NOTEBOOK_NAME, scale: float = 1.0, prompt: RoundPrompt | None = None
):  # -> NotebookNode
    """The round's notebook (nbformat v4), cells with stable ids; phase lengths as a round
    scaled by `scale` has them; `prompt`: the catalogue's round (default: today's DDP)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    prompt = prompt or round_prompt()

    notebook_name = printable(notebook_name)  # shown as text: a non-UTF-8 byte is not writable
    intro = (
        "# drill: the coding round in a notebook\n\n"
        f"Write `{SCRIPT_NAME}` in the `%%writefile {SCRIPT_NAME}` cell below (it starts as the "
        "starter), run that cell, then the `!torchrun` cell. The given dataset module "
        f"`{DATASET_MODULE_FILE}` sits beside this notebook (in Colab, upload it into the "
        f"runtime's folder first); `{CKPT_DIR}/` keeps the checkpoints, so a second run resumes "
        f"(delete it to start over).\n\n"
        f"Grade it with `drill mock grade {notebook_name}`: it grades {LOOKS_FOR}, the last one "
        "if there are several, exactly like a file; nothing else in the notebook is run."
    )
    contract = f"## The contract\n\n```text\n{prompt.contract.rstrip()}\n```"
    cells = [new_markdown_cell(intro, id="intro"), new_markdown_cell(contract, id="contract")]
    cells += [new_markdown_cell(text, id=cell_id)
              for cell_id, text in _phase_cells(notebook_name, scale, prompt)]  # fmt: skip
    starter = prompt.starter().rstrip("\n")
    cells.append(new_code_cell(f"%%writefile {SCRIPT_NAME}\n{starter}", id="train-py"))
    run = f"!torchrun --nproc-per-node {WORLD_SIZE} {SCRIPT_NAME} {prompt.run_args}"
    cells.append(new_code_cell(run, id="run"))
    cells.append(new_markdown_cell(_notes_text(prompt), id="notes"))
    notebook = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
    )
    nbformat.validate(notebook)
    return notebook


def _write_atomic(path: Path, text: str) -> None:
    """Write through a temp file renamed into place; the temp file is gone on any error."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_round_notebook(
    path: Path, scale: float = 1.0, *, prompt: RoundPrompt | None = None
) -> Path:
    """Write the round's notebook at `path` (a new .ipynb; an existing file is never replaced)
    and the given dataset module beside it, phase lengths scaled by `scale` (the round's
    `--minutes`), on the catalogue's `prompt` (default: today's DDP round). Returns the
    notebook's path."""
    import nbformat

    prompt = prompt or round_prompt()

    path = Path(path)
    if path.suffix.lower() != ".ipynb":
        raise MockError(f"a notebook's name ends in .ipynb, got {path.name!r}")
    if path.exists() or path.is_symlink():
        raise MockError(f"{path} exists; drill does not replace a notebook (choose another name)")
    module, source = path.parent / DATASET_MODULE_FILE, prompt.dataset()
    write_module = not _same_file_there(module, source)  # a different one is refused there
    wrote_module = False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if write_module:
            _write_new(module, source)
            wrote_module = True
        _write_new(path, nbformat.writes(round_notebook(path.name, scale, prompt)) + "\n")
    except BaseException as error:
        if wrote_module:  # drill's own, written just now: no half workspace is left
            module.unlink(missing_ok=True)
        if isinstance(error, FileExistsError):  # someone else's, created meanwhile: it stays
            there = error.filename2 or error.filename  # os.link: (the temp file, the target)
            raise MockError(f"{there} appeared meanwhile; drill replaced nothing") from None
        if isinstance(error, OSError):
            raise MockError(f"cannot write {path}: {error.strerror or error}") from None
        raise
    return path


def _same_file_there(module: Path, source: str) -> bool:
    """Whether `module` (drill_data.py) is already there with exactly `source`; MockError when
    something else is: a user's file is never replaced."""
    if not (module.exists() or module.is_symlink()):
        return False
    try:
        same = read_regular(module, MAX_NOTEBOOK_BYTES) == source.encode("utf-8")
    except (OSError, FileRefused):
        same = False
    if not same:
        raise MockError(
            f"{module} exists and is not drill's {DATASET_MODULE_FILE}; drill does not replace "
            "it (move it, or write the notebook in another folder)"
        )
    return True


def _write_new(path: Path, text: str) -> None:
    """Write a file that must not exist yet: a temp file, hard-linked into place (the link
    fails when a file appeared meanwhile: FileExistsError), the temp file always removed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


# --- reading (untrusted) ---------------------------------------------------------------------


def _read_bounded(path: Path) -> bytes:
    """The file's bytes: a regular file of at most MAX_NOTEBOOK_BYTES (drill.files: a FIFO is
    refused rather than waited on)."""
    try:
        return read_regular(path, MAX_NOTEBOOK_BYTES)
    except FileNotFoundError:
        raise MockError(f"no such file: {path}") from None
    except FileRefused as error:
        raise MockError(str(error)) from None


def _first_line(error: BaseException) -> str:
    text = str(getattr(error, "message", None) or error) or type(error).__name__
    line = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    return line if len(line) <= 120 else line[:117] + "..."


def read_notebook(path: Path):  # -> nbformat.NotebookNode (v4)
    """The notebook at `path`, validated; every failure is a one-line MockError."""
    import nbformat

    data = _read_bounded(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MockError(f"{path} is not a Jupyter notebook: not UTF-8 text") from None
    try:
        json.loads(text)
    except (ValueError, RecursionError) as error:
        why = "nested too deeply" if isinstance(error, RecursionError) else _first_line(error)
        raise MockError(f"{path} is not a Jupyter notebook: not JSON ({why})") from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbformat warns about old notebooks it repairs
        try:
            notebook = nbformat.reads(text, as_version=4)
            nbformat.validate(notebook)
        except Exception as error:  # untrusted input: whatever nbformat raises is "invalid"
            raise MockError(
                f"{path} is not a valid Jupyter notebook: {_first_line(error)}"
            ) from None
    return notebook


def _magic_line(lines: list[str]) -> int | None:
    """The index of the cell's first line when it writes train.py (leading blank lines are
    skipped, as IPython does), else None."""
    at = next((i for i, line in enumerate(lines) if line.strip()), None)
    if at is None:
        return None
    words = lines[at].split()
    if len(words) == 2 and words[0] in WRITE_MAGICS and words[1] in TARGETS:
        return at
    return None


def find_train_cell(path: Path) -> TrainCell:
    """The last code cell of the notebook at `path` whose first line is `%%writefile train.py`
    (or `%%writefile ./train.py`, `%%file train.py`), and the train.py it writes."""
    cells = read_notebook(path).cells
    for index in range(len(cells) - 1, -1, -1):
        cell = cells[index]
        if cell.get("cell_type") != "code" or not isinstance(cell.get("source"), str):
            continue
        lines = cell.source.split("\n")
        at = _magic_line(lines)
        if at is None:
            continue
        source = "\n".join(lines[at + 1 :])
        if source and not source.endswith("\n"):
            source += "\n"  # IPython ends the cell with a newline before %%writefile writes it
        return TrainCell(index + 1, len(cells), lines[at].strip(), source, first_line=at + 2)
    raise MockError(f"{path}: no cell writes {SCRIPT_NAME}; drill grades {LOOKS_FOR}")


def extract_train_py(path: Path) -> str:
    """The source of train.py as the notebook's last `%%writefile train.py` cell writes it
    (without the magic line). Nothing in the notebook is run."""
    return find_train_cell(path).source


def _template_lines() -> frozenset[str]:
    """The notes cell's template lines, of every prompt's time table."""
    from drill.mock.coding.catalogue import catalogue

    texts = [_notes_text(prompt) for prompt in catalogue()]
    return frozenset(line.strip() for text in texts for line in text.splitlines() if line.strip())


def notes_cell_text(path: Path) -> str:
    """What the user wrote in the notebook's notes cell (the Markdown cell with id "notes", else
    the last Markdown cell that starts with "## Notes"), without the template's own lines (its
    heading and the phase headings give no rubric credit), then the follow-up questions' cell
    with the answers written there; "" when nothing else is there or there is no such cell.
    MockError when the file is not a readable notebook."""
    cells = read_notebook(path).cells
    asked = next((c for c in cells if c.get("id") == FOLLOW_UPS_ID), None)
    text = _own_notes(cells)
    if asked is not None and isinstance(asked.get("source"), str):
        intro = {line.strip() for line in FOLLOW_UPS_INTRO.splitlines() if line.strip()}
        kept = "\n".join(x for x in asked.source.splitlines() if x.strip() not in intro).strip()
        text = (text + "\n" if text and kept else text) + (kept + "\n" if kept else "")
    return text


def _own_notes(cells: list) -> str:
    markdown = [c for c in cells if c.get("cell_type") == "markdown"]
    markdown = [c for c in markdown if isinstance(c.get("source"), str)]
    cell = next((c for c in markdown if c.get("id") == "notes"), None)
    if cell is None:
        cell = next(
            (c for c in reversed(markdown) if c.source.lstrip().startswith("## Notes")), None
        )
    if cell is None:
        return ""
    template = _template_lines()
    kept = [line for line in cell.source.splitlines() if line.strip() not in template]
    text = "\n".join(kept).strip()
    return text + "\n" if text else ""


FOLLOW_UPS_ID = "follow-ups"  # the cell the pushback's follow-up questions are appended as
FOLLOW_UPS_INTRO = "## Follow-up questions\n\nAnswer each under its ## Q heading, in this cell.\n\n"
_WRITE_TRIES = 5


def append_follow_ups(path: Path, block: str) -> bool:
    """Append `block` (the ## Q headings, drill.mock.coding.pushback.question_block) to the
    notebook at `path` as a Markdown cell with id "follow-ups", once: False when that cell is
    already there. The notebook is read again right before writing and written through a temp
    file renamed into place; when the file changed meanwhile (a save from Jupyter: its mtime or
    size differs) it is read again and the cell appended to the newer version, so a user's save
    is never written over. MockError when it is not a notebook or keeps changing."""
    import nbformat
    from nbformat.v4 import new_markdown_cell

    for _ in range(_WRITE_TRIES):
        before = _stamp(path)
        notebook = read_notebook(path)
        if any(c.get("id") == FOLLOW_UPS_ID for c in notebook.cells):
            return False
        notebook.cells.append(
            new_markdown_cell(FOLLOW_UPS_INTRO + block.rstrip("\n") + "\n", id=FOLLOW_UPS_ID)
        )
        text = nbformat.writes(notebook) + "\n"
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            if _stamp(path) != before:  # saved meanwhile: never over the newer save
                continue
            tmp.replace(path)
            return True
        except OSError as error:
            raise MockError(f"cannot write {path}: {error.strerror or error}") from None
        finally:
            tmp.unlink(missing_ok=True)
    raise MockError(f"{path} kept changing while drill added the follow-up questions")


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size
