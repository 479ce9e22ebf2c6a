"""The coding round: the user writes train.py against a contract; drill grades what it does.

contract.py (the contract text, the given files, the launches), grader.py (run and judge),
checks_run.py / checks_restart.py (the checks), variants.py (the model answer's broken variants).
"""
