"""`tablectl pool web`: the pool seen on the floor, read-only (docs/POOL.md, "The floor you can see").

    /sign/<pool>       the meter, large, for a floor screen; each table's state; a hit held 30 s
    /floor             the floor manager's page (login: per-user tokens, `tablectl pool token create`)
    /api/v1/...        pools, tables, meters, hits and an event feed for casino systems (bearer tokens)

An ASGI app (Starlette) on uvicorn. Updates are pushed by server-sent events: one poller reads the
ledger's tip from PostgreSQL every `poll_s` (its own read-only connection: pool/webdata.py), reads
the books again when the tip moves, renders each page's live part once, and every open page gets
it. Nothing here writes to the pool's books; changes stay in the signed CLI.

Every request is hostile until shown otherwise: names in the path must be pools and tables the
books hold (else 404), parameters are whole numbers in range (else 400, saying what is wanted),
secrets are compared in constant time and never written anywhere (the access log has the method,
the path and the status, never headers or query strings), and every page carries a
Content-Security-Policy that runs no script but this service's own file.
"""
import asyncio
import html
import json
import os
import re
import sys
import time

from ..errors import TablectlError
from . import webassets, webauth
from .health import REFUSED_RISING_S
from .webdata import HIT_HOLD_S, LAST_HITS, MAX_CURSOR, MAX_EVENTS, Reader, dollars, plain_dollars

STATE_TEXT = {"open": "open", "jackpot_pending": "JACKPOT PENDING", "not_heard": "NOT HEARD", "inactive": "off",
              "pool_off": "POOL OFF", "link_lost": "LINK LOST", "closed": "closed"}
SIGN_TEXT = {"link_lost": "POOL OFF"}  # the sign says what the table shows: POOL OFF once its pool is lost
HEALTH_READ_S = 1.0  # the tables' health reports are read this often
LOST_S = 10.0  # a table's report not heard this long: its link is lost (the tables' --pool-lost-s default)
HAND_TEXT = {"royal": "royal flush", "straight_flush": "straight flush"}
SESSION_COOKIE = "tpw_session"
SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                                 b"img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would make the form's Origin "null"
    (b"cache-control", b"no-store"),
]


def _e(value):
    return html.escape("" if value is None else str(value), quote=True)


def _q(name):
    """A name from the books as one URL path segment."""
    from urllib.parse import quote
    return quote(str(name), safe="")


def _utc(ts, date=False):
    if ts is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC" if date else "%H:%M:%S UTC", time.gmtime(ts))


def _age(seconds):
    if seconds is None:
        return "never"
    s = int(max(0, seconds))
    if s < 120:
        return "%d s ago" % s
    if s < 7200:
        return "%d min ago" % (s // 60)
    return "%d h ago" % (s // 3600)


# ---------------------------------------------------------------------------------------------- model
def table_health(h, now, lost_s):
    """A table's health report (pool/health.py) as the pages show it, or None (never reported)."""
    if h is None:
        return None
    ago = now - h["last_heard"]
    rose = h["refused_rose_at"]
    return {"reported_state": h["state"], "last_report": h["last_heard"], "report_ago_s": round(max(0.0, ago), 1),
            "closed": h["closed"], "link_lost": not h["closed"] and ago > lost_s, "pool_off": h["pool_off"],
            "storage_fault": h["storage_fault"], "refused_frames": h["refused_frames"],
            "refused_last_rise": rose,
            "refused_rising": rose is not None and now - rose < REFUSED_RISING_S}


def derive(snap, heard, now, quiet_s, hold_s, stale, health=None, lost_s=LOST_S):
    """The floor as the pages show it, from a snapshot of the books (webdata._snapshot), the time
    each table was last heard (its newest row in the books, or its newest health report), what
    each table last reported of itself (webdata._health), and the time now."""
    health = health or {}
    pools = {}
    for p in snap["pools"]:
        pp = snap["per_pool"].get(p["name"], {})
        pools[p["name"]] = dict(p, tables=[], holding=[], unpaid=[], locks=pp.get("locks", 0),
                                unpaid_cents=pp.get("unpaid_cents", 0), voided=pp.get("voided", 0))
    tables = {}
    unpaid_boards = {}
    for u in snap["unpaid"]:
        unpaid_boards.setdefault(u["board"], []).append(u)
        if u["pool"] in pools:
            pools[u["pool"]]["unpaid"].append(u)
    for t in snap["tables"]:
        got = heard.get(t["board"])
        last = got[1] if got else None
        hh = table_health(health.get(t["board"]), now, lost_s)
        if hh is not None and (last is None or hh["last_report"] > last):
            last = hh["last_report"]
        ago = None if last is None else now - last
        if stale:
            state = "pool_off"
        elif not t["active"]:
            state = "inactive"
        elif t["board"] in unpaid_boards:
            state = "jackpot_pending"
        elif hh is not None and hh["closed"]:
            state = "closed"
        elif hh is not None and hh["link_lost"]:
            state = "link_lost"
        elif hh is not None and hh["pool_off"]:
            state = "pool_off"
        elif hh is None and (ago is None or ago > quiet_s):
            state = "not_heard"
        else:
            state = "open"
        pb = snap["per_board"].get(t["board"], {})
        row = dict(t, last_heard=last, heard_ago_s=None if ago is None else round(ago, 1), state=state, health=hh,
                   hits=pb.get("hits", 0), wins_cents=pb.get("wins_cents", 0), paid_cents=pb.get("paid_cents", 0),
                   unpaid_cents=pb.get("unpaid_cents", 0))
        tables[t["board"]] = row
        if t["pool"] in pools:
            pools[t["pool"]]["tables"].append(row)
    for h in snap["recent_hits"]:
        locked = h["locked_at"] or 0
        if h["state"] != "voided" and h["pool"] in pools and now - min(locked, now) < hold_s:
            pools[h["pool"]]["holding"].append(h)
    alarms = []
    if stale:
        alarms.append({"level": "alarm", "kind": "books_unreachable",
                       "text": "the pool's books cannot be read since %s: figures are as of %s; a table that cannot "
                               "reach the pool goes POOL OFF" % (_utc(stale), _utc(snap["read_at"]))})
    for name, p in pools.items():
        if p.get("discontinued"):
            continue
        if p["service"]:
            alarms.append({"level": "info", "kind": "service_mode", "text": "pool %s is in service mode" % name})
    for t in tables.values():
        alarms.extend(_health_alarms(t))
        if t["state"] == "not_heard":
            alarms.append({"level": "alarm", "kind": "not_heard", "pool": t["pool"], "table": t["board"],
                           "text": "table %s (pool %s) not heard %s: link lost (POOL OFF at the table) or closed"
                                   % (t["board"], t["pool"], _age(t["heard_ago_s"]) if t["last_heard"] else
                                      "since the books began")})
    for u in snap["unpaid"]:
        alarms.append({"level": "alarm", "kind": "unpaid_lock", "pool": u["pool"], "table": u["board"],
                       "lock_no": u["lock_no"],
                       "text": "pool %s lock #%d, table %s seat %d: %s locked %s, not paid by the board (UNPAID)"
                               % (u["pool"], u["lock_no"], u["board"], u["seat"], dollars(u["amount_cents"]),
                                  _utc(u["locked_at"], True))})
    return {"pools": pools, "tables": tables, "alarms": alarms, "recent_hits": snap["recent_hits"],
            "stale": bool(stale), "stale_since": stale, "as_of": snap["read_at"], "tip": snap["tip"], "now": now}


def _health_alarms(t):
    """What a table's own report says is wrong (pool/health.py). A table closed on purpose is
    information; a lost link hides what its last report said (it is no longer true)."""
    h = t["health"]
    if h is None or not t["active"]:
        return []
    where = {"pool": t["pool"], "table": t["board"]}
    if h["closed"]:
        return [dict(where, level="info", kind="closed",
                     text="table %s (pool %s) closed: its service stopped cleanly at %s"
                          % (t["board"], t["pool"], _utc(h["last_report"], True)))]
    if h["link_lost"]:
        return [dict(where, level="alarm", kind="link_lost",
                     text="table %s (pool %s) link lost: its service not heard %s (not closed): the table shows "
                          "POOL OFF" % (t["board"], t["pool"], _age(h["report_ago_s"])))]
    out = []
    if h["pool_off"]:
        out.append(dict(where, level="alarm", kind="pool_off",
                        text="table %s (pool %s) shows POOL OFF: progressive coin-in inhibited" % (t["board"], t["pool"])))
    if h["storage_fault"]:
        out.append(dict(where, level="alarm", kind="storage_fault",
                        text="table %s (pool %s) storage fault: its board cannot record (tablectl storage repair)"
                             % (t["board"], t["pool"])))
    if h["refused_rising"]:
        out.append(dict(where, level="alarm", kind="refused_frames", refused_frames=h["refused_frames"],
                        text="table %s (pool %s) refused %d frames on its port, the last at %s: something on the "
                             "cable is not its board" % (t["board"], t["pool"], h["refused_frames"],
                                                        _utc(h["refused_last_rise"]))))
    return out


def nj_meters(p):
    """The meters N.J.A.C. 13:69E-1.39A names, of one pool (cents)."""
    return {"in_cents": p["contrib_cents"], "tokens": p["tokens"], "display_cents": p["meter_cents"],
            "hits": p["locks"], "wins_cents": p["awarded_cents"], "overflow_cents": p["over_cents"],
            "reserve_cents": p["reserve_cents"], "seeds_cents": p["seeded_cents"], "unpaid_cents": p["unpaid_cents"]}


def table_meters(t):
    return {"in_cents": t["contrib_cents"], "tokens": t["tokens"], "hits": t["hits"], "wins_cents": t["wins_cents"],
            "paid_cents": t["paid_cents"], "unpaid_cents": t["unpaid_cents"]}


# ---------------------------------------------------------------------------------------------- rendering
def page(title, body, live=None, extra_head=""):
    live_attr = ' id="live" data-events="%s"' % _e(live) if live else ""
    return ("<!doctype html><html lang=en><head><meta charset=utf-8><title>%s</title>"
            "<meta name=viewport content=\"width=device-width, initial-scale=1\">"
            "<link rel=stylesheet href=\"/static/web.css\">%s</head><body>"
            "<div class=offline-banner>Connection to the pool's web service lost: the figures are as of "
            "<span id=asof></span>; reconnecting.</div><div%s>%s</div>"
            "<script src=\"/static/live.js\"></script></body></html>") % (_e(title), extra_head, live_attr, body)


def render_sign(m, name):
    p = m["pools"][name]
    out = []
    if m["stale"]:
        out.append('<div class=stale id=stale>POOL OFF: the pool\'s books cannot be read (since %s); the meter '
                   'is as of %s</div>' % (_e(_utc(m["stale_since"])), _e(_utc(m["as_of"]))))
    out.append('<div class=sign data-pool="%s"><div class=title>%s progressive</div>' % (_e(name), _e(name)))
    gone = p.get("discontinued")
    if gone:
        where = ("pool %s" % gone["to_pool"]) if gone.get("to_pool") is not None else gone.get("to_licensee")
        out.append('<div class=hit id=closed data-cents="%d"><div class=what>This jackpot is closed</div>'
                   '<div class=where>its fund of %s went to %s</div></div>'
                   % (gone.get("amount_cents", 0), _e(dollars(gone.get("amount_cents", 0))), _e(where)))
    elif p["holding"]:
        h = p["holding"][0]  # the newest lock; the others of the round are listed under it
        out.append('<div class=hit id=hit data-lock="%d" data-cents="%d"><div class=what>JACKPOT! %s</div>'
                   '<div class=amount id=hit-amount>%s</div><div class=where>table %s &middot; seat %d &middot; '
                   'round %d &middot; lock #%d</div></div>'
                   % (h["lock_no"], h["amount_cents"], _e(HAND_TEXT.get(h["hand"], h["hand"]).upper()),
                      _e(dollars(h["amount_cents"])), _e(h["board"]), h["seat"], h["round"], h["lock_no"]))
        for o in p["holding"][1:]:
            out.append('<div class=where>and table %s seat %d %s: %s (lock #%d)</div>'
                       % (_e(o["board"]), o["seat"], _e(HAND_TEXT.get(o["hand"], o["hand"])),
                          _e(dollars(o["amount_cents"])), o["lock_no"]))
    else:
        out.append('<div class=meter id=meter data-cents="%d">%s</div>' % (p["meter_cents"], _e(dollars(p["meter_cents"]))))
    out.append("<ul class=tables>")
    for t in p["tables"]:
        out.append('<li class="table state-%s" data-table="%s" data-state="%s">%s: %s</li>'
                   % (_e(t["state"]), _e(t["board"]), _e(t["state"]), _e(t["board"]),
                      _e(SIGN_TEXT.get(t["state"], STATE_TEXT[t["state"]]))))
    out.append("</ul></div>")
    return "".join(out)


def _money_td(c):
    return '<td class=money>%s</td>' % _e(dollars(c))


def render_floor(m, user):
    out = ['<div class=floor><div class=userbar>signed in as %s <form method=post action="/logout">'
           '<button type=submit>sign out</button></form></div><h1>The floor</h1>' % _e(user)]
    if m["stale"]:
        out.append('<div class=stale id=stale>The pool\'s books cannot be read since %s: figures as of %s</div>'
                   % (_e(_utc(m["stale_since"])), _e(_utc(m["as_of"]))))
    out.append("<h2>Alarms</h2><ul class=alarms id=alarms>")
    for a in m["alarms"]:
        out.append('<li class="%s" data-kind="%s">%s</li>' % (_e(a["level"]), _e(a["kind"]), _e(a["text"])))
    if not m["alarms"]:
        out.append('<li class=info data-kind=none>none</li>')
    out.append("</ul><h2>Pools</h2><table id=pools><tr><th>pool</th><th>mode</th><th class=money>meter</th>"
               "<th class=money>overflow</th><th class=money>reserve</th><th>tokens</th><th class=money>in (contributions)"
               "</th><th>hits</th><th class=money>wins</th><th class=money>unpaid</th><th class=money>seeds</th></tr>")
    for name, p in m["pools"].items():
        out.append('<tr data-pool="%s"><td><a href="/sign/%s">%s</a></td><td>%s</td>' % (
            _e(name), _e(_q(name)), _e(name),
            "DISCONTINUED" if p.get("discontinued") else "SERVICE" if p["service"] else "play"))
        out.append('<td class=money data-cents="%d">%s</td>' % (p["meter_cents"], _e(dollars(p["meter_cents"]))))
        out.append(_money_td(p["over_cents"]) + _money_td(p["reserve_cents"]) + "<td>%d</td>" % p["tokens"]
                   + _money_td(p["contrib_cents"]) + "<td>%d</td>" % p["locks"] + _money_td(p["awarded_cents"])
                   + _money_td(p["unpaid_cents"]) + _money_td(p["seeded_cents"]) + "</tr>")
    out.append("</table><h2>Tables</h2><table id=tables><tr><th>table</th><th>pool</th><th>game</th><th>state</th>"
               "<th>last heard</th><th>board (as its service reports)</th><th>refused frames</th><th>tokens</th>"
               "<th class=money>in</th><th>hits</th><th class=money>wins</th><th class=money>unpaid</th></tr>")
    for t in m["tables"].values():
        h = t["health"]
        reported = "-" if h is None else h["reported_state"] + (" (storage fault)" if h["storage_fault"] else "")
        out.append('<tr data-table="%s" data-state="%s"><td>%s</td><td>%s</td><td>%s</td><td class="state-%s">%s</td>'
                   '<td>%s</td><td class=reported>%s</td><td class=refused>%s</td><td>%d</td>%s<td>%d</td>%s%s</tr>' % (
                       _e(t["board"]), _e(t["state"]), _e(t["board"]), _e(t["pool"]), _e(t["game"]), _e(t["state"]),
                       _e(STATE_TEXT[t["state"]]), _e(_age(t["heard_ago_s"])), _e(reported),
                       "-" if h is None else h["refused_frames"], t["tokens"],
                       _money_td(t["contrib_cents"]), t["hits"], _money_td(t["wins_cents"]),
                       _money_td(t["unpaid_cents"])))
    out.append("</table><h2>The last %d hits of each pool (lock order)</h2><table id=hits><tr><th>pool</th>"
               "<th>lock #</th><th>table</th><th>seat</th><th>round</th><th>hand</th><th class=money>amount</th>"
               "<th class=money>meter before</th><th class=money>meter after</th><th>received</th><th>locked</th>"
               "<th>paid / voided</th></tr>" % LAST_HITS)
    for h in m["recent_hits"]:
        out.append('<tr data-lock="%d" data-state="%s"><td>%s</td><td>%d</td><td>%s</td><td>%d</td><td>%d</td>'
                   '<td>%s</td>%s%s%s<td>%s</td><td>%s</td><td>%s</td></tr>' % (
                       h["lock_no"], _e(h["state"]), _e(h["pool"]), h["lock_no"], _e(h["board"]), h["seat"],
                       h["round"], _e(HAND_TEXT.get(h["hand"], h["hand"])), _money_td(h["amount_cents"]),
                       _money_td(h["meter_before_cents"]), _money_td(h["meter_after_cents"]),
                       _e(_utc(h["received_at"], True)), _e(_utc(h["locked_at"], True)),
                       _e("paid " + _utc(h["paid_at"]) if h["state"] == "paid" else
                          "voided " + _utc(h["voided_at"]) if h["state"] == "voided" else "UNPAID")))
    out.append('</table><h2>Meters (N.J.A.C. 13:69E-1.39A, 9 NYCRR 5321.18)</h2><p>Per pool and per table, as CSV: '
               '<a id=csv href="/floor/meters.csv" download>meters.csv</a>. Figures as of %s.</p></div>'
               % _e(_utc(m["as_of"], True)))
    return "".join(out)


def meters_csv(m):
    """The NJ/NY meters of every pool and table, as CSV (dollars with cents; a cell that a
    spreadsheet would take for a formula is quoted as text)."""
    import csv
    import io

    def cell(v):
        s = str(v)
        return "'" + s if s[:1] in ("=", "+", "-", "@", "\t", "\r") else s
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["scope", "pool", "table", "game", "tokens", "in_usd", "display_usd", "overflow_usd", "reserve_usd",
                "hits", "wins_usd", "unpaid_usd", "seeds_usd", "as_of_utc"])
    as_of = _utc(m["as_of"], True)
    for name, p in m["pools"].items():
        w.writerow([cell(x) for x in ("pool", name, "", "", p["tokens"], plain_dollars(p["contrib_cents"]),
                                      plain_dollars(p["meter_cents"]), plain_dollars(p["over_cents"]),
                                      plain_dollars(p["reserve_cents"]), p["locks"],
                                      plain_dollars(p["awarded_cents"]), plain_dollars(p["unpaid_cents"]),
                                      plain_dollars(p["seeded_cents"]), as_of)])
    for t in m["tables"].values():
        w.writerow([cell(x) for x in ("table", t["pool"], t["board"], t["game"], t["tokens"],
                                      plain_dollars(t["contrib_cents"]), "", "", "", t["hits"],
                                      plain_dollars(t["wins_cents"]), plain_dollars(t["unpaid_cents"]), "", as_of)])
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------- the poller
class Hub:
    """Reads the books when the ledger's tip moves (and once a second, for the times that age),
    and wakes every open page when what it shows has changed."""

    def __init__(self, url, quiet_s=60.0, hold_s=HIT_HOLD_S, poll_s=0.2, log=None, lost_s=LOST_S):
        self.reader = Reader(url)
        self.quiet_s = quiet_s
        self.lost_s = lost_s
        self.health = {}
        self.health_read = 0.0  # monotonic time of the last read of the tables' health reports
        self.hold_s = hold_s
        self.poll_s = poll_s
        self.log = log or (lambda text: None)
        self.snap = None
        self.model = None
        self.heard = {}
        self.heard_id = None
        self.stale_since = None
        self.version = 0
        self.sign_payloads = {}
        self.floor_payload = None
        self._event = asyncio.Event()
        self._task = None

    def start(self):
        self._task = asyncio.get_running_loop().create_task(self.run())

    async def stop(self):
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
        await asyncio.to_thread(self.reader.close)

    async def changed(self, version, timeout_s):
        """Wait until the version moves past `version` (or the timeout)."""
        while self.version == version:
            event = self._event
            try:
                await asyncio.wait_for(event.wait(), timeout_s)
            except asyncio.TimeoutError:
                return False
        return True

    def _publish(self):
        self.version += 1
        event, self._event = self._event, asyncio.Event()
        event.set()

    async def refresh(self, force=False):
        """One read of the books (when the tip moved or force); then the model made anew."""
        tip = await asyncio.to_thread(self.reader.tip)
        # Compared with the newest row the last read saw (not the snapshot's tip): a row that came
        # between the two reads is read again, so a lock never hides behind a token.
        if force or self.snap is None or tip != self.heard_id:
            last_seq = {t["board"]: t["last_seq"] for t in (self.snap or {"tables": ()})["tables"]}
            if self.heard_id is None:
                snap = await asyncio.to_thread(self.reader.snapshot)  # the boards, to find where each was heard
                last_seq = {t["board"]: t["last_seq"] for t in snap["tables"]}
            heard, other, newest = await asyncio.to_thread(self.reader.heard, self.heard_id, last_seq)
            # Only tokens since the last read (the usual case under play): the locks are as they were.
            light = not force and self.snap is not None and not other
            snap = await asyncio.to_thread(self.reader.snapshot, self.snap if light else None)
            for board, (rid, at) in heard.items():
                if board not in self.heard or self.heard[board][0] < rid:
                    self.heard[board] = (rid, at)
            self.heard_id = newest
            self.snap = snap
        if force or time.monotonic() - self.health_read >= HEALTH_READ_S:
            # Reports are not rows of the chain (the tip does not move): read on their own clock.
            self.health = await asyncio.to_thread(self.reader.health)
            self.health_read = time.monotonic()
        if self.stale_since is not None:
            self.log("web: the pool's books are readable again")
        self.stale_since = None

    def rebuild(self):
        if self.snap is None:
            return
        m = derive(self.snap, self.heard, time.time(), self.quiet_s, self.hold_s, self.stale_since, self.health,
                   self.lost_s)
        signs = {}
        for name in m["pools"]:
            signs[name] = json.dumps({"html": render_sign(m, name), "meter_cents": m["pools"][name]["meter_cents"],
                                      "stale": m["stale"], "as_of": _utc(m["as_of"])})
        changed = self.model is None or signs != self.sign_payloads or _floor_key(m) != _floor_key(self.model)
        self.model = m
        self.sign_payloads = signs
        if changed:
            self._publish()

    async def run(self):
        last_full = 0.0
        while True:
            try:
                now = time.monotonic()
                await self.refresh(force=now - last_full > 10.0)
                if now - last_full > 10.0:
                    last_full = now
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: the database is away; show what we had, marked stale
                if self.stale_since is None:
                    self.stale_since = time.time()
                    first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
                    self.log("web: cannot read the pool's books (%s); pages marked stale" % first)
                await asyncio.sleep(1.0)
            self.rebuild()
            await asyncio.sleep(self.poll_s)


def _floor_key(m):
    """What the floor page shows, ages rounded to the second (so it is pushed at most once a second)."""
    return (m["tip"], m["stale"], int(m["now"]), tuple(a["text"] for a in m["alarms"]))


# ---------------------------------------------------------------------------------------------- the app
class HTTPError(Exception):
    def __init__(self, status, message, headers=None):
        Exception.__init__(self, message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def build_app(db_url, keys_folder, quiet_s=60.0, hold_s=HIT_HOLD_S, poll_s=0.2, log=None, secure_cookies=False,
              lost_s=LOST_S):
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.requests import Request  # noqa: F401 (types in the handlers)
    from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
    from starlette.routing import Route

    from . import webapi

    log = log or (lambda text: print(text, file=sys.stderr, flush=True))
    tokens = webauth.Tokens(keys_folder)
    sessions = webauth.Sessions(tokens)
    throttle = webauth.Throttle()
    state = {}

    @asynccontextmanager
    async def lifespan(app):
        hub = Hub(db_url, quiet_s=quiet_s, hold_s=hold_s, poll_s=poll_s, log=log, lost_s=lost_s)
        try:
            await hub.refresh(force=True)
        except Exception as exc:  # noqa: the books are away at start: the pages say so until they return
            hub.stale_since = time.time()
            log("web: cannot read the pool's books yet (%s)" % (str(exc).strip().splitlines() or [""])[0][:200])
        hub.rebuild()
        hub.start()
        state["hub"] = hub
        state["api_reader"] = Reader(db_url)
        try:
            yield
        finally:
            await hub.stop()
            await asyncio.to_thread(state["api_reader"].close)

    def hub():
        return state["hub"]

    def model():
        m = hub().model
        if m is None:
            raise HTTPError(503, "the pool's books have not been read yet (is the database up?); try again shortly",
                            {"Retry-After": "2"})
        return m

    def known_pool(name):
        m = model()
        if name not in m["pools"]:
            raise HTTPError(404, "no pool named %s on this floor" % _clip(name))
        return m

    def client_addr(request):
        return request.client.host if request.client else "-"

    def error_page(request, exc):
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": exc.message}, status_code=exc.status, headers=exc.headers)
        body = '<div class=login><h1>%d</h1><p class=error>%s</p><p><a href="/">the floor\'s pages</a></p></div>' % (
            exc.status, _e(exc.message))
        return HTMLResponse(page("%d" % exc.status, body), status_code=exc.status, headers=exc.headers)

    # ---- pages
    async def index(request):
        m = hub().model
        links = "".join('<li><a href="/sign/%s">sign: %s</a></li>' % (_e(_q(n)), _e(n))
                        for n in (m["pools"] if m else ()))
        return HTMLResponse(page("Pool", '<div class=login><h1>The pool</h1><ul>%s<li><a href="/floor">the floor '
                                         'manager\'s page</a> (sign-in)</li><li><a href="/api/v1/openapi.json">API '
                                         'schema</a></li></ul></div>' % links))

    async def sign(request):
        name = request.path_params["pool"]
        m = known_pool(name)
        return HTMLResponse(page("%s progressive" % name, render_sign(m, name), live="/sign/%s/events" % _q(name)))

    async def sign_events(request):
        name = request.path_params["pool"]
        known_pool(name)
        return sse(request, lambda: hub().sign_payloads.get(name))

    def sse(request, payload_of, min_interval_s=0.0):
        async def stream():
            last = None
            while True:
                version = hub().version
                payload = payload_of()
                if payload is None:
                    yield "event: gone\ndata: {}\n\n"
                    return
                if payload != last:
                    yield "event: state\ndata: %s\n\n" % payload
                    last = payload
                    if min_interval_s:
                        await asyncio.sleep(min_interval_s)
                if not await hub().changed(version, 15.0):
                    yield ": keep-alive\n\n"
        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"X-Accel-Buffering": "no"})

    def session_user(request):
        return sessions.user(request.cookies.get(SESSION_COOKIE))

    def login_page(message=None, status=401):
        err = '<p class=error id=login-error>%s</p>' % _e(message) if message else ""
        body = ('<div class=login><h1>The floor manager\'s page</h1>%s<form method=post action="/login">'
                '<label for=token>Your token (<code>tablectl pool token create NAME</code>)</label>'
                '<input type=password id=token name=token autocomplete=off required maxlength=200>'
                '<button type=submit id=signin>Sign in</button></form></div>' % err)
        return HTMLResponse(page("Sign in", body), status_code=status, headers={"WWW-Authenticate": 'Cookie realm="floor"'})

    async def floor(request):
        user = session_user(request)
        if user is None:
            return login_page()
        m = model()
        return HTMLResponse(page("The floor", render_floor(m, user), live="/floor/events"))

    async def floor_events(request):
        user = session_user(request)
        if user is None:
            raise HTTPError(401, "sign in first (/floor)")

        def payload():
            m = hub().model
            return json.dumps({"html": render_floor(m, user), "as_of": _utc(m["as_of"])}) if m else None
        # a page of every table, for people: once a second at most (the sign is the fast one)
        return sse(request, payload, min_interval_s=1.0)

    async def floor_csv(request):
        if session_user(request) is None:
            raise HTTPError(401, "sign in first (/floor)")
        return Response(meters_csv(model()), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": 'attachment; filename="pool-meters.csv"'})

    async def login(request):
        addr = client_addr(request)
        if throttle.blocked(addr):
            raise HTTPError(429, "too many failed sign-ins from this address: wait a minute", {"Retry-After": "60"})
        origin = request.headers.get("origin")
        # the host, not the scheme: behind a TLS proxy the browser says https and we see http
        if origin is not None and origin.partition("://")[2] != request.headers.get("host", ""):
            raise HTTPError(403, "a sign-in must come from this service's own page")
        if not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            raise HTTPError(415, "sign in with the form on /floor")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > 4096:
                raise HTTPError(413, "a sign-in is a token, not more than 4 KiB")
        from urllib.parse import parse_qs
        try:
            form = parse_qs(body.decode("ascii"), max_num_fields=4)
        except (UnicodeDecodeError, ValueError):
            form = {}
        token = (form.get("token") or [""])[0].strip()
        sid, user = sessions.open(token)
        if sid is None:
            throttle.failed(addr)
            log("web: a failed sign-in from %s" % addr)
            return login_page("That token is not valid (or was revoked).")
        log("web: %s signed in from %s" % (user, addr))
        resp = Response(status_code=303, headers={"Location": "/floor"})
        resp.set_cookie(SESSION_COOKIE, sid, max_age=sessions.ttl_s, path="/", httponly=True, samesite="strict",
                        secure=secure_cookies)
        return resp

    async def logout(request):
        sessions.close(request.cookies.get(SESSION_COOKIE))
        resp = Response(status_code=303, headers={"Location": "/floor"})
        resp.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict", secure=secure_cookies)
        return resp

    async def static(request):
        name = request.path_params["name"]
        if name == "web.css":
            return Response(webassets.CSS, media_type="text/css")
        if name == "live.js":
            return Response(webassets.JS, media_type="text/javascript")
        raise HTTPError(404, "no such file")

    async def not_found(request, exc):
        if isinstance(exc, HTTPError):
            return error_page(request, exc)
        status = getattr(exc, "status_code", 404)
        message = {404: "no such page", 405: "this service is read-only: that method is not allowed here"}.get(
            status, "refused")
        return error_page(request, HTTPError(status, message))

    async def http_error(request, exc):
        return error_page(request, exc)

    api_routes = webapi.routes(lambda: state, model, known_pool, tokens, throttle, client_addr, log, HTTPError)
    routes = [
        Route("/", index),
        Route("/sign/{pool}", sign),
        Route("/sign/{pool}/events", sign_events),
        Route("/floor", floor),
        Route("/floor/events", floor_events),
        Route("/floor/meters.csv", floor_csv),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/static/{name}", static),
    ] + api_routes
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPError: http_error, 404: not_found, 405: not_found})
    app.state.hub = hub
    return Guard(app, log)


def _clip(text, n=64):
    text = str(text)
    text = re.sub(r"[^\x20-\x7e]", "?", text)
    return text if len(text) <= n else text[:n] + "..."


class Guard:
    """ASGI middleware: the security headers on every response, and the access log (method, path,
    status, time; never a header, a cookie or a query string, where a secret could be)."""

    def __init__(self, app, log):
        self.app = app
        self.log = log

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = time.monotonic()
        status = [0]

        async def guarded(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"cache-control"
                           or scope["path"].startswith("/static/")]
                have = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in SECURITY_HEADERS if k not in have]
                message = dict(message, headers=headers)
            await send(message)
        try:
            await self.app(scope, receive, guarded)
        finally:
            self.log("web: %s %s %d %.0f ms" % (scope.get("method"), _clip(scope.get("path", ""), 120), status[0],
                                                 (time.monotonic() - started) * 1000))


# ---------------------------------------------------------------------------------------------- running it
def parse_listen(text):
    """HOST:PORT ([v6]:PORT) -> (host, port)."""
    m = re.fullmatch(r"\[([0-9a-fA-F:.]+)\]:(\d{1,5})|([^:\[\]]+):(\d{1,5})", text or "")
    if not m:
        raise TablectlError("--listen %r: say HOST:PORT, e.g. 127.0.0.1:8080" % (text,))
    host = m.group(1) or m.group(3)
    port = int(m.group(2) or m.group(4))
    if port > 65535:
        raise TablectlError("--listen %r: the port is 0 to 65535" % (text,))
    return host, port


def check_tls(cert, key):
    """--tls-cert and --tls-key, both or neither, loadable as a pair (checked before anything
    starts, so a wrong file is named, not a uvicorn traceback)."""
    if (cert is None) != (key is None):
        raise TablectlError("give --tls-cert and --tls-key together (the certificate chain and its private key)")
    if cert is None:
        return False
    import ssl
    for flag, path in (("--tls-cert", cert), ("--tls-key", key)):
        if not os.path.isfile(path):
            raise TablectlError("%s %s: no such file" % (flag, path))
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise TablectlError("--tls-cert %s with --tls-key %s cannot be loaded as a certificate chain and its key "
                            "(PEM): %s" % (cert, key, exc))
    return True


def serve(db_url, keys_folder, listen, quiet_s=60.0, hold_s=HIT_HOLD_S, out=sys.stdout, lost_s=LOST_S,
          tls_cert=None, tls_key=None):
    """Run until SIGINT/SIGTERM; prints `web http://HOST:PORT/` (https with --tls-cert) once it
    accepts connections."""
    import uvicorn
    host, port = parse_listen(listen)
    tls = check_tls(tls_cert, tls_key)
    # Over TLS the sign-in cookie is marked Secure: a browser never sends it over plain HTTP.
    app = build_app(db_url, keys_folder, quiet_s=quiet_s, hold_s=hold_s, lost_s=lost_s, secure_cookies=tls)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, server_header=False,
                            lifespan="on", http="h11", loop="asyncio", timeout_graceful_shutdown=2,
                            limit_concurrency=2000, timeout_keep_alive=5,
                            ssl_certfile=tls_cert if tls else None, ssl_keyfile=tls_key if tls else None)
    server = uvicorn.Server(config)

    async def main():
        task = asyncio.get_running_loop().create_task(server.serve())
        while not server.started:
            if task.done():
                await task
                raise TablectlError("the web service did not start (is %s free?)" % listen)
            await asyncio.sleep(0.05)
        bound = server.servers[0].sockets[0].getsockname()
        shown = "[%s]" % bound[0] if ":" in bound[0] else bound[0]
        print("web %s://%s:%d/" % ("https" if tls else "http", shown, bound[1]), file=out, flush=True)
        await task
    asyncio.run(main())
    return 0
