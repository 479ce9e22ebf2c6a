"""The ladder's rungs and the FLOP formula (torch-free: the driver and the worker share them).

Each rung keeps every setting of the rung before it and changes one thing, so the speed-up
between two neighbours is what that one thing buys. `activation_checkpointing` is a side rung:
the top rung plus recomputation, to show what the memory saving costs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Rung:
    name: str
    change: str  # what this rung adds, in words
    attention: str = "math"  # math | sdpa
    bf16: bool = False  # autocast to bfloat16
    compiled: bool = False  # torch.compile
    fused_adamw: bool = False  # AdamW(fused=True): one kernel for every parameter's update
    large_batch: bool = False  # batch x big_batch_factor
    checkpointing: bool = False  # activation checkpointing of every block


def _ladder() -> tuple[Rung, ...]:
    fp32 = Rung("fp32_eager", "fp32, eager, attention written out (softmax(QK^T)V)")
    bf16 = replace(fp32, name="bf16_autocast", change="+ bf16 autocast", bf16=True)
    sdpa = replace(
        bf16, name="sdpa", change="+ fused attention (SDPA: flash on GPU)", attention="sdpa"
    )
    comp = replace(sdpa, name="compile", change="+ torch.compile", compiled=True)
    fused = replace(comp, name="fused_adamw", change="+ fused AdamW", fused_adamw=True)
    big = replace(fused, name="large_batch", change="+ larger batch", large_batch=True)
    ac = replace(
        big,
        name="activation_checkpointing",
        change="top rung + activation checkpointing (its cost)",
        checkpointing=True,
    )
    return (fp32, bf16, sdpa, comp, fused, big, ac)


RUNGS: tuple[Rung, ...] = _ladder()
RUNG_NAMES: tuple[str, ...] = tuple(r.name for r in RUNGS)
TOP_RUNG = "large_batch"


def flops_per_token(
    matmul_params: int, layers: int, heads: int, head_size: int, seq_len: int, sabotage: str
) -> dict[str, int]:
    """nanoGPT's estimate_mfu: 6N + 12*L*H*Q*T training FLOPs per token.

    6N: forward 2N (a multiply and an add per weight) + backward 4N (input and weight
    gradients). 12*L*H*Q*T: QK^T and (scores)V, 2*T*Q FLOPs each per head per token forward,
    times 3 for forward + backward, over the full T x T (a causal kernel skips half of it).
    """
    dense = (2 if sabotage == "forget_backward" else 6) * matmul_params
    attention = 0 if sabotage == "no_attention_term" else 12 * layers * heads * head_size * seq_len
    return {"dense": dense, "attention": attention, "total": dense + attention}
