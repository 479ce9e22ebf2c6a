"""Seed 003 (LLM training questions): one short key per seed question, in seed order, mapped to
the card ids that cover it. Repeated seed questions (the seed asks some twice, once long and once
short) keep their own key and usually share cards."""

COVERAGE_003: dict[str, list[str]] = {
    # Easy — fundamentals
    "easy-gpu-memory-breakdown": ["llm-memory-breakdown", "llm-activation-memory"],
    "easy-epoch-step-batch": ["llm-batch-step-epoch"],
    "easy-why-warmup": ["llm-warmup-why"],
    "easy-finetune-vs-pretrain": ["llm-finetune-vs-pretrain"],
    "easy-grad-accum": ["llm-grad-accum", "llm-grad-accum-correctness"],
    "easy-memory-how-much": ["llm-memory-breakdown", "llm-memory-16-bytes-autocast"],
    "easy-grad-accum-short": ["llm-grad-accum"],
    "easy-warmup-short": ["llm-warmup-why"],
    "easy-grad-clipping": ["llm-grad-clipping"],
    "easy-checkpoint": ["llm-checkpoint-contents"],
    "easy-lora": ["llm-lora-basics"],
    "easy-qlora": ["llm-qlora-basics"],
    "easy-sft-vs-pretraining": ["llm-sft-vs-pretraining"],
    "easy-epoch-vs-step": ["llm-batch-step-epoch"],
    # Medium — applied training
    "medium-grad-checkpointing-cost": [
        "llm-activation-checkpointing",
        "llm-activation-checkpointing-pytorch",
    ],
    "medium-lora-vs-full": ["llm-lora-vs-full", "llm-lora-basics"],
    "medium-qlora-single-gpu": ["llm-qlora-single-gpu"],
    "medium-bf16-vs-fp16-stability": [
        "llm-bf16-vs-fp16",
        "llm-fp16-loss-scaling",
        "llm-bf16-weight-stagnation",
    ],
    "medium-nan-debug": ["llm-nan-debug"],
    "medium-activation-checkpointing-short": ["llm-activation-checkpointing"],
    "medium-bf16-vs-fp16-short": ["llm-bf16-vs-fp16"],
    "medium-rlhf-vs-dpo": ["llm-rlhf-vs-dpo"],
    "medium-loss-spike": ["llm-loss-spike"],
    "medium-dora": ["llm-dora"],
    "medium-pretraining-data-quality": ["llm-pretraining-data-quality"],
    "medium-cosine-warmup": ["llm-cosine-schedule"],
    # Hard — senior and distributed
    "hard-sft-rlhf-dpo": ["llm-sft-rlhf-dpo", "llm-dpo-loss"],
    "hard-reward-hacking": ["llm-reward-hacking"],
    "hard-scaling-laws": ["llm-scaling-laws"],
    "hard-full-ft-vs-peft": ["llm-lora-vs-full", "llm-catastrophic-forgetting"],
    "hard-catastrophic-forgetting": ["llm-catastrophic-forgetting"],
    "hard-batch-size-and-lr": ["llm-batch-size-and-lr"],
    # Scenario-based
    "scenario-nan-step-5000": ["llm-nan-at-step-5000", "llm-nan-debug"],
    "scenario-loss-plateau": ["llm-loss-plateau"],
    "scenario-finetune-70b-few-gpus": ["llm-finetune-70b-few-gpus"],
    "scenario-sft-overfit": ["llm-sft-overfit"],
    "scenario-loss-fine-downstream-poor": ["llm-downstream-quality-poor"],
    "scenario-forgot-base-abilities": ["llm-catastrophic-forgetting"],
    "scenario-consumer-gpus-13b": ["llm-finetune-13b-consumer-gpus"],
    "scenario-reward-hacking": ["llm-reward-hacking"],
    "scenario-grad-explode-some-batches": ["llm-grad-explosion-some-batches"],
}
