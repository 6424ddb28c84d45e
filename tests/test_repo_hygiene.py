"""The repository speaks for itself: no code, test or document points at a tracker that is not
in it (the word issue followed by a number); each says what it means instead (the rule, the doc,
the behaviour)."""
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACKER_TAG = re.compile(r"\bissues? #?\d+\b", re.IGNORECASE)
TEXT = (".py", ".md", ".c", ".h", ".cpp", ".toml", ".ini", ".json", ".txt", ".service", "Makefile", "run")


def tracked_files():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip():
        return out.stdout.split()
    names = []  # not a git checkout (an unpacked archive): every file below the root
    for dirpath, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("build", "__pycache__")]
        names += [os.path.relpath(os.path.join(dirpath, f), ROOT) for f in files]
    return names


def test_no_tracker_numbers_in_code_tests_or_docs():
    found = []
    for rel in tracked_files():
        if not rel.endswith(TEXT):
            continue
        try:
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if TRACKER_TAG.search(line):
                        found.append("%s:%d: %s" % (rel, number, line.strip()[:100]))
        except (UnicodeDecodeError, FileNotFoundError):
            continue
    assert not found, "say what the tag meant instead:\n" + "\n".join(found[:20])
