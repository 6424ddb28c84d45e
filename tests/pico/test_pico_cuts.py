"""Power cuts on the emulated Pico with the real service recording: the short form of
`python benchmarks/bench_pico.py cuts` (benchmarks/pico_cuts.py, which says what is checked after
every boot). Three cuts: two during coin-in, one during an award.

The Pico-in-the-loop proof asks for "Power cuts at 200 random points during coin-in and during an award on the
emulated Pico: 0 lost, 0 doubled, meter never lower than before." Each cut costs tens of seconds of
wall time (a boot is ~1.4 s of the Pico's time and the busy core runs 5-20x slower than a Pico on
the full-API emulator), so these run with PICO_SLOW=1 (3.5 minutes for both here); the full campaign's figures are in docs/BENCHMARKS.md (pico_cuts)."""
import os
import sys

import pytest

from picokit import needs_image, IMAGE

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))

pytestmark = [needs_image, pytest.mark.skipif(not os.environ.get("PICO_SLOW"), reason=(
    "four power cuts on the emulated Pico, 3.5 minutes on a quiet 2-core machine (the full-API emulator): PICO_SLOW=1 runs them"))]


@pytest.mark.timeout(7200)  # three cuts: minutes each of wall time on a shared machine
def test_power_cuts_during_coin_in_and_an_award_lose_nothing_and_pay_once(tmp_path):
    import bench_pico
    import pico_cuts
    c = pico_cuts.Campaign(IMAGE, str(tmp_path), seed=3, pico_cls=bench_pico.EmulatedPico)
    try:
        c.run(3, award_every=3)
    finally:
        c.close()
    kinds = [x["kind"] for x in c.cuts]
    assert kinds == ["coin", "coin", "award"]
    assert c.violations == []
    # the award was paid once, whichever side of the cut it was journaled on
    assert c.cuts[2]["amount"] is not None


@pytest.mark.timeout(3600)  # one cut and the board's start: 5-15 minutes here
def test_a_cut_aimed_inside_a_page_program_tears_it_and_the_board_still_loses_nothing(tmp_path):
    """A cut at a random instant finds the flash busy about once in a hundred (17 page programs
    of 0.4 ms in a 700 ms window), so the campaign aims some: this one falls inside the busy time
    of the batch's first page program, which the rig leaves half done (bits of it not yet
    programmed), and the checks after the boot find nothing lost, doubled or lowered."""
    import bench_pico
    import pico_cuts
    c = pico_cuts.Campaign(IMAGE, str(tmp_path), seed=4, pico_cls=bench_pico.EmulatedPico, aim_every=1)
    try:
        c.run(1, award_every=0)
    finally:
        c.close()
    assert c.violations == []
    [cut] = c.cuts
    assert cut["aimed"] == "program"
    assert cut["where"]["flash_busy"] and cut["where"]["busy_op"] == "program"
