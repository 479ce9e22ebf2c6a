"""Run a user's training script the way labs run the reference trainer, observed from outside.

Torch-free launcher side: `harness` (launch with deadline, whole-tree kill, faults, capped
output), `evidence` (read what a run recorded), `limits` (resource limits for the child).
Torch side: `bootstrap` (`python -m trainer_lab.usercode.bootstrap SCRIPT ARGS`, runs the script
via runpy) and `recorder` (optimizer step hooks, fetched ids, checkpoint writes, fault injection).
"""
