"""`tablectl where`: how --db, --port and --board resolved (flag, environment, config file or
default) and which board a command given the same options would reach, or why it would refuse."""
import json
import os

HELP = "say which ledger, port and board a command would use, where each came from, and what it reaches"
EXAMPLE = "tablectl where --port /dev/ttyACM0"


def add_arguments(p):
    from ..client import add_target_arguments
    add_target_arguments(p)
    p.add_argument("--json", action="store_true")


def _service(args):
    """What runs for the ledger: {"pid", "ports", "boards"} or None."""
    from .. import owner
    from ..client import connect_service
    sock = connect_service(args.db)
    if sock is None:
        return None
    try:
        sock.sendall(b'{"op": "sessions"}\n')
        buf = b""
        while b"\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                break
            buf += chunk
    finally:
        sock.close()
    sessions = json.loads(buf.split(b"\n", 1)[0] or b"{}").get("sessions") or []
    held = owner.holder(os.path.abspath(args.db) + ".lock")
    return {"pid": held[0] if held else None, "ports": [s["port"] for s in sessions],
            "boards": [s["board"] for s in sessions]}


def _reaches(args, service):
    """What a board command would reach, in words, without opening the port."""
    from .. import owner
    from ..client import port_server, refuse_unserved_port, same_port
    from ..errors import TablectlError
    try:
        if args.port:
            owner.check_port(args.port)
        if service is not None:
            if args.port:
                if not any(same_port(args.port, p) for p in service["ports"]):
                    refuse_unserved_port(args, service["ports"])
                return "the service of %s (pid %s), its board on %s" % (args.db, service["pid"], args.port)
            if args.board and args.board not in service["boards"]:
                raise TablectlError("the service of %s has no board %s (it has %s)"
                                    % (args.db, args.board, ", ".join(str(b) for b in service["boards"])))
            return "the service of %s (pid %s), board %s" % (
                args.db, service["pid"], args.board or " / ".join(str(b) for b in service["boards"]))
        if not args.port:
            raise TablectlError("no service runs for %s and no --port is set: start `tablectl serve` or give --port"
                                % args.db)
        holder = port_server(args.port) if "://" not in args.port else None
        if holder and holder[1]:
            raise TablectlError("port %s is served by pid %s with the ledger %s: give --db %s"
                                % (args.port, holder[0], holder[1], holder[1]))
        if holder:
            raise TablectlError("port %s is in use by pid %s" % (args.port, holder[0]))
        return "port %s directly (no service runs for %s); its board is checked against the ledger%s" % (
            args.port, args.db, " and --board" if args.board else "")
    except TablectlError as exc:
        return "refused: %s" % exc


def run(args):
    from .. import userconfig
    from ..client import source
    config_path, named = userconfig.path()
    config = config_path if os.path.exists(config_path) else None
    service = _service(args)
    data = {name: {"value": getattr(args, name), "from": source(args, name)} for name in ("db", "port", "board")}
    data["config"] = config
    data["service"] = service
    data["reaches"] = _reaches(args, service)
    if args.json:
        print(json.dumps(data, indent=1))
        return 0
    for name in ("db", "port", "board"):
        value = data[name]["value"]
        print("%-8s %s  (%s)" % (name, value if value else "-", data[name]["from"] if value else "not set"))
    print("%-8s %s" % ("config", config or "none (%s would be read%s)" % (config_path, "" if named else " if it existed")))
    if service is None:
        print("%-8s none runs for %s" % ("service", args.db))
    else:
        print("%-8s pid %s holds %s" % ("service", service["pid"], ", ".join(
            "%s (board %s)" % (p, b or "not heard yet") for p, b in zip(service["ports"], service["boards"]))))
    print("%-8s %s" % ("reaches", data["reaches"]))
    print("rule: a flag wins over TABLECTL_DB/TABLECTL_PORT/TABLECTL_BOARD, which win over the config file")
    return 0
