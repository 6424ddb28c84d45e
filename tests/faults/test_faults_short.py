"""The fault campaigns in their short form (CI): fixed seed, small counts, every invariant checked.
`make faults` runs the full form and rewrites docs/RELIABILITY.md."""
import io

from tablectl import faults


def test_short_campaign_finds_no_violation():
    out = io.StringIO()
    results = faults.run(full=False, seed=20240601, write_doc=False, out=out)
    bad = {k: results[k]["violations"] for k in results if not k.startswith("_") and results[k].get("violations")}
    assert not bad, out.getvalue()
    assert results["power"]["cuts"] >= 120
    assert results["noise"]["ledger_rows"] == results["noise"]["events"]
    assert results["blackout"]["irq"]["edges_lost"] > 0 and results["blackout"]["pio"]["edges_lost"] == 0
