"""drill: spaced-repetition drills for ML-training-infrastructure interviews, checked by labs."""

__version__ = "0.1.0"
