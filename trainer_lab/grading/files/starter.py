"""train.py: your distributed training pipeline (see the contract beside the editor).

python train.py --steps N --ckpt-dir DIR --ckpt-every C
torchrun --nproc-per-node W train.py --steps N --ckpt-dir DIR --ckpt-every C
"""

import argparse
from pathlib import Path

from drill_data import BATCH_SIZE, FEATURES, ToyDataset  # noqa: F401


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--ckpt-dir", type=Path, required=True)
    parser.add_argument("--ckpt-every", type=int, default=10)
    args = parser.parse_args()
    # TODO: process group, model, data, training loop, checkpoints, step lines
    print(f"training for {args.steps} steps")


if __name__ == "__main__":
    main()
