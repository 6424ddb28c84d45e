"""`tablectl`: one command, dispatched through a table of sub-commands.

Each sub-command lives in its own module under tablectl.commands and exposes
HELP (one line), EXAMPLE (a command line), add_arguments(parser) and run(args) -> int.
Other installed packages add sub-commands of the same shape through the `tablectl.commands`
entry-point group (tablectl/plugins.py): the developer's tools register `sim` and `bench` there,
so this CLI imports none of their code.
"""
import argparse
import importlib
import os
import sqlite3
import sys

from tablegames.errors import GameError

from .errors import TablectlError

# name -> module. Order is the order `tablectl --help` lists them in.
COMMANDS = {
    "serve": "tablectl.commands.serve",
    "status": "tablectl.commands.board",
    "meters": "tablectl.commands.board",
    "events": "tablectl.commands.board",
    "lock": "tablectl.commands.board",
    "unlock": "tablectl.commands.board",
    "config": "tablectl.commands.board",
    "jackpot": "tablectl.commands.jackpot",
    "provision": "tablectl.commands.board",
    "service": "tablectl.commands.service_mode",
    "storage": "tablectl.commands.storage",
    "diag": "tablectl.commands.diag",
    "loop": "tablectl.commands.loop",
    "flash": "tablectl.commands.flash",
    "monitor": "tablectl.commands.monitor",
    "audit": "tablectl.commands.audit",
    "reconcile": "tablectl.commands.audit",
    "report": "tablectl.commands.report",
    "eval": "tablectl.commands.eval",
    "settle": "tablectl.commands.settle",
    "par": "tablectl.commands.par",
    "pool": "tablectl.commands.pool",
    "ports": "tablectl.commands.ports",
    "verify-software": "tablectl.commands.verify_software",
    "where": "tablectl.commands.where",
}


def all_commands():
    """{name: module path}: tablectl's own commands, then those other packages register."""
    from . import plugins
    found = dict(COMMANDS)
    found.update(plugins.commands(reserved=COMMANDS))
    return found


def _load(name, registered=None):
    if name in COMMANDS:
        module = importlib.import_module(COMMANDS[name])
    else:
        from . import plugins
        registered = all_commands() if registered is None else registered
        if name not in registered:
            raise TablectlError(plugins.NOT_INSTALLED % ("`tablectl %s`" % name))
        module = plugins.import_command(name, registered[name])
    # A module may serve several commands (board.py: status, meters, ...): it then has
    # a COMMANDS dict of name -> (HELP, EXAMPLE, add_arguments, run).
    table = getattr(module, "COMMANDS", None)
    if table is not None:
        return table[name]
    return module.HELP, module.EXAMPLE, module.add_arguments, module.run


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 1 with the `tablectl: ` prefix, like every other refusal (README)."""

    def error(self, message):
        import re
        # argparse's "invalid choice: 'jackpot' (choose from 'meters', 'coin-in', 'jackpots')"
        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:
            from .suggest import did_you_mean
            message = message.replace(" (choose from", did_you_mean(m.group(1), re.findall(r"'([^']*)'", m.group(2)))
                                      + " (choose from", 1)
        # One line, as every refusal: what is wrong, and where the usage is (not printed: the
        # top-level usage above a sub-command's error pointed at the wrong command).
        command = self.prog[len("tablectl "):] if self.prog.startswith("tablectl ") else ""
        where = "`tablectl %s --help`" % command if command else "`tablectl --help`"
        sys.stderr.write("tablectl: %s%s (%s shows the usage)\n" % ("%s: " % command if command else "", message, where))
        sys.exit(1)


def _version():
    # The installed package's version (pyproject.toml), the one pip reports.
    from importlib.metadata import PackageNotFoundError, version
    try:
        return "tablectl %s" % version("tablectl")
    except PackageNotFoundError:
        return "tablectl (not installed: run `make setup`)"


class _VersionAction(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        print(_version())
        parser.exit()


def build_parser(available=None):
    parser = _Parser(
        prog="tablectl",
        description="Progressive table controller: host service, ledger and technician tool.",
    )
    # the version is looked up only when asked for: importlib.metadata would slow every command's
    # start (docs/BENCHMARKS.md, `bench_cli_start.py`)
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    # The entry points are read only when a command not of tablectl's own is asked for, or all
    # of them (--help): reading them would cost every command a scan of the installed
    # distributions (`bench_cli_start.py` measures the start-up).
    own_only = available is not None and available <= set(COMMANDS)
    registered = COMMANDS if own_only else all_commands()
    for name in registered:
        if available is not None and name not in available:
            continue
        # Every command is always offered: a command whose C core or numpy is missing says so in
        # one line when it runs (its heavy imports are inside its run()).
        try:
            help_text, example, add_arguments, _ = _load(name, registered)
        except TablectlError:
            if available is None:
                continue  # --help lists what runs here; the command itself says what is missing
            raise
        p = sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog="example:\n  " + example,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add_arguments(p)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    # Ctrl-C stops any tablectl command, even one started with SIGINT ignored (background jobs).
    import signal
    signal.signal(signal.SIGINT, signal.default_int_handler)
    argv = _glue_relative_times(argv)
    try:
        from . import userconfig
        userconfig.apply()  # the config file's db/port/board, under flags and TABLECTL_* variables
    except TablectlError as exc:
        print("tablectl: %s" % exc, file=sys.stderr)
        return 1
    if "_ARGCOMPLETE" in os.environ:
        # Tab completion (bash: eval "$(register-python-argcomplete tablectl)"): the shell runs us
        # with the line in COMP_LINE; argcomplete answers from the full parser and exits.
        try:
            import argcomplete
        except ImportError:  # completion is optional (pip install 'tablectl[completion]')
            return 1
        argcomplete.autocomplete(build_parser())
    word = next((w for w in argv if not w.startswith("-")), None)
    registered = COMMANDS if word in COMMANDS else all_commands()
    if word is not None and word not in registered:
        from .plugins import DEVELOPER_VERBS, NOT_INSTALLED
        if word in DEVELOPER_VERBS:
            print("tablectl: %s" % NOT_INSTALLED % ("`tablectl %s`" % word), file=sys.stderr)
            return 1
        from .suggest import did_you_mean
        print("tablectl: unknown command %r%s (`tablectl --help` lists them)"
              % (word, did_you_mean(word, registered)), file=sys.stderr)
        return 1
    try:
        parser = build_parser(_chosen(argv, registered))
    except TablectlError as exc:  # a registered command whose package cannot be imported
        print("tablectl: %s" % exc, file=sys.stderr)
        return 1
    args, extra = parser.parse_known_args(argv)
    if extra:
        return _unknown_arguments(parser, args, extra)
    _, _, _, run = _load(args.command, registered)
    try:
        return run(args) or 0
    except (TablectlError, GameError) as exc:
        print("tablectl: %s" % exc, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except sqlite3.DatabaseError as exc:
        # A --db that is not a ledger (not SQLite, or unreadable): name the file, no traceback.
        db = getattr(args, "db", None)
        print("tablectl: %s is not a usable ledger (%s): give the file `tablectl serve --db` writes"
              % (db or "the ledger", exc), file=sys.stderr)
        return 1
    except OSError as exc:
        if isinstance(exc, BrokenPipeError) and _stdout_closed():
            # `tablectl ... | head`: the reader has what it wanted; not an error
            return 0
        # A port or socket that went away mid-command: say so plainly, no traceback.
        if exc.filename:
            # A file the user named (a report's --plot, a --csv): name it, the board is not to blame.
            print("tablectl: %s: %s" % (exc.filename, exc.strerror or exc), file=sys.stderr)
        else:
            print("tablectl: %s (is the board or service still there?)" % (exc.strerror or exc), file=sys.stderr)
        return 1


def _option_strings(parser):
    """Every option of a parser and of its sub-commands' parsers (bench coin --count, ...)."""
    names = set()
    for action in parser._actions:
        names.update(o for o in action.option_strings if o.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                names |= _option_strings(sub)
    return names


def _unknown_arguments(parser, args, extra):
    """A mistyped option or a word too many: one line, with "did you mean" for an option."""
    from .suggest import did_you_mean
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[args.command]
    word = extra[0]
    if word.startswith("-"):
        name = word.split("=", 1)[0]
        print("tablectl: %s: unknown option %s%s (`tablectl %s --help` lists them)"
              % (args.command, name, did_you_mean(name, _option_strings(sub)), args.command), file=sys.stderr)
    else:
        print("tablectl: %s: unexpected argument %r (`tablectl %s --help` shows the usage)"
              % (args.command, word, args.command), file=sys.stderr)
    return 1


# Options whose value may be a relative time such as -10m, which argparse would take for an option.
TIME_OPTIONS = ("--from", "--to", "--since", "--until", "--before")


def _glue_relative_times(argv):
    """`report --from -10m` as `report --from=-10m`: the help advertises -30m, so the spaced form
    must work too (argparse reads a value starting with '-' as the next option)."""
    import re
    out = list(argv)
    for i in range(len(out) - 1):
        if out[i] in TIME_OPTIONS and re.fullmatch(r"-\d+[smhd]", out[i + 1]):
            out[i:i + 2] = ["%s=%s" % (out[i], out[i + 1]), None]
    return [w for w in out if w is not None]


def _chosen(argv, registered=COMMANDS):
    """The one command named on the line, so only its module is imported (`tablectl eval` must
    not pay for `par`'s imports); None (all of them) for `tablectl --help` or a misspelling."""
    for word in argv:
        if word.startswith("-"):
            continue
        return {word} if word in registered else None
    return None


def _stdout_closed():
    """True when our stdout is a pipe whose reader has gone; stdout then points at /dev/null
    so that the interpreter's last flush does not complain either."""
    import os
    import select

    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        events = poller.poll(0)
    except (OSError, ValueError, AttributeError):
        return False
    if not any(ev & select.POLLERR for _, ev in events):
        return False
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    return True


if __name__ == "__main__":
    sys.exit(main())
