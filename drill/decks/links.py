"""Link checks for cards that point at a lab: the lab exists, its params are valid, every claim
parses and names an observation the lab reports, and a predict block's choices exclude each other.

Callers pass `check_lab_links` to deck loading (`load_decks(..., link_checks=LAB_LINK_CHECKS)`):
`drill decks check` and `drill verify` do. Importing the lab catalogue is torch-free.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from drill.claims.grammar import Claim, ClaimError, Comparison, parse_claim
from drill.claims.overlap import can_both_hold
from drill.decks.loader import LoadedDeck, Problem
from drill.decks.models import Card
from trainer_lab.catalogue import CATALOGUE, check_world_size
from trainer_lab.catalogue_types import LabSpec, ParamError


def observation_known(spec: LabSpec, name: str) -> bool:
    """A claim name matches a declared observation; `*` in a declared name is one segment."""
    parts = name.split(".")
    for declared in spec.observation_names():
        declared_parts = declared.split(".")
        if len(declared_parts) == len(parts) and all(
            fnmatchcase(part, pattern) for part, pattern in zip(parts, declared_parts, strict=True)
        ):
            return True
    return False


def _claim_problems(spec: LabSpec, text: str, where: str) -> tuple[Claim | None, list[str]]:
    try:
        claim = parse_claim(text)
    except ClaimError as error:
        return None, [f"{where}: {error}"]
    unknown = [name for name in claim.names if not observation_known(spec, name)]
    messages = [
        f"{where}: lab {spec.name} reports no observation '{name}' "
        f"(it reports: {', '.join(sorted(spec.observation_names()))})"
        for name in unknown
    ]
    messages.extend(
        f"{where}: '{c.value}' is an observation, but claims compare an observation with a "
        "literal value (quote it if you mean the string)"
        for c in claim.comparisons
        if isinstance(c.value, str) and c.value in spec.observation_names() and not _quoted(text, c)
    )
    return claim, messages


def _quoted(text: str, comparison: Comparison) -> bool:
    return f"'{comparison.value}'" in text or f'"{comparison.value}"' in text


def card_link_problems(card: Card) -> list[tuple[str, str]]:
    """(yaml key, message) for every link problem of one card."""
    if card.lab is None:
        return [("predict", "a predict block needs a lab block")] if card.predict else []
    spec = CATALOGUE.get(card.lab.run)
    if spec is None:
        valid = ", ".join(sorted(CATALOGUE))
        return [("lab", f"unknown lab '{card.lab.run}' (valid: {valid})")]
    found: list[tuple[str, str]] = []
    for name, value in card.lab.params.items():
        try:
            spec.param(name).validate(value)
        except ParamError as error:
            found.append(("lab", str(error)))
    if card.lab.world_size is not None:
        try:  # the lab's own range check, the one a run of this card goes through
            check_world_size(spec, card.lab.world_size)
        except ParamError as error:
            found.append(("lab", str(error)))
    for text in card.lab.expect:
        found.extend(("lab", m) for m in _claim_problems(spec, text, f"expect {text!r}")[1])
    if card.lab.where:
        where = card.lab.where
        found.extend(("lab", m) for m in _claim_problems(spec, where, f"where {where!r}")[1])
    if card.predict is not None:
        claims: list[tuple[str, Claim]] = []
        for choice in card.predict.choices:
            claim, messages = _claim_problems(spec, choice.when, f"choice {choice.text!r}")
            found.extend(("predict", m) for m in messages)
            if claim is not None:
                claims.append((choice.text, claim))
        for i, (first_text, first) in enumerate(claims):
            for second_text, second in claims[i + 1 :]:
                if can_both_hold(first, second):
                    message = f"choices {first_text!r} and {second_text!r} can both hold"
                    found.append(("predict", message))
    return found


def check_lab_links(loaded: LoadedDeck) -> list[Problem]:
    return [
        Problem(loaded.path, loaded.line_of(card.id, key), card.id, message)
        for card in loaded.deck.cards
        for key, message in card_link_problems(card)
    ]


def check_exercise_links(loaded: LoadedDeck) -> list[Problem]:
    """A card's `exercise:` names an exercise in trainer_lab's exercise catalogue."""
    from trainer_lab.exercises.catalogue import EXERCISES

    return [
        Problem(
            loaded.path,
            loaded.line_of(card.id, "exercise"),
            card.id,
            f"unknown exercise '{card.exercise}' (valid: {', '.join(sorted(EXERCISES))})",
        )
        for card in loaded.deck.cards
        if card.exercise is not None and card.exercise not in EXERCISES
    ]


LAB_LINK_CHECKS = (check_lab_links, check_exercise_links)
