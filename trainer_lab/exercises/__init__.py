"""Exercises: small code katas checked by real runs (see catalogue.py for the layout).

One package per exercise, trainer_lab/exercises/<name>/: `__init__.py` (SPEC; torch-free),
`starter.py` (what the user starts from), `solution.py` (the model answer) and `check.py` (torch;
runs under the harness, imports the user's file and records checks through checking.Ctx).
"""
