"""The developer's verbs of `tablectl` (sim, bench): registered in the `tablectl.commands`
entry-point group (pyproject.toml), so the shipped CLI finds them when the developer's tools are
installed and never imports them itself (tablectl/plugins.py)."""
