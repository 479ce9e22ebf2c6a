"""Which coding-round prompt to play next: the one whose topics are weakest by the readiness
measure (drill.plan.readiness: expected recall per deck-tag topic), with why in one line. UI-free;
the `m` picker shows it.

    suggestion = suggest_prompt(catalogue(), readiness.topics)
    suggestion.prompt_id, suggestion.why      # None, "no readiness yet" before any card is seen
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from drill.mock.coding.catalogue import RoundPrompt

NO_READINESS = "no readiness yet: review some cards, then the weakest prompt is suggested"


class TopicReadiness(Protocol):
    """What this reads of drill.plan.readiness.TopicReadiness (drill.mock does not import
    drill.plan: the caller passes the topics)."""

    @property
    def topic(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def introduced(self) -> int: ...
    @property
    def expected_recall(self) -> float: ...


@dataclass(frozen=True)
class Suggestion:
    prompt_id: str | None  # None: nothing to go by yet
    why: str  # one line


def prompt_recall(prompt: RoundPrompt, topics: Iterable[TopicReadiness]) -> float | None:
    """The mean expected recall over the prompt's topics (deck tags) that have a card seen;
    None when none has."""
    by_tag = {t.topic: t for t in topics if t.kind == "tag"}
    found = [by_tag[name] for name in prompt.topics if name in by_tag]
    if not any(t.introduced for t in found):
        return None
    return sum(t.expected_recall for t in found) / len(found)


def suggest_prompt(
    prompts: Sequence[RoundPrompt], topics: Iterable[TopicReadiness] | None
) -> Suggestion:
    """The prompt with the lowest recall over its topics (the catalogue's order breaks a tie);
    no suggestion while no prompt's topics have a card seen (or readiness is unknown)."""
    known = list(topics or [])
    scored = [(recall, i, p) for i, p in enumerate(prompts)
              if (recall := prompt_recall(p, known)) is not None]  # fmt: skip
    if not scored:
        return Suggestion(None, NO_READINESS)
    recall, _, weakest = min(scored, key=lambda s: (s[0], s[1]))
    others = ", ".join(f"{p.title} {r:.0%}" for r, _, p in sorted(scored, key=lambda s: s[1])
                       if p is not weakest)  # fmt: skip
    why = (
        f"Suggested: {weakest.title}: its topics ({', '.join(weakest.topics)}) are the "
        f"weakest at {recall:.0%} expected recall"
    )
    return Suggestion(weakest.id, why + (f" ({others})" if others else ""))
