"""`tablectl ports`: the serial ports this computer sees, as `mpremote devs` lists them (pyserial's
list_ports): the device to give --port, its USB ids and description, and whether a tablectl
process holds it (its pid)."""
import json

HELP = "list the serial ports (USB boards) this computer sees, and which one a tablectl process holds"
EXAMPLE = "tablectl ports        (then: tablectl status --port /dev/ttyACM0)"


def add_arguments(p):
    p.add_argument("--json", action="store_true", help="one JSON list of the ports")


def _held_by(device):
    """The pid of the tablectl process holding the port's lock (owner.py), or None."""
    from ..owner import holder, port_lock_path
    held = holder(port_lock_path(device))
    return held[0] if held else None


def run(args):
    from serial.tools import list_ports
    ports = []
    for p in sorted(list_ports.comports(), key=lambda p: p.device):
        ports.append({"device": p.device, "description": p.description if p.description != "n/a" else "",
                      "hwid": p.hwid if p.hwid != "n/a" else "",
                      "vid": p.vid, "pid": p.pid, "serial_number": p.serial_number,
                      "held_by_pid": _held_by(p.device)})
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
    return 0
