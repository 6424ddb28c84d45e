"""A test a document names is a test that exists: every `file.py::test_name` in the docs (and every
test file named on its own) is found in tests/, so the requirement-to-test table in
docs/RELIABILITY.md, and every other page that points at a proof, cannot point at nothing."""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + [
    os.path.join(ROOT, name) for name in ("README.md", "CHANGELOG.md", os.path.join("lab", "tabledev", "EMULATOR.md"))
    if os.path.exists(os.path.join(ROOT, name))]
# `tests/host/test_books.py::test_x`, or a file's name alone (`mp_test_app.py::test_x`)
NAMED_TEST = re.compile(r"([A-Za-z0-9_./-]*\b(?:mp_)?test_[A-Za-z0-9_]+\.py)::([A-Za-z_][A-Za-z0-9_]*)")
TEST_FILE = re.compile(r"(?<![A-Za-z0-9_/.-])((?:tests/[A-Za-z0-9_./-]+/)?(?:mp_)?test_[A-Za-z0-9_]+\.py)\b")
# `::test_x` with no file before it: the reader cannot tell which file, nor can this test
BARE = re.compile(r"(?<![A-Za-z0-9_.])::(test_[A-Za-z0-9_]+)")


def _test_files():
    found = {}
    for dirpath, dirs, files in os.walk(os.path.join(ROOT, "tests")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                found.setdefault(name, []).append(os.path.relpath(os.path.join(dirpath, name), ROOT))
    return found


def _resolve(name, files):
    """The one file a doc means by NAME (a path from the root, or a file name unique in tests/)."""
    if "/" in name:
        return [name] if os.path.isfile(os.path.join(ROOT, name)) else []
    return files.get(name, [])


def _references():
    for doc in DOCS:
        with open(doc, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                yield os.path.relpath(doc, ROOT), number, line


def test_every_test_a_doc_names_exists():
    files = _test_files()
    wrong = []
    for doc, number, line in _references():
        for name, func in NAMED_TEST.findall(line):
            paths = _resolve(name, files)
            if len(paths) != 1:
                wrong.append("%s:%d: %s is %s" % (doc, number, name, "not in tests/" if not paths else
                                                   "ambiguous (%s)" % ", ".join(paths)))
                continue
            with open(os.path.join(ROOT, paths[0]), encoding="utf-8") as f:
                if not re.search(r"^\s*def %s\(" % re.escape(func), f.read(), re.MULTILINE):
                    wrong.append("%s:%d: %s has no %s" % (doc, number, paths[0], func))
        for func in BARE.findall(line):
            wrong.append("%s:%d: ::%s names no file" % (doc, number, func))
    assert not wrong, "docs name tests that do not exist:\n" + "\n".join(wrong)


def test_every_test_file_a_doc_names_exists():
    files = _test_files()
    wrong = []
    for doc, number, line in _references():
        for name in TEST_FILE.findall(line):
            if len(_resolve(name, files)) != 1:
                wrong.append("%s:%d: %s" % (doc, number, name))
    assert not wrong, "docs name test files that are not there (or not one):\n" + "\n".join(wrong)


def test_the_check_finds_a_test_that_is_not_there(tmp_path, monkeypatch):
    doc = tmp_path / "PAGE.md"
    doc.write_text("proved by `tests/host/test_books.py::test_the_books_reconcile_with_the_board`,\n"
                   "`tests/host/test_books.py::test_that_was_renamed`, `::test_whose_file_is_unsaid`\n"
                   "and `tests/host/test_gone.py`\n")
    monkeypatch.setattr(sys.modules[__name__], "DOCS", [str(doc)])
    try:
        test_every_test_a_doc_names_exists()
    except AssertionError as e:
        assert "test_that_was_renamed" in str(e) and "test_whose_file_is_unsaid" in str(e)
        assert "test_the_books_reconcile_with_the_board" not in str(e)
    else:
        raise AssertionError("a renamed test was not found missing")
    try:
        test_every_test_file_a_doc_names_exists()
    except AssertionError as e:
        assert "test_gone.py" in str(e) and "test_books.py" not in str(e)
    else:
        raise AssertionError("a missing test file was not found missing")


def test_the_requirement_table_names_tests_for_every_requirement():
    with open(os.path.join(ROOT, "docs", "RELIABILITY.md"), encoding="utf-8") as f:
        text = f.read()
    table = text.split("## Requirements", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in table.splitlines() if r.startswith("| **")]
    assert len(rows) >= 20
    without = [r.split("|")[1].strip() for r in rows if not NAMED_TEST.search(r.split("|")[2])]
    assert not without, "requirements with no test named: %s" % without
