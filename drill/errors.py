"""User-facing errors: the CLI prints them as one line and exits 2, never a traceback."""


class DrillError(Exception):
    """A problem the user can fix (bad setting, missing file, unknown deck); str() is the text."""


class SettingsError(DrillError):
    """The settings file cannot be read or holds an invalid value."""


class StorageError(DrillError):
    """The database cannot be opened or has a schema this version cannot handle."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP reached a command: raised like Ctrl-C (SIGINT), so every `finally`
    and every KeyboardInterrupt handler on the way out runs (temporary files removed, child
    processes stopped) before the process exits with 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
