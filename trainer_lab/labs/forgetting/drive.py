"""forgetting lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from typing import Any

from trainer_lab.context import LabContext, LabError

VARIANTS = ("full_high_lr", "full_low_lr", "lora", "replay")


def _row(name: str, v: dict[str, Any]) -> str:
    return f"{name} (lr {v['lr']:g}): A {v['acc_a']:.3f}, B {v['acc_b']:.3f}"


def drive(run: LabContext) -> None:
    p = run.params
    run.plan(1)
    run.launch("trainer_lab.labs.forgetting.worker:main", {**p, "collective_timeout_s": 170})
    found = run.report("forgetting")
    before, v = found["pretrained"], found["variants"]
    if set(v) != set(VARIANTS):
        raise LabError(f"the worker reported variants {sorted(v)}")
    run.observe("pretrained", before)
    run.observe("variants", v)
    high, low, lora, replay = (v[name] for name in VARIANTS)
    start = f"pretrained: A {before['acc_a']:.3f}, B {before['acc_b']:.3f}"
    run.check(
        "high_lr_forgets",
        high["forgetting"] >= 0.4,
        f"{start}; {_row('full fine-tuning', high)} (forgot {high['forgetting']:.3f})",
    )
    run.check(
        "low_lr_forgets_less",
        low["forgetting"] <= high["forgetting"] - 0.3 and low["acc_b"] >= before["acc_b"] + 0.2,
        f"{_row('full fine-tuning', low)} vs {_row('full fine-tuning', high)}",
    )
    run.check(
        "lora_forgets_less",
        lora["forgetting"] <= high["forgetting"] - 0.1 and lora["acc_b"] >= before["acc_b"] + 0.15,
        f"{_row('LoRA', lora)} with {lora['trainable_params']:,} trainable parameters vs "
        f"{_row('full fine-tuning', high)} with {high['trainable_params']:,}",
    )
    run.check(
        "replay_forgets_less",
        replay["forgetting"] <= high["forgetting"] - 0.3 and replay["acc_b"] >= high["acc_b"] - 0.1,
        f"{_row('replay of ' + format(p['replay_share'], '.0%') + ' A', replay)} vs "
        f"{_row('no replay', high)}",
    )
