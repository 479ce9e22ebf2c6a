"""The run log: every graded run (a lab, an exercise check, a coding-round grading, a `drill
verify` job) recorded by one recorder (recorder.RunRecorder) into one table (storage's run_log,
`db.runs`), and read back as RunRecord (log.RunLog). Labs, exercises and mock import it."""
