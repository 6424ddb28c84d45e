"""The OpenAPI 3.1 description of /api/v1 (served at /api/v1/openapi.json; docs/API.md)."""


def _ref(name):
    return {"$ref": "#/components/schemas/%s" % name}


_CENTS = {"type": "integer", "description": "US cents"}
_ERR = {"description": "refused", "content": {"application/json": {"schema": _ref("Error")}}}


def _get(summary, schema, params=(), path_params=()):
    op = {"summary": summary, "security": [{"bearer": []}],
          "parameters": [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
                         for n in path_params] + list(params),
          "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": schema}}},
                        "400": _ERR, "401": _ERR, "404": _ERR, "429": _ERR, "503": _ERR}}
    return {"get": op}


def _q(name, schema, description):
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


def _obj(props, required=None):
    return {"type": "object", "properties": props, "required": required or list(props)}


_ENVELOPE = {"as_of": {"type": "number", "description": "when the books were read (Unix seconds)"},
             "stale": {"type": "boolean", "description": "true while the pool's books cannot be read"}}

SCHEMA = {
    "openapi": "3.1.0",
    "info": {"title": "tablectl pool web API", "version": "1",
             "description": "Read-only: the linked progressive pool's meters, hits and events (docs/API.md)."},
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                       "description": "a token from `tablectl pool token create NAME`"}},
        "schemas": {
            "Error": _obj({"error": {"type": "string"}}),
            "Pool": _obj({"name": {"type": "string"}, "service_mode": {"type": "boolean"},
                          "parameters_version": {"type": "integer"}, "meter_cents": _CENTS, "overflow_cents": _CENTS,
                          "reserve_cents": _CENTS, "tokens": {"type": "integer"}, "contributions_cents": _CENTS,
                          "awarded_cents": _CENTS, "seeded_cents": _CENTS, "hits": {"type": "integer"},
                          "unpaid_cents": _CENTS, "parameters": {"type": "object"},
                          "tables": {"type": "array"},
                          "discontinued": {"type": ["object", "null"],
                                           "description": "where a discontinued pool's fund went (row, to_pool or "
                                                          "to_licensee, amount_cents)"}}),
            "Table": _obj({"table": {"type": "string"}, "pool": {"type": "string"}, "game": {"type": "string"},
                           "active": {"type": "boolean"},
                           "state": {"enum": ["open", "jackpot_pending", "not_heard", "inactive", "pool_off",
                                              "link_lost", "closed"]},
                           "last_heard": {"type": ["number", "null"],
                                          "description": "the newer of the table's newest row in the books and its "
                                                         "newest health report (the pool's clock)"},
                           "last_seq": {"type": "integer"},
                           "tokens": {"type": "integer"}, "contributions_cents": _CENTS, "hits": {"type": "integer"},
                           "wins_cents": _CENTS, "unpaid_cents": _CENTS,
                           "health": {"oneOf": [{"type": "null"}, _ref("TableHealth")],
                                      "description": "what the table's service last reported of itself; null: "
                                                     "never reported"}}),
            "TableHealth": _obj({
                "reported_state": {"type": "string", "description": "the board's state (OPEN, LOCKED, FAULT, ...), "
                                                                    "no_board or board_silent"},
                "last_report": {"type": "number", "description": "when the pool heard the report (the pool's clock)"},
                "report_ago_s": {"type": "number"},
                "closed": {"type": "boolean", "description": "the service stopped cleanly (information, not an alarm)"},
                "link_lost": {"type": "boolean", "description": "not heard for longer than the lost window, and not "
                                                               "closed"},
                "pool_off": {"type": "boolean", "description": "the table shows POOL OFF (coin-in inhibited)"},
                "storage_fault": {"type": "boolean"},
                "refused_frames": {"type": "integer", "minimum": 0,
                                   "description": "frames the table's service refused since it started"},
                "refused_last_rise": {"type": ["number", "null"], "description": "when the count last went up"},
                "refused_rising": {"type": "boolean", "description": "the count went up in the last 10 minutes"}}),
            "Hit": _obj({"pool": {"type": "string"}, "lock_no": {"type": "integer"}, "table": {"type": "string"},
                         "round": {"type": "integer"}, "seat": {"type": "integer", "minimum": 1},
                         "hand": {"type": "string"}, "amount_cents": _CENTS, "meter_before_cents": _CENTS,
                         "meter_after_cents": _CENTS, "received_at": {"type": "number"},
                         "locked_at": {"type": "number"}, "paid_at": {"type": ["number", "null"]},
                         "voided_at": {"type": ["number", "null"]}, "state": {"enum": ["unpaid", "paid", "voided"]}}),
            "PoolMeters": _obj({"in_cents": _CENTS, "tokens": {"type": "integer"}, "display_cents": _CENTS,
                                "hits": {"type": "integer"}, "wins_cents": _CENTS, "overflow_cents": _CENTS,
                                "reserve_cents": _CENTS, "seeds_cents": _CENTS, "unpaid_cents": _CENTS}),
            "TableMeters": _obj({"in_cents": _CENTS, "tokens": {"type": "integer"}, "hits": {"type": "integer"},
                                 "wins_cents": _CENTS, "paid_cents": _CENTS, "unpaid_cents": _CENTS}),
            "Event": _obj({"id": {"type": "integer", "description": "the pool ledger's row id: the cursor"},
                           "event": {"enum": ["contribution", "hit_locked", "jackpot_declared", "hit_paid",
                                              "hit_voided", "pool_created", "pool_changed", "fund_transferred_out",
                                              "fund_transferred_in"]},
                           "pool": {"type": ["string", "null"]}, "table": {"type": ["string", "null"]},
                           "seq": {"type": ["integer", "null"]}, "at": {"type": "number"},
                           "data": {"type": "object"}}),
        },
    },
    "paths": {
        "/api/v1/pools": _get("every pool", _obj(dict(_ENVELOPE, pools={"type": "array", "items": _ref("Pool")}))),
        "/api/v1/pools/{pool}": _get("one pool, its tables and unpaid locks",
                                     _obj(dict(_ENVELOPE, pool=_ref("Pool"))), path_params=("pool",)),
        "/api/v1/pools/{pool}/meters": _get(
            "the meters N.J.A.C. 13:69E-1.39A names, of the pool and of each table",
            _obj(dict(_ENVELOPE, pool={"type": "string"}, meters=_ref("PoolMeters"),
                      tables={"type": "object", "additionalProperties": _ref("TableMeters")})),
            path_params=("pool",)),
        "/api/v1/tables": _get("every table", _obj(dict(_ENVELOPE, tables={"type": "array", "items": _ref("Table")})),
                               params=[_q("pool", {"type": "string"}, "only this pool's tables")]),
        "/api/v1/tables/{table}": _get("one table", _obj(dict(_ENVELOPE, table=_ref("Table"))),
                                       path_params=("table",)),
        "/api/v1/tables/{table}/meters": _get("one table's meters",
                                              _obj(dict(_ENVELOPE, table={"type": "string"},
                                                        meters=_ref("TableMeters"))), path_params=("table",)),
        "/api/v1/hits": _get("locks, newest first (9 NYCRR 5321.18: the last 25 by default)",
                             _obj(dict(_ENVELOPE, hits={"type": "array", "items": _ref("Hit")})),
                             params=[_q("pool", {"type": "string"}, "one pool"),
                                     _q("table", {"type": "string"}, "one table"),
                                     _q("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, "default 25")]),
        "/api/v1/events": _get(
            "the pool ledger's rows after a cursor, oldest first: resume with after=<next>",
            _obj(dict(_ENVELOPE, events={"type": "array", "items": _ref("Event")}, next={"type": "integer"},
                      more={"type": "boolean"})),
            params=[_q("after", {"type": "integer", "minimum": 0}, "the cursor: the id of the last event read "
                                                                    "(0: from the start)"),
                    _q("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, "default 100"),
                    _q("pool", {"type": "string"}, "one pool's events")]),
    },
}
