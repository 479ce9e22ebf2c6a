"""`drill stats [--json]`: the stats screen's figures, for a terminal or a script.

Plugs into drill/cli/main.py through `register(subparsers)`; `--json` prints
drill.review.stats.Stats.to_json() (the same data the stats screen draws, both read through
drill.mock.coding.past.stats_with_rounds).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from drill.cli.options import add_decks_option
from drill.cli.output import say

if TYPE_CHECKING:
    from drill.review.stats import Stats

DESCRIPTION = """\
Review statistics: reviews per day and streak, true retention (reviews of mature cards,
interval >= 21 days, not rated Again) per deck and week, the due forecast for 30 days, card
counts by state, the weakest tags and decks, lab-prediction calibration, mock-round results
(talk-only rounds by band, coding and notebook rounds by the checks that held) and exercise
checks over time."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "stats",
        help="review statistics (retention, streak, forecast, calibration)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    add_decks_option(parser)
    parser.set_defaults(func=cmd_stats)


def cmd_stats(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services
    from drill.mock.coding.past import stats_with_rounds

    with open_services(args) as services:
        stats = stats_with_rounds(
            services.decks, services.db.path, services.settings, services.now()
        )
    data = stats.to_json()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    for line in text_report(stats):
        say(line)
    return 0


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def text_report(stats: Stats) -> list[str]:
    from drill.review.stats import counted

    data = stats.to_json()
    c = data["counts"]
    ret = data["retention"]
    total = counted(data["reviews_total"], "review")
    lines = [
        f"today {counted(data['reviews_today'], 'review')} · "
        f"streak {counted(data['streak'], 'day')} · {total} in all",
        f"cards: new {c['new']} · learning {c['learning']} · young {c['young']} · "
        f"mature {c['mature']} · suspended {c['suspended']}",
        f"true retention {_pct(ret['rate'])} (desired {data['desired_retention']:.0%}) over "
        f"{counted(ret['reviews'], 'mature review')}",
    ]
    for deck, r in data["retention_by_deck"].items():
        lines.append(
            f"  {deck:<24} {_pct(r['rate']):>7}  of {counted(r['reviews'], 'mature review')}"
        )
    forecast, today = data["forecast"], data["due_today"]
    lines.append(
        f"due: today {today} · next 7 days {sum(forecast[:7])} · next 30 days {sum(forecast)}"
    )
    for kind in ("tags", "decks"):
        weak = data[f"weakest_{kind}"]
        if weak:
            names = ", ".join(f"{w['name']} ({counted(w['lapses'], 'lapse')})" for w in weak)
            lines.append(f"weakest {kind}: {names}")
    calibration = " · ".join(
        f"{row['certainty']} {_pct(row['accuracy'])} of {row['predictions']}"
        for row in data["calibration"]
    )
    lines.append(f"lab predictions right by certainty: {calibration}")
    lines.append(f"  {data['calibration_verdict']}")
    for mock in data["mock_results"][-5:]:
        lines.append(
            f"mock {mock['started_at'][:10]} {mock['round']}: {mock['score']:.0%} {mock['band']}"
        )
    for row in stats.coding_rounds[:5]:
        started = row.started_at.date().isoformat()
        lines.append(f"{row.kind} round {started} #{row.id}: {row.result()}")
    for check in data["exercise_results"][-5:]:
        result = "solved" if check["solved"] else check["status"]
        lines.append(
            f"exercise {check['checked_at'][:10]} {check['name']}: "
            f"{check['passed']}/{check['total']} checks, {result}"
        )
    if data["exercise_results"]:
        lines.append(f"exercises solved: {len(data['exercises_solved'])}")
    return lines
