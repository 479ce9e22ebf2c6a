"""The warm launcher: ranks forked from a process that has already imported torch.

A lab, an exercise check or a coding-round run spends most of its time starting processes: every
torchrun, every rank imports torch, and every rank imports torch._dynamo on its optimizer's first
step. The warm path pays that once. `client.WarmServer` starts `python -m trainer_lab.warm.server`
(a child of the caller, which stays torch-free); the server imports torch, torch._dynamo,
torch.distributed.elastic and the lab, harness and checker modules, then forks one process per
request. A request runs a module as `python -m MODULE ARGS` would (trainer_lab.driver, or
trainer_lab.warm.agent in place of torchrun), in its own session, with the caller's stdio, cwd and
environment. The agent is torchrun's own machinery (`torch.distributed.run`'s argument parser and
config, `elastic_launch`, c10d rendezvous, the same per-rank logs and error files) with a function
entrypoint and the `fork` start method, so each rank is a fork of a warm process.

See `start.py` for which path runs when, `fresh.py` for what a forked process resets so that the
code it runs sees what a freshly started interpreter would.
"""
