"""Persistence: SQLModel tables over SQLite (storage.db), and a stdlib-only read path
(storage.snapshot) for the TUI's first paint. Never imports textual or torch."""
