"""The demo is the product's front door: it must run start to finish on a fresh machine and
show what it promises (tokens climbing the meter, the lockout, a refused late coin, a royal
paid from the meter, the reset to seed, every increment in the ledger), leaving nothing behind."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_demo_plays_the_whole_bench_session():
    proc = subprocess.run([sys.executable, "-m", "tabledev.demo"], capture_output=True, text=True, timeout=180,
                          cwd=ROOT)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    # seven tokens, each advancing the display by the 70-cent increment from the $100,000 seed
    assert "seat 1 token in -> meter display 100000.70" in out
    assert "seat 7 token in -> meter display 100004.90" in out
    assert "late_coin" in out and "state=LOCKED" in out
    assert "royal flush      $100,004.90  (meter $100,004.90, house $0.00)  meter after $100,000.00" in out
    assert "board's meter + overflow          $100,000.00  OK" in out
    assert "hash chain intact" in out
    assert out.count(" coin         inc=70") == 7
    assert "Demo complete" in out
    # no interpreter or service left running
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "tablectl-demo-" not in ps
