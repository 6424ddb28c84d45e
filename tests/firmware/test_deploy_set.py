"""The board's file set is declared once, per board (tablectl/deploy.py): a Pico carries the Pico's
files, an ESP32 the ESP32's, and the virtual board's (boards/sim.py, boards/simflash.py) go only
to the virtual board. mip's package-<board>.json and a frozen build's manifest_<board>.py are
written from that one list and must agree with it; a compiled tree (`make mpy`) is made for one
board, in its CPU's .mpy, and is refused for another."""
import ast
import json
import os

import pytest

from tablectl import deploy
from tablectl.deploy import BOARDS, board_files, board_for_platform, board_names, compile_tree
from tablectl.errors import TablectlError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIRMWARE = os.path.join(ROOT, "firmware")
BOARD_FOLDERS = ("table", "drivers", "boards")
SIM_ONLY = {"boards/sim.py", "boards/simflash.py"}
RP2_ONLY = {"boards/pico.py", "drivers/pio_pulse.py", "drivers/rawflash.py"}
ESP32_ONLY = {"boards/esp32.py", "drivers/pcnt_pulse.py"}
# main.py picks its board's module by sys.platform: the other boards' are not on this one
BOARD_MODULE = {"pico": "boards.pico", "esp32": "boards.esp32", "sim": "boards.sim"}


def _on_disk():
    names = ["main.py"]
    for folder in BOARD_FOLDERS:
        names += sorted("%s/%s" % (folder, n) for n in os.listdir(os.path.join(FIRMWARE, folder)) if n.endswith(".py"))
    return names


def test_the_sim_files_go_only_to_the_virtual_board():
    assert SIM_ONLY <= set(board_names("sim"))
    for board in ("pico", "esp32"):
        assert not SIM_ONLY & set(board_names(board)), board


def test_a_pico_carries_no_esp32_file_and_an_esp32_no_rp2_file():
    pico, esp32, sim = (set(board_names(b)) for b in ("pico", "esp32", "sim"))
    assert RP2_ONLY <= pico and not ESP32_ONLY & pico
    assert ESP32_ONLY <= esp32 and not RP2_ONLY & esp32
    assert not (RP2_ONLY | ESP32_ONLY | {"boards/hwboard.py"}) & sim, "the virtual board has no interface hardware"


def test_every_board_module_goes_to_some_board_and_main_py_comes_first():
    carried = set()
    for board in BOARDS:
        names = board_names(board)
        assert names[0] == "main.py" and len(names) == len(set(names)), board
        carried |= set(names)
    assert sorted(carried) == sorted(_on_disk()), (
        "every module of firmware/ (table, drivers, boards) belongs to some board's list in tablectl/deploy.py")


def _imports(path):
    """The firmware modules a file imports (at the top or inside a function)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            # `from table import meter`: meter is a module of the package
            found |= {"%s.%s" % (node.module, a.name) for a in node.names
                      if os.path.exists(os.path.join(FIRMWARE, node.module, a.name + ".py"))}
    return {m for m in found if m.split(".")[0] in BOARD_FOLDERS}


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_a_boards_files_import_only_files_it_carries(board):
    names = set(board_names(board))
    missing = []
    for name in names:
        for module in _imports(os.path.join(FIRMWARE, *name.split("/"))):
            if name == "main.py" and module in BOARD_MODULE.values() and module != BOARD_MODULE[board]:
                continue
            path = module.replace(".", "/")
            if path + ".py" not in names and path + "/__init__.py" not in names:
                missing.append("%s imports %s" % (name, module))
    assert not missing, "a %s board would lack: %s" % (board, missing)


def test_a_board_is_known_by_the_platform_its_repl_reports():
    assert [board_for_platform(p) for p in ("rp2", "esp32", "linux")] == ["pico", "esp32", "sim"]
    with pytest.raises(TablectlError, match="sys.platform 'nrf'.*give --hw pico or --hw esp32"):
        board_for_platform("nrf")
    with pytest.raises(TablectlError, match="no board 'rp2': the boards are esp32, pico, sim"):
        board_names("rp2")


# --- the lists MicroPython's tools read ---------------------------------------------------------------
def _manifest_files(path):
    """Run a manifest as MicroPython's makemanifest would, with its functions recording files."""
    files = []

    def module(module_path, base_path="."):
        files.append(os.path.normpath(os.path.join(base_path, module_path)).replace(os.sep, "/"))

    def package(name, files=None, base_path="."):
        assert files, "a package is frozen by its listed files, never the whole folder"
        files_ = [os.path.normpath(os.path.join(base_path, name, f)).replace(os.sep, "/") for f in files]
        recorded.extend(files_)

    recorded = files

    def include(p):
        assert p.startswith("$(PORT_DIR)"), "the manifest includes only the port's own manifest"

    with open(path) as f:
        exec(compile(f.read(), path, "exec"), {"module": module, "package": package, "include": include})
    return files


@pytest.mark.parametrize("board", deploy.REAL_BOARDS)
def test_the_written_lists_are_the_ones_deploy_makes(board):
    for path, text in deploy.lists(FIRMWARE).items():
        with open(path) as f:
            assert f.read() == text, "%s differs from tablectl/deploy.py: run `python -m tablectl.deploy lists`" % path
    assert sorted(_manifest_files(os.path.join(FIRMWARE, deploy.manifest_name(board)))) == sorted(board_names(board))
    with open(os.path.join(FIRMWARE, deploy.package_json_name(board))) as f:
        package = json.load(f)
    assert [target for target, _ in package["urls"]] == board_names(board)
    for target, url in package["urls"]:
        assert target == url, "each file is fetched from its own path next to the package's list"
    assert package["deps"] == []


def test_no_list_for_the_virtual_board_or_of_every_file_is_left_over():
    written = {os.path.basename(p) for p in deploy.lists(FIRMWARE)}
    lists = {n for n in os.listdir(FIRMWARE) if n.endswith(".json") or n.startswith("manifest")}
    assert lists == written, "firmware/ holds only the lists deploy.py writes"


# --- files from a tree ------------------------------------------------------------------------------
def test_a_missing_file_is_named(tmp_path):
    (tmp_path / "main.py").write_text("")
    with pytest.raises(TablectlError, match="has no table/__init__.py, which the pico board carries"):
        board_files("pico", str(tmp_path))


def test_the_files_come_from_the_tree_given(tmp_path):
    files = board_files("sim", FIRMWARE)
    assert [n for n, _ in files] == board_names("sim")
    assert all(p == os.path.join(FIRMWARE, *n.split("/")) and os.path.isfile(p) for n, p in files)


def _arch(path):
    """The native architecture an .mpy file names (its header's third byte, high six bits)."""
    with open(path, "rb") as f:
        header = f.read(4)
    assert header[:1] == b"M", path
    return header[2] >> 2


def test_native_code_is_compiled_for_the_boards_cpu(tmp_path):
    src = tmp_path / "fast.py"
    src.write_text("import micropython\n@micropython.native\ndef f(x):\n    return x + 1\n")
    archs = {}
    for board in deploy.MPY_ARCH:
        deploy.compile_file(board, str(src), str(tmp_path / (board + ".mpy")))
        archs[board] = _arch(str(tmp_path / (board + ".mpy")))
    # MicroPython's native architecture numbers (py/persistentcode.h): armv6m 4, xtensawin 10
    assert archs == {"pico": 4, "esp32": 10}


def test_a_compiled_tree_is_for_one_board_in_its_cpus_mpy(tmp_path):
    pico = compile_tree("pico", FIRMWARE, str(tmp_path / "pico"))
    esp32 = compile_tree("esp32", FIRMWARE, str(tmp_path / "esp32"))
    names = [n for n, _ in board_files("pico", pico)]
    assert names[0] == "main.py" and all(n.endswith(".mpy") for n in names[1:])
    assert [n[:-4] + ".py" for n in names[1:]] == board_names("pico")[1:]
    assert not os.path.exists(os.path.join(pico, "boards", "sim.mpy"))
    assert not os.path.exists(os.path.join(pico, "boards", "esp32.mpy"))
    assert _arch(os.path.join(pico, "table", "app.mpy")) == 0, "bytecode only: no native code in the firmware today"
    assert os.path.exists(os.path.join(esp32, "boards", "esp32.mpy"))
    with pytest.raises(TablectlError, match="compiled for the pico board, not the esp32"):
        board_files("esp32", pico)
    with pytest.raises(TablectlError, match="the sim board runs its sources as they are"):
        compile_tree("sim", FIRMWARE, str(tmp_path / "sim"))
