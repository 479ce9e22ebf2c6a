"""Seed coverage for decks staff-hard, interview-map, cheatsheet and biotech.

One short key per question, topic or list item of each seed file (in seed order), mapped to the
card ids that cover it. tests/decks/test_other_decks.py fails on a key without an existing card.
"""

# 000_f3bd6efd264888de.txt: staff-level hard questions (and the mindmap's four categories).
COVERAGE_000: dict[str, list[str]] = {
    "categories-correctness-performance-reliability-judgment": ["hard-question-categories"],
    "category-reliability-checkpoint-atomicity": ["hard-checkpoint-atomicity"],
    "category-reliability-deadlocks": ["hard-collective-deadlock"],
    "category-reliability-restart-scope": ["hard-restart-scope"],
    "category-judgment-rollout-risk": ["hard-rollout-risk"],
    "q1-resume-correct": ["hard-resume-correctness", "hard-resume-bitwise-drift"],
    "q2-ddp-vs-fsdp": ["hard-ddp-or-fsdp", "weak-strong-staff-signal"],
    "q3-world-size-change": ["hard-world-size-change"],
    "q4-slow-every-20-minutes": ["hard-slow-every-20-min"],
    "q5-most-dangerous-silent-failure": ["hard-silent-failure"],
    "q6-why-not-asynchronous": ["hard-why-not-async"],
    "q7-page-worthy-signals": ["hard-paging-signals"],
    "q8-checkpoint-frequency": ["hard-checkpoint-frequency"],
    "q9-redesign-vs-tune": ["hard-redesign-vs-tune"],
    "q10-deliberately-not-build": ["hard-what-not-to-build"],
}

# 001_9fd585c328cb69d1.txt: interview map.
COVERAGE_001: dict[str, list[str]] = {}

# 002_f6c21a6224d3cf5b.txt: cheatsheet.
COVERAGE_002: dict[str, list[str]] = {}

# 004_c0b50315856f387e.txt: weak vs strong answers and the biotech sections.
COVERAGE_004: dict[str, list[str]] = {
    "weak-strong-failure-model": ["weak-strong-failure-model"],
    "weak-strong-performance-model": ["weak-strong-performance-model"],
    "weak-strong-data-correctness": ["weak-strong-data-correctness"],
    "weak-strong-staff-signal": ["weak-strong-staff-signal"],
}
