"""The sign and the floor page in a real browser (Debian's chromium, driven by Playwright) against a
real floor: its own PostgreSQL, `tablectl pool serve`, three virtual tables with their services,
and `tablectl pool web`. The figures on the pages are checked against the pool's books after
tokens, after a hit (held on the sign, then the meter from its reset) and while the books cannot be
read (POOL OFF, figures marked stale), and after they return.

Screenshots go to $POOL_WEB_SHOTS (docs/img when made for docs/POOL.md), else the test's folder."""
import os
import signal
import shutil
import tempfile
import time

import pytest

from tabledev import procs
from tabledev.floor import Floor
from tablectl.pool import webauth

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
SEED = 1000000

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed "
                                                                      "(make setup installs it as root)")


@pytest.fixture
def floor():
    folder = tempfile.mkdtemp(prefix="webfloor-")
    os.chmod(folder, 0o755)
    f = Floor(os.path.join(folder, "floor"), params={"seed_cents": SEED, "increment_cents": 70}, lost_s=3.0)
    try:
        f.start()
        yield f
    finally:
        f.stop()
        if f.pg is not None:
            f.pg.remove()
        shutil.rmtree(folder, ignore_errors=True)


def _cents(page, selector):
    return int(page.get_attribute(selector, "data-cents"))


def test_sign_and_floor_page_show_the_books_in_chromium(floor, tmp_path):
    from playwright.sync_api import sync_playwright
    shots = os.environ.get("POOL_WEB_SHOTS") or str(tmp_path)
    os.makedirs(shots, exist_ok=True)
    token = webauth.create(floor.keys, "manager")
    web, _ = procs.start(["pool", "web", "--db", floor.db_url, "--keys", floor.keys, "--listen", "127.0.0.1:0",
                          "--hold-s", "4", "--quiet-s", "600", "--lost-s", "3"], str(tmp_path / "web.log"))
    try:
        line = web.stdout.readline()
        assert line.startswith("web http://127.0.0.1:"), (line, open(tmp_path / "web.log").read())
        base = line.split()[1].rstrip("/")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS,
                                         chromium_sandbox=False, headless=True)
            try:
                _sign(floor, browser, base, shots)
                _floor_page(floor, browser, base, token, shots)
            finally:
                browser.close()
    finally:
        procs.stop(web)
    log = open(tmp_path / "web.log").read()
    assert token not in log


def _sign(floor, browser, base, shots):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(base + "/sign/floor")
    assert _cents(page, "#meter") == floor.status()["meter_cents"] == SEED
    page.wait_for_selector("body[data-updated]")  # the push stream is open
    # tokens at the three tables: the page's meter follows the books, pushed (no reload)
    benches = {b: floor.bench(b) for b, _ in floor.tables}
    try:
        benches["cd-1"].coins({0: 1, 1: 1, 2: 1})
        benches["cd-2"].coins({0: 1, 3: 1})
        benches["stud-1"].coins({5: 1})
        st = floor.wait_tokens(6)
        page.wait_for_function("c => document.querySelector('#meter').dataset.cents == String(c)",
                               arg=st["meter_cents"], timeout=5000)
        assert _cents(page, "#meter") == SEED + 6 * 70 == floor.status()["meter_cents"]
        assert page.inner_text("#meter") == "$10,004.20"
        states = {li.get_attribute("data-table"): li.get_attribute("data-state")
                  for li in page.query_selector_all("li.table")}
        assert states == {"cd-1": "open", "cd-2": "open", "stud-1": "open"}
        page.screenshot(path=os.path.join(shots, "pool-sign.png"))
        # a royal at cd-1: the dealer's jackpot key, then the hand declared through the table's service
        benches["cd-1"].key("lock")
        benches["cd-1"].key("jackpot")
        sock = floor.control("cd-1")
        try:
            reply = Floor.ask(sock, {"op": "pool_hit", "board": "cd-1", "seat": 2, "cards": "As Ks Qs Js Ts"})
        finally:
            sock.close()
        hit = reply["hit"]
        page.wait_for_selector("#hit", timeout=3000)
        assert int(page.get_attribute("#hit", "data-lock")) == hit["lock_no"] == 1
        assert _cents(page, "#hit") == hit["amount_cents"] == SEED + 6 * 70
        # seats from 1 on the page, as the CLI shows them (the books count from 0)
        assert "table cd-1 · seat %d · round %d" % (hit["seat"] + 1, hit["round"]) in page.inner_text("#hit")
        page.screenshot(path=os.path.join(shots, "pool-sign-hit.png"))
        # held for --hold-s, then the meter from its reset, as the books hold it
        page.wait_for_selector("#meter", timeout=10000)
        assert _cents(page, "#meter") == floor.status()["meter_cents"] == SEED
        # the books go away: the page stays, marked POOL OFF with the figures as of the last read
        floor.pg.stop()
        page.wait_for_selector("#stale", timeout=10000)
        assert "POOL OFF" in page.inner_text("#stale")
        assert _cents(page, "#meter") == SEED
        assert {li.get_attribute("data-state") for li in page.query_selector_all("li.table")} == {"pool_off"}
        page.screenshot(path=os.path.join(shots, "pool-sign-off.png"))
        floor.pg.start()
        page.wait_for_selector("#stale", state="detached", timeout=15000)
        benches["cd-2"].coins({1: 1})
        st = floor.wait_tokens(7)
        page.wait_for_function("c => document.querySelector('#meter').dataset.cents == String(c)",
                               arg=st["meter_cents"], timeout=5000)
    finally:
        for b in benches.values():
            b.close()
        page.close()


def _floor_page(floor, browser, base, token, shots):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = ctx.new_page()
    resp = page.goto(base + "/floor")
    assert resp.status == 401
    page.fill("#token", "tpw1_" + "x" * 43)
    page.click("#signin")
    assert "not valid" in page.inner_text("#login-error")
    page.fill("#token", token)
    page.click("#signin")
    page.wait_for_selector("#pools")
    st = floor.status()
    assert _cents(page, 'tr[data-pool="floor"] td[data-cents]') == st["meter_cents"]
    row = page.inner_text('#hits tr[data-lock="1"]')
    assert "cd-1" in row and "royal flush" in row and "$10,004.20" in row
    # the board paid the lock (its signed award went back to the pool)
    page.wait_for_selector('#hits tr[data-lock="1"][data-state="paid"]', timeout=10000)
    assert {r.get_attribute("data-table") for r in page.query_selector_all("#tables tr[data-table]")} == \
        {"cd-1", "cd-2", "stud-1"}
    with page.expect_download() as dl:
        page.click("#csv")
    text = open(dl.value.path()).read()
    assert "pool,floor,,,7,%d.%02d,%d.%02d" % (divmod(7 * 70, 100) + divmod(st["meter_cents"], 100)) in text
    # stud-1's service stopped as an operator stops it; cd-2's killed: closed (information) and,
    # after the lost window, link lost (an alarm), pushed to the open page
    procs.stop(floor.serves["stud-1"], signal.SIGTERM)
    page.wait_for_selector('#tables tr[data-table="stud-1"][data-state="closed"]', timeout=15000)
    assert "stud-1" in page.inner_text('#alarms li.info[data-kind="closed"]')
    os.killpg(floor.serves["cd-2"].pid, signal.SIGKILL)
    floor.serves["cd-2"].wait()
    page.wait_for_selector('#tables tr[data-table="cd-2"][data-state="link_lost"]', timeout=20000)
    assert "table cd-2 (pool floor) link lost" in page.inner_text('#alarms li.alarm[data-kind="link_lost"]')
    assert page.query_selector('#tables tr[data-table="cd-1"][data-state="open"]') is not None
    page.screenshot(path=os.path.join(shots, "pool-floor.png"), full_page=True)
    ctx.close()
    time.sleep(0)
