"""The wear budget (table/app.py WEAR_BUDGET_SLOTS) against signals an outsider can repeat for
as long as they like, on MicroPython with the journal on the raw log.

Flash life on the Pico (docs/BENCHMARKS.md, pico_rawwear) is journal slots a second: tokens at
the acceptors' top rate and the dealer's rounds take 18.4 of the 19.96 that 10 years allow. A
noise injector on the acceptor lines, a line held and let go again and again, or tokens pushed
through inhibited acceptors during a fault each made several FULL records (six to eight slots)
a second a seat before. Each test runs an attack for two emulated minutes with a host
acknowledging everything, and holds the slots the journal wrote to the budget: 512 at once and
one a second, whatever the attack; what was held back reaches the host as a count."""
import mptest
from table import app as app_mod
from mp_test_rawjournal import RawRig

ATTACK_MS = 120000


def _rig(name):
    rig = RawRig(name)
    rig.sectors = 64
    rig.boot()
    rig.run_ms(10)
    return rig


def _budget_bound(ms):
    # the burst, one a refill, and an ACK record the host's acknowledgements write every 64 events
    return app_mod.WEAR_BUDGET_SLOTS + ms // app_mod.WEAR_REFILL_MS + 8


def _slots(j):
    return j.bytes_written // 16


def _run_attack(rig, each_400_ms):
    j = rig.app.journal
    slots0 = _slots(j)
    meter = rig.app.state["meter"]
    start_ms = rig.board.now_ms()
    t = 0
    while t < ATTACK_MS:
        each_400_ms(t)
        rig.run_ms(400, 4)
        rig.ack_all()
        t += 400
    rig.run_ms(100)
    rig.ack_all()
    spent = _slots(j) - slots0
    bound = _budget_bound(rig.board.now_ms() - start_ms)
    assert spent <= bound, (spent, bound)
    assert rig.app.state["meter"] == meter
    return spent


def _held_back(rig):
    return sum(e.get("suppressed", 0) for e in rig.events) + rig.app.suppressed


def test_glitches_and_out_of_spec_pulses_on_every_line_cost_at_most_the_budget():
    rig = _rig("wearnoise")

    def noise(t):
        edges = []
        for seat in range(7):
            edges += [(seat, 1, 0), (seat, 0, 3), (seat, 1, 100), (seat, 0, 300)]  # 3 ms glitch, 200 ms out of spec
        rig.board.feed_edges(edges)
    _run_attack(rig, noise)
    assert rig.kinds("glitch") and rig.kinds("out_of_spec")
    assert _held_back(rig) > 0


def test_a_line_held_and_let_go_again_and_again_costs_at_most_the_budget():
    rig = _rig("wearjam")
    held = [False]

    def jam(t):
        # 2.4 s held (past jam_ms, 2 s), 0.4 s let go: a jam and its clearing each cycle, every seat
        phase = t % 2800
        if phase == 0:
            rig.board.feed_edges([(seat, 1, 0) for seat in range(7)])
        elif phase == 2400:
            rig.board.feed_edges([(seat, 0, 0) for seat in range(7)])
    _run_attack(rig, jam)
    assert rig.kinds("jam") and rig.kinds("jam_cleared")
    assert _held_back(rig) > 0


def test_tokens_pushed_through_inhibited_acceptors_during_a_fault_cost_at_most_the_budget():
    # A fault that lasts (here the configuration's, as a bad config would raise): every token on
    # every seat is refused, and journaled as refused while the budget lasts, then counted.
    rig = _rig("wearrefused")
    rig.app.set_fault("config", "test: a fault that lasts", rig.board.now_ms())

    def tokens(t):
        edges = []
        for seat in range(7):
            edges += [(seat, 1, 0), (seat, 0, 50)]
        rig.board.feed_edges(edges)
    _run_attack(rig, tokens)
    assert rig.kinds("refused_coin")
    assert _held_back(rig) > 0


def test_tokens_keys_and_faults_never_wait_on_the_budget():
    # With the budget spent by a chattering spot, a token is credited and journaled, and the
    # dealer's lock takes effect: money and state changes are not the budget's to hold.
    rig = _rig("wearexempt")
    on = False
    while rig.app.wear_budget > 0:
        on = not on
        rig.board.spots = 1 if on else 0
        rig.run_ms(40, 4)
        rig.ack_all()
    meter = rig.app.state["meter"]
    rig.coin(3)
    rig.run_ms(400, 4)
    assert rig.app.state["meter"] > meter and rig.app.state["t3"] == 1
    rig.app.key_pressed(rig.board.now_ms(), "lock")
    rig.run_ms(50)
    assert rig.app.state["base"] == "LOCKED"
    assert rig.kinds("coin") and [e for e in rig.events if e.get("reason") == "lock"]


def test_a_chattering_key_and_the_service_key_with_the_switch_off_cost_at_most_the_budget():
    # The table locked: the lock key's contact chatters (a key event each time, no action), and
    # the service key is pressed again and again with the key switch off (refused each time).
    rig = _rig("wearkeys")
    rig.app.key_pressed(rig.board.now_ms(), "lock")
    rig.run_ms(50)
    assert rig.app.state["base"] == "LOCKED"

    def mash(t):
        for _ in range(5):  # 40 ms a press: pressed 40, released 40 (the attack's 400 ms)
            rig.board.keys = 1 << (0 if t % 800 else 3)
            rig.run_ms(40, 4)
            rig.board.keys = 0
            rig.run_ms(40, 4)
    _run_attack(rig, mash)
    assert rig.kinds("key") and rig.kinds("service_refused")
    assert _held_back(rig) > 0
    assert rig.app.state["base"] == "LOCKED"


def test_a_host_that_comes_and_goes_costs_at_most_the_budget():
    # Silent past host_timeout_ms, then heard again, over and over (a cable pulled and put back):
    # a host fault and its clearing each time, within the budget.
    rig = RawRig("wearhost")
    rig.sectors = 64
    rig.boot({"heartbeat_ms": 100, "host_timeout_ms": 200})
    rig.run_ms(10)
    j = rig.app.journal
    slots0 = _slots(j)
    start_ms = rig.board.now_ms()
    t = 0
    while t < ATTACK_MS:
        rig.run_ms(300, 4)  # silent: the fault
        rig.ack_all()        # heard: cleared
        rig.run_ms(10, 2)
        t += 310
    spent = _slots(j) - slots0
    bound = _budget_bound(rig.board.now_ms() - start_ms)
    assert spent <= bound, (spent, bound)
    assert [e for e in rig.events if e["k"] == "fault" and e["code"] == "host"]
    assert _held_back(rig) > 0


if __name__ == "__main__":
    mptest.run(globals())
