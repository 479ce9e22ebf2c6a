"""drill: spaced-repetition drills for ML-training-infrastructure interviews, checked by real labs."""

__version__ = "0.1.0"
