"""Hostile batch rows: a card given twice, a byte over 51. rank_batch looks every row up before it
refuses the batch (no branch per card), so a bad row's table index must stay inside the table.
Proved under AddressSanitizer: the C core is built here with -fsanitize=address and fed every
multiset of ranks a bad row can add up to, suits dealt round so that none is a flush (a flush
takes the other table). Before the tables got their slack, seven-card rows read past the end of
the shared table (a heap-buffer-overflow ASan reports)."""
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

from tablegames.poker import _fastpoker

SOURCE = os.path.join(os.path.dirname(__file__), "..", "..", "host_tools", "tablegames", "poker", "_fastpoker.c")

FEED = r'''
import importlib.util, sys
from itertools import combinations_with_replacement
import numpy as np
spec = importlib.util.spec_from_file_location("_fastpoker", sys.argv[1])
fp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fp)
for loop, _, sizes in fp.loops():
    for n in (5, 6, 7):
        fp.set_loop(n, loop)
        # every multiset of n ranks, a rank up to n times; "rank" 13 is the byte 60
        rows = [[60 if r == 13 else 4 * r + i % 4 for i, r in enumerate(c)]
                for c in combinations_with_replacement(range(14), n)]
        cards = np.array(rows, dtype=np.uint8)
        out = np.empty(len(cards), np.uint16)
        try:
            fp.rank_batch(cards, n, 5, out, 1)
            print(loop, "accepted", n)
        except ValueError as e:
            print(loop, "refused", n, len(rows), e)
'''


def _libasan():
    cc = shutil.which("gcc")
    if cc is None:
        return None, None
    lib = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    return cc, (lib if os.path.isabs(lib) and os.path.exists(lib) else None)


def test_bad_rows_never_read_outside_the_tables(tmp_path):
    # Every batch loop this CPU runs (the vector ones' gathers ASan does not see, but their loads,
    # stores and flush lists it does).
    cc, libasan = _libasan()
    if libasan is None:
        pytest.skip("needs gcc with AddressSanitizer (libasan)")
    so = str(tmp_path / "_fastpoker_asan.so")
    build = subprocess.run([cc, "-O1", "-g", "-fsanitize=address", "-std=gnu99", "-shared", "-fPIC",
                            "-I" + sysconfig.get_paths()["include"], SOURCE, "-o", so, "-lpthread"],
                           capture_output=True, text=True, timeout=240)
    assert build.returncode == 0, build.stderr
    feed = tmp_path / "feed.py"
    feed.write_text(FEED)
    env = dict(os.environ, LD_PRELOAD=libasan, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0")
    run = subprocess.run([sys.executable, str(feed), so], capture_output=True, text=True, timeout=240, env=env)
    assert "AddressSanitizer" not in run.stderr, run.stderr[-3000:]
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    names = [name for name, _, _ in _fastpoker.loops()]
    assert [l.split()[:4] for l in lines] == [[name, "refused", n, count] for name in names
                                             for n, count in (("5", "8568"), ("6", "27132"), ("7", "77520"))]
    assert all("a card given twice" in l for l in lines)
