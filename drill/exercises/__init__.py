"""Exercises for the app and the CLI (UI-free): catalogue with status, workspaces under
DRILL_HOME/exercises/NAME/, checks through trainer_lab.exercises.runner, hints, the model answer,
progress in the database and the linked card's rating on solving."""
