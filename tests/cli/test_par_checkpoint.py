"""`tablectl par caribbean-draw` keeps its progress: Ctrl-C (SIGINT) says in one line where it is
kept, the same command resumes from it and says so, and the figures come out identical to an
uninterrupted run's; a checkpoint of other rules or code is refused in one line, --restart
starts over.

The whole enumeration takes minutes, so these runs take a sample of it through the test hook
TABLECTL_PAR_CDRAW_SAMPLE=HMAX:FMAX (the same kernel, parts and checkpoint files, on the dealer
hands and final-hand classes with the lowest indices; the CLI prints the raw counts instead of a
sheet). TABLECTL_PAR_CHECKPOINT_EVERY_S=0 saves after every part and
TABLECTL_PAR_CHECKPOINT_HOLD_AFTER=N makes the run wait after saving part N, so that the signal
lands at a known place.
"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("tablegames.par._kernel")

TABLECTL = [sys.executable, "-m", "tablectl.cli"]
SAMPLE = "100000:600"


def env_for(tmp, **extra):
    env = dict(os.environ, TABLECTL_PAR_CDRAW_SAMPLE=SAMPLE, XDG_CACHE_HOME=str(tmp / "cache"))
    env.pop("TABLECTL_PAR_CHECKPOINT_EVERY_S", None)
    env.pop("TABLECTL_PAR_CHECKPOINT_HOLD_AFTER", None)
    env.update(extra)
    return env


def par(*args, env, timeout=300):
    return subprocess.run(TABLECTL + ["par", "caribbean-draw", "--no-progress"] + list(args),
                          capture_output=True, text=True, timeout=timeout, env=env)


def header(path):
    with open(path, "rb") as fh:
        return json.loads(fh.readline())


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The sample's counts from one run straight through."""
    tmp = tmp_path_factory.mktemp("straight")
    p = par(env=env_for(tmp))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["strategies"], p.stdout
    # a finished run leaves nothing to resume
    folder = tmp / "cache" / "tablectl" / "par"
    assert not folder.exists() or not os.listdir(folder)
    return p.stdout


def test_ctrl_c_keeps_the_progress_and_the_same_command_resumes_to_the_same_counts(tmp_path, uninterrupted):
    kept = tmp_path / "cache" / "tablectl" / "par" / "caribbean-draw-caribbean-draw-co.checkpoint"
    env = env_for(tmp_path, TABLECTL_PAR_CHECKPOINT_EVERY_S="0", TABLECTL_PAR_CHECKPOINT_HOLD_AFTER="3")
    proc = subprocess.Popen(TABLECTL + ["par", "caribbean-draw", "--no-progress"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300  # a guard against a hang, not a measurement
        while not (kept.exists() and header(kept)["done"] >= 3):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no checkpoint of 3 parts appeared"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (proc.returncode, err)
    assert out == "" and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert lines == ["tablectl: interrupted: 3 of %d parts are kept in %s; run the same command to resume "
                     "(--restart starts over)" % (header(kept)["parts"], kept)], err
    h = header(kept)
    assert h["done"] == 3 and h["identity"]["game"] == "caribbean-draw"
    assert h["identity"]["paytable"] == "caribbean-draw-co" and len(h["identity"]["code"]) == 64
    assert not os.path.exists(str(kept) + ".tmp")  # written whole, then renamed

    # the same command again: resumes, says so, and ends with exactly the uninterrupted counts
    p = par(env=env_for(tmp_path))
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("resuming from %s: 3 of %d parts done (saved " % (kept, h["parts"])), p.stderr
    assert p.stdout == uninterrupted
    assert not kept.exists()  # finished: nothing left to resume


def _interrupted_checkpoint(tmp_path):
    """A real checkpoint of one part, by a run interrupted after saving it."""
    path = tmp_path / "run.checkpoint"
    env = env_for(tmp_path, TABLECTL_PAR_CHECKPOINT_EVERY_S="0", TABLECTL_PAR_CHECKPOINT_HOLD_AFTER="1")
    proc = subprocess.Popen(TABLECTL + ["par", "caribbean-draw", "--no-progress", "--checkpoint", str(path)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not path.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no checkpoint appeared"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and str(path) in err, err
    return path


def _one_line_error(p, *words):
    assert p.returncode == 1, (p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tablectl: ") and "Traceback" not in p.stderr, p.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_a_checkpoint_of_other_rules_is_refused_and_restart_starts_over(tmp_path, uninterrupted):
    path = _interrupted_checkpoint(tmp_path)
    with open(path, "rb") as fh:
        head, payload = fh.readline(), fh.read()
    h = json.loads(head)

    # other pays: the credits are of another game; refused, naming what differs
    other = dict(h, identity=dict(h["identity"], pays=[p * 2 for p in h["identity"]["pays"]]))
    path.write_bytes(json.dumps(other).encode() + b"\n" + payload)
    _one_line_error(par("--checkpoint", str(path), env=env_for(tmp_path)), str(path), "pays", "--restart")

    # another build of the kernel (its hash): refused as well
    other = dict(h, identity=dict(h["identity"], code="0" * 64))
    path.write_bytes(json.dumps(other).encode() + b"\n" + payload)
    _one_line_error(par("--checkpoint", str(path), env=env_for(tmp_path)), "code", "--restart")

    # a damaged payload: refused by its checksum
    path.write_bytes(head + bytes([payload[0] ^ 1]) + payload[1:])
    _one_line_error(par("--checkpoint", str(path), env=env_for(tmp_path)), "damaged", "--restart")

    # --restart discards it and computes everything afresh
    p = par("--checkpoint", str(path), "--restart", env=env_for(tmp_path))
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("starting over (--restart): the progress in %s is discarded" % path), p.stderr
    assert p.stdout == uninterrupted
    assert not path.exists()


def test_a_checkpoint_that_cannot_be_written_stops_the_run_in_one_line(tmp_path):
    path = tmp_path / "run.checkpoint"
    (tmp_path / "run.checkpoint.tmp").mkdir()  # where the first part would be written
    p = par("--checkpoint", str(path), env=env_for(tmp_path, TABLECTL_PAR_CHECKPOINT_EVERY_S="0"))
    _one_line_error(p, "cannot keep or read the checkpoint %s" % path, "--checkpoint FILE")
    p = par("--checkpoint", str(tmp_path), env=env_for(tmp_path))
    _one_line_error(p, "is a folder")


def test_checkpoint_options_belong_to_caribbean_draw():
    p = subprocess.run(TABLECTL + ["par", "caribbean-stud", "--restart"], capture_output=True, text=True, timeout=60)
    _one_line_error(p, "--restart", "caribbean-draw only")
    p = subprocess.run(TABLECTL + ["par", "caribbean-draw", "--checkpoint", "/no/such/folder/x"],
                       capture_output=True, text=True, timeout=60)
    _one_line_error(p, "/no/such/folder")
