"""The C cores are optional (setup.py builds them with optional=True): installed without a
compiler, every command still runs, and each command that needs a core says so in one line,
`tablectl: ... needs the C core ...; install a C compiler and run make setup`, never a traceback.

The CLI runs in a fresh interpreter whose import system refuses the two extension modules, as
if they had never been built (a meta-path finder ahead of the normal ones)."""
import json
import os
import subprocess
import sys

import pytest

CORES = ("tablegames.poker._fastpoker", "tablegames.par._kernel")

# Run tablectl's main() with the named modules unimportable.
WRAPPER = """
import sys

class NoCore:
    hidden = set(sys.argv[1].split(","))

    def find_spec(self, name, path=None, target=None):
        if name in self.hidden:
            raise ModuleNotFoundError("No module named %r (hidden by the test)" % name, name=name)
        return None

sys.meta_path.insert(0, NoCore())
from tablectl.cli import main
sys.exit(main(sys.argv[2:]))
"""


def tablectl(args, hide=CORES, cwd=None):
    return subprocess.run([sys.executable, "-c", WRAPPER, ",".join(hide)] + list(args),
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def one_line_core_error(proc, module):
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr  # one line: no traceback
    assert lines[0].startswith("tablectl: ")
    assert "needs the C core %s" % module in lines[0]
    assert "install a C compiler and run make setup" in lines[0]
    return lines[0]


ROUND = {"dealer": {"cards": "Kh Kc 8c 4h 2h"},
         "seats": [{"seat": 1, "ante": 500, "cards": "As Ad 9c 7d 3s", "decision": "raise", "bet": 1000}]}


@pytest.fixture()
def round_file(tmp_path):
    path = tmp_path / "round.json"
    path.write_text(json.dumps(ROUND))
    return str(path)


def test_eval_without_the_core_says_so_in_one_line():
    line = one_line_core_error(tablectl(["eval", "As", "Ks", "Qs", "Js", "Ts"]), CORES[0])
    assert line.startswith("tablectl: eval")


def test_eval_with_the_core_answers():
    # the same wrapper hiding nothing: the refusal above comes from the missing module alone
    proc = tablectl(["eval", "As", "Ks", "Qs", "Js", "Ts"], hide=())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("royal flush")


def test_settle_without_the_core_says_so_in_one_line(round_file):
    one_line_core_error(tablectl(["settle", "caribbean-stud", round_file]), CORES[0])
    # and with it, the round settles
    proc = tablectl(["settle", "caribbean-stud", round_file, "--json"], hide=())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["net_cents"] == {"1": 1500}


def test_jackpot_without_the_core_says_so_before_reaching_a_board(tmp_path):
    # no service and a port that does not exist: the missing core is named first, not the port
    proc = tablectl(["jackpot", "--seat", "1", "--cards", "As Ks Qs Js Ts", "--dry-run",
                     "--db", str(tmp_path / "none.db"), "--port", str(tmp_path / "no-such-port")])
    one_line_core_error(proc, CORES[0])


@pytest.mark.parametrize("argv", [
    ["par", "three-card-poker", "--no-progress"],
    ["par", "progressive", "--no-progress"],
    ["par", "caribbean-stud", "--hand", "Ah Kd 4c 3s 2h", "--up", "2s"],
])
def test_par_without_the_kernel_says_so_in_one_line(argv):
    one_line_core_error(tablectl(argv, hide=(CORES[1],)), CORES[1])


def test_commands_that_need_no_core_still_run(tmp_path):
    for argv in (["--help"], ["status", "--help"], ["eval", "--help"], ["par", "--help"]):
        proc = tablectl(argv)
        assert proc.returncode == 0, (argv, proc.stderr)
    listed = tablectl(["--help"]).stdout
    for name in ("eval", "settle", "jackpot", "par"):
        assert name in listed
    proc = tablectl(["audit", "verify", "--db", str(tmp_path / "empty.db")])
    assert "Traceback" not in proc.stderr
