"""`tablectl pool ...`: the linked progressive pool (docs/POOL.md)."""
HELP = ("the linked progressive pool: serve, web, token, credential, create, member, service, set, transfer, "
        "admin-key, void, status, reconcile, report, hit, verify")
EXAMPLE = "tablectl pool serve --db postgresql://pool@/pool?host=/run/pool --listen unix:/run/pool/pool.sock"


def add_arguments(p):
    import os
    sub = p.add_subparsers(dest="pool_command", metavar="ACTION")
    sub.required = True
    db_default = os.environ.get("TABLECTL_POOL_DB")
    keys_default = os.environ.get("TABLECTL_POOL_KEYS", "pool.keys")

    def common(q):
        q.add_argument("--db", default=db_default, help="the pool's PostgreSQL URL (default $TABLECTL_POOL_DB)")
        q.add_argument("--keys", default=keys_default,
                       help="the pool's key folder: ledger.key, admin.pub (default $TABLECTL_POOL_KEYS or ./pool.keys)")
        q.add_argument("--json", action="store_true", help="output as JSON")

    def signed(q):
        common(q)
        q.add_argument("--admin-key", default=None,
                       help="the pool administrator's private key, never in the pool's key folder (default "
                            "$TABLECTL_POOL_ADMIN_KEY or ~/.config/tablectl/pool-admin.key)")

    q = sub.add_parser("serve", help="serve the tables: tokens, hits, amounts")
    common(q)
    q.add_argument("--listen", action="append", default=[],
                   help="unix:/path/pool.sock or tcp:HOST:PORT (repeatable; default unix:<keys>/pool.sock)")
    q.add_argument("--table-keys", help="the tables' key folder: a keyed board's tokens are taken only with its MAC")
    q = sub.add_parser("web", help="the floor's read-only web pages: the jackpot sign, the floor page, the API")
    common(q)
    q.add_argument("--listen", default="127.0.0.1:8080", help="HOST:PORT (default 127.0.0.1:8080; port 0: any free one)")
    q.add_argument("--quiet-s", type=float, default=60.0,
                   help="a table with nothing in the books for this long is shown NOT HEARD (default 60)")
    q.add_argument("--hold-s", type=float, default=30.0, help="how long the sign shows a hit (default 30)")
    q.add_argument("--lost-s", type=float, default=10.0,
                   help="a table whose service has not reported for this long is shown LINK LOST (default 10: "
                        "the tables' --pool-lost-s)")
    q.add_argument("--tls-cert", help="serve HTTPS: the server's certificate chain (PEM; with --tls-key)")
    q.add_argument("--tls-key", help="the private key of --tls-cert (PEM)")
    q = sub.add_parser("token", help="the web pages' users: create, list, revoke (tokens kept hashed in --keys)")
    q.add_argument("--keys", default=keys_default, help="the pool's key folder (default $TABLECTL_POOL_KEYS)")
    q.add_argument("action", choices=("create", "list", "revoke"))
    q.add_argument("name", nargs="?", help="the user's name (create, revoke)")
    q.add_argument("--json", action="store_true")
    q = sub.add_parser("create", help="create a pool (signed; it starts in service mode)")
    signed(q)
    q.add_argument("name")
    q.add_argument("settings", nargs="*", help="name=cents, e.g. seed_cents=1000000 increment_cents=70")
    q = sub.add_parser("member", help="add or change a member table (pool in service mode)")
    signed(q)
    q.add_argument("name")
    q.add_argument("--board", required=True)
    q.add_argument("--game", required=True, choices=("caribbean_draw", "caribbean_stud"))
    q.add_argument("--inactive", action="store_true", help="the table stops feeding the pool")
    q = sub.add_parser("service", help="enter or leave the pool's service mode (signed, logged)")
    signed(q)
    q.add_argument("name")
    g = q.add_mutually_exclusive_group(required=True)
    g.add_argument("--enter", action="store_true")
    g.add_argument("--leave", action="store_true")
    q = sub.add_parser("set", help="change parameters (pool in service mode; signed, logged)")
    signed(q)
    q.add_argument("name")
    q.add_argument("settings", nargs="+", help="name=cents")
    q = sub.add_parser("transfer", help="discontinue a pool: its whole liability and fund to another pool or "
                                        "licensee (rulebook 000 rule 3.4; pool in service mode; signed)")
    signed(q)
    q.add_argument("name")
    g = q.add_mutually_exclusive_group(required=True)
    g.add_argument("--to", metavar="POOL", help="another game's pool in these books")
    g.add_argument("--to-licensee", metavar="TEXT", help="another retail licensee, by name")
    q.add_argument("--reason", required=True, help="why, e.g. the Director's permission and its reference")
    q = sub.add_parser("admin-key", help="the administrator's Ed25519 key: make it, show it, install its public "
                                         "half in the pool's key folder, change it (signed)")
    signed(q)
    g = q.add_mutually_exclusive_group()
    g.add_argument("--new", action="store_true", help="make the private key (0600, in a 0700 folder; never "
                                                      "over an existing one)")
    g.add_argument("--install", action="store_true", help="write its public key as admin.pub in --keys (first "
                                                          "set-up only: another admin.pub is never replaced)")
    g.add_argument("--rotate", metavar="NEW_KEY_FILE", help="make the books trust another private key's public "
                                                            "half, signed with --admin-key")
    q = sub.add_parser("status", help="each pool's meter, parameters and tables, with each table's health")
    common(q)
    q.add_argument("--lost-s", type=float, default=None, metavar="S",
                   help="a table whose health report is older than this has lost its link (default: 10, the "
                        "tables' --pool-lost-s)")
    q = sub.add_parser("reconcile", help="contributions = meter + awards - seeds, per table and per pool")
    common(q)
    q.add_argument("--ledger", action="append", default=[],
                   help="a table's ledger: its boards' tokens must be in the pool once each (repeatable)")
    q = sub.add_parser("report", help="contributions and hits per table per hour")
    common(q)
    q.add_argument("--plot", help="write a PNG chart here")
    q = sub.add_parser("verify", help="prove the pool's books (chain, MACs, anchor)")
    common(q)
    q.add_argument("--table-keys", help="a table key folder: check every token's board MAC too")
    g = q.add_mutually_exclusive_group()
    g.add_argument("--admin-pub", help="the administrator's public key (64 hex digits, or a file holding them), "
                                       "from outside the pool's folder: the books' key must be it")
    g.add_argument("--admin-key", help="the administrator's private key file: its public half, as --admin-pub")
    q = sub.add_parser("credential", help="a table service's credential for the pool (mutual TLS, one board)")
    common(q)
    q.add_argument("--board", required=True, help="the board the credential speaks for")
    q.add_argument("--out", required=True, help="folder to write it to (0700): give it to that table's "
                                                "`tablectl serve --pool-credentials`, default <db>.keys/pool")
    q = sub.add_parser("void", help="void a lock no board paid (signed): its amount goes back on the meter")
    signed(q)
    q.add_argument("name")
    q.add_argument("--lock", type=int, required=True, help="the lock's number (pool status lists unpaid locks)")
    q.add_argument("--reason", required=True)
    q = sub.add_parser("hit", help="a progressive hand at a table (through its `tablectl serve --pool`)")
    q.add_argument("--table-db", required=True, help="the table service's ledger (its control socket is beside it)")
    q.add_argument("--board", help="board id, when the service runs several tables")
    q.add_argument("--seat", type=int, action="append", required=True,
                   help="seat 1..8 (repeat with --cards for every progressive hand of the round)")
    q.add_argument("--cards", action="append", required=True, help="the initial five cards, e.g. \"As Ks Qs Js Ts\"")
    q.add_argument("--json", action="store_true")


def _settings(items):
    from ..errors import TablectlError
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not value.strip().lstrip("-").isdigit():
            raise TablectlError("setting %r: say name=whole number of cents, e.g. increment_cents=70" % item)
        out[name] = int(value)
    return out


def _store(args):
    from ..errors import TablectlError
    from ..pool.store import PoolStore
    if not args.db:
        raise TablectlError("say which pool database: --db postgresql://... (or set TABLECTL_POOL_DB)")
    if not args.db.startswith(("postgresql://", "postgres://")):
        raise TablectlError("--db %r is not a PostgreSQL URL (postgresql://user@host/db)" % args.db)
    return _said_while_waiting(lambda: PoolStore(args.db, args.keys), args.db)


WAIT_SAID_S = 5.0  # opening the books takes well under a second when the database commits


def _said_while_waiting(open_books, url):
    """Open the books, saying once on stderr if that takes past WAIT_SAID_S: opening writes their
    schema, and a primary whose commits wait for a standby (two of the three servers lost: the rule,
    docs/POOL.md) holds every write until one is back. It keeps waiting, as it must; a person
    watching a silent command would not know why."""
    import sys
    import threading
    from ..pool.store import _safe_url
    done = threading.Event()

    def say():
        if not done.wait(WAIT_SAID_S):
            print("tablectl: still waiting for the pool database %s after %.0f s: opening the books writes to it, "
                  "and a primary whose commits wait for a standby holds every write until one is back (docs/POOL.md "
                  "\"The database: three servers\"); waiting on" % (_safe_url(url), WAIT_SAID_S),
                  file=sys.stderr, flush=True)
    threading.Thread(target=say, daemon=True).start()
    try:
        return open_books()
    finally:
        done.set()


def _admin_key_path(args):
    from ..pool import adminkey
    return args.admin_key or adminkey.default_path()


def _admin(args, op, body):
    """Sign a change with the administrator's private key (never in the pool's key folder) for
    these books and the pool's parameter version, and have the books check it against the public
    key they hold."""
    from ..errors import TablectlError
    from ..pool import adminkey
    from ..pool.store import admin_signature
    private = adminkey.load_private(_admin_key_path(args))
    pub = adminkey.public_hex(private)
    store = _store(args)
    try:
        books_pub = store.admin_key_in_books()
        if books_pub is None and op == "create" and store.keys.admin_pub() is None:
            # The first set-up of the pool's key folder: the public half goes in, once.
            store.keys.install_admin_pub(pub)
        held = books_pub or store.keys.admin_pub()
        if held is not None and held != pub:
            raise TablectlError("the pool's books hold administrator key %s, yours (%s) is %s: not signed"
                                % (held, _admin_key_path(args), pub))
        version = 0 if op == "create" else store.status(args.name)["version"]
        return store.admin(op, args.name, body, version,
                           admin_signature(private, op, args.name, body, version, store.books_id()))
    finally:
        store.close()


def _admin_key_command(args):
    import json

    from ..errors import TablectlError
    from ..pool import adminkey
    from ..pool.store import admin_signature
    path = _admin_key_path(args)
    if args.new:
        pub = adminkey.generate(path)
        out = {"private_key": path, "public_key": pub}
        note = "made %s (keep it on the administrator's account, never on the pool server)" % path
    elif args.install:
        from ..pool.store import PoolKeys
        pub = adminkey.public_hex(adminkey.load_private(path))
        keys = PoolKeys(args.keys)
        done = keys.install_admin_pub(pub)
        out = {"public_key": pub, "admin_pub": keys._path("admin.pub"), "written": done}
        note = "%s %s" % ("wrote" if done else "already holds this key:", keys._path("admin.pub"))
    elif args.rotate:
        private = adminkey.load_private(path)
        new_pub = adminkey.public_hex(adminkey.load_private(args.rotate))
        store = _store(args)
        try:
            with store.db.transaction():
                current = store._books_admin_key()
            if current is None:
                raise TablectlError("the books hold no administrator key yet: the first `pool create` records it")
            body = {"pub": new_pub}
            store.admin("rekey", "-", body, current[1],
                        admin_signature(private, "rekey", "-", body, current[1], store.books_id()))
            store.keys.replace_admin_pub(new_pub)
        finally:
            store.close()
        out = {"public_key": new_pub, "old_public_key": adminkey.public_hex(private)}
        note = "the books now take changes signed with %s; admin.pub follows them" % args.rotate
    else:
        pub = adminkey.public_hex(adminkey.load_private(path))
        out = {"private_key": path, "public_key": pub}
        note = path
    if args.json:
        print(json.dumps(out))
    else:
        print("administrator public key %s  (%s)" % (out["public_key"], note))
    return 0


def _money(c):
    return "$%d.%02d" % divmod(c, 100) if c is not None else "-"


def _health_text(h):
    """A table's health as its service last reported it (pool/health.py), in a few words."""
    if h is None:
        return "health: never reported"
    if h["closed"]:
        return "closed (its service stopped cleanly)"
    if h["link_lost"]:
        return "LINK LOST (not heard for %.0f s)" % h["report_ago_s"]
    words = [h["reported_state"]]
    if h["pool_off"]:
        words.append("POOL OFF")
    if h["storage_fault"]:
        words.append("STORAGE FAULT")
    if h["refused_rising"]:
        words.append("refusing frames (%d)" % h["refused_frames"])
    return "%s, heard %.0f s ago" % (" ".join(words), h["report_ago_s"])


def _with_health(args, sts):
    """Each table's newest health report and the alarms it raises, read as the floor page reads
    them (pool/web.py): the same words for the same report on the page, the API and here."""
    import time
    from ..pool.web import LOST_S, _health_alarms, table_health
    from ..pool.webdata import Reader
    lost_s = LOST_S if args.lost_s is None else args.lost_s
    if not lost_s > 0:
        from ..errors import TablectlError
        raise TablectlError("--lost-s must be a number of seconds above 0; got %s" % args.lost_s)
    reader = Reader(args.db)
    try:
        reports = reader.health()
    finally:
        reader.close()
    now = time.time()
    for st in sts:
        st["alarms"] = []
        for t in st["tables"]:
            t["health"] = table_health(reports.get(t["board"]), now, lost_s)
            st["alarms"] += _health_alarms(dict(t, pool=st["name"]))
    return sts


def _print_status(st):
    from ..seats import seat_label
    import time
    p = st["params"]
    print("pool %s%s: meter %s  overflow %s  reserve %s  tokens %d  hits %d" % (
        st["name"], " (SERVICE)" if st["service"] else "", _money(st["meter_cents"]), _money(st["over_cents"]),
        _money(st["reserve_cents"]), st["tokens"], st["hits"]))
    print("  seed %s  increment %s  ceiling %s  reserve/token %s  straight flush %s  (parameters v%d)" % (
        _money(p["seed_cents"]), _money(p["increment_cents"]), _money(p["ceiling_cents"]),
        _money(p["reserve_cents"]), "10% of the meter" if p["sf_percent"] else "the table's", st["version"]))
    if st.get("discontinued"):
        print("  DISCONTINUED: %s" % st["discontinued"])
    for t in st["tables"]:
        print("  %-16s %-15s %s tokens %d  contributed %s  last #%d  %s" % (
            t["board"], t["game"], "     " if t["active"] else "(off)", t["tokens"], _money(t["contrib_cents"]),
            t["last_seq"], _health_text(t.get("health"))))
    for alarm in st.get("alarms") or ():
        print("  %s: %s" % ("ALARM" if alarm["level"] == "alarm" else "note", alarm["text"]))
    for u in st.get("unpaid_locks") or ():
        print("  UNPAID lock #%d: table %s round %d seat %d %s, locked %s: not paid by the board (pay it with "
              "`tablectl jackpot` at that table, or `tablectl pool void %s --lock %d --reason ...`)" % (
                  u["lock_no"], u["board"], u["round"], seat_label(u["seat"]), _money(u["amount_cents"]),
                  time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(u["locked_at"])), st["name"], u["lock_no"]))


def run(args):
    from ..seats import seat_label
    import json
    import sys
    import time

    from ..errors import TablectlError
    cmd = args.pool_command
    if cmd == "serve":
        import os
        import signal

        from ..pool.server import PoolServer
        store = _store(args)
        store.close()
        listen = args.listen or ["unix:" + os.path.join(os.path.abspath(args.keys), "pool.sock")]
        from ..keys import KeyStore
        server = PoolServer(args.db, args.keys, listen, log=lambda t: print(t, file=sys.stderr, flush=True),
                            table_keys=KeyStore(args.table_keys) if args.table_keys else None)
        server.start()
        print("pool serving %s" % ", ".join(listen), flush=True)
        signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
        try:
            while True:
                import time
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()
        return 0
    if cmd == "web":
        from ..pool import web
        if not args.db:
            raise TablectlError("say which pool database: --db postgresql://... (or set TABLECTL_POOL_DB)")
        if not args.db.startswith(("postgresql://", "postgres://")):
            raise TablectlError("--db %r is not a PostgreSQL URL (postgresql://user@host/db)" % args.db)
        if not 0 < args.quiet_s <= 86400 or not 0 <= args.hold_s <= 3600 or not 0 < args.lost_s <= 86400:
            raise TablectlError("--quiet-s and --lost-s are 0 to 86400 seconds, --hold-s 0 to 3600")
        web.parse_listen(args.listen)
        web.check_tls(args.tls_cert, args.tls_key)
        import signal
        signal.signal(signal.SIGTERM, lambda *a: signal.raise_signal(signal.SIGINT))
        try:
            return web.serve(args.db, args.keys, args.listen, quiet_s=args.quiet_s, hold_s=args.hold_s,
                             lost_s=args.lost_s, tls_cert=args.tls_cert, tls_key=args.tls_key)
        except KeyboardInterrupt:
            return 0
    if cmd == "token":
        from ..pool import webauth
        if args.action in ("create", "revoke") and not args.name:
            raise TablectlError("token %s needs the user's name" % args.action)
        if args.action == "create":
            token = webauth.create(args.keys, args.name)
            if args.json:
                print(json.dumps({"name": args.name, "token": token}))
            else:
                print("token for %s (shown once; kept only as its SHA-256 in %s):" % (args.name, args.keys),
                      file=sys.stderr)
                print(token)
        elif args.action == "revoke":
            webauth.revoke(args.keys, args.name)
            print("token of %s revoked" % args.name)
        else:
            users = webauth.names(args.keys)
            if args.json:
                print(json.dumps(users))
            for u in ([] if args.json else users):
                print("%-24s made %s" % (u["name"], time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(u["created"] or 0))))
        return 0
    if cmd == "create":
        st = _admin(args, "create", {"params": _settings(args.settings)})
    elif cmd == "member":
        st = _admin(args, "member", {"board": args.board, "game": args.game, "active": not args.inactive})
    elif cmd == "service":
        st = _admin(args, "service", {"enter": bool(args.enter)})
    elif cmd == "set":
        st = _admin(args, "params", {"changes": _settings(args.settings)})
    elif cmd == "void":
        if args.lock < 1:
            raise TablectlError("--lock must be a lock number (1 or more)")
        st = _admin(args, "void", {"lock_no": args.lock, "reason": args.reason})
    elif cmd == "credential":
        from ..pool.tls import issue_table_credential
        folder = issue_table_credential(args.keys, args.board, args.out)
        print("credential for board %s written to %s (keep it 0600; give it to that table's service)"
              % (args.board, folder))
        return 0
    elif cmd == "transfer":
        body = {"reason": args.reason}
        body.update({"to": args.to} if args.to is not None else {"licensee": args.to_licensee})
        st = _admin(args, "transfer", body)
    elif cmd == "admin-key":
        return _admin_key_command(args)
    elif cmd == "status":
        store = _store(args)
        try:
            sts = store.status()
            for st in sts:
                st["unpaid_locks"] = store.unpaid(st["name"])
        finally:
            store.close()
        _with_health(args, sts)
        if args.json:
            print(json.dumps(sts, indent=1))
        else:
            for st in sts:
                _print_status(st)
            if not sts:
                print("no pools (tablectl pool create NAME ...)")
        return 0
    elif cmd == "reconcile":
        return _reconcile(args)
    elif cmd == "report":
        return _report(args)
    elif cmd == "verify":
        from ..keys import KeyStore
        from ..pool import adminkey
        admin_pub = None
        if args.admin_key:
            admin_pub = adminkey.public_hex(adminkey.load_private(args.admin_key))
        elif args.admin_pub:
            text = args.admin_pub
            if not adminkey._HEX64.fullmatch(text.strip().lower()):
                try:
                    with open(text) as f:
                        text = f.read()
                except OSError as exc:
                    raise TablectlError("--admin-pub %s: neither 64 hex digits nor a readable file (%s)"
                                        % (args.admin_pub, exc.strerror or exc))
            admin_pub = adminkey.parse_public(text, "--admin-pub")
        store = _store(args)
        try:
            count, problems = store.verify(KeyStore(args.table_keys) if args.table_keys else None, admin_pub)
        finally:
            store.close()
        if args.json:
            print(json.dumps({"rows": count, "problems": problems}))
        else:
            for p in problems:
                print("PROBLEM: %s" % p)
            print("%d rows checked: %s" % (count, "OK" if not problems else "%d problems" % len(problems)))
        return 0 if not problems else 2
    elif cmd == "hit":
        from types import SimpleNamespace

        from ..client import Target
        t = Target(SimpleNamespace(db=args.table_db, port=None, board=args.board))
        try:
            if t.sock is None:
                raise TablectlError("no service runs for %s: a pool hit goes through `tablectl serve --pool`"
                                    % args.table_db)
            if len(args.seat) != len(args.cards):
                raise TablectlError("give one --cards for every --seat")
            reply = t._request({"op": "pool_hit", "board": args.board,
                                "hands": [[s, c] for s, c in zip(args.seat, args.cards)]})
        finally:
            t.close()
        if args.json:
            print(json.dumps(reply["hits"]))
        else:
            paid = {p.get("lock_no"): p for p in reply.get("result", {}).get("payments", ())}
            for hit in reply["hits"]:
                pay = paid.get(hit["lock_no"], {})
                print("pool %s lock #%d: table %s seat %d %s: %s (meter %s -> %s), %s%s" % (
                    hit["pool"], hit["lock_no"], hit["board"], seat_label(hit["seat"]), hit["hand"],
                    _money(hit["amount_cents"]), _money(hit["meter_before"]), _money(hit["meter_after"]),
                    "paid on the board" + ("" if pay.get("pool_confirmed") else " (the pool has not yet taken the "
                                           "board's award; `tablectl pool status` lists it until it does)"),
                    " (declared before: a repeat)" if hit.get("repeat") else ""))
        return 0
    else:
        raise TablectlError("unknown pool action %r" % cmd)
    if args.json:
        print(json.dumps(st))
    else:
        _print_status(st)
    return 0


def _reconcile(args):
    import json

    from ..ledger import Ledger
    store = _store(args)
    try:
        rec = store.reconcile()
        floor = []
        for path in args.ledger:
            ledger = Ledger(path, readonly=True)
            try:
                for board in ledger.boards():
                    table = sorted(e["seq"] for e in ledger.events(board, kinds=("coin",)))
                    held = store.token_seqs(board)
                    missing = sorted(set(table) - set(held))
                    extra = sorted(set(held) - set(table))
                    doubled = len(held) - len(set(held))
                    floor.append({"board": board, "ledger": path, "table_tokens": len(table), "pool_tokens": len(held),
                                  "missing": missing[:20], "missing_count": len(missing), "extra": extra[:20],
                                  "extra_count": len(extra), "doubled": doubled})
                    if missing:
                        rec["problems"].append("table %s: %d tokens in its ledger are not in the pool (first #%d)"
                                               % (board, len(missing), missing[0]))
                    if extra or doubled:
                        rec["problems"].append("table %s: the pool holds %d tokens its ledger does not, %d twice"
                                               % (board, len(extra), doubled))
            finally:
                ledger.db.close()
        rec["floor"] = floor
        rec["ok"] = not rec["problems"]
    finally:
        store.close()
    if args.json:
        print(json.dumps(rec, indent=1))
    else:
        for name, p in rec["pools"].items():
            print("pool %s: contributions %s = meter %s + overflow %s + awards %s - seeds %s  (%d tokens, %d hits)" % (
                name, _money(p["contrib_cents"]), _money(p["meter_cents"]), _money(p["over_cents"]),
                _money(p["awarded_cents"]), _money(p["seeded_cents"]), p["tokens"], p["hits"]))
            if p.get("transfer_in_cents") or p.get("transfer_out_cents"):
                print("  transfers: in %s, out %s (rulebook 000 rule 3.4)%s" % (
                    _money(p["transfer_in_cents"]), _money(p["transfer_out_cents"]),
                    "; " + p["discontinued"] if p.get("discontinued") else ""))
            for t in p["tables"]:
                print("  %-16s %-15s %6d tokens  %s" % (t["board"], t["game"], t["tokens"], _money(t["contrib_cents"])))
        for f in rec["floor"]:
            print("  table %s: %d tokens in its ledger, %d in the pool; missing %d, extra %d, doubled %d" % (
                f["board"], f["table_tokens"], f["pool_tokens"], f["missing_count"], f["extra_count"], f["doubled"]))
        for p in rec["problems"]:
            print("PROBLEM: %s" % p)
        print("reconcile: %s" % ("OK" if rec["ok"] else "%d problems" % len(rec["problems"])))
    return 0 if rec["ok"] else 2


def _report(args):
    import json
    import time
    store = _store(args)
    try:
        hours = {}
        for r in store.rows(("token", "hit")):
            hour = int(r["recorded_at"] // 3600) * 3600
            key = (r["pool"], r["board"], hour)
            h = hours.setdefault(key, {"tokens": 0, "contrib_cents": 0, "hits": 0, "awarded_cents": 0})
            b = r["body"] or {}  # an edited row's body (verify names it) counts nothing here
            if r["kind"] == "token":
                h["tokens"] += 1
                h["contrib_cents"] += b.get("inc", 0) if isinstance(b.get("inc"), int) else 0
            else:
                h["hits"] += 1
                h["awarded_cents"] += b.get("amount_cents", 0) if isinstance(b.get("amount_cents"), int) else 0
    finally:
        store.close()
    rows = [dict(pool=k[0], board=k[1], hour=time.strftime("%Y-%m-%d %H:00", time.gmtime(k[2])), **v)
            for k, v in sorted(hours.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1]))]
    if args.plot:
        _plot(rows, args.plot)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print("%-16s %-10s %-16s %8s %14s %5s %14s" % ("hour (UTC)", "pool", "table", "tokens", "contributed",
                                                       "hits", "awarded"))
        for r in rows:
            print("%-16s %-10s %-16s %8d %14s %5d %14s" % (r["hour"], r["pool"], r["board"], r["tokens"],
                                                          _money(r["contrib_cents"]), r["hits"],
                                                          _money(r["awarded_cents"])))
        if args.plot:
            print("chart: %s" % args.plot)
    return 0


def _plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    boards = sorted({r["board"] for r in rows})
    hours = sorted({r["hour"] for r in rows})
    fig, ax = plt.subplots(figsize=(8, 4))
    bottom = [0] * len(hours)
    for b in boards:
        # Whole dollars for the chart only; the books stay in cents.
        vals = [sum(r["contrib_cents"] for r in rows if r["board"] == b and r["hour"] == h) // 100 for h in hours]
        ax.bar(hours, vals, bottom=bottom, label=b)
        bottom = [x + y for x, y in zip(bottom, vals)]
    for r in rows:
        if r["hits"]:
            ax.annotate("hit", (hours.index(r["hour"]), bottom[hours.index(r["hour"])]), ha="center")
    ax.set_ylabel("contributions ($)")
    ax.set_title("linked pool: contributions per table per hour")
    if len(boards) <= 12:
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
