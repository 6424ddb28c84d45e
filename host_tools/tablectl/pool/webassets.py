"""The web service's static files, kept in the package as text (served at /static/...): one style
sheet and one script, no inline script or style anywhere (the pages' Content-Security-Policy
allows only these)."""

CSS = """
* { box-sizing: border-box; }
body { margin: 0; font-family: "DejaVu Sans", Arial, sans-serif; background: #0b1020; color: #e8ecf4; }
a { color: #9cc3ff; }
.offline-banner { display: none; background: #b3261e; color: #fff; padding: .5em 1em; font-weight: bold; }
body.offline .offline-banner { display: block; }
.stale { background: #8a5a00; color: #fff; padding: .5em 1em; font-weight: bold; }
/* the sign: a floor screen in kiosk mode */
.sign { min-height: 100vh; display: flex; flex-direction: column; align-items: center; justify-content: center;
        text-align: center; padding: 2vh 2vw; }
.sign .title { font-size: 5vw; letter-spacing: .15em; color: #ffd54a; text-transform: uppercase; }
.sign .meter { font-size: 14vw; font-weight: bold; font-variant-numeric: tabular-nums; color: #fff;
               text-shadow: 0 0 2vw #ff8f00; line-height: 1.1; }
.sign .hit { border: .6vw solid #ffd54a; border-radius: 2vw; padding: 2vh 4vw; background: #3a0d0d; }
.sign .hit .what { font-size: 6vw; color: #ffd54a; font-weight: bold; }
.sign .hit .amount { font-size: 11vw; font-weight: bold; font-variant-numeric: tabular-nums; }
.sign .hit .where { font-size: 3vw; }
.sign .tables { list-style: none; padding: 0; margin-top: 3vh; display: flex; flex-wrap: wrap; gap: 1vw;
                justify-content: center; }
.sign .tables li { font-size: 2vw; padding: .4vw 1vw; border-radius: .6vw; background: #1d2a4a; }
.state-open { color: #7CFC9A; }
.state-jackpot_pending { color: #ffd54a; font-weight: bold; }
.state-not_heard, .state-pool_off, .state-link_lost { color: #ff6b6b; font-weight: bold; }
.state-inactive, .state-closed { color: #9aa4b8; }
/* the floor manager's page */
.floor { padding: 1em 2em; }
.floor h1 { font-size: 1.6em; margin: .2em 0; }
.floor h2 { font-size: 1.2em; margin: 1.2em 0 .4em; color: #ffd54a; }
.floor table { border-collapse: collapse; width: 100%; font-size: .9em; }
.floor th, .floor td { border-bottom: 1px solid #2c3a5e; padding: .3em .5em; text-align: left; }
.floor td.money, .floor th.money { text-align: right; font-variant-numeric: tabular-nums; }
.alarms li { color: #ff6b6b; font-weight: bold; }
.alarms li.info { color: #9cc3ff; font-weight: normal; }
.login { max-width: 28em; margin: 15vh auto; padding: 2em; background: #16213d; border-radius: 1em; }
.login input[type=password] { width: 100%; padding: .5em; font-size: 1em; }
.login button { margin-top: 1em; padding: .5em 2em; font-size: 1em; }
.error { color: #ff6b6b; }
.userbar { float: right; }
.userbar form { display: inline; }
"""

# One script for the sign and the floor page: the server renders every figure (escaped) and pushes
# the rendered part of the page by server-sent events; this only puts it in place, and marks the
# page offline while the connection is down (EventSource reconnects by itself).
JS = """
(function () {
  var live = document.getElementById('live');
  if (!live || !window.EventSource) { return; }
  var asof = document.getElementById('asof');
  var es = new EventSource(live.getAttribute('data-events'));
  es.addEventListener('state', function (e) {
    var d = JSON.parse(e.data);
    live.innerHTML = d.html;
    if (asof) { asof.textContent = d.as_of; }
    document.body.classList.remove('offline');
    document.body.setAttribute('data-updated', String(Date.now()));
  });
  es.addEventListener('gone', function () { es.close(); document.body.classList.add('offline'); });
  es.onerror = function () { document.body.classList.add('offline'); };
  es.onopen = function () { document.body.classList.remove('offline'); };
})();
"""
