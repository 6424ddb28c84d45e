"""Flash wear of the meter store: bytes written per token (measured on MicroPython with the real
journal) and the years of flash life that gives at the maximum coin rate.

Assumptions, stated so they can be checked: Pico flash W25Q16JV, 100,000 erase cycles per 4 KiB
sector (Winbond datasheet); the littlefs partition MicroPython's rp2 port gives (1.4 MiB = 352
sectors), wear-levelled by littlefs; a 2x allowance for littlefs metadata commits.
Maximum coin rate: seven acceptors each taking a token every 0.5 s without pause (a CH-926 at its
fastest; a real table plays one token per seat per round)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from conftest import run_micropython  # noqa: E402
from _common import machine_note, table, write_section  # noqa: E402

SECTORS = 352
SECTOR_BYTES = 4096
ERASE_CYCLES = 100000
METADATA_FACTOR = 2
SECONDS_PER_YEAR = 365 * 24 * 3600


def main():
    proc = run_micropython(os.path.join(HERE, "mp_flash_wear.py"), cwd=os.path.join(ROOT, "tests", "firmware"))
    coins, written, writes = (int(x) for x in proc.stdout.split())
    per_coin = written / coins
    budget = SECTORS * SECTOR_BYTES * ERASE_CYCLES
    rows = []
    for label, coins_per_s in (("maximum: 7 acceptors, a token every 0.5 s each", 14.0),
                               ("busy table: 7 tokens a round, 60 rounds an hour", 7 * 60 / 3600.0)):
        per_year = per_coin * METADATA_FACTOR * coins_per_s * SECONDS_PER_YEAR
        rows.append((label, per_year, budget / per_year))
    print("measured: %d tokens, %d bytes in %d flash writes: %.0f bytes per token" % (coins, written, writes, per_coin))
    for label, per_year, years in rows:
        print("%-50s %8.1f GB/year  flash life %.1f years" % (label, per_year / 1e9, years))
    if "--no-write" not in sys.argv:
        body = ("Command: `.venv/bin/python benchmarks/bench_flash_wear.py` (%s). The real journal on MicroPython: "
                "%d tokens credited, %d bytes in %d flash writes: **%.0f bytes written per token** (events, "
                "compaction and checkpoints included). With a %dx allowance for littlefs metadata, over the rp2 "
                "port's littlefs partition (%d sectors x %d erase cycles, W25Q16JV datasheet):\n\n"
                % (machine_note(), coins, written, writes, per_coin, METADATA_FACTOR, SECTORS, ERASE_CYCLES)
                + table([(label, "%.1f GB" % (per_year / 1e9), "%.1f years" % years) for label, per_year, years in rows],
                        ("coin rate", "written per year", "flash life")) + "\n")
        write_section("flash_wear", "Flash wear", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
