"""`tablectl serve`: the table's books."""
from ..argtypes import ranged
HELP = "own the boards' ports, record every event in the ledger, serve the technician's commands"
EXAMPLE = "tablectl serve --port /dev/ttyACM0 --port /dev/ttyACM1 --db casino.db"


def add_arguments(p):
    import os
    p.add_argument("--port", action="append", default=[], help="a board's port (repeat for more tables)")
    p.add_argument("--db", default=os.environ.get("TABLECTL_DB", "tablectl.db"), help="ledger file")
    p.add_argument("--pool", help="a linked progressive pool to feed: unix:/path/pool.sock or tcp:HOST:PORT "
                                  "(`tablectl pool serve`)")
    p.add_argument("--pool-credentials", help="this table's credential for the pool (from `tablectl pool credential`; "
                                              "default: <db>.keys/pool)")
    p.add_argument("--pool-lost-s", type=ranged(0.1, 86400, float, " s"), default=10.0,
                   help="pool silent this long: progressive coin-in inhibited until it is back (default 10)")


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
    # A ledger or a port in use is refused before anything is created: no ledger, lock or key
    # is left behind by a serve that did not start.
    if owner.holder(os.path.abspath(args.db) + ".lock") is not None:
        owner.take_ledger(args.db)  # refuses, naming the owner
    if os.path.exists(args.db):
        from ..ledger import Ledger
        Ledger(args.db, readonly=True).close()  # a file that is not a ledger is named before a port is taken
    from ..service import control_path
    for port in ports:
        # the control socket in the lock: `tablectl flash` asks this service for the port there
        owner.take_port(port, note=os.path.abspath(control_path(args.db)))
    owner.take_ledger(args.db)
    if args.pool:
        from ..pool.server import parse_url
        parse_url(args.pool)
        if not args.pool_lost_s > 0:
            raise TablectlError("--pool-lost-s must be above 0")
    from ..logline import LogLine, log_thread_failures
    log = LogLine(sys.stderr)  # one line per message; priorities under systemd (docs/tablectl.service)
    log_thread_failures(log)
    if args.pool:
        # Refused before anything starts: a table with no credential cannot reach the pool.
        from ..pool.client import default_credentials
        from ..pool.tls import client_context
        client_context(args.pool_credentials or default_credentials(args.db))
    service = Service(ports, args.db, log=log, pool=args.pool, pool_lost_s=args.pool_lost_s,
                      pool_credentials=args.pool_credentials)
    print("serving %s; ledger %s" % (", ".join(ports), args.db), flush=True)
    import signal
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    try:
        service.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
