"""The board's file set is declared once (firmware/package.json, the mip format) and the frozen
build's manifest.py names the same files: whatever `tablectl flash`, the virtual boards,
`mpremote mip install firmware/package.json` and a frozen image carry is the same firmware."""
import json
import os

import pytest

from tablectl.deploy_set import board_files, board_names
from tablectl.errors import TablectlError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIRMWARE = os.path.join(ROOT, "firmware")
BOARD_FOLDERS = ("table", "drivers", "boards")


def _manifest_files():
    """Run manifest.py as MicroPython's makemanifest would, with its functions recording files."""
    files = []

    def module(path, base_path="."):
        files.append(os.path.normpath(os.path.join(base_path, path)).replace(os.sep, "/"))

    def package(name, files_=None, base_path="."):
        for dirpath, dirs, names in os.walk(os.path.join(FIRMWARE, base_path, name)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for n in names:
                if n.endswith(".py"):
                    files.append(os.path.relpath(os.path.join(dirpath, n), FIRMWARE).replace(os.sep, "/"))

    def include(path):
        assert path.startswith("$(PORT_DIR)"), "the manifest includes only the port's own manifest"

    with open(os.path.join(FIRMWARE, "manifest.py")) as f:
        exec(compile(f.read(), "manifest.py", "exec"), {"module": module, "package": package, "include": include})
    return sorted(files)


def test_package_json_lists_every_board_module_and_nothing_else():
    on_disk = ["main.py"]
    for folder in BOARD_FOLDERS:
        on_disk += sorted("%s/%s" % (folder, n) for n in os.listdir(os.path.join(FIRMWARE, folder)) if n.endswith(".py"))
    assert sorted(board_names(FIRMWARE)) == sorted(on_disk), (
        "firmware/package.json must list exactly the board's modules: add a new module there")
    assert board_names(FIRMWARE)[0] == "main.py"


def test_the_frozen_manifest_names_the_same_files():
    assert _manifest_files() == sorted(board_names(FIRMWARE))


def test_package_json_is_a_mip_package_with_relative_urls():
    with open(os.path.join(FIRMWARE, "package.json")) as f:
        package = json.load(f)
    for target, url in package["urls"]:
        assert target == url, "each file is fetched from its own path next to package.json"
    assert package["deps"] == [] or all(len(d) == 2 for d in package["deps"])


def test_a_list_that_points_outside_the_tree_is_refused(tmp_path):
    (tmp_path / "main.py").write_text("")
    (tmp_path / "package.json").write_text(json.dumps({"urls": [["../etc/passwd", "x"]]}))
    with pytest.raises(TablectlError, match="not a path inside the firmware tree"):
        board_names(str(tmp_path))


def test_a_missing_file_is_named(tmp_path):
    (tmp_path / "main.py").write_text("")
    (tmp_path / "package.json").write_text(json.dumps({"urls": [["main.py", "main.py"], ["table/app.py", "table/app.py"]]}))
    with pytest.raises(TablectlError, match="has no table/app.py, which package.json lists"):
        board_files(str(tmp_path))


def test_a_compiled_tree_deploys_its_mpy_files(tmp_path):
    (tmp_path / "main.py").write_text("")
    (tmp_path / "table").mkdir()
    (tmp_path / "table" / "app.mpy").write_bytes(b"M")
    (tmp_path / "package.json").write_text(json.dumps({"urls": [["main.py", "main.py"], ["table/app.py", "table/app.py"]]}))
    assert [name for name, _ in board_files(str(tmp_path))] == ["main.py", "table/app.mpy"]
