"""The one user-facing error type: the CLI prints it as `tablectl: <message>` and exits 1."""


class TablectlError(Exception):
    """Something the user can act on. The message says what is wrong and what to do."""
