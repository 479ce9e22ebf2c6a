"""The model answers' known-broken variants, as exact patches: the round's (files/variants.toml,
of files/train.py) and the stretch phases' (files/stretch_variants.toml, each of its phase's
model answer)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

from trainer_lab.grading.contract import FILES, model_answer_source
from trainer_lab.grading.stretch import stretch_model_answer


@dataclass(frozen=True)
class Variant:
    id: str
    title: str
    phases: tuple[str, ...]
    expect: tuple[str, ...]  # the checks it must fail; every other check of every phase holds
    patches: tuple[tuple[str, str], ...]

    def source(self, base: str | None = None) -> str:
        """The model answer with this variant's patches; each must match exactly once."""
        text = model_answer_source() if base is None else base
        for old, new in self.patches:
            count = text.count(old)
            if count != 1:
                raise ValueError(f"variant {self.id}: patch matches {count} times: {old[:60]!r}")
            text = text.replace(old, new)
        return text


def load_variants(name: str = "variants.toml") -> list[Variant]:
    data = tomllib.loads((FILES / name).read_text())
    return [
        Variant(
            id=v["id"],
            title=v["title"],
            phases=tuple(v["phases"]),
            expect=tuple(v["expect"]),
            patches=tuple((p["old"], p["new"]) for p in v["patch"]),
        )
        for v in data["variant"]
    ]


def load_stretch_variants() -> list[Variant]:
    """The stretch phases' broken variants; `phases` holds the one phase whose model answer
    the patches apply to (`variant.source(stretch_model_answer(variant.phases[0]))`)."""
    return load_variants("stretch_variants.toml")


def stretch_variant_source(variant: Variant) -> str:
    return variant.source(stretch_model_answer(variant.phases[0]))
