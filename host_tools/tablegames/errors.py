"""The game math's one error type. The CLI prints it like its own (`tablectl: <message>`, exit 1);
the game package itself knows nothing of the CLI."""


class GameError(ValueError):
    """A hand, pay table or option the rules do not allow; the message says which and why."""


class CoreMissing(GameError):
    """Work that needs a C core, run where the core was not built (the project installs without a
    C compiler: setup.py marks the extensions optional). One line says which core and what to do."""

    def __init__(self, what, module):
        super().__init__("%s needs the C core %s, which is not built here; install a C compiler "
                         "and run make setup (or pip install the source again)" % (what, module))
        self.module = module
