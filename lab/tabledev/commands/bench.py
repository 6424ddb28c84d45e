"""`tablectl bench`: drive a virtual board's pins, or a bench jig wired to a real board."""
from tablectl.argtypes import ranged
import json

from tablectl.seats import seat_index, seat_label

HELP = "drive a virtual board (or a bench jig): coins, keys, bet spots, power cuts, line noise"
EXAMPLE = "tablectl bench --state /tmp/table1 coin 3 --count 5 --glitches 2"


def _op(sub, name, help_text, example, description=None):
    """A bench operation with its one-line help, a description and an example in its --help."""
    import argparse
    return sub.add_parser(name, help=help_text, description=description or help_text,
                          epilog="example:\n  " + example, formatter_class=argparse.RawDescriptionHelpFormatter)


def add_arguments(p):
    p.add_argument("--state", help="the virtual board's state directory (as given to tablectl sim)")
    p.add_argument("--jig", help="serial port of a bench-jig Pico wired to a real board (coin only)")
    p.add_argument("--json", action="store_true", help="print replies as JSON")
    sub = p.add_subparsers(dest="op", metavar="OPERATION")
    sub.required = True
    c = _op(sub, "coin", "drop tokens at a seat (1 to the board's seats)",
            "tablectl bench --state /tmp/table1 coin 3 --count 5 --glitches 2",
            "Drop tokens at a seat's coin acceptor: each token is --pulses pulses of --width-ms on the\n"
            "acceptor's line, played on the board's pin. Prints the display and meter afterwards.")
    c.add_argument("seat", type=ranged(1, 8), help="the seat, 1 to the number the board wires (`sim --seats`), "
                                          "numbered from the dealer's left")
    c.add_argument("--count", type=ranged(1, 100000), default=1, help="how many tokens (default 1)")
    c.add_argument("--width-ms", type=ranged(1, 60000, unit=" ms"), default=50, help="each pulse's width in ms (default 50)")
    c.add_argument("--gap-ms", type=ranged(1, 60000, unit=" ms"), default=50, help="pause between a token's pulses (default 50)")
    c.add_argument("--pulses", type=ranged(1, 100), default=1, help="pulses per token the acceptor sends (default 1)")
    c.add_argument("--coin-gap-ms", type=ranged(1, 600000, unit=" ms"), default=400, help="idle time between tokens (default 400)")
    c.add_argument("--glitches", type=ranged(0, 100000), default=0,
                   help="also play this many narrow spikes in the gaps between tokens (never to be counted)")
    c.add_argument("--accelerated", action="store_true", help="play as fast as the firmware decodes")
    k = _op(sub, "key", "press a dealer key", "tablectl bench --state /tmp/table1 key lock")
    k.add_argument("name", choices=("lock", "unlock", "jackpot", "service"), help="which key")
    s = _op(sub, "spot", "cover or uncover a bet spot", "tablectl bench --state /tmp/table1 spot 2 ante on",
            "Put a chip on (on) or take it off (off) a seat's ante, bet or bonus spot sensor.")
    s.add_argument("seat", type=ranged(1, 8), help="the seat, 1 to the number the board wires")
    s.add_argument("spot", choices=("ante", "bet", "bonus"), help="which spot of the seat")
    s.add_argument("position", choices=("on", "off"), help="covered (on) or uncovered (off)")
    w = _op(sub, "switch", "the service key switch", "tablectl bench --state /tmp/table1 switch on",
            "Turn the physical service key switch on or off (provisioning and SERVICE need it on).")
    w.add_argument("position", choices=("on", "off"))
    _op(sub, "power-cut", "cut the board's power; it reboots", "tablectl bench --state /tmp/table1 power-cut")
    _op(sub, "service-boot", "boot with the service sequence (REPL for mpremote)",
        "tablectl bench --state /tmp/table1 service-boot   (then: tablectl flash --port PORT)",
        "Power-cycle the board with the service key switch on and the service key held: it boots to\n"
        "its REPL instead of the controller, which is what `tablectl flash` needs.")
    n = _op(sub, "noise", "flip bits in the next bytes on the line", "tablectl bench --state /tmp/table1 noise --count 32",
            "Corrupt the next bytes the board sends or receives: the link must drop the bad frames and recover.")
    n.add_argument("--count", type=ranged(1, 100000), default=16, help="how many bytes to corrupt (default 16)")
    for name in ("display", "lamps", "inhibit", "outputs"):
        _op(sub, name, "read the board's %s" % name, "tablectl bench --state /tmp/table1 %s" % name)


def _seat(seat):
    return seat_index(seat)


def run(args):
    from tablectl.errors import TablectlError
    if args.jig:
        return _run_jig(args)
    if not args.state:
        raise TablectlError("say which virtual board: --state DIR (or --jig PORT for a bench jig)")
    from tabledev.bench import Bench
    import sys
    bench = Bench(args.state, progress=lambda text: print("tablectl bench: %s" % text, file=sys.stderr, flush=True))
    try:
        result = _dispatch(bench, args)
    finally:
        bench.close()
    if args.json:
        print(json.dumps(result))
    elif isinstance(result, dict):
        for k, v in result.items():
            print("%s: %s" % (k, _text(v, ("inhibited", "accepting") if k == "inhibit" else ("on", "off"))))
    elif result is not None:
        print(result)
    return 0


def _text(value, words=("on", "off")):
    """A value as a person reads it: per-seat lists as `1:on 2:off ...`, yes/no, plain text."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return " ".join("%d:%s" % (seat_label(i), (words[0] if v else words[1]) if isinstance(v, bool) else v)
                        for i, v in enumerate(value))
    return str(value)


def _seats_wired(bench):
    """How many seats the virtual board wires (`tablectl sim --seats`); 8 when it does not say."""
    seats = bench.request("outputs").get("seats")
    return seats if isinstance(seats, int) and 1 <= seats <= 8 else 8


def _wired_seat(bench, seat, op="coin"):
    """A seat the board has: refused at once, naming the range, rather than a 30 s wait for
    pulses nobody plays. A coin also needs a seat the table plays (its `seats` setting): an
    acceptor of a seat not in play is inhibited and nothing it takes is credited."""
    from tablectl.errors import TablectlError
    seats = _seats_wired(bench)
    if not 1 <= seat <= seats:
        raise TablectlError("seat must be 1 to %d on this board (it wires %d seats), not %d" % (seats, seats, seat))
    played = bench.outputs().get("seats_played")
    if op == "coin" and isinstance(played, int) and seat > played:
        raise TablectlError("seat %d is wired but not in play: the table is configured for %d seats "
                            "(`tablectl config get seats`); no token was dropped" % (seat, played))
    return seat_index(seat, seats)


def _coins(out, seat):
    """Tokens credited at a seat so far, as the board reports them (None: a board that does not)."""
    coins = out.get("coins")
    return coins[seat] if isinstance(coins, list) and seat < len(coins) else None


def _power_cut(bench):
    """Cut the power and, on a board that reports its own boot count (the virtual board), wait for
    it to be back and say that count, the one `tablectl status` shows; the emulated Pico's
    supervisor knows only how often it has powered the board up since it started."""
    import time
    before = bench.outputs().get("boot_count")
    ups = bench.power_cut()["boots"]
    if before is None:
        return {"power_ups_of_this_sim": ups}
    deadline = time.monotonic() + 15
    while True:
        now = bench.outputs().get("boot_count")
        if isinstance(now, int) and now > before:
            return {"boot_count": now}
        if time.monotonic() > deadline:
            from tablectl.errors import TablectlError
            raise TablectlError("the power was cut, but the board has not booted again within 15 s "
                                "(see console.log in its --state folder)")
        time.sleep(0.05)


def _dispatch(bench, args):
    from tablectl.errors import TablectlError
    op = args.op
    if op in ("coin", "spot"):
        _wired_seat(bench, args.seat, op)
    if op == "coin":
        seat = _seat(args.seat)
        before = _coins(bench.outputs(), seat)
        try:
            bench.coin(seat, args.count, args.width_ms, args.gap_ms, args.glitches,
                       args.pulses, args.coin_gap_ms, args.accelerated)
        except TablectlError as exc:
            # Say what did happen: a retry must not credit twice what was credited already.
            now = _coins(bench.outputs(), seat)
            if before is not None and now is not None:
                raise TablectlError("%s; %d of %d tokens credited at seat %d so far: check `tablectl meters` "
                                    "before dropping them again" % (exc, now - before, args.count, args.seat))
            raise
        o = bench.outputs()
        result = {"sent": args.count}
        after = _coins(o, seat)
        if before is not None and after is not None:
            result["credited"] = after - before
        result.update({"display": o.get("display"), "meter_cents": o.get("meter")})
        return result
    if op == "key":
        bench.key(args.name)
        return {"key": args.name, "state": bench.outputs().get("state")}
    if op == "spot":
        bench.spot(_seat(args.seat), args.spot, args.position == "on")
        return {"seat": args.seat, args.spot: args.position}
    if op == "switch":
        bench.switch(args.position == "on")
        return {"service_switch": args.position}
    if op == "power-cut":
        return _power_cut(bench)
    if op == "service-boot":
        bench.service_boot()
        return {"mode": "repl", "service_switch": "off"}
    if op == "noise":
        return {"corrupting_next_bytes": bench.noise(args.count)["pending"]}
    out = bench.outputs()
    if op == "display":
        if args.json:  # data, not the quoted text a person reads
            return {"display": out.get("display"), "flashing": bool(out.get("blink"))}
        return repr(out.get("display")) + (" (flashing)" if out.get("blink") else "")
    if op == "lamps":
        seats = _seats_wired(bench)
        return " ".join("%d:%s" % (seat_label(i), "ON" if v else "off") for i, v in enumerate(out.get("lamps", [])[:seats]))
    if op == "inhibit":
        seats = _seats_wired(bench)
        return " ".join("%d:%s" % (seat_label(i), "inhibited" if v else "accepting")
                        for i, v in enumerate(out.get("inhibit", [])[:seats]))
    if not args.json:
        seats = _seats_wired(bench)
        out = {k: (v[:seats] if isinstance(v, list) and len(v) >= seats else v) for k, v in out.items()}
    return out


def _run_jig(args):
    from tablectl.errors import TablectlError
    if args.op != "coin":
        raise TablectlError("a bench jig only drives coins; other operations need --state")
    try:
        import serial
        from tabledev.jig import Jig
    except ImportError as exc:
        raise TablectlError("bench jig support is missing: %s" % exc)
    port = serial.serial_for_url(args.jig, baudrate=115200, timeout=2)
    _seat(args.seat)  # range check; the jig numbers seats 1-8 like the harness labels
    try:
        result = Jig(port).coin(args.seat, args.count, args.width_ms, args.gap_ms, args.glitches)
    finally:
        port.close()
    print("seat %d through the jig: %s tokens sent, %s refused (seat inhibited)"
          % (args.seat, result.get("sent"), result.get("refused")))
    return 0
