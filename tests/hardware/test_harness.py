"""The committed WireViz harness files are exactly what the pin maps generate, and every J1 wire
joins the header pin the pin map names for that net."""
import importlib.util
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("harness", os.path.join(ROOT, "hardware", "harness.py"))
harness = importlib.util.module_from_spec(spec)
spec.loader.exec_module(harness)


def test_committed_harness_matches_pin_maps():
    assert harness.main(["harness.py", "--check"]) == 0


def _field(text, connector, key):
    block = text.split("  %s:\n" % connector, 1)[1]
    line = re.search(r"^    %s: \[(.*)\]$" % key, block, re.M).group(1)
    return [v.strip().strip('"') for v in line.split(",")]


def test_each_wire_lands_where_the_pin_map_says():
    for board in harness.BOARDS:
        pm = harness.load("pinmap_%s.json" % board)
        text = open(os.path.join(ROOT, "hardware", "harness_%s.yml" % board)).read()
        mcu = _field(text, "X1", "pins")
        labels = _field(text, "J1", "pinlabels")
        assert len(mcu) == len(labels)
        for header, net in zip(mcu, labels):
            if net in pm["pins"]:
                assert header == str(pm["pins"][net]["header"]), (board, net)
                assert _field(text, "X1", "pinlabels")[mcu.index(header)] == "GPIO%d" % pm["pins"][net]["gpio"]
        signals = {n for n in labels if n not in ("GND", "5V", "3V3")}
        assert signals == {n for n in pm["pins"] if n.startswith(("COIN", "IO_", "DSP_"))}


def test_bom_quantities_follow_the_pin_map():
    import csv

    with open(os.path.join(ROOT, "hardware", "BOM.csv")) as f:
        rows = list(csv.DictReader(f))
    qty = {}
    for r in rows:
        assert r["qty_per_table"].isdigit(), r
        qty[r["part_number"]] = int(r["qty_per_table"])
    pm = harness.load("pinmap_pico.json")
    seats = pm["seats"]
    assert qty["H11L1M"] == seats  # one optocoupler per COIN line
    assert qty["SN74HC595N"] == pm["outputs"]["chips"]
    assert qty["SN74HC165N"] == pm["inputs"]["chips"]
    assert qty["ULN2803A"] * 8 >= len(pm["outputs"]["inhibit_bits"]) + len(pm["outputs"]["lamp_bits"])
    assert qty["GP2Y0D805Z0F (Pololu 1132)"] == len(pm["inputs"]["spot_bits"])
    assert qty["MF-MSMF050-2"] == seats  # a PTC per acceptor feed
    readme = open(os.path.join(ROOT, "hardware", "README.md")).read()
    for part in ("H11L1M", "ULN2803A", "74AHCT125", "R-78E5.0-1.0", "AP2114H-3.3", "SMBJ15A", "LRS-50-12"):
        assert part in readme and any(part in r["part_number"] for r in rows), part
