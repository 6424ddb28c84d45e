"""`/api/v1/...`: the pool's books for casino systems, read-only, behind bearer tokens (the same
per-user tokens as the floor page: `tablectl pool token create NAME`). docs/API.md maps each
resource to the SAS meters and exceptions and the G2S progressive events it stands for.

Money is integer cents (fields ending `_cents`); seats count from 1; times are Unix seconds (UTC).
Errors are {"error": "..."} with 400 (a parameter that is not what it must be), 401 (no token, or
not a valid one: the answer names no secret), 404 (no such pool or table), 429 (too many failed
tokens from one address)."""
import asyncio
import re

from .webdata import LAST_HITS, MAX_CURSOR, MAX_EVENTS

_DIGITS = re.compile(r"^[0-9]{1,19}$")


def _one(request, name, allowed, HTTPError):
    for key in request.query_params.keys():
        if key not in allowed:
            raise HTTPError(400, "unknown parameter %r: this endpoint takes %s" % (
                key[:40], ", ".join(allowed) if allowed else "none"))
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise HTTPError(400, "parameter %s given %d times: give it once" % (name, len(values)))
    return values[0] if values else None


def _whole(request, name, allowed, default, lo, hi, HTTPError, what=None):
    text = _one(request, name, allowed, HTTPError)
    if text is None:
        return default
    if not _DIGITS.match(text) or not lo <= int(text) <= hi:
        raise HTTPError(400, "%s must be %s, a whole number from %d to %d; got %r" % (
            name, what or "a count", lo, hi, text[:40]))
    return int(text)


def routes(state, model, known_pool, tokens, throttle, client_addr, log, HTTPError):
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from .web import nj_meters, table_meters

    def authorize(request):
        addr = client_addr(request)
        if throttle.blocked(addr):
            raise HTTPError(429, "too many requests with invalid tokens from this address: wait a minute",
                            {"Retry-After": "60"})
        header = request.headers.get("authorization")
        if header is None:
            raise HTTPError(401, "this API needs a bearer token (Authorization: Bearer <token>; "
                                 "`tablectl pool token create NAME` makes one)",
                            {"WWW-Authenticate": 'Bearer realm="pool"'})
        scheme, _, token = header.partition(" ")
        user = tokens.user(token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            throttle.failed(addr)
            raise HTTPError(401, "that bearer token is not valid (or was revoked)",
                            {"WWW-Authenticate": 'Bearer realm="pool", error="invalid_token"'})
        return user

    def api(fn):
        async def handler(request):
            authorize(request)
            return JSONResponse(await fn(request))
        return handler

    def pool_out(p, with_tables=False):
        out = {"name": p["name"], "service_mode": p["service"], "parameters_version": p["version"],
               "meter_cents": p["meter_cents"], "overflow_cents": p["over_cents"], "reserve_cents": p["reserve_cents"],
               "tokens": p["tokens"], "contributions_cents": p["contrib_cents"], "awarded_cents": p["awarded_cents"],
               "seeded_cents": p["seeded_cents"], "hits": p["locks"], "unpaid_cents": p["unpaid_cents"],
               "parameters": p["params"], "tables": [t["board"] for t in p["tables"]],
               "discontinued": p.get("discontinued")}
        if with_tables:
            out["tables"] = [table_out(t) for t in p["tables"]]
            out["unpaid_locks"] = [hit_out(u) for u in p["unpaid"]]
        return out

    def table_out(t):
        return {"table": t["board"], "pool": t["pool"], "game": t["game"], "active": t["active"], "state": t["state"],
                "last_heard": t["last_heard"], "last_seq": t["last_seq"], "tokens": t["tokens"],
                "contributions_cents": t["contrib_cents"], "hits": t["hits"], "wins_cents": t["wins_cents"],
                "unpaid_cents": t["unpaid_cents"], "health": t["health"]}

    def hit_out(h):
        out = dict(h)
        out["table"] = out.pop("board")  # "table" throughout the API, as in /tables
        return out

    def envelope(m, **kw):
        return dict(kw, as_of=m["as_of"], stale=m["stale"])

    async def pools(request):
        _one(request, "-", (), HTTPError)
        m = model()
        return envelope(m, pools=[pool_out(p) for p in m["pools"].values()])

    async def pool(request):
        _one(request, "-", (), HTTPError)
        name = request.path_params["pool"]
        m = known_pool(name)
        return envelope(m, pool=pool_out(m["pools"][name], with_tables=True))

    async def pool_meters(request):
        _one(request, "-", (), HTTPError)
        name = request.path_params["pool"]
        m = known_pool(name)
        p = m["pools"][name]
        return envelope(m, pool=name, meters=nj_meters(p),
                        tables={t["board"]: table_meters(t) for t in p["tables"]})

    async def tables(request):
        name = _one(request, "pool", ("pool",), HTTPError)
        m = known_pool(name) if name is not None else model()
        return envelope(m, tables=[table_out(t) for t in m["tables"].values() if name is None or t["pool"] == name])

    def known_table(name):
        m = model()
        if name not in m["tables"]:
            from .web import _clip
            raise HTTPError(404, "no table %s in any pool of this floor" % _clip(name))
        return m

    async def table(request):
        _one(request, "-", (), HTTPError)
        name = request.path_params["table"]
        m = known_table(name)
        return envelope(m, table=table_out(m["tables"][name]))

    async def table_meters_(request):
        _one(request, "-", (), HTTPError)
        name = request.path_params["table"]
        m = known_table(name)
        return envelope(m, table=name, meters=table_meters(m["tables"][name]))

    async def hits(request):
        allowed = ("pool", "table", "limit")
        pool_name = _one(request, "pool", allowed, HTTPError)
        table_name = _one(request, "table", allowed, HTTPError)
        limit = _whole(request, "limit", allowed, LAST_HITS, 1, MAX_EVENTS, HTTPError)
        m = known_pool(pool_name) if pool_name is not None else model()
        if table_name is not None:
            known_table(table_name)
        got = await asyncio.to_thread(state()["api_reader"].hits, pool_name, table_name, limit)
        return envelope(m, hits=[hit_out(h) for h in got])

    async def events(request):
        allowed = ("after", "limit", "pool")
        pool_name = _one(request, "pool", allowed, HTTPError)
        text = _one(request, "after", allowed, HTTPError)
        after = 0
        if text is not None:
            if not _DIGITS.match(text) or int(text) > MAX_CURSOR:
                raise HTTPError(400, "after must be a cursor: the id of the last event you read (a whole number, 0 "
                                     "for the start), as `next` gave it; got %r" % text[:40])
            after = int(text)
        limit = _whole(request, "limit", allowed, 100, 1, MAX_EVENTS, HTTPError)
        m = known_pool(pool_name) if pool_name is not None else model()
        reader = state()["api_reader"]
        tip = await asyncio.to_thread(reader.tip)
        if after > tip:
            raise HTTPError(400, "cursor %d is past the newest event (%d): it is not from these books" % (after, tip))
        got = await asyncio.to_thread(reader.events, after, limit, pool_name)
        nxt = got[-1]["id"] if got else (after if pool_name is not None else after)
        if pool_name is not None and len(got) < limit:
            nxt = max(nxt, tip)  # every row up to the tip was looked at: resume after it
        return envelope(m, events=got, next=nxt, more=len(got) == limit)

    async def openapi(request):
        from .webschema import SCHEMA
        return JSONResponse(SCHEMA)

    return [
        Route("/api/v1/openapi.json", openapi),
        Route("/api/v1/pools", api(pools)),
        Route("/api/v1/pools/{pool}", api(pool)),
        Route("/api/v1/pools/{pool}/meters", api(pool_meters)),
        Route("/api/v1/tables", api(tables)),
        Route("/api/v1/tables/{table}", api(table)),
        Route("/api/v1/tables/{table}/meters", api(table_meters_)),
        Route("/api/v1/hits", api(hits)),
        Route("/api/v1/events", api(events)),
    ]
