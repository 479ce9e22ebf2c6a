"""drill.labs.verify without real labs: planning, caching, claim and predict verdicts."""

from pathlib import Path
from typing import Any

from drill.decks.models import Card
from drill.labs.verify import LabJob, LinkedCard, ResultCache, evaluate_card, plan_jobs, run_verify
from drill.runs.log import RunLog
from tests.support.run_log import cache_db
from trainer_lab.result import RESULT_FILE, LabResult, Status, new_result


def linked(card_id: str, lab: dict[str, Any], predict: dict[str, Any] | None = None) -> LinkedCard:
    data = {"id": card_id, "level": "easy", "front": "q", "back": "a", "lab": lab}
    if predict:
        data["predict"] = predict
    return LinkedCard("deck", Card.model_validate(data))


def result(status: Status, message: str = "", **observations: Any) -> LabResult:
    made = new_result("lab", {}, 2, Path("run"))
    made["status"], made["observations"] = status, observations
    made["error"] = {"message": message} if message else None
    return made


def ok(**observations: Any) -> LabResult:
    return result("ok", **observations)


def test_each_distinct_lab_and_params_runs_once(tmp_path: Path) -> None:
    cards = [
        linked("a", {"run": "resume", "params": {"mode": "full"}, "expect": ["x == 1"]}),
        linked("b", {"run": "resume", "params": {"mode": "full"}, "expect": ["x >= 1"]}),
        linked("c", {"run": "resume", "params": {"mode": "weights"}, "expect": ["x == 1"]}),
    ]
    assert len(plan_jobs(cards)) == 2
    calls: list[LabJob] = []

    def run_job(job: LabJob, out_dir: Path, progress: Any, cancel: Any) -> LabResult:
        calls.append(job)
        return ok(x=1)

    cache = ResultCache(cache_db(tmp_path / "cache"), "v1")
    report = run_verify(cards, run_job, cache, tmp_path / "runs")
    assert len(calls) == 2
    assert report.ok and len(report.rows) == 3

    again = run_verify(cards, run_job, cache, tmp_path / "runs")
    assert len(calls) == 2  # served from the cache
    assert all(job.cached for job in again.jobs)

    run_verify(cards, run_job, cache, tmp_path / "runs", fresh=True)
    assert len(calls) == 4
    run_verify(cards, run_job, ResultCache(cache_db(tmp_path / "cache"), "v2"), tmp_path / "runs")
    assert len(calls) == 6  # a new code version invalidates the cache


def test_failed_claim_and_lab_error_fail_the_report(tmp_path: Path) -> None:
    cards = [
        linked("good", {"run": "lab-a", "expect": ["ratio >= 2"]}),
        linked("bad", {"run": "lab-b", "expect": ["ratio >= 2"]}),
    ]
    results = {"lab-a": ok(ratio=3.0), "lab-b": result("timeout", "x")}
    report = run_verify(
        cards,
        lambda job, out, progress, cancel: results[job.lab],
        ResultCache(cache_db(tmp_path / "cache"), "v"),
        tmp_path / "runs",
    )
    assert not report.ok
    assert [(r.card_id, r.passed) for r in report.rows] == [("good", True), ("bad", False)]
    assert report.rows[1].detail == "x"
    # only finished labs are cached; a timeout is retried next time
    assert ResultCache(cache_db(tmp_path / "cache"), "v").get(LabJob("lab-b", (), None)) is None


def test_predict_needs_exactly_one_true_choice() -> None:
    predict = {
        "ask": "?",
        "choices": [{"text": "low", "when": "r < 2"}, {"text": "high", "when": "r >= 2"}],
    }
    card = linked("p", {"run": "lab"}, predict)
    (row,) = evaluate_card(card, ok(r=3))
    assert row.passed and row.observed == "high"

    overlapping = {
        "ask": "?",
        "choices": [{"text": "a", "when": "r > 1"}, {"text": "b", "when": "r > 2"}],
    }
    (row,) = evaluate_card(linked("p2", {"run": "lab"}, overlapping), ok(r=3))
    assert not row.passed and row.detail == "2 choices hold"
    (row,) = evaluate_card(linked("p3", {"run": "lab"}, overlapping), ok(r=0))
    assert not row.passed and row.detail == "0 choices hold"


def test_lab_messages_with_brackets_print_as_text(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    # gloo errors carry "[/path/file.cc:78]", which rich would read as a closing markup tag.
    from drill.cli.main import main
    from drill.database import open_app_database
    from drill.labs.verify import code_version

    decks = tmp_path / "decks"
    decks.mkdir()
    (decks / "d.yaml").write_text(
        "deck: d\ntitle: D\ncards:\n  - id: c1\n    level: easy\n    front: q\n    back: a\n"
        "    lab: {run: ddp-baseline, expect: ['max_loss_diff <= 1e-5']}\n"
    )
    message = "[/__w/pytorch/gloo/transport/tcp/unbound_buffer.cc:78] Timed out"
    job = LabJob("ddp-baseline", (), None)
    ResultCache(open_app_database(), code_version()).put(job, result("failed", message), tmp_path)
    monkeypatch.setenv("COLUMNS", "300")
    code = main(["--decks", str(decks), "verify", "--deck", "d"])
    out = capsys.readouterr().out
    assert code == 1
    assert "unbound_buffer.cc:78] Timed out" in out


def test_a_damaged_cache_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ResultCache(cache_db(tmp_path), "v")
    job = LabJob("lab", (), None)
    cache.put(job, ok(x=1), tmp_path / "run")
    assert cache.get(job) == ok(x=1)
    path = tmp_path / "run" / RESULT_FILE
    for text in ("{not json", '{"status": "ok"}', '{"lab": "lab", "status": "fine"}', "[" * 10**5):
        path.write_text(text)
        assert cache.get(job) is None, text
    assert ResultCache(None, "v").get(job) is None  # no database: every job runs


def test_the_cache_is_the_verify_runs_in_the_run_log(tmp_path: Path) -> None:
    db = cache_db(tmp_path)
    job = LabJob("lab", (("mode", "full"),), None)
    run_verify([linked("a", {"run": "lab", "params": {"mode": "full"}, "expect": ["x == 1"]})],
               lambda job, out, progress, cancel: ok(x=1), ResultCache(db, "v1"),
               tmp_path / "runs")  # fmt: skip
    [run] = RunLog(db).runs(kinds=["verify"])
    assert (run.name, run.params, run.version, run.status) == ("lab", {"mode": "full"}, "v1", "ok")
    assert run.summary["checks_total"] == 0 and run.run_dir.parent == tmp_path / "runs"
    assert ResultCache(db, "v1").get(job) == ok(x=1)
    assert ResultCache(db, "v2").get(job) is None  # another lab source version


def test_claims_scoped_by_where_are_skipped_elsewhere_and_said_so(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    scoped = {"run": "throughput-mfu", "where": "device == cpu", "expect": ["share < 0.3"]}
    predict = {
        "ask": "?",
        "choices": [
            {"text": "low", "when": "share < 0.3"},
            {"text": "high", "when": "share >= 0.3"},
        ],
    }
    card = linked("s", scoped, predict)
    on_cpu = evaluate_card(card, ok(device="cpu", share=0.9))
    assert [(r.passed, r.skipped) for r in on_cpu] == [(False, False), (True, False)]
    on_gpu = evaluate_card(card, ok(device="cuda:0", share=0.9))
    assert [(r.claim, r.passed, r.skipped) for r in on_gpu] == [
        ("share < 0.3", True, True),
        ("predict: one choice holds", True, True),
    ]
    assert on_gpu[0].observed == "not where device == cpu (device=cuda:0)"

    # the CLI table marks each skipped claim and the summary counts them
    from drill.cli.main import main
    from drill.database import open_app_database
    from drill.labs.verify import code_version

    decks = tmp_path / "decks"
    decks.mkdir()
    (decks / "d.yaml").write_text(
        "deck: d\ntitle: D\ncards:\n  - id: c1\n    level: easy\n    front: q\n    back: a\n"
        "    lab: {run: throughput-mfu, where: 'device == cpu',"
        " expect: ['attention_share < 0.3']}\n"
    )
    job = LabJob("throughput-mfu", (), None)
    gpu_run = ok(device="cuda:0", attention_share=0.9)
    ResultCache(open_app_database(), code_version()).put(job, gpu_run, tmp_path / "run")
    monkeypatch.setenv("COLUMNS", "300")
    assert main(["--decks", str(decks), "verify", "--deck", "d"]) == 0
    out = capsys.readouterr().out
    [row] = [line for line in out.splitlines() if line.startswith("│ c1")]
    assert "skipped on this device" in row and "not where device == cpu" in row
    assert "1 skipped: their card's `where:` does not hold on this device" in out


def test_a_lab_that_fails_its_checks_outside_the_cards_where_is_skipped_not_failed() -> None:
    # a GPU-only lab on a CPU may fail its own checks; the card's claims are not about this run
    card = linked(
        "g", {"run": "throughput-mfu", "where": "device == cuda", "expect": ["mfu > 0.3"]}
    )
    failed_on_cpu = {**ok(device="cpu"), "status": "failed"}
    [row] = evaluate_card(card, failed_on_cpu)
    assert (row.passed, row.skipped, row.observed) == (
        True,
        True,
        "not where device == cuda (device=cpu)",
    )
    # inside its `where:` a failed lab still fails the card
    failed_on_gpu = {**ok(device="cuda", mfu=0.5), "status": "failed"}
    assert [(r.claim, r.passed) for r in evaluate_card(card, failed_on_gpu)] == [
        ("lab runs", False)
    ]
