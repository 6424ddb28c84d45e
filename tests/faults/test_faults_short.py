"""The fault campaigns in their short form (CI): fixed seed, small counts, every invariant checked.
`make faults` runs the full form and rewrites docs/RELIABILITY.md."""
import io
import time

from tabledev import faults


def test_short_campaign_finds_no_violation():
    out = io.StringIO()
    results = faults.run(full=False, seed=20240601, write_doc=False, out=out)
    bad = {k: results[k]["violations"] for k in results if not k.startswith("_") and results[k].get("violations")}
    assert not bad, out.getvalue()
    assert results["power"]["cuts"] >= 120
    assert results["noise"]["ledger_rows"] == results["noise"]["events"]
    assert results["blackout"]["irq"]["edges_lost"] > 0 and results["blackout"]["pio"]["edges_lost"] == 0


def test_line_noise_campaign_stops_at_its_deadline(tmp_path, monkeypatch):
    """A host whose acks are one short never lets the board finish: the campaign must report
    that as a violation when its deadline passes, not wait for ever (it once hung 12 minutes)."""
    ack = faults.proto.ack
    monkeypatch.setattr(faults.proto, "ack", lambda seq, gap=False: ack(seq - 1, gap))
    t0 = time.monotonic()
    r = faults.campaign_noise(20240601, 200, 0, str(tmp_path), deadline_s=8)
    assert time.monotonic() - t0 < 8 + 30  # the deadline, plus stopping the board
    assert len(r["violations"]) == 1 and "not finished after 8 s" in r["violations"][0], r


def test_the_deadline_scales_with_the_campaign():
    assert faults.noise_deadline_s(faults.SHORT["noise_events"]) <= 120
    assert faults.noise_deadline_s(faults.FULL["noise_events"]) <= 1200
