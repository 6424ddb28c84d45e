"""`tablectl serve`: the table's books."""
HELP = "own the boards' ports, record every event in the ledger, serve the technician's commands"
EXAMPLE = "tablectl serve --port /dev/ttyACM0 --port /dev/ttyACM1 --db casino.db"


def add_arguments(p):
    import os
    p.add_argument("--port", action="append", default=[], help="a board's port (repeat for more tables)")
    p.add_argument("--db", default=os.environ.get("TABLECTL_DB", "tablectl.db"), help="ledger file")


def run(args):
    import os
    import sys

    from ..errors import TablectlError
    from ..service import Service
    ports = args.port or ([os.environ["TABLECTL_PORT"]] if os.environ.get("TABLECTL_PORT") else [])
    if not ports:
        raise TablectlError("say which boards to serve: --port PORT (repeatable)")
    from .. import owner
    for port in ports:
        owner.check_port(port)
    # One owner per ledger and per port: taken before anything is opened, so a second serve
    # refuses without touching the first one's port or control socket.
    folder = os.path.dirname(os.path.abspath(args.db))
    if not os.path.isdir(folder):
        raise TablectlError("cannot open the ledger %s: folder %s does not exist" % (args.db, folder))
    if os.path.isdir(args.db):
        raise TablectlError("cannot open the ledger %s: it is a folder; give a file name" % args.db)
    owner.take_ledger(args.db)
    service = Service(ports, args.db, log=lambda text: print(text, file=sys.stderr, flush=True))
    for port in ports:  # the constructor opened only the ledger; the ports are opened by start()
        owner.take_port(port)
    print("serving %s; ledger %s" % (", ".join(ports), args.db), flush=True)
    import signal
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    try:
        service.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
