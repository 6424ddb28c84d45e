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
    service = Service(ports, args.db, log=lambda text: print(text, file=sys.stderr, flush=True))
    print("serving %s; ledger %s" % (", ".join(ports), args.db), flush=True)
    import signal
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    try:
        service.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
