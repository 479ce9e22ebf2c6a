"""Timed mock rounds: round definitions, the round state machine, rubric coverage, grading, reports.

Everything here is UI-free and torch-free; the TUI screens (drill/tui/mock_screen.py,
mock_report_screen.py) are thin views over it. Storage goes through storage/mock_tables.py,
imported lazily because sqlmodel is heavy.
"""
