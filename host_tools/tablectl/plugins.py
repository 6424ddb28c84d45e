"""What other installed packages add to tablectl, found through entry points (importlib.metadata),
never by importing them: the shipped CLI knows the developer's tools (tabledev) only by the names
they register.

Groups (declared by the package that provides them, pyproject.toml for tabledev):
  tablectl.commands   name -> a module with HELP, EXAMPLE, add_arguments(parser) and run(args),
                      a sub-command like those of tablectl.commands (tabledev: sim, bench)
  tablectl.bench      "virtual" -> a class Bench(state_dir) that moves a virtual board's pins
                      (`tablectl diag --bench`)
  tablectl.ports      "virtual" -> a function listing the virtual boards' ports (`tablectl ports`)
"""
import importlib

from .errors import TablectlError

COMMANDS_GROUP = "tablectl.commands"
BENCH_GROUP = "tablectl.bench"
PORTS_GROUP = "tablectl.ports"

# The verbs the developer's tools register, named here only to say what is missing when they are
# not installed (the CLI imports none of their code).
DEVELOPER_VERBS = ("sim", "bench")
NOT_INSTALLED = ("%s is one of the developer's tools (tabledev), which are not installed with this tablectl: "
                 "they come with a checkout of the project (`make setup`)")


def _entry_points(group):
    from importlib.metadata import entry_points
    return list(entry_points(group=group))


def commands(reserved=()):
    """{name: module path} of the sub-commands registered in tablectl.commands, in name order; a
    name tablectl has itself (reserved) is not taken over."""
    found = {}
    for ep in sorted(_entry_points(COMMANDS_GROUP), key=lambda ep: ep.name):
        if ep.name not in reserved and ep.name not in found:
            found[ep.name] = ep.value
    return found


def import_command(name, module_path):
    """The module of a registered sub-command; a TablectlError saying the developer's tools are not
    installed when its package cannot be imported."""
    try:
        return importlib.import_module(module_path)
    except ImportError as exc:
        raise TablectlError(NOT_INSTALLED % ("`tablectl %s`" % name) + " (%s)" % exc)


def hook(group, name, purpose):
    """The object registered as `name` in `group` (e.g. the bench of `diag --bench`); a
    TablectlError naming `purpose` when nothing is registered or it cannot be imported."""
    for ep in _entry_points(group):
        if ep.name == name:
            try:
                return ep.load()
            except ImportError as exc:
                raise TablectlError(NOT_INSTALLED % purpose + " (%s)" % exc)
    raise TablectlError(NOT_INSTALLED % purpose)


def optional_hook(group, name):
    """The object registered as `name` in `group`, or None when there is none (or it cannot be
    imported): for what tablectl does without the developer's tools, only less of it."""
    try:
        return hook(group, name, name)
    except TablectlError:
        return None
