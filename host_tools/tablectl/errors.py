"""The one user-facing error type: the CLI prints it as `tablectl: <message>` and exits 1."""


class TablectlError(Exception):
    """Something the user can act on. The message says what is wrong and what to do."""


class WrongTarget(TablectlError):
    """The options name a board that is not the one they would reach (a port the ledger's service
    does not hold, a port served with another ledger, a board that is not --board or not the
    ledger's). Nothing was sent; asking again cannot help, so a monitor stops on it."""
