"""`tablectl ports`: the serial ports this computer sees, as `mpremote devs` lists them (pyserial's
list_ports): the device to give --port, its USB ids and description, and whether a tablectl
process holds it (its pid)."""
import json

HELP = "list the serial ports (USB boards) this computer sees, and which one a tablectl process holds"
EXAMPLE = "tablectl ports        (then: tablectl status --port /dev/ttyACM0)"


def add_arguments(p):
    p.add_argument("--json", action="store_true", help="one JSON list of the ports")


def _held_by(device):
    """(pid, its command line) of the tablectl process holding the port's lock (owner.py), or
    (None, None)."""
    from ..owner import holder, holder_program, port_lock_path
    held = holder(port_lock_path(device))
    return (held[0], holder_program(held[0]) or None) if held else (None, None)


def run(args):
    from serial.tools import list_ports
    ports = []
    found = [(p.device, p.description if p.description != "n/a" else "", p.hwid if p.hwid != "n/a" else "",
              p.vid, p.pid, p.serial_number) for p in list_ports.comports()]
    # The virtual boards' ptys (`tablectl sim`), which no USB listing shows: listed by the developer's
    # tools when they are installed (an entry point, tablectl/plugins.py).
    from .. import plugins
    virtual_boards = plugins.optional_hook(plugins.PORTS_GROUP, "virtual")
    if virtual_boards is not None:
        found += [(b["port"], "%s, --state %s (sim pid %s)" % (b["kind"], b["state"], b["pid"]), "", None, None, None)
                  for b in virtual_boards()]
    for device, description, hwid, vid, pid, serial_number in sorted(found):
        held, program = _held_by(device)
        ports.append({"device": device, "description": description, "hwid": hwid, "vid": vid, "pid": pid,
                      "serial_number": serial_number, "held_by_pid": held, "held_by": program})
    if args.json:
        print(json.dumps(ports, indent=1, sort_keys=True))
        return 0
    if not ports:
        print("no serial ports found: plug the board in (USB), or for a virtual board use the pty "
              "`tablectl sim` prints")
        return 0
    print("%-22s %-13s %-10s %s" % ("port", "usb id", "held by", "description"))
    for p in ports:
        usb = "%04x:%04x" % (p["vid"], p["pid"]) if p["vid"] is not None else "-"
        held = "pid %s" % p["held_by_pid"] if p["held_by_pid"] else "-"
        print("%-22s %-13s %-10s %s" % (p["device"], usb, held, p["description"]))
        if p["held_by"]:
            print("%-22s %-13s %-10s held by: %s" % ("", "", "", p["held_by"][:120]))
    return 0
