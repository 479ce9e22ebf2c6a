"""Seed 003 (LLM training questions): one short key per seed question, in seed order, mapped to
the card ids that cover it. Repeated seed questions (the seed asks some twice, once long and once
short) keep their own key and usually share cards."""

COVERAGE_003: dict[str, list[str]] = {
    # Easy — fundamentals
    "easy-gpu-memory-breakdown": ["llm-memory-breakdown", "llm-activation-memory"],
    "easy-epoch-step-batch": ["llm-batch-step-epoch"],
    "easy-why-warmup": ["llm-warmup-why"],
    "easy-grad-accum": ["llm-grad-accum", "llm-grad-accum-correctness"],
    "easy-memory-how-much": ["llm-memory-breakdown", "llm-memory-16-bytes-autocast"],
    "easy-grad-accum-short": ["llm-grad-accum"],
    "easy-warmup-short": ["llm-warmup-why"],
    "easy-grad-clipping": ["llm-grad-clipping"],
    "easy-checkpoint": ["llm-checkpoint-contents"],
    "easy-epoch-vs-step": ["llm-batch-step-epoch"],
    # Medium — applied training
    "medium-grad-checkpointing-cost": [
        "llm-activation-checkpointing",
        "llm-activation-checkpointing-pytorch",
    ],
    "medium-bf16-vs-fp16-stability": [
        "llm-bf16-vs-fp16",
        "llm-fp16-loss-scaling",
        "llm-bf16-weight-stagnation",
    ],
    "medium-nan-debug": ["llm-nan-debug"],
    "medium-activation-checkpointing-short": ["llm-activation-checkpointing"],
    "medium-bf16-vs-fp16-short": ["llm-bf16-vs-fp16"],
    "medium-loss-spike": ["llm-loss-spike"],
    "medium-pretraining-data-quality": ["llm-pretraining-data-quality"],
    "medium-cosine-warmup": ["llm-cosine-schedule"],
    # Hard — senior and distributed
    "hard-scaling-laws": ["llm-scaling-laws"],
    "hard-batch-size-and-lr": ["llm-batch-size-and-lr"],
    # Scenario-based
    "scenario-nan-step-5000": ["llm-nan-at-step-5000", "llm-nan-debug"],
    "scenario-loss-plateau": ["llm-loss-plateau"],
    "scenario-grad-explode-some-batches": ["llm-grad-explosion-some-batches"],
}
