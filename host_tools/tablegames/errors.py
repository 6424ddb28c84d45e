"""The game math's one error type. The CLI prints it like its own (`tablectl: <message>`, exit 1);
the game package itself knows nothing of the CLI."""


class GameError(ValueError):
    """A hand, pay table or option the rules do not allow; the message says which and why."""
