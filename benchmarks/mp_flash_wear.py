"""Flash bytes written per credited token, on MicroPython (run by benchmarks/bench_flash_wear.py).
Rounds of seven tokens, lock, unlock, host acks: the journal, its compactions and checkpoints."""
from simkit import Rig

ROUNDS = 40
rig = Rig("wear")
journal = rig.app.journal
bytes0 = journal.bytes_written
writes0 = journal.writes
for _ in range(ROUNDS):
    for seat in range(7):
        rig.coin(seat)
    rig.run_ms(900)
    rig.ack_all()
    rig.press(0)
    rig.press(1)
    rig.ack_all()
    rig.run_ms(20)
coins = len(rig.kinds("coin"))
print("%d %d %d" % (coins, journal.bytes_written - bytes0, journal.writes - writes0))
