"""User-facing errors: the CLI prints them as one line and exits 2, never a traceback."""


class DrillError(Exception):
    """A problem the user can fix (bad setting, missing file, unknown deck); str() is the text."""


class SettingsError(DrillError):
    """The settings file cannot be read or holds an invalid value."""


class StorageError(DrillError):
    """The database cannot be opened or has a schema this version cannot handle."""
