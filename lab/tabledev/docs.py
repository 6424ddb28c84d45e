"""The generated parts of the reference docs: docs/CLI.md is every `tablectl` command's `--help`,
written by the cog blocks in it from the parser the installed CLI builds at run time (so a command
registered by an entry point appears as soon as it is installed, and one removed disappears).

    python -m tabledev.docs           rewrite the generated blocks in place
    python -m tabledev.docs --check   exit 1 (and name the file) if a block is not what it would be

tests/test_docs_cli_reference.py runs the check, so the reference cannot drift from the parser.
"""
import argparse
import contextlib
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The files whose cog blocks this module owns.
GENERATED = [os.path.join(ROOT, "docs", "CLI.md")]
# argparse wraps help to the terminal's width: a fixed width keeps the reference the same on
# every machine and in every terminal.
HELP_COLUMNS = 100


@contextlib.contextmanager
def _stable_environment():
    """The help as any machine prints it: a fixed width, and none of the TABLECTL_* variables a
    shell may set (a command's defaults are read from them when its parser is built)."""
    saved = {k: v for k, v in os.environ.items() if k == "COLUMNS" or k.startswith("TABLECTL_")}
    for k in saved:
        del os.environ[k]
    os.environ["COLUMNS"] = str(HELP_COLUMNS)
    try:
        yield
    finally:
        del os.environ["COLUMNS"]
        os.environ.update(saved)


def command_parsers(parser, path=("tablectl",)):
    """(command words, parser) for the program and every command and sub-command under it, in the
    order `--help` lists them; an alias is listed once, under its first name."""
    yield path, parser
    seen = set()
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for name, sub in action.choices.items():
            if id(sub) in seen:
                continue
            seen.add(id(sub))
            yield from command_parsers(sub, path + (name,))


def cli_reference(parser=None):
    """The Markdown body of docs/CLI.md: a list of the commands, then each one's help."""
    with _stable_environment():
        if parser is None:
            from tablectl.cli import build_parser
            parser = build_parser()
        entries = [(" ".join(words), sub.format_help().rstrip()) for words, sub in command_parsers(parser)]
    out = ["Commands:", ""]
    for name, _ in entries[1:]:
        out.append("- [`%s`](#%s)" % (name, name.replace(" ", "-")))
    for name, text in entries:
        out += ["", '<a id="%s"></a>' % name.replace(" ", "-"), "", "### `%s`" % name, "", "```text", text, "```"]
    return "\n".join(out) + "\n"


def run_cog(check, files=None):
    """cog over the generated files: rewrite them, or with check=True only say which differ.
    Returns cog's exit status (0: up to date)."""
    from cogapp import Cog
    argv = ["cog", "--check" if check else "-r"] + list(files or GENERATED)
    with _stable_environment():
        return Cog().main(argv)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tabledev.docs", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only check that the generated blocks are current")
    ap.add_argument("files", nargs="*", help="the files to process (default: %s)" %
                    ", ".join(os.path.relpath(f, ROOT) for f in GENERATED))
    args = ap.parse_args(argv)
    status = run_cog(args.check, args.files)
    if status and args.check:
        sys.stderr.write("generated docs are out of date: run `python -m tabledev.docs` (make docs)\n")
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
