"""The real firmware on the real MicroPython Pico build, on an emulated RP2040, driven and read at
the Pico's pins (hardware/pinmap_pico.json) and over its own USB CDC port.

The run boots one board and keeps to what only the Pico build can show; the service visit at the
end (mpremote, then `make flash` of the whole compiled tree through mpremote over the emulated USB)
took 14 s and 42 s on a quiet 2-core machine once the emulator's process handed the GIL over every
0.5 ms (before, on the same machine, 280 s and more than the 300 s limit: docs/BENCHMARKS.md, "the
host's turn"). Long campaigns are in benchmarks/bench_pico.py."""
import os

import pytest

from picokit import PicoBoard, needs_image

pytestmark = needs_image


@pytest.fixture(scope="module")
def pico(tmp_path_factory):
    board = PicoBoard(tmp_path_factory.mktemp("pico"))
    try:
        board.wait_ready()
        board.connect()
        yield board
    finally:
        board.close()


def test_status_says_what_the_board_runs_and_its_own_board_id(pico):
    status = pico.command("status")
    # sys.implementation and sys.platform as the firmware reads them on the board
    assert status["runtime"] == "rp2 micropython 1.24.1"
    with open(os.path.join(pico.state, "board_uid")) as f:
        uid = f.read().strip()
    assert status["board"] == "pico-" + uid, "the board id comes from the flash chip's unique id"
    assert uid != "ff" * 8
    assert status["faults"] == [], status.get("fault_detail")


def test_deployed_files_pass_the_boards_own_checksums(pico):
    # what `tablectl flash` asks after a deployment, answered by the board from its littlefs
    reply = pico.command("checksums", {"names": ["main.py", "pinmap.json", "table/app.mpy"]})
    from tablectl.commands.flash import sha256_file
    from tablectl import REPO_ROOT
    assert reply["files"]["main.py"] == sha256_file(os.path.join(REPO_ROOT, "firmware", "main.py"))
    assert reply["files"]["pinmap.json"] == sha256_file(os.path.join(REPO_ROOT, "hardware", "pinmap_pico.json"))
    assert reply["files"]["table/app.mpy"] is not None


def test_tokens_on_the_acceptor_pins_are_counted_by_pio_and_shown_on_the_display(pico):
    before = pico.command("meters")
    increment = pico.command("config_get")["config"]["increment_cents"]
    display_before = pico.bench.outputs()["meter"]
    # One token on seat 1 followed by a 2 ms spike (never a token), one on seat 3; widths and gaps
    # are timed on the emulator's clock, and the PIO state machines time them on the Pico.
    pico.bench.coins({0: 1, 2: 1}, width_ms=40, coin_gap_ms=400, glitches=1)
    after = pico.command("meters")
    assert after["seat_coins"][0] - before["seat_coins"][0] == 1
    assert after["seat_coins"][2] - before["seat_coins"][2] == 1
    assert after["meter"] - before["meter"] == 2 * increment
    diag = pico.command("diag")
    assert diag["glitches"][0] >= 1 and diag["edges_lost"] == [0] * len(diag["edges_lost"])
    # the MAX7219 was clocked the new meter: the digits a player sees, decoded from the SPI bytes
    pico.bench.settle(100)
    assert pico.bench.outputs()["meter"] == display_before + 2 * increment
    # "tokens a seat may play per round" is 1: seat 1 is inhibited now, at its pin
    assert pico.bench.outputs()["inhibit"][0] and not pico.bench.outputs()["inhibit"][1]


def test_lock_key_inhibits_every_acceptor_and_a_late_coin_is_not_credited(pico):
    pico.bench.key("lock")
    out = pico.bench.wait_for(lambda o, r: all(o["inhibit"]), timeout_s=120, what="every inhibit line")
    assert all(out["outputs"]["inhibit"]), "read back from the 74HC595 chain behind /OE"
    meter = pico.command("meters")["meter"]
    coins = pico.command("diag")["coins"][1]
    pico.bench.coin(1, 1, width_ms=40)
    assert pico.command("diag")["coins"][1] == coins + 1, "the token was seen at the pin"
    assert pico.command("meters")["meter"] == meter, "a token after lock is not credited"
    assert pico.command("status")["state"] == "LOCKED"
    pico.bench.key("unlock")
    pico.bench.wait_for(lambda o, r: not any(o["inhibit"][:7]), timeout_s=120, what="seats accepting again")


def test_power_cut_keeps_the_meter_on_the_real_littlefs(pico):
    before = pico.command("meters")
    boots = pico.command("status")["boots"]
    pico.bench.power_cut()
    pico.wait_ready(after_boots=2)
    pico.connect()
    after = pico.command("meters")
    assert after["meter"] == before["meter"]
    assert after["seat_coins"] == before["seat_coins"]
    assert pico.command("status")["boots"] == boots + 1


def test_a_host_sending_ctrl_c_while_the_board_boots_does_not_stop_it_at_the_repl(pico):
    # The USB port is the REPL's stream until the controller claims it, and a host keeps sending
    # while the board boots (its heartbeat, a command resent after a power cut). A 0x03 byte in
    # that stream once raised KeyboardInterrupt while the board was being built and left it at
    # the REPL, coin-in dead, until the next power cut (bench_pico.py cuts found it). Here the
    # host sends nothing but Ctrl-C from the power cut until the controller is up.
    import time
    meter = pico.command("meters")["meter"]
    boots = pico.bench.request("outputs")["boots"]
    pico.bench.power_cut()
    deadline = time.monotonic() + 600
    while True:
        pico.ser.write(b"\x03" * 4)
        reply = pico.bench.request("outputs")
        out = reply["outputs"]
        if reply["boots"] > boots:
            assert out["mode"] != "repl", "the board stopped at the REPL: %r" % (out.get("console_tail") or "")[-300:]
            if out["mode"] == "app" and out["meter"] is not None:
                break
        assert time.monotonic() < deadline, "the emulated Pico did not come back within 600 s"
        time.sleep(0.1)
    pico.connect()
    assert pico.command("meters")["meter"] == meter
    assert pico.command("status")["faults"] == []


@pytest.mark.timeout(900)  # 6 emulated s of hang and a boot: 93 s of wall time on a quiet machine here
def test_a_stuck_main_loop_is_reset_by_the_watchdog(pico):
    meter = pico.command("meters")["meter"]
    boots = pico.bench.request("outputs")["boots"]
    # The I/O bus stops answering: the loop waits inside an SPI transfer and stops feeding the
    # watchdog (4 s in the pin map); the RP2040's watchdog resets the chip.
    pico.bench.request("hang_io", ms=6000)
    out = pico.wait_ready(timeout_s=600, after_boots=boots + 1)
    assert out["resets"][-1][1] == "watchdog"
    pico.connect()
    assert pico.command("meters")["meter"] == meter


def test_mpremote_reaches_the_board_after_the_service_sequence_and_deploys_a_file(pico, tmp_path):
    import hashlib
    import subprocess
    import sys
    from tablectl import REPO_ROOT
    pico.ser.close()
    pico.ser = None
    # key switch on, service key held, power cycle: main.py returns before claiming the port
    pico.bench.service_boot()
    mpremote = [sys.executable, "-m", "mpremote", "connect", pico.port]
    src = os.path.join(REPO_ROOT, "hardware", "pinmap_pico.json")
    proc = subprocess.run(mpremote + ["fs", "cp", src, ":deployed.json", "+", "fs", "ls", ":",
                                      "+", "exec", "import hashlib,binascii;print(binascii.hexlify("
                                      "hashlib.sha256(open('deployed.json','rb').read()).digest()).decode())"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "main.py" in proc.stdout and "deployed.json" in proc.stdout
    with open(src, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() in proc.stdout


def test_make_flash_deploys_the_compiled_firmware_and_the_board_reports_matching_checksums(pico, tmp_path):
    """`make flash PORT=<the board's pty>` as a technician runs it on a board in its service sequence:
    every file of the compiled tree (what a Pico carries) copied through mpremote over the emulated
    USB, the board soft-reset into the new controller, and every sha256 the board computes from its
    own littlefs equal to the manifest's; its power-up self-check finds them intact too."""
    import subprocess
    from tablectl import REPO_ROOT
    from tablectl.commands.flash import sha256_file
    from tablectl.deploy import compile_tree
    if pico.ser is not None:
        pico.ser.close()
        pico.ser = None
    if pico.bench.request("outputs")["mode"] != "repl":
        pico.bench.service_boot()
    compiled = str(tmp_path / "mpy")
    compile_tree("pico", os.path.join(REPO_ROOT, "firmware"), compiled)
    env = dict(os.environ, TABLECTL_LINK_TIMEOUT_S=os.environ.get("TABLECTL_LINK_TIMEOUT_S", "300"))
    boots = pico.bench.request("outputs")["boots"]
    proc = subprocess.run(["make", "-s", "flash", "PORT=" + pico.port, "SOURCE=" + compiled], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "every sha256 the board reports matches the manifest" in proc.stdout
    # The new controller runs (a soft reset, not a power cycle) and answers on the same port.
    assert pico.bench.request("outputs")["boots"] == boots
    pico.bench.switch(False)
    pico.connect()
    status = pico.command("status", timeout_s=300)
    assert status["faults"] == [] and "selfcheck" not in status["fault_detail"], status["fault_detail"]
    names = ["table/journal.mpy", "boards/pico.mpy", "pinmap.json"]
    files = pico.command("checksums", {"names": names}, timeout_s=300)["files"]
    assert files["table/journal.mpy"] == sha256_file(os.path.join(compiled, "table", "journal.mpy"))
    assert files["boards/pico.mpy"] == sha256_file(os.path.join(compiled, "boards", "pico.mpy"))
    assert files["pinmap.json"] == sha256_file(os.path.join(REPO_ROOT, "hardware", "pinmap_pico.json"))
