"""Check the full Caribbean Draw enumeration against two independent counts (docs/PAR.md).

    .venv/bin/python benchmarks/check_cdraw.py [--hands 8] [--removed 6] [--seed 3]

One full run (about 3 minutes) reports, besides the sheet:
  - every option of some player hands, which are then priced again one hand at a time by the
    kernel's second method (cdraw_hand: no hand classes, no seven-card subset counts);
  - the flush corrections it read for some (final five, discards) sets, which are then counted
    again with brute force over every dealer path (cdraw_dealer_brute) minus the blind part.
Prints each comparison and exits 1 on any difference. The tests run restricted versions of
both (tests/host/test_par_cdraw.py); this is the whole thing.
"""
import argparse
import os
import random
import sys
import time


from tablegames.par import cards as C  # noqa: E402
from tablegames.par import cdraw, kernel  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=8)
    ap.add_argument("--removed", type=int, default=6)
    ap.add_argument("--rng-seed", dest="seed", type=int, default=3)
    args = ap.parse_args(argv)
    k = kernel.kernel()
    q = cdraw.qualify_rank()
    rng = random.Random(args.seed)
    hands = [C.cards(t) for t in ["Ah Kh Qh Jh 3c", "9s 9h 5d 3c 2h", "As Ad Ah Ks Kd", "7s 8s 9s Ts 2d"]]
    hands += [rng.sample(range(52), 5) for _ in range(max(0, args.hands - len(hands)))]
    debug = []
    for _ in range(args.removed):
        cs = rng.sample(range(52), 7)
        nd = rng.choice([0, 1, 2, 2])
        d = sorted(cs[5:5 + nd]) + [0, 0]
        debug.append((tuple(cs[:5]), nd, (d[0], d[1])))
    t = time.perf_counter()
    res = cdraw.enumerate_draw(progress=False, debug=debug, focus=hands)
    print("full enumeration: %.1f s, house edge %.4f %%" % (
        time.perf_counter() - t, 100 * float(cdraw.sheet(result=res).house_edge)), flush=True)
    bad = 0
    for h, opts in zip(hands, res["focus"]):
        direct = {r[0]: r[1:5] for r in k.cdraw_hand(q, tuple(h))}
        same = all(tuple(direct[o[0]][:3]) == tuple(o[1:4]) and list(direct[o[0]][3]) == list(o[4]) for o in opts)
        bad += not same
        print("hand %-16s 16 options, full enumeration %s one-hand method" % (
            " ".join(C.name(c) for c in h), "==" if same else "!="), flush=True)
    for (f, nd, d), (found, *corr) in zip(debug, res["debug"]):
        removed = list(f) + list(d[:nd])
        x = k.rank5(*f)[0]
        blind, _ = k.cdraw_dealer_split(removed, x, q, -1)
        brute = k.cdraw_dealer_brute(removed, x, q)
        want = tuple(b - bl for b, bl in zip(brute, blind))
        same = found and tuple(corr) == want
        bad += not same
        print("final %-16s discards %-6s corrections (nq, below, equal) %s brute force" % (
            " ".join(C.name(c) for c in f), " ".join(C.name(c) for c in d[:nd]) or "-", "==" if same else "!="),
            flush=True)
    print("all agree" if not bad else "%d DIFFERENCES" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
