"""The torch side of the exercises: Ctx and main (ctx.py), shared tiny models and digests (kit.py).
Imported only by the checkers, in the checked processes."""
