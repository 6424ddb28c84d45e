"""The power-cut campaign's record (benchmarks/pico_cuts.py): 200 cuts on the emulated Pico take
many hours here, so they are run in several campaigns, each cut appended to a record as it is
checked. The proof still asks for "Power cuts at 200 random points ... 0 lost, 0 doubled, meter
never lower than before": the record may add up cuts only when they ran on the same code, must
never lose a violation, and must not count a line a crash tore.

These run on CPython without the emulator: they are about the bookkeeping, not the cuts."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))

import pico_cuts  # noqa: E402


def cut(run, code, n, kind="coin", violations=(), **more):
    line = {"run": run, "seed": 1, "code": code, "n": n, "kind": kind, "violations": list(violations),
            "wall_s": 100.0}
    line.update({"credited": 7} if kind == "coin" else {"recorded_before_cut": True})
    line.update(more)
    return line


def write(path, lines, tail=""):
    with open(path, "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
        f.write(tail)


def test_cuts_of_several_runs_on_the_same_code_add_up_and_other_code_is_counted_apart(tmp_path):
    path = str(tmp_path / "cuts.jsonl")
    write(path, [cut("run A", "same", 1), cut("run A", "same", 2, kind="award"),
                 {"run": "run A", "code": "same", "end": True, "broken": False, "violations": []},
                 cut("run B", "same", 1, busy_op="erase", flash_busy=True),
                 cut("run B", "same", 2, aimed="program", busy_op="program", flash_busy=True),
                 cut("run B", "same", 3, aimed="program"),
                 cut("run C", "older", 1), cut("run C", "older", 2, violations=["seat 3 counted twice"])])
    a = pico_cuts.summarize_record(path, digest="same")
    assert (a["cuts"], a["coin_cuts"], a["award_cuts"]) == (5, 4, 1)
    assert a["runs"] == ["run A", "run B"]
    assert a["runs_ended"] == ["run A"]      # run B was cut off: its cut still counts, it was checked
    assert a["busy_erase"] == 1 and a["busy_program"] == 1 and a["flash_busy"] == 2
    assert (a["aimed"], a["aimed_busy"]) == (2, 1)   # an aimed cut that fell at the window's end instead
    assert a["violations"] == []
    assert a["other"] == {"older": {"cuts": 2, "violations": 1, "runs": 1}}


def test_a_violation_is_never_lost_whether_on_a_cut_a_round_with_no_cut_or_a_runs_end(tmp_path):
    path = str(tmp_path / "cuts.jsonl")
    write(path, [cut("run A", "same", 1, violations=["meter 10 lower than before the cut (12)"]),
                 {"run": "run A", "code": "same", "n": 2, "no_cut": True,
                  "violations": ["cut 2: no JACKPOT_PENDING after the jackpot key (OPEN)"]},
                 {"run": "run A", "code": "same", "end": True, "broken": True,
                  "violations": ["cut 3: the campaign could not go on"]}])
    a = pico_cuts.summarize_record(path, digest="same")
    assert a["cuts"] == 1
    assert len(a["violations"]) == 3
    assert a["runs_broken"] == ["run A"]


def test_a_line_torn_by_a_crash_is_reported_and_not_counted(tmp_path):
    path = str(tmp_path / "cuts.jsonl")
    write(path, [cut("run A", "same", 1)], tail='{"run": "run A", "code": "same", "n": 2, "kind": "co')
    a = pico_cuts.summarize_record(path, digest="same")
    assert a["cuts"] == 1
    assert a["torn_lines"] == 1


def test_appended_lines_are_whole_and_read_back_in_order(tmp_path):
    path = str(tmp_path / "records" / "cuts.jsonl")
    for n in (1, 2, 3):
        pico_cuts.append_record(path, cut("run A", "same", n))
    lines, torn = pico_cuts.read_record(path)
    assert [x["n"] for x in lines] == [1, 2, 3] and torn == 0


def test_the_code_digest_changes_with_any_byte_of_the_firmware_or_the_service_and_nothing_else(tmp_path):
    root = tmp_path
    for rel, body in (("firmware/table/meter.py", "A = 1\n"), ("firmware/main.py", "x\n"),
                      ("host_tools/tablectl/service.py", "S = 1\n"), ("docs/NOTES.md", "text\n")):
        os.makedirs(os.path.dirname(str(root / rel)), exist_ok=True)
        (root / rel).write_text(body)
    first = pico_cuts.code_digest(str(root))
    (root / "docs/NOTES.md").write_text("other text\n")
    os.makedirs(str(root / "firmware/table/__pycache__"))
    (root / "firmware/table/__pycache__/meter.cpython-311.pyc").write_bytes(b"\x00")
    assert pico_cuts.code_digest(str(root)) == first
    (root / "firmware/table/meter.py").write_text("A = 2\n")
    assert pico_cuts.code_digest(str(root)) != first
    (root / "firmware/table/meter.py").write_text("A = 1\n")
    assert pico_cuts.code_digest(str(root)) == first
    (root / "host_tools/tablectl/service.py").write_text("S = 2\n")
    assert pico_cuts.code_digest(str(root)) != first


def test_a_campaign_records_each_cut_with_the_violations_found_since_the_last_line(tmp_path):
    """The Campaign's own recording, without an emulator: the cut dicts it keeps, as run() hands them on."""
    c = pico_cuts.Campaign.__new__(pico_cuts.Campaign)
    c.record_path = str(tmp_path / "cuts.jsonl")
    c.run_id, c.seed, c.digest = "run A", 5, "same"
    c.violations = []
    c.cuts = []
    c.broken = False
    c.record_cut(1, {"kind": "coin", "after_ms": 1.5, "credited": 3, "wall_s": 90.0, "phase_s": {"x": 1},
                     "where": {"flash_busy": True, "busy_op": "program", "torn_bytes": 4}})
    c.violations.append("cut 2 (coin-in): seat 1 counted 2 tokens of 1 fed")
    c.record_cut(2, {"kind": "coin", "after_ms": 2.5, "credited": 7, "wall_s": 80.0, "where": {}})
    c.record_end(rows=40)
    lines, _ = pico_cuts.read_record(c.record_path)
    assert [x.get("n") for x in lines] == [1, 2, None]
    assert lines[0]["busy_op"] == "program" and lines[0]["torn"] and "phase_s" not in lines[0]
    assert lines[0]["violations"] == [] and len(lines[1]["violations"]) == 1 and lines[2]["violations"] == []
    a = pico_cuts.summarize_record(c.record_path, digest="same")
    assert a["cuts"] == 2 and len(a["violations"]) == 1 and a["runs_ended"] == ["run A"]


def test_a_campaign_with_award_cuts_stops_at_once_where_the_hand_evaluators_core_is_not_built(monkeypatch):
    """Not at its first award cut, minutes of emulation later (a run from a fresh checkout did)."""
    import pytest
    from tablegames.errors import CoreMissing
    from tablegames.poker import evaluator
    monkeypatch.setattr(evaluator, "_c", evaluator._MissingCore())
    c = pico_cuts.Campaign.__new__(pico_cuts.Campaign)
    c.start = lambda: pytest.fail("the campaign started the emulated board")
    with pytest.raises(CoreMissing, match="award cuts' jackpot"):
        c.run(10, award_every=5)
