"""Each pin map in hardware/ against the facts of its chip. Data-driven: the test walks the map.

Chip facts (cited, kept here so a map cannot vouch for itself):
- RP2040 / Raspberry Pi Pico: GPIO0-22 and 26-28 reach the header; GPIO23 (SMPS mode), 24 (VBUS
  sense) and 29 (VSYS/3) are used on the board, GPIO25 drives the LED (Pico datasheet, section 2.1).
  Every GPIO is input- and output-capable and reachable from both PIO blocks; 2 PIO x 4 state
  machines = 8 (RP2040 datasheet, chapter 3).
- ESP32: GPIO 0-19, 21-23, 25-27, 32-39 exist; 34-39 are input-only with no pull resistors;
  6-11 carry the SPI flash; 0, 2, 5, 12 (MTDI: flash voltage) and 15 (MTDO) are strapping pins
  (ESP32 datasheet, "Strapping Pins" and "Pin Description"). Classic ESP32: 8 PCNT units (ESP32 TRM,
  chapter "Pulse Count Controller").
"""
import glob
import json
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
HARDWARE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "hardware")

CHIPS = {
    "rp2040": {
        "exists": set(range(0, 30)),
        "usable": set(range(0, 23)) | {25, 26, 27, 28},  # 25: on-board LED, output only in practice
        "input_only": set(),
        "forbidden": {23: "SMPS mode", 24: "VBUS sense", 29: "VSYS/3 ADC"},
        "pulse_counters": {"pio": 8},  # 2 PIO blocks x 4 state machines
        "pio_gpios": set(range(0, 30)),
    },
    "esp32": {
        "exists": set(range(0, 20)) | {21, 22, 23, 25, 26, 27} | set(range(32, 40)),
        "usable": set(range(0, 20)) | {21, 22, 23, 25, 26, 27} | set(range(32, 40)),
        "input_only": set(range(34, 40)),
        "forbidden": dict(
            [(g, "SPI flash") for g in range(6, 12)]
            + [(0, "strapping (boot mode)"), (2, "strapping (boot mode)"),
               (5, "strapping (SDIO timing)"), (12, "strapping (flash voltage)"),
               (15, "strapping (boot log)")]
        ),
        "pulse_counters": {"pcnt": 8, "irq": 99},
        "pio_gpios": set(),
    },
}

# Sections whose values (or list members) name pins; every pin must be used by one of them.
PIN_REFERENCES = (
    ("pulse", "pins"), ("io_bus", "sck"), ("io_bus", "mosi"), ("io_bus", "miso"),
    ("outputs", "latch"), ("outputs", "enable_n"), ("inputs", "load_n"),
    ("display", "sck"), ("display", "mosi"), ("display", "cs"),
    ("host_link", "tx"), ("host_link", "rx"), ("status_led",),
    ("jig", "pulse"), ("jig", "inhibit"), ("jig", "led"),
)
# What a reference needs of its pin: i = input-capable, o = output-capable.
INPUTS = {("pulse", "pins"), ("io_bus", "miso"), ("host_link", "rx"), ("jig", "inhibit")}


def maps():
    found = sorted(glob.glob(os.path.join(HARDWARE, "pinmap_*.json")))
    assert {os.path.basename(p) for p in found} >= {"pinmap_pico.json", "pinmap_esp32.json", "pinmap_jig.json"}
    return found


def load(path):
    with open(path) as f:
        return json.load(f)


def references(m):
    """(section path, pin name) for every pin the map's sections name."""
    out = []
    for ref in PIN_REFERENCES:
        node = m
        for key in ref:
            node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            continue
        for name in node if isinstance(node, list) else [node]:
            out.append((ref, name))
    return out


@pytest.fixture(params=maps(), ids=lambda p: os.path.basename(p))
def pinmap(request):
    return load(request.param)


def test_pins_unique_and_real(pinmap):
    chip = CHIPS[pinmap["mcu"]]
    seen = {}
    for name, p in pinmap["pins"].items():
        g = p["gpio"]
        assert g in chip["exists"], "%s: GPIO%d does not exist on %s" % (name, g, pinmap["mcu"])
        assert g not in chip["forbidden"], "%s: GPIO%d is %s" % (name, g, chip["forbidden"].get(g))
        assert g in chip["usable"], "%s: GPIO%d is not usable on this board" % (name, g)
        assert g not in seen, "GPIO%d used twice: %s and %s" % (g, seen[g], name)
        seen[g] = name
        assert p["dir"] in ("in", "out", "io"), name
        if p["dir"] in ("out", "io"):
            assert g not in chip["input_only"], "%s: output on input-only GPIO%d" % (name, g)


def test_header_positions_unique(pinmap):
    used = {}
    for name, p in pinmap["pins"].items():
        if p["header"] is None:
            continue
        assert p["header"] not in used, "header pin %s used by %s and %s" % (p["header"], used[p["header"]], name)
        used[p["header"]] = name
    for net, p in pinmap.get("power", {}).items():
        for h in p["header"] if isinstance(p["header"], list) else [p["header"]]:
            assert h not in used, "header pin %s is both %s and %s" % (h, used[h], net)
            used[h] = net


def test_every_pin_referenced_and_every_reference_a_pin(pinmap):
    refs = references(pinmap)
    named = {name for _, name in refs}
    for ref, name in refs:
        assert name in pinmap["pins"], "%s names unknown pin %s" % ("/".join(ref), name)
        p = pinmap["pins"][name]
        if ref in INPUTS:
            assert p["dir"] in ("in", "io"), "%s: %s must be an input" % ("/".join(ref), name)
        else:
            assert p["dir"] in ("out", "io"), "%s: %s must be an output" % ("/".join(ref), name)
    orphans = set(pinmap["pins"]) - named
    assert not orphans, "pins no section uses: %s" % sorted(orphans)


def test_pulse_inputs_countable(pinmap):
    if "pulse" not in pinmap:
        return
    chip = CHIPS[pinmap["mcu"]]
    pulse = pinmap["pulse"]
    pins = [pinmap["pins"][n]["gpio"] for n in pulse["pins"]]
    assert len(pins) == pinmap["seats"], "one pulse input per seat"
    counter = pulse["counter"]
    assert counter in chip["pulse_counters"], "%s has no %s counter" % (pinmap["mcu"], counter)
    assert len(pins) <= chip["pulse_counters"][counter], "more seats than %s units" % counter
    if counter == "pio":
        assert set(pins) <= chip["pio_gpios"]
        # 10 kHz is above the slowest state-machine clock (125 MHz / 65536 = 1.9 kHz).
        assert 1908 <= pulse["pio_freq_hz"] <= 1000000
    if counter == "pcnt":
        # The PCNT glitch filter counts APB cycles (80 MHz) in 10 bits: at most 1023 cycles.
        assert 0 <= pulse["filter_ns"] <= 1023 * 1000 // 80


def test_chains_consistent(pinmap):
    if "outputs" not in pinmap:
        return
    seats = pinmap["seats"]
    out = pinmap["outputs"]
    bits = out["inhibit_bits"] + out["lamp_bits"]
    assert len(out["inhibit_bits"]) == seats and len(out["lamp_bits"]) == seats
    assert len(set(bits)) == len(bits), "74HC595 bit used twice"
    assert all(0 <= b < 8 * out["chips"] for b in bits)
    inp = pinmap["inputs"]
    bits = inp["spot_bits"] + inp["key_bits"] + [inp["service_switch_bit"]]
    assert len(inp["spot_bits"]) == 3 * seats, "ante, bet, bonus per seat"
    assert inp["keys"] == ["lock", "unlock", "jackpot", "service"], "contract read_keys bit order"
    assert len(inp["key_bits"]) == len(inp["keys"])
    assert len(set(bits)) == len(bits), "74HC165 bit used twice"
    assert all(0 <= b < 8 * inp["chips"] for b in bits)


def test_display(pinmap):
    if "display" not in pinmap:
        return
    d = pinmap["display"]
    assert d["type"] in ("max7219", "tm1637")
    assert 1 <= d["digits"] <= 8 and 0 <= d["intensity"] <= 15
    t = d["tm1637"]
    assert sorted(t["order"]) == list(range(t["digits"]))
    assert pinmap["pins"][t["dio"]]["dir"] == "io", "TM1637 DIO is read back for the ACK"


def test_jig_map(pinmap):
    if pinmap["board"] != "jig":
        return
    jig = pinmap["jig"]
    assert len(jig["pulse"]) == len(jig["inhibit"]) == pinmap["seats"]


def test_board_maps_match_interface_board():
    """Both controllers plug into one interface board: each serves every J1 signal net once."""
    iface = load(os.path.join(HARDWARE, "interface.json"))
    j1 = set(iface["J1"]["pins"].values())
    signals = j1 - {"GND", "5V", "3V3"}
    for name in ("pinmap_pico.json", "pinmap_esp32.json"):
        m = load(os.path.join(HARDWARE, name))
        served = {n for n in m["pins"] if n in j1}
        assert served == signals, "%s: J1 nets not served: %s" % (name, sorted(signals - served))
        assert set(m["power"]) == {"GND", "5V", "3V3"}
        # The chain layout lives on the interface board, so the two maps must agree on it.
    pico = load(os.path.join(HARDWARE, "pinmap_pico.json"))
    esp = load(os.path.join(HARDWARE, "pinmap_esp32.json"))
    for section in ("outputs", "inputs"):
        assert pico[section] == esp[section], "%s differ between the boards" % section
    assert pico["pulse"]["active_low"] == esp["pulse"]["active_low"]
