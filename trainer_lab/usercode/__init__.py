"""Run a user's training script the way labs run the reference trainer, observed from outside.
The one harness for user code: the coding round's grader (trainer_lab.grading) and the
exercises' runner (trainer_lab.exercises.runner) both run through it.

Torch-free launcher side: `harness` (launch with deadline, whole-tree kill, faults, capped
output), `evidence` (read what a run recorded), `limits` (resource limits for the child),
`source` (read and compile-check the user's file), `verdict` (a graded run's lab result).
Torch side: `bootstrap` (`python -m trainer_lab.usercode.bootstrap SCRIPT ARGS`, runs the script
via runpy) and `recorder` (optimizer step hooks, fetched ids, checkpoint writes, fault injection).
"""
