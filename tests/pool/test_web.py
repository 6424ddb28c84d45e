"""`tablectl pool web` without a browser: the real service (its own process, uvicorn) on a real
PostgreSQL, asked over HTTP as a hostile caller would: tokens (none, wrong, revoked, in the log),
names that are not pools or tables, cursors that are not cursors, and the figures against the
books. The browser's half is test_web_browser.py."""
import json
import os
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from poolkit import hit, make_pool, pg_server, pg_url, pool_keys  # noqa: F401 (fixtures)

from tabledev import procs
from tablectl.pool import webauth
from tablectl.pool.store import PoolStore

SEED = 10000


def _tokens(store, board, first, count, round_no=1):
    return store.record_tokens([(board, [{"q": q, "seat": q % 7, "round": round_no} for q in
                                         range(first, first + count)])])


class Web:
    def __init__(self, url, keys, tmp, extra=()):
        self.log = str(tmp / "web.log")
        self.proc, _ = procs.start(["pool", "web", "--db", url, "--keys", keys, "--listen", "127.0.0.1:0"]
                                   + list(extra), self.log)
        line = self.proc.stdout.readline()
        assert line.startswith("web http://127.0.0.1:"), (line, open(self.log).read())
        self.base = line.split()[1].rstrip("/")

    def get(self, path, token=None, headers=None, method="GET", data=None):
        req = urllib.request.Request(self.base + path, method=method, data=data, headers=dict(headers or {}))
        if token is not None:
            req.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode()

    def json(self, path, token, status=200):
        code, _h, body = self.get(path, token)
        assert code == status, (code, body)
        return json.loads(body)

    def stop(self):
        procs.stop(self.proc)


@pytest.fixture
def floor(pg_url, pool_keys, tmp_path):  # noqa: F811
    store = PoolStore(pg_url, pool_keys)
    make_pool(store, params={"seed_cents": SEED, "increment_cents": 70, "ceiling_cents": 10000000,
                             "reserve_cents": 5}, members=(("T1", "caribbean_draw"), ("T2", "caribbean_stud")))
    web = Web(pg_url, pool_keys, tmp_path, ["--hold-s", "2", "--quiet-s", "600"])
    try:
        yield store, web, pool_keys
    finally:
        web.stop()
        store.close()


def _wait(fn, timeout_s=5.0):
    deadline = time.monotonic() + timeout_s
    while True:
        got = fn()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError("not within %.0f s" % timeout_s)
        time.sleep(0.05)


def test_token_file_is_hashed_0600_and_compared_in_constant_time(tmp_path):
    keys = str(tmp_path / "keys")
    token = webauth.create(keys, "alice")
    assert token.startswith(webauth.PREFIX) and len(token) == len(webauth.PREFIX) + 43  # 256 bits, base64url
    path = os.path.join(keys, webauth.TOKENS_FILE)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    text = open(path).read()
    assert token not in text and token[len(webauth.PREFIX):] not in text  # only its SHA-256
    with pytest.raises(Exception, match="already"):
        webauth.create(keys, "alice")
    t = webauth.Tokens(keys)
    assert t.user(token) == "alice"
    assert t.user(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert t.user("") is None and t.user("x" * 10000) is None and t.user(None) is None
    # constant time: the comparison is hmac.compare_digest over hashes, every entry compared
    import inspect
    src = inspect.getsource(webauth.Tokens.user)
    assert "compare_digest" in src and "break" not in src and "return name" not in src
    # a file others can read lets nobody in
    os.chmod(path, 0o644)
    t2 = webauth.Tokens(keys)
    assert t2.user(token) is None
    os.chmod(path, 0o600)
    webauth.revoke(keys, "alice")
    assert t.user(token) is None  # read again on change: a revoked token stops at once


def test_token_cli_create_list_revoke(tmp_path):
    keys = str(tmp_path / "k")
    out = subprocess.run(procs.TABLECTL + ["pool", "token", "create", "bob", "--keys", keys], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    token = out.stdout.strip()
    assert webauth.Tokens(keys).user(token) == "bob"
    assert "shown once" in out.stderr
    listed = subprocess.run(procs.TABLECTL + ["pool", "token", "list", "--keys", keys, "--json"], capture_output=True,
                            text=True, timeout=60)
    assert [u["name"] for u in json.loads(listed.stdout)] == ["bob"] and token not in listed.stdout
    bad = subprocess.run(procs.TABLECTL + ["pool", "token", "create", "../evil", "--keys", keys],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and bad.stderr.startswith("tablectl: user name")
    rev = subprocess.run(procs.TABLECTL + ["pool", "token", "revoke", "bob", "--keys", keys], capture_output=True,
                         text=True, timeout=60)
    assert rev.returncode == 0 and webauth.Tokens(keys).user(token) is None


def test_api_refuses_hostile_callers_and_names_no_secret(floor):
    store, web, keys = floor
    token = webauth.create(keys, "cms")
    # no token, a wrong one, a malformed header: 401, naming no secret
    for headers in ({}, {"Authorization": "Bearer " + token[:-2] + "xx"}, {"Authorization": "Basic " + token},
                    {"Authorization": "Bearer"}):
        code, h, body = web.get("/api/v1/pools", headers=headers)
        assert code == 401, (headers, code, body)
        assert "Bearer" in h["www-authenticate"] and token not in body and token[:-2] not in body
    assert web.json("/api/v1/pools", token)["pools"][0]["name"] == "floor"
    # unknown pool or table: 404 that says so
    code, _h, body = web.get("/api/v1/pools/nosuch", token)
    assert code == 404 and "no pool named nosuch" in json.loads(body)["error"]
    code, _h, body = web.get("/api/v1/tables/%3Cscript%3E", token)
    assert code == 404 and "<script>" not in body or "no table" in body
    code, _h, body = web.get("/sign/nosuch")
    assert code == 404 and "no pool named nosuch" in body
    code, _h, body = web.get("/sign/%3Cb%3Ex")
    assert code == 404 and "<b>x" not in body and "&lt;b&gt;x" in body
    # bad cursors: 400 with a clear message
    for bad in ("abc", "-1", "1.5", "99999999999999999999", "1e3", "%20"):
        code, _h, body = web.get("/api/v1/events?after=" + bad, token)
        assert code == 400 and "after must be a cursor" in json.loads(body)["error"], (bad, body)
    code, _h, body = web.get("/api/v1/events?after=1000000", token)
    assert code == 400 and "past the newest event" in body
    code, _h, body = web.get("/api/v1/events?cursor=3", token)
    assert code == 400 and "unknown parameter 'cursor'" in body
    code, _h, body = web.get("/api/v1/events?after=1&after=2", token)
    assert code == 400 and "given 2 times" in body
    code, _h, body = web.get("/api/v1/hits?limit=0", token)
    assert code == 400 and "limit must be" in body
    # read-only: nothing but GET (and the sign-in form)
    code, _h, _b = web.get("/api/v1/pools", token, method="POST", data=b"{}")
    assert code == 405
    # the floor page without a session: 401 with the sign-in form; a wrong token: 401 again
    code, _h, body = web.get("/floor")
    assert code == 401 and 'name=token' in body
    code, _h, body = web.get("/floor/meters.csv")
    assert code == 401
    code, _h, body = web.get("/login", method="POST", data=b"token=tpw1_nope",
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert code == 401 and "not valid" in body and "tpw1_nope" not in body
    # every page carries the headers that keep it out of frames and run only its own script
    code, h, _b = web.get("/sign/floor")
    assert code == 200 and "script-src 'self'" in h["content-security-policy"] and h["x-frame-options"] == "DENY"
    # the token is never written to the log
    web.stop()
    log = open(web.log).read()
    assert token not in log and token[len(webauth.PREFIX):] not in log and "tpw1_nope" not in log
    assert "GET /api/v1/pools 401" in log


def test_figures_equal_the_books_and_the_feed_resumes_from_its_cursor(floor):
    store, web, keys = floor
    token = webauth.create(keys, "cms")
    _tokens(store, "T1", 1, 5)
    _tokens(store, "T2", 1, 3)
    st = store.status("floor")

    def pool():
        p = web.json("/api/v1/pools/floor", token)["pool"]
        return p if p["tokens"] == 8 else None
    p = _wait(pool)
    assert p["meter_cents"] == st["meter_cents"] == SEED + 8 * 70
    assert p["reserve_cents"] == st["reserve_cents"] and p["contributions_cents"] == st["contrib_cents"]
    meters = web.json("/api/v1/pools/floor/meters", token)
    assert meters["meters"]["display_cents"] == st["meter_cents"]
    assert meters["tables"]["T1"]["tokens"] == 5 and meters["tables"]["T2"]["in_cents"] == 3 * 70
    # a hit: the sign holds it, the API lists it UNPAID (no board paid it) and the meter is the reset
    got = hit(store, "T1", 1, 2, "As Ks Qs Js Ts")
    assert got["lock_no"] == 1

    def signed():
        code, _h, body = web.get("/sign/floor")
        return body if 'id=hit data-lock="1"' in body else None
    body = _wait(signed)
    assert 'data-cents="%d"' % got["amount_cents"] in body and "ROYAL FLUSH" in body
    hits = web.json("/api/v1/hits", token)["hits"]
    assert hits[0]["lock_no"] == 1 and hits[0]["state"] == "unpaid" and hits[0]["seat"] == 3
    assert hits[0]["table"] == "T1" and hits[0]["amount_cents"] == got["amount_cents"]
    pool_view = web.json("/api/v1/pools/floor", token)["pool"]
    assert [(u["lock_no"], u["table"]) for u in pool_view["unpaid_locks"]] == [(1, "T1")]
    assert web.json("/api/v1/hits?table=T2", token)["hits"] == []
    code, _h, body = web.get("/api/v1/hits?table=T9", token)
    assert code == 404 and "no table T9" in body
    tables = {t["table"]: t for t in web.json("/api/v1/tables", token)["tables"]}
    assert tables["T1"]["state"] == "jackpot_pending" and tables["T2"]["state"] == "open"
    # after the hold the sign shows the meter from its reset, as the books hold it
    meter = store.status("floor")["meter_cents"]
    body = _wait(lambda: (lambda b: b if 'id=meter data-cents="%d"' % meter in b else None)(web.get("/sign/floor")[2]))
    # the event feed, page by page from a cursor, is the ledger in order, each row once
    seen, after = [], 0
    while True:
        page = web.json("/api/v1/events?limit=3&after=%d" % after, token)
        seen += page["events"]
        after = page["next"]
        if not page["more"]:
            break
    ids = [e["id"] for e in seen]
    assert ids == sorted(ids) == list(range(1, len(ids) + 1))
    kinds = [e["event"] for e in seen]
    assert kinds.count("contribution") == 8 and kinds.count("hit_locked") == 1 and "pool_created" in kinds
    locked = [e for e in seen if e["event"] == "hit_locked"][0]
    assert locked["data"]["amount_cents"] == got["amount_cents"] and locked["data"]["seat"] == 3
    assert all("raw" not in e["data"] and "sig" not in e["data"] for e in seen)
    # nothing new: the same cursor again, no events
    again = web.json("/api/v1/events?after=%d" % after, token)
    assert again["events"] == [] and again["next"] == after
    schema = json.loads(web.get("/api/v1/openapi.json")[2])
    assert schema["openapi"].startswith("3.") and "/api/v1/events" in schema["paths"]


def test_sign_is_pushed_within_a_second_of_a_commit(floor):
    """The sign's event stream carries a committed token's meter in under a second."""
    store, web, _keys = floor
    import http.client
    from urllib.parse import urlsplit
    u = urlsplit(web.base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    conn.request("GET", "/sign/floor/events")
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("content-type").startswith("text/event-stream")

    def next_state():
        while True:
            line = resp.fp.readline().decode()
            if line.startswith("data: "):
                return json.loads(line[6:])
    first = next_state()
    assert first["meter_cents"] == SEED
    delays = []
    for i in range(5):
        _tokens(store, "T1", 100 + i, 1)
        committed = time.monotonic()
        meter = store.status("floor")["meter_cents"]
        while next_state()["meter_cents"] != meter:
            pass
        delays.append(time.monotonic() - committed)
    conn.close()
    assert max(delays) < 1.0, delays


def test_pages_stay_up_marked_stale_when_the_database_goes_and_catch_up(tmp_path, pool_keys):  # noqa: F811
    import tempfile
    from tabledev.pgserver import PgServer
    pg = PgServer(tempfile.mkdtemp(prefix="webtest-pg-"), port=5441).init().start()
    pg.create_database()
    keys = pool_keys
    store = PoolStore(pg.url, keys)
    make_pool(store)
    store.close()
    web = Web(pg.url, keys, tmp_path)
    try:
        assert 'id=meter data-cents="10000"' in web.get("/sign/floor")[2]
        pg.stop()
        body = _wait(lambda: (lambda b: b if "id=stale" in b else None)(web.get("/sign/floor")[2]), 10)
        assert 'data-cents="10000"' in body and "POOL OFF" in body
        pg.start()
        store = PoolStore(pg.url, keys)
        _tokens(store, "T1", 1, 2)
        store.close()
        _wait(lambda: (lambda b: "id=stale" not in b and 'data-cents="10140"' in b)(web.get("/sign/floor")[2]), 15)
    finally:
        web.stop()
        pg.stop()
        pg.remove()


def test_floor_sign_in_session_revocation_and_hostile_names(floor):
    """The sign-in: a cookie that scripts cannot read and other sites do not send, refused from
    another origin; a revoked token ends its sessions; names from the books are escaped on the page
    and quoted in the CSV."""
    store, web, keys = floor
    make_pool(store, name="evil", members=(("=1+1", "caribbean_draw"), ("<b>x</b>", "caribbean_stud")))
    token = webauth.create(keys, "alice")
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    code, _h, body = web.get("/login", method="POST", data=("token=" + token).encode(),
                             headers=dict(form, Origin="http://evil.example"))
    assert code == 403 and token not in body

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):
            return None
    opener = urllib.request.build_opener(NoRedirect)
    req = urllib.request.Request(web.base + "/login", data=("token=" + token).encode(), method="POST", headers=form)
    try:
        opener.open(req, timeout=10)
        raise AssertionError("no redirect")
    except urllib.error.HTTPError as e:
        assert e.code == 303 and e.headers["Location"] == "/floor"
        cookie = e.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict") and token not in cookie
    sid = cookie.split(";")[0]
    page = _wait(lambda: (lambda r: r if r[0] == 200 and "=1+1" in r[2] else None)(
        web.get("/floor", headers={"Cookie": sid})))
    assert "signed in as alice" in page[2]
    assert "<b>x</b>" not in page[2] and "&lt;b&gt;x&lt;/b&gt;" in page[2]
    code, h, csv_text = web.get("/floor/meters.csv", headers={"Cookie": sid})
    assert code == 200 and h["content-type"].startswith("text/csv")
    rows = csv_text.splitlines()
    assert rows[0].startswith("scope,pool,table") and any(r.startswith("table,evil,'=1+1,") for r in rows)
    assert any(r.startswith("pool,floor,,,0,0.00,100.00,") for r in rows)
    # a made-up session id, and the real one after the token is revoked: signed out
    assert web.get("/floor", headers={"Cookie": "tpw_session=" + "A" * 43})[0] == 401
    webauth.revoke(keys, "alice")
    assert web.get("/floor", headers={"Cookie": sid})[0] == 401
    assert web.get("/floor/events", headers={"Cookie": sid})[0] == 401
    # a pool name that is not a plain word: its sign's address and its event stream's are quoted
    make_pool(store, name="high roller?#1", members=(("HR1", "caribbean_draw"),))
    code, _h, body = _wait(lambda: (lambda r: r if r[0] == 200 else None)(web.get("/sign/high%20roller%3F%231")))
    assert 'data-events="/sign/high%20roller%3F%231/events"' in body
    import http.client
    from urllib.parse import urlsplit
    u = urlsplit(web.base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    conn.request("GET", "/sign/high%20roller%3F%231/events")
    resp = conn.getresponse()
    assert resp.status == 200
    line = resp.fp.readline()
    while not line.startswith(b"data: "):
        line = resp.fp.readline()
    assert json.loads(line[6:])["meter_cents"] == 10000
    conn.close()
    # a guesser: 20 wrong tokens from one address, then that address waits (429), whatever it sends
    api_token = webauth.create(keys, "cms")
    assert web.get("/api/v1/pools", api_token)[0] == 200
    for i in range(20):
        assert web.get("/api/v1/pools", "tpw1_" + "%043d" % i)[0] == 401
    code, h, body = web.get("/api/v1/pools", api_token)
    assert code == 429 and h["retry-after"] == "60" and api_token not in body


def test_a_discontinued_pool_says_where_its_fund_went(floor):
    """Rulebook 000 rule 3.4: a discontinued jackpot's fund goes elsewhere; its sign says so instead
    of showing an empty meter, and the feed carries the transfer."""
    store, web, keys = floor
    from poolkit import admin
    _tokens(store, "T1", 1, 4)
    make_pool(store, name="stud", members=(("S1", "caribbean_stud"),))
    admin(store, "service", "floor", {"enter": True})
    admin(store, "transfer", "floor", {"to": "stud", "reason": "the game is withdrawn with the Director's leave"})
    token = webauth.create(keys, "cms")

    def closed():
        body = web.get("/sign/floor")[2]
        return body if "id=closed" in body else None
    body = _wait(closed)
    moved = SEED + 4 * 70 + 4 * 5
    assert "went to pool stud" in body and 'data-cents="%d"' % moved in body
    p = web.json("/api/v1/pools/floor", token)["pool"]
    assert p["discontinued"]["to_pool"] == "stud" and p["meter_cents"] == 0
    events = web.json("/api/v1/events?after=0&limit=1000", token)["events"]
    out = [e for e in events if e["event"] == "fund_transferred_out"][0]
    into = [e for e in events if e["event"] == "fund_transferred_in"][0]
    assert out["pool"] == "floor" and out["data"]["to_pool"] == "stud" and out["data"]["amount_cents"] == moved
    assert into["pool"] == "stud" and into["data"]["from_pool"] == "floor"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def _web_pki(folder):
    """A casino's own CA and, signed by it, a certificate for the web service at 127.0.0.1."""
    import datetime
    import ipaddress
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    now = datetime.datetime.now(datetime.timezone.utc)

    def name(cn):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("floor test CA")).issuer_name(name("floor test CA"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(name("pool web")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False).sign(ca_key, hashes.SHA256()))
    os.makedirs(folder, exist_ok=True)
    paths = {n: os.path.join(folder, n) for n in ("ca.pem", "web.pem", "web.key")}
    with open(paths["ca.pem"], "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths["web.pem"], "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(os.open(paths["web.key"], os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return paths


def test_web_over_tls_with_the_casinos_certificate(pg_url, pool_keys, tmp_path):  # noqa: F811
    """--tls-cert/--tls-key: HTTPS, checked against the CA that signed the certificate; the
    sign-in cookie is Secure; a missing or mismatched file is named before anything starts."""
    import ssl
    store = PoolStore(pg_url, pool_keys)
    make_pool(store, members=(("T1", "caribbean_draw"),))
    pki = _web_pki(str(tmp_path / "pki"))
    log = str(tmp_path / "web-tls.log")
    proc, _ = procs.start(["pool", "web", "--db", pg_url, "--keys", pool_keys, "--listen", "127.0.0.1:0",
                           "--tls-cert", pki["web.pem"], "--tls-key", pki["web.key"]], log)
    try:
        line = proc.stdout.readline()
        assert line.startswith("web https://127.0.0.1:"), (line, open(log).read())
        base = line.split()[1].rstrip("/")
        ctx = ssl.create_default_context(cafile=pki["ca.pem"])
        token = webauth.create(pool_keys, "cms")
        req = urllib.request.Request(base + "/api/v1/pools", headers={"Authorization": "Bearer " + token})
        with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
            assert r.status == 200 and json.loads(r.read())["pools"][0]["name"] == "floor"
        with urllib.request.urlopen(base + "/sign/floor", timeout=10, context=ctx) as r:
            assert r.status == 200 and b"floor progressive" in r.read()
        # without the CA the certificate is not trusted
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            urllib.request.urlopen(base + "/", timeout=10, context=ssl.create_default_context())
        # plain HTTP on the TLS port gets no page
        with pytest.raises(Exception):
            urllib.request.urlopen(base.replace("https://", "http://") + "/sign/floor", timeout=5).read()

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *a, **k):
                return None
        opener = urllib.request.build_opener(NoRedirect, urllib.request.HTTPSHandler(context=ctx))
        signin = urllib.request.Request(base + "/login", data=("token=" + token).encode(), method="POST",
                                        headers={"Content-Type": "application/x-www-form-urlencoded"})
        with pytest.raises(urllib.error.HTTPError) as got:
            opener.open(signin, timeout=10)
        assert got.value.code == 303 and "; Secure" in got.value.headers["Set-Cookie"].replace("; secure", "; Secure")
    finally:
        procs.stop(proc)
        store.close()
    for extra, says in ((["--tls-cert", pki["web.pem"]], "give --tls-cert and --tls-key together"),
                        (["--tls-cert", pki["web.pem"], "--tls-key", str(tmp_path / "none.key")],
                         "--tls-key %s: no such file" % (tmp_path / "none.key")),
                        (["--tls-cert", pki["ca.pem"], "--tls-key", pki["web.key"]], "cannot be loaded")):
        out = subprocess.run(procs.TABLECTL + ["pool", "web", "--db", pg_url, "--keys", pool_keys, "--listen",
                                               "127.0.0.1:0"] + extra, capture_output=True, text=True, timeout=60)
        assert out.returncode == 1 and says in out.stderr and "Traceback" not in out.stderr, out.stderr
