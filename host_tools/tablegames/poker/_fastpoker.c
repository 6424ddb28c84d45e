/* _fastpoker: the C core of tablectl.poker. Dense hand values for 3-, 4-, 5-, 6- and 7-card hands,
 * batch evaluation over arrays and exhaustive enumeration (values or histograms) of every
 * combination of a deck, threaded, with the GIL released.
 *
 * Card c = 4*rank + suit (rank 0..12 = deuce..ace, suit 0..3 = c d h s), as in tablectl.poker.cards.
 * Values and their order are defined by tablectl/poker/hands.py; the tests check that this file
 * builds exactly the same classes.
 *
 * How one hand is evaluated (the idea of additive rank keys with a perfect hash is an old one,
 * used by several public evaluators; the keys and tables here are computed by this project):
 *  - every card has a 64-bit key: its rank key RK[rank] in the low 32 bits (RK chosen so that the
 *    sum over any multiset of at most 7 ranks, at most 4 of each, is unique) plus a 4-bit suit
 *    counter in bits 32..47. The counters start at (8 - k) so bit 3 of a nibble lights when a suit
 *    holds k cards (k = 5 for five-card poker, 4 or 3 for the small kinds): a flush test is one AND.
 *    The other 64 bits hold one bit per card (16*suit + rank), added as well: the suit's ranks
 *    for a flush, and n set bits exactly when the n cards are distinct (a repeat carries).
 *    Key and bits are one 128-bit vector per card (CARDV), so adding a card is one vector add.
 *  - no flush: the rank-key sum is mapped by a perfect hash (row displacement: OFF, VAL)
 *    straight to the value of the best hand of that rank multiset, precomputed at import.
 *  - flush: the 13-bit rank mask of the flush suit indexes FL, the best flush / straight flush.
 * A hand is one vector add per card, one test and two loads from tables that fit in L2
 * (OMPEval, zekyll/OMPEval, popularised this layout; benchmarks/bench_eval.py runs it beside this
 * core). Enumeration keeps the partial sum of the outer cards, so each hand costs one add.
 * Batches go through one of several loops (LOOPS: one row a step; 5- to 7-card rows four at a
 * time with AVX2, rows_avx2, or eight with AVX-512 VBMI and IFMA, rows_vbmi, the keys summed in
 * registers). tablegames.poker times every loop the CPU runs on first use and sets the fastest for
 * each row size (tablegames/poker/loops.py); TABLEGAMES_FASTPOKER_LOOP=<name> forces one, and
 * tests/host/test_poker_loops.py checks each against rank_all.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rank keys: every sum over a multiset of at most 7 ranks (at most 4 of each) is unique, across
 * all sizes. RK[0..11] come from a greedy search (each the smallest value keeping the sums
 * unique); RK[12] is one more than the largest sum of 7 of the lower ranks (4*RK[11] + 3*RK[10]),
 * which makes it unique by construction. tests/host/test_poker_eval.py re-checks uniqueness. */
static const uint32_t RK[13] = {1, 5, 24, 112, 521, 2247, 9244, 30823, 103066, 250154, 667453,
                                1526359, 8107796};

/* Rank-key sums of 3 to 7 cards are below 2^26. Row displacement: the low ROW_BITS bits of a
 * sum pick its row, the rest is its column, and every row has an offset chosen when the tables
 * are built so that no two sums that occur land on one slot: slot = (sum >> ROW_BITS) +
 * OFF[sum & (NROWS - 1)], a perfect hash of one shift, one AND, one load and one add. Rows by
 * low bits (not high) spread every row's sums thinly over the whole range, so the rows
 * interleave well and the table stays small. */
#define ROW_BITS 13
#define NROWS (1u << ROW_BITS)
/* A bad batch row (a card twice, a byte over 51) is still looked up before the batch is refused:
 * its sum is no multiset's, up to 7 times the top rank key (below 2^26), so its slot can lie past
 * the last one in use by up to one row's width. The tables are that much longer, zero-filled. */
#define BAD_ROW_SLACK(row_bits) ((1u << (26 - (row_bits))) + 1)

static uint64_t CK[52];          /* rank key + suit counter increment */
static uint64_t CB[52];          /* 1 << (16*suit + rank): distinct bits, flush masks */
static uint32_t OFF[NROWS];      /* row -> offset (mod 2^32) */
static uint16_t *VAL;            /* slot -> value of that rank multiset (size 3, 4 or 5..7) */
static uint32_t NSLOTS;          /* slots in VAL */
static uint16_t FL[8192];        /* rank mask of one suit -> value (3, 4 or 5+ bits) */
static const int NVALUES[8] = {0, 0, 0, 741, 2535, 7462, 7462, 7462};

/* Five cards exactly (the commonest batch: a dealt hand) look up a table of their own. The shared
 * table above holds every rank multiset of 3 to 7 cards (about 210 KB with its offsets), so a
 * random five-card hand's lookup misses the first-level cache; the 6,175 five-card multisets alone
 * fit a row-displacement table of the same kind in about 28 KB (offsets 16-bit), which stays in it. */
#ifndef ROW5_BITS
#define ROW5_BITS 12
#endif
#if ROW5_BITS < 10
#error "ROW5_BITS below 10 makes five-card columns too wide for 16-bit offsets"
#endif
#define NROWS5 (1u << ROW5_BITS)
static uint16_t OFF5[NROWS5 + 2];   /* + 2: a 32-bit gather of the last offset reads one more */
static uint16_t *VAL5;           /* slot -> value of a five-card rank multiset */
static uint32_t NSLOTS5;

static inline uint64_t init_for(int kind) { return (uint64_t)((8 - kind) * 0x1111u) << 32; }

/* A five-card hand's value: the flush test as in lookup, then the five-card table. */
static inline uint16_t lookup5(uint64_t sum, uint64_t bits)
{
    uint64_t f = sum & (0x8888ull << 32);
    if (__builtin_expect(f != 0, 0))
        return FL[(bits >> ((__builtin_ctzll(f) - 35) * 4)) & 0x1fffu];
    uint32_t k = (uint32_t)sum;
    return VAL5[(k >> ROW5_BITS) + OFF5[k & (NROWS5 - 1)]];
}

static inline uint16_t lookup(uint64_t sum, uint64_t bits)
{
    uint64_t f = sum & (0x8888ull << 32);
    if (__builtin_expect(f != 0, 0))   /* the flush suit s lights bit 35 + 4s; its ranks are bits 16s.. */
        return FL[(bits >> ((__builtin_ctzll(f) - 35) * 4)) & 0x1fffu];
    uint32_t k = (uint32_t)sum;
    return VAL[(k >> ROW_BITS) + OFF[k & (NROWS - 1)]];
}

/* A hand as one 128-bit value {key sum, card bits}: adding a card is one vector add of CARDV[c].
 * The card bits are added too (not ORed): n distinct cards give n set bits, a repeated card
 * carries and leaves fewer, so popcount(bits) == n checks a whole row at once. Bytes 52..255
 * map to {0, 0}, which also leaves too few bits: no range test per card either. */
typedef uint64_t v2u __attribute__((vector_size(16)));
static v2u CARDV[256] __attribute__((aligned(64)));

static inline uint16_t lookup_v(v2u h) { return lookup(h[0], h[1]); }
static inline v2u hand0(int kind) { v2u h = {init_for(kind), 0}; return h; }
/* CARDV plus the empty hand of each kind: the first card of a batch row starts the sum */
static v2u FIRST[8][256] __attribute__((aligned(64)));
static void build_loops(void);

/* ---------------------------------------------------------------- table construction */

/* Long comparable key of one class: category << 24 | tie-break ranks, 4 bits each, left-aligned. */
static uint32_t class_long(int kind, const int *cnt, int flush)
{
    int order[7], no = 0, distinct = 0, shape[5] = {0}, ns = 0;
    for (int c = 4; c >= 1; c--)
        for (int r = 12; r >= 0; r--)
            if (cnt[r] == c) { order[no++] = r; shape[ns++] = c; }
    distinct = no;
    int top = -1;
    if (distinct == kind) {
        if (order[0] - order[kind - 1] == kind - 1) top = order[0];
        else if (order[0] == 12 && order[1] == kind - 2 && order[kind - 1] == 0) top = kind - 2;
    }
    int cat;
    /* category numbers follow the enums of hands.py */
    if (kind == 5) {
        if (top >= 0) cat = flush ? 8 : 4;
        else if (flush) cat = 5;
        else if (shape[0] == 4) cat = 7;
        else if (shape[0] == 3 && shape[1] == 2) cat = 6;
        else if (shape[0] == 3) cat = 3;
        else if (shape[0] == 2 && shape[1] == 2) cat = 2;
        else if (shape[0] == 2) cat = 1;
        else cat = 0;
    } else if (kind == 4) {
        if (top >= 0) cat = flush ? 6 : 4;
        else if (flush) cat = 3;
        else if (shape[0] == 4) cat = 7;
        else if (shape[0] == 3) cat = 5;
        else if (shape[0] == 2 && shape[1] == 2) cat = 2;
        else if (shape[0] == 2) cat = 1;
        else cat = 0;
    } else {
        if (top >= 0) cat = flush ? 5 : 3;
        else if (flush) cat = 2;
        else if (shape[0] == 3) cat = 4;
        else if (shape[0] == 2) cat = 1;
        else cat = 0;
    }
    uint32_t key = (uint32_t)cat << 24;
    if (top >= 0) return key | (uint32_t)top << 16;
    for (int i = 0; i < no; i++) key |= (uint32_t)order[i] << (16 - 4 * i);
    return key;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* sorted class keys per kind; dense value = 1 + index */
static uint32_t *CLS[6];
static int NCLS[6];

static int dense(int kind, uint32_t key)
{
    int lo = 0, hi = NCLS[kind] - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (CLS[kind][mid] == key) return mid + 1;
        if (CLS[kind][mid] < key) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

typedef struct { uint32_t key; uint8_t size; uint8_t cnt[13]; } Multiset;
static Multiset *MS;
static int NMS, CAPMS;

static void gen_ms(int r, int size, uint32_t key, uint8_t *cnt)
{
    if (r == 13) {
        if (NMS == CAPMS) { CAPMS = CAPMS ? CAPMS * 2 : 1024; MS = realloc(MS, CAPMS * sizeof *MS); }
        MS[NMS].key = key; MS[NMS].size = (uint8_t)size; memcpy(MS[NMS].cnt, cnt, 13); NMS++;
        return;
    }
    for (int c = 0; c <= 4 && size + c <= 7; c++) {
        cnt[r] = (uint8_t)c;
        gen_ms(r + 1, size + c, key + c * RK[r], cnt);
    }
    cnt[r] = 0;
}

static uint32_t slot_of(uint32_t k) { return (k >> ROW_BITS) + OFF[k & (NROWS - 1)]; }

static int build_classes(void)
{
    for (int kind = 3; kind <= 5; kind++) {
        int cap = 8192, n = 0;
        uint32_t *keys = malloc(cap * sizeof *keys);
        int cnt[13];
        /* non-flush multisets of `kind` ranks and flush sets of distinct ranks */
        for (int i = 0; i < NMS; i++) {
            if (MS[i].size != kind) continue;
            for (int r = 0; r < 13; r++) cnt[r] = MS[i].cnt[r];
            keys[n++] = class_long(kind, cnt, 0);
            int distinct = 1;
            for (int r = 0; r < 13; r++) if (cnt[r] > 1) distinct = 0;
            if (distinct) keys[n++] = class_long(kind, cnt, 1);
            if (n + 2 >= cap) { cap *= 2; keys = realloc(keys, cap * sizeof *keys); }
        }
        qsort(keys, n, sizeof *keys, cmp_u32);
        int u = 0;
        for (int i = 0; i < n; i++) if (u == 0 || keys[u - 1] != keys[i]) keys[u++] = keys[i];
        CLS[kind] = keys; NCLS[kind] = u;
        if (u != NVALUES[kind]) return -1;
    }
    return 0;
}

/* Row displacement: rows with the most sums first, each at the lowest start where its sums all
 * find free slots. occ has a bit per slot; 64 starts are tried at once (for each of the row's
 * sums, the 64 occupancy bits it would meet, ORed). */
static int cmp_row_desc(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;     /* (count, row) pairs */
    return x[0] != y[0] ? (x[0] < y[0] ? 1 : -1) : (x[1] > y[1]) - (x[1] < y[1]);
}

static int build_hash(void)
{
    uint32_t *cnt = calloc(NROWS, sizeof *cnt), *start = calloc(NROWS + 1, sizeof *start);
    uint32_t *cols = malloc(NMS * sizeof *cols), *fill = calloc(NROWS, sizeof *fill);
    uint32_t (*order)[2] = malloc(NROWS * sizeof *order);
    const uint32_t cap = 1u << 20;            /* slots we may use at most */
    uint64_t *occ = calloc(cap / 64 + 64, 8);
    if (!cnt || !start || !cols || !fill || !order || !occ) return -1;
    for (int i = 0; i < NMS; i++) if (MS[i].size >= 3) cnt[MS[i].key & (NROWS - 1)]++;
    for (uint32_t r = 0; r < NROWS; r++) start[r + 1] = start[r] + cnt[r];
    for (int i = 0; i < NMS; i++)
        if (MS[i].size >= 3) {
            uint32_t r = MS[i].key & (NROWS - 1);
            cols[start[r] + fill[r]++] = MS[i].key >> ROW_BITS;
        }
    uint32_t nr = 0;
    for (uint32_t r = 0; r < NROWS; r++) { order[nr][0] = cnt[r]; order[nr][1] = r; nr++; }
    qsort(order, nr, sizeof *order, cmp_row_desc);
    uint32_t top = 0;
    int ok = 1;
    for (uint32_t k = 0; k < nr && ok; k++) {
        uint32_t r = order[k][1], n = cnt[r], *cs = cols + start[r];
        if (n == 0) { OFF[r] = 0; continue; }   /* never looked up */
        uint32_t base = 0;
        for (uint32_t w0 = 0;; w0 += 64) {       /* bases w0 .. w0 + 63 at once */
            if (w0 + (1u << (26 - ROW_BITS)) + 64 >= cap) { ok = 0; break; }
            uint64_t blocked = 0;
            for (uint32_t j = 0; j < n && blocked != ~0ull; j++) {
                uint32_t at = w0 + cs[j], w = at >> 6, sh = at & 63;
                blocked |= occ[w] >> sh | (sh ? occ[w + 1] << (64 - sh) : 0);
            }
            if (blocked != ~0ull) { base = w0 + (uint32_t)__builtin_ctzll(~blocked); break; }
        }
        if (!ok) break;
        for (uint32_t j = 0; j < n; j++) {
            uint32_t sl = base + cs[j];
            if (occ[sl >> 6] >> (sl & 63) & 1) { ok = 0; break; }   /* two multisets, one key */
            occ[sl >> 6] |= 1ull << (sl & 63);
            if (sl + 1 > top) top = sl + 1;
        }
        OFF[r] = base;
    }
    free(cnt); free(start); free(cols); free(fill); free(order); free(occ);
    if (!ok) return -1;
    NSLOTS = top;
    VAL = calloc(NSLOTS + BAD_ROW_SLACK(ROW_BITS) + 1, sizeof *VAL);   /* + 1: a 32-bit gather's upper half */
    return VAL ? 0 : -1;
}

/* The offsets the search above finds depend only on RK and ROW_BITS, so they are the same on
 * every machine: _fastpoker_offsets.h carries them (written by gen_offsets.py). An import then
 * only checks them, every sum on a slot of its own, instead of searching (most of the time
 * `tablectl eval` took to answer: the cli_start record in docs/BENCHMARKS.md times both, its
 * "... offsets searched at import" row against `tablectl eval`'s). A header that does not fit
 * (RK or ROW_BITS changed since it was written) fails the check and the search runs as before;
 * TABLEGAMES_FASTPOKER_SEARCH=1 in the environment forces the search (gen_offsets.py uses it). */
#if defined(__has_include)
#if __has_include("_fastpoker_offsets.h")
#include "_fastpoker_offsets.h"
#define HAVE_PRE_OFF 1
#endif
#endif
static int PRECOMPUTED;          /* 1: the offsets came from the header and passed the check */

static int use_offsets(const uint32_t *pre)
{
    const uint32_t cap = 1u << 20;
    uint64_t *occ = calloc(cap / 64, 8);
    if (!occ) return -1;
    uint32_t top = 0;
    for (int i = 0; i < NMS; i++) {
        if (MS[i].size < 3) continue;
        uint32_t k = MS[i].key, sl = (k >> ROW_BITS) + pre[k & (NROWS - 1)];
        if (sl >= cap || (occ[sl >> 6] >> (sl & 63) & 1)) { free(occ); return -1; }
        occ[sl >> 6] |= 1ull << (sl & 63);
        if (sl + 1 > top) top = sl + 1;
    }
    free(occ);
    memcpy(OFF, pre, sizeof OFF);
    NSLOTS = top;
    VAL = calloc(NSLOTS + BAD_ROW_SLACK(ROW_BITS) + 1, sizeof *VAL);   /* + 1: a 32-bit gather's upper half */
    return VAL ? 0 : -1;
}

static int build_values(void)
{
    int cnt[13];
    for (int size = 3; size <= 7; size++) {
        for (int i = 0; i < NMS; i++) {
            if (MS[i].size != size) continue;
            uint16_t v;
            if (size <= 5) {
                for (int r = 0; r < 13; r++) cnt[r] = MS[i].cnt[r];
                int d = dense(size, class_long(size, cnt, 0));
                if (d < 0) return -1;
                v = (uint16_t)d;
            } else {           /* best five: the best multiset one card smaller */
                v = 0;
                for (int r = 0; r < 13; r++)
                    if (MS[i].cnt[r]) {
                        uint16_t w = VAL[slot_of(MS[i].key - RK[r])];
                        if (w > v) v = w;
                    }
            }
            VAL[slot_of(MS[i].key)] = v;
        }
    }
    for (int bitsn = 3; bitsn <= 13; bitsn++)
        for (uint32_t m = 0; m < 8192; m++) {
            if (__builtin_popcount(m) != bitsn) continue;
            if (bitsn <= 5) {
                for (int r = 0; r < 13; r++) cnt[r] = (m >> r) & 1;
                int d = dense(bitsn, class_long(bitsn, cnt, 1));
                if (d < 0) return -1;
                FL[m] = (uint16_t)d;
            } else {
                uint16_t v = 0;
                for (int r = 0; r < 13; r++)
                    if ((m >> r) & 1 && FL[m & ~(1u << r)] > v) v = FL[m & ~(1u << r)];
                FL[m] = v;
            }
        }
    return 0;
}

/* A table of one hand size: the same row displacement as build_hash, over that
 * size's multisets only, with 16-bit offsets, values copied from the shared table (so the two
 * cannot disagree). */
static int build_sized(int size, int row_bits, uint16_t *off, uint16_t **val, uint32_t *nslots)
{
    const uint32_t nrows = 1u << row_bits;
    uint32_t *cnt = calloc(nrows, sizeof *cnt), *start = calloc(nrows + 1, sizeof *start);
    uint32_t *cols = malloc(NMS * sizeof *cols), *fill = calloc(nrows, sizeof *fill);
    uint32_t (*order)[2] = malloc(nrows * sizeof *order);
    const uint32_t cap = 1u << 16;            /* 16-bit offsets */
    /* a base below cap plus a column (a key >> row_bits, below 2^26 >> 10) stays under 2 * cap */
    uint64_t *occ = calloc(2 * cap / 64 + 64, 8);
    int ok = row_bits >= 10 && cnt && start && cols && fill && order && occ;
    for (int i = 0; ok && i < NMS; i++) if (MS[i].size == size) cnt[MS[i].key & (nrows - 1)]++;
    for (uint32_t r = 0; ok && r < nrows; r++) start[r + 1] = start[r] + cnt[r];
    for (int i = 0; ok && i < NMS; i++)
        if (MS[i].size == size) {
            uint32_t r = MS[i].key & (nrows - 1);
            cols[start[r] + fill[r]++] = MS[i].key >> row_bits;
        }
    for (uint32_t r = 0; ok && r < nrows; r++) { order[r][0] = cnt[r]; order[r][1] = r; }
    if (ok) qsort(order, nrows, sizeof *order, cmp_row_desc);
    uint32_t top = 0;
    for (uint32_t k = 0; ok && k < nrows; k++) {
        uint32_t r = order[k][1], n = cnt[r], *cs = cols + start[r], base = 0;
        off[r] = 0;
        if (n == 0) continue;
        for (uint32_t w0 = 0;; w0 += 64) {
            if (w0 + 64 >= cap) { ok = 0; break; }
            uint64_t blocked = 0;
            for (uint32_t j = 0; j < n && blocked != ~0ull; j++) {
                uint32_t at = w0 + cs[j], w = at >> 6, sh = at & 63;
                blocked |= occ[w] >> sh | (sh ? occ[w + 1] << (64 - sh) : 0);
            }
            if (blocked != ~0ull) { base = w0 + (uint32_t)__builtin_ctzll(~blocked); break; }
        }
        for (uint32_t j = 0; ok && j < n; j++) {
            uint32_t sl = base + cs[j];
            if (occ[sl >> 6] >> (sl & 63) & 1) { ok = 0; break; }
            occ[sl >> 6] |= 1ull << (sl & 63);
            if (sl + 1 > top) top = sl + 1;
        }
        off[r] = (uint16_t)base;
    }
    free(cnt); free(start); free(cols); free(fill); free(order); free(occ);
    if (!ok) return -1;
    *nslots = top;
    *val = calloc(top + BAD_ROW_SLACK(row_bits) + 1, sizeof **val);   /* + 1: a 32-bit gather's upper half */
    if (!*val) return -1;
    for (int i = 0; i < NMS; i++)
        if (MS[i].size == size) {
            uint32_t k = MS[i].key;
            (*val)[(k >> row_bits) + off[k & (nrows - 1)]] = VAL[slot_of(k)];
        }
    return 0;
}

static int build_all(void)
{
    for (int c = 0; c < 52; c++) {
        CK[c] = RK[c >> 2] + (1ull << (32 + 4 * (c & 3)));
        CB[c] = 1ull << (16 * (c & 3) + (c >> 2));
        CARDV[c][0] = CK[c];
        CARDV[c][1] = CB[c];
    }
    for (int kind = 3; kind <= 5; kind++)
        for (int c = 0; c < 256; c++) FIRST[kind][c] = CARDV[c] + hand0(kind);
    build_loops();
    uint8_t cnt[13] = {0};
    gen_ms(0, 0, 0, cnt);
    if (build_classes()) return -1;
#ifdef HAVE_PRE_OFF
    const char *search = getenv("TABLEGAMES_FASTPOKER_SEARCH");
    if (!(search && *search) && use_offsets(PRE_OFF) == 0) PRECOMPUTED = 1;
#endif
    if (!PRECOMPUTED && build_hash()) return -1;
    if (build_values()) return -1;
    if (build_sized(5, ROW5_BITS, OFF5, &VAL5, &NSLOTS5)) return -1;
    return 0;
}

/* ---------------------------------------------------------------- threads */

static int ncpu(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

typedef void *(*worker_fn)(void *);

static void run_threads(int nthreads, worker_fn fn, void *args, size_t argsize)
{
    pthread_t th[64];
    if (nthreads > 64) nthreads = 64;
    int started = 0;
    for (int t = 1; t < nthreads; t++)
        if (pthread_create(&th[t], NULL, fn, (char *)args + t * argsize) == 0) started = t;
        else break;
    fn(args);
    for (int t = 1; t <= started; t++) pthread_join(th[t], NULL);
    /* a thread that failed to start leaves its share to be done here */
    for (int t = started + 1; t < nthreads; t++) fn((char *)args + t * argsize);
}

/* ---------------------------------------------------------------- batch evaluation */

typedef struct BatchJob BatchJob;
typedef unsigned (*rows_fn)(BatchJob *);
struct BatchJob {
    const uint8_t *cards; uint16_t *out; Py_ssize_t lo, hi; int n, kind;
    Py_ssize_t bad_row; int bad_why;   /* 1 card out of range, 2 duplicate */
    rows_fn fn;                        /* the batch loop (LOOPS) */
};

/* The first bad row of [lo, hi) and why, card by card: only run when the fast pass saw one. */
static void find_bad_row(BatchJob *j)
{
    for (Py_ssize_t i = j->lo; i < j->hi; i++) {
        const uint8_t *h = j->cards + i * j->n;
        uint64_t bits = 0;
        for (int k = 0; k < j->n; k++) {
            if (h[k] >= 52) { j->bad_row = i; j->bad_why = 1; return; }
            if (bits & CB[h[k]]) { j->bad_row = i; j->bad_why = 2; return; }
            bits |= CB[h[k]];
        }
    }
}

/* Rows are evaluated without a branch per card or per row; whether any row was bad is one sum
 * over the rows (a row never has more than n bits set), looked into afterwards (a bad row's value
 * is garbage but its table indexes stay in range, BAD_ROW_SLACK, so nothing is read out of bounds). */
#define BATCH_LOOP(N, POPSUM)                                                    \
    for (Py_ssize_t i = j->lo; i < j->hi; i++) {                                 \
        const uint8_t *h = j->cards + i * (N);                                   \
        v2u x = first[h[0]];                                                     \
        for (int k = 1; k < (N); k++) x += CARDV[h[k]];                          \
        POPSUM;                                                                  \
        out[i] = lookup_v(x);                                                    \
    }
/* Five cards (kind 5: kind_ok allows no other) look up the five-card table. */
#define BATCH_LOOP5(POPSUM)                                                      \
    for (Py_ssize_t i = j->lo; i < j->hi; i++) {                                 \
        const uint8_t *h = j->cards + i * 5;                                     \
        v2u x = first[h[0]] + CARDV[h[1]] + CARDV[h[2]] + CARDV[h[3]] + CARDV[h[4]]; \
        POPSUM;                                                                  \
        out[i] = lookup5(x[0], x[1]);                                            \
    }
#define BATCH_SWITCH(POPSUM)                                                     \
    switch (j->n) {                                                              \
    case 3: BATCH_LOOP(3, POPSUM) break;                                         \
    case 4: BATCH_LOOP(4, POPSUM) break;                                         \
    case 5: BATCH_LOOP5(POPSUM) break;                                           \
    case 6: BATCH_LOOP(6, POPSUM) break;                                         \
    case 7: BATCH_LOOP(7, POPSUM) break;                                         \
    }

static unsigned batch_rows_plain(BatchJob *j)
{
    uint16_t *out = j->out;
    const v2u *first = FIRST[j->kind];
    uint64_t bits = 0;   /* set bits over all rows: n per row exactly when every row is good */
    BATCH_SWITCH(bits += (uint64_t)__builtin_popcountll(x[1]))
    return bits != (uint64_t)(j->hi - j->lo) * (uint64_t)j->n;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* The same loop for CPUs with popcount instructions: the scalar one, or (AVX-512 VPOPCNTDQ)
 * one on the whole vector, summed in a vector, which leaves nothing to move out of it per row. */
__attribute__((target("popcnt"))) static unsigned batch_rows_popcnt(BatchJob *j)
{
    uint16_t *out = j->out;
    const v2u *first = FIRST[j->kind];
    uint64_t bits = 0;
    BATCH_SWITCH(bits += (uint64_t)__builtin_popcountll(x[1]))
    return bits != (uint64_t)(j->hi - j->lo) * (uint64_t)j->n;
}

__attribute__((target("avx512vpopcntdq,avx512vl,popcnt"))) static unsigned batch_rows_vpopcnt(BatchJob *j)
{
    uint16_t *out = j->out;
    const v2u *first = FIRST[j->kind];
    v2u acc = {0, 0};    /* lane 1: set card bits over all rows (lane 0 counts key bits: unused) */
    BATCH_SWITCH(acc += (v2u)_mm_popcnt_epi64((__m128i)x))
    return acc[1] != (uint64_t)(j->hi - j->lo) * (uint64_t)j->n;
}

/* Rows of five, six or seven cards (kind 5), eight at a time, on CPUs with AVX-512 VBMI and IFMA.
 * The card bytes of eight rows are laid out one row per 64-bit lane, the lane's bytes past the
 * row's n cards pads (0xf8 + their position: distinct, the top 8 - n byte values). A card's rank
 * key is looked up byte by byte in registers (VPERMB with a 64-entry table per key byte: no memory
 * load per card), and VPSADBW adds each lane's eight bytes, so one permute and one byte sum give a
 * key byte's sums for all eight rows; VPMADD52LUQ shifts them into place. The suit counters come the
 * same way (two tables of nibbles; the last pad's entry, 0x33, is the bias that lights bit 3 of a
 * count of five). Then the row offset and the value are gathered for all eight lanes (five cards:
 * the five-card table, as lookup5). A flush row gets a wrong value here (its card bits are not
 * summed): its row number goes to a list (VPCOMPRESSQ, no branch) and it is redone by the scalar
 * lookup after each block of rows.
 * The checks stay in the loop: each byte differs from the lane rotated by 1 to 4 bytes (a pad
 * equals a card byte of the same value only, itself a bad one), ANDed into one mask for the whole
 * batch; and no byte + (8 - n) exceeds 51 + (8 - n) (vector maximum: the pads wrap to 0..7 - n, a
 * card over 51 lands above). VPERMB reads a byte's low 6 bits only and the key tables' entries
 * 52..63 are zero, so a bad row's key is still a sum of at most n valid rank keys: its slot is
 * within BAD_ROW_SLACK, as in the scalar loop. */
static uint8_t T7[5][64] __attribute__((aligned(64)));   /* key bytes 0..2, suits 0-1, suits 2-3 */
static uint8_t LAYV[8][64] __attribute__((aligned(64))); /* n: lane byte 8r + k <- row byte nr + k */
static uint8_t PADV[8][64] __attribute__((aligned(64))); /* n: the pads, 0xf8 + k for k >= n */

static void build_t7(void)
{
    for (int c = 0; c < 52; c++) {
        uint32_t rk = RK[c >> 2];
        int s = c & 3;
        T7[0][c] = (uint8_t)rk; T7[1][c] = (uint8_t)(rk >> 8); T7[2][c] = (uint8_t)(rk >> 16);
        T7[3][c] = s < 2 ? (uint8_t)(1u << (4 * s)) : 0;
        T7[4][c] = s >= 2 ? (uint8_t)(1u << (4 * (s - 2))) : 0;
    }
    T7[3][63] = T7[4][63] = 0x33;     /* the last pad (0xff & 63): 8 - 5 in every suit counter */
    for (int n = 5; n <= 7; n++)
        for (int r = 0; r < 8; r++)
            for (int k = 0; k < 8; k++) {
                LAYV[n][8 * r + k] = (uint8_t)(k < n ? n * r + k : 0);
                PADV[n][8 * r + k] = (uint8_t)(k < n ? 0 : 0xf8 + k);
            }
}

static inline uint16_t rank_row_scalar(const uint8_t *h, int n, int kind)
{
    v2u x = FIRST[kind][h[0]];
    for (int k = 1; k < n; k++) x += CARDV[h[k]];
    return n == 5 ? lookup5(x[0], x[1]) : lookup_v(x);
}

/* Rows i..hi of n cards (5 to 7) one at a time, after a vector loop: 1 when one of them is bad. */
static inline unsigned tail_rows(const uint8_t *cards, uint16_t *out, Py_ssize_t i, Py_ssize_t hi, int n)
{
    unsigned bad = 0;
    for (; i < hi; i++) {
        const uint8_t *h = cards + i * n;
        v2u x = FIRST[5][h[0]];
        for (int k = 1; k < n; k++) x += CARDV[h[k]];
        if (__builtin_popcountll(x[1]) != n) bad = 1;
        out[i] = n == 5 ? lookup5(x[0], x[1]) : lookup_v(x);
    }
    return bad;
}

#define BLOCKV 2048      /* rows per block: its flush rows are redone right after it */

#define VBMI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512ifma,popcnt")))
static inline __attribute__((always_inline)) VBMI_TARGET unsigned rows_vbmi(BatchJob *j, const int n)
{
    const uint8_t *cards = j->cards;
    uint16_t *out = j->out;
    Py_ssize_t i = j->lo;
    const Py_ssize_t hi = j->hi;
    const __m512i t0 = _mm512_load_si512(T7[0]), t1 = _mm512_load_si512(T7[1]),
                  t2 = _mm512_load_si512(T7[2]), ts0 = _mm512_load_si512(T7[3]),
                  ts1 = _mm512_load_si512(T7[4]), lay = _mm512_load_si512(LAYV[n]),
                  pad = _mm512_load_si512(PADV[n]);
    const __m512i zero = _mm512_setzero_si512(), wrap = _mm512_set1_epi8((char)(8 - n)),
                  flushbits = _mm512_set1_epi64(0x8888), eight = _mm512_set1_epi64(8),
                  x256 = _mm512_set1_epi64(256), x65536 = _mm512_set1_epi64(65536);
    const __mmask64 real = _mm512_cmpeq_epi8_mask(pad, zero), in = (1ull << (8 * n)) - 1;
    __m512i accmax = zero;                  /* byte + 8 - n, bytewise maximum over all rows */
    __mmask64 distinct = ~0ull;             /* no byte equal to another of its lane, all rows */
    int64_t flushed[BLOCKV + 8] __attribute__((aligned(64)));
    while (hi - i >= 8) {
        const Py_ssize_t end = hi - i >= BLOCKV ? i + BLOCKV : i + ((hi - i) & ~(Py_ssize_t)7);
        __m512i rows = _mm512_add_epi64(_mm512_set1_epi64(i), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
        int nf = 0;
        for (; i < end; i += 8) {
            const uint8_t *p = cards + i * n;
            const __m512i c = _mm512_mask_permutexvar_epi8(pad, real, lay, _mm512_maskz_loadu_epi8(in, p));
            __mmask64 ne = _mm512_cmpneq_epi8_mask(c, _mm512_rol_epi64(c, 8));
            ne = _mm512_mask_cmpneq_epi8_mask(ne, c, _mm512_rol_epi64(c, 16));
            ne = _mm512_mask_cmpneq_epi8_mask(ne, c, _mm512_rol_epi64(c, 24));
            ne = _mm512_mask_cmpneq_epi8_mask(ne, c, _mm512_rol_epi64(c, 32));
            distinct &= ne;
            accmax = _mm512_max_epu8(accmax, _mm512_add_epi8(c, wrap));
            const __m512i k0 = _mm512_sad_epu8(_mm512_permutexvar_epi8(c, t0), zero);
            const __m512i k1 = _mm512_sad_epu8(_mm512_permutexvar_epi8(c, t1), zero);
            const __m512i k2 = _mm512_sad_epu8(_mm512_permutexvar_epi8(c, t2), zero);
            const __m512i s0 = _mm512_sad_epu8(_mm512_permutexvar_epi8(c, ts0), zero);
            const __m512i s1 = _mm512_sad_epu8(_mm512_permutexvar_epi8(c, ts1), zero);
            const __m512i key = _mm512_madd52lo_epu64(_mm512_madd52lo_epu64(k0, k1, x256), k2, x65536);
            const __mmask8 fl = _mm512_test_epi64_mask(_mm512_madd52lo_epu64(s0, s1, x256), flushbits);
            _mm512_storeu_si512(flushed + nf, _mm512_maskz_compress_epi64(fl, rows));
            nf += __builtin_popcount(fl);
            rows = _mm512_add_epi64(rows, eight);
            __m256i v;
            if (n == 5) {     /* OFF5 and VAL5 have one entry spare for the upper halves */
                const __m256i off = _mm512_i64gather_epi32(_mm512_and_si512(key, _mm512_set1_epi64(NROWS5 - 1)),
                                                           (const void *)OFF5, 2);
                const __m256i slot = _mm256_add_epi32(_mm256_and_si256(off, _mm256_set1_epi32(0xffff)),
                                                      _mm512_cvtepi64_epi32(_mm512_srli_epi64(key, ROW5_BITS)));
                v = _mm256_i32gather_epi32((const int *)VAL5, slot, 2);
            } else {          /* VAL has one slot spare */
                const __m256i off = _mm512_i64gather_epi32(_mm512_and_si512(key, _mm512_set1_epi64(NROWS - 1)),
                                                           (const void *)OFF, 4);
                const __m256i slot = _mm256_add_epi32(off, _mm512_cvtepi64_epi32(_mm512_srli_epi64(key, ROW_BITS)));
                v = _mm256_i32gather_epi32((const int *)VAL, slot, 2);
            }
            _mm_storeu_si128((__m128i *)(out + i), _mm256_cvtepi32_epi16(v));
        }
        for (int f = 0; f < nf; f++)         /* this block's flushes */
            out[flushed[f]] = rank_row_scalar(cards + flushed[f] * n, n, 5);
    }
    unsigned bad = distinct != ~0ull || _mm512_cmpgt_epu8_mask(accmax, _mm512_set1_epi8((char)(59 - n))) != 0;
    return tail_rows(cards, out, i, hi, n) | bad;     /* the last rows, fewer than eight */
}

/* kind 5 only (kind_ok: 5, 6 or 7 cards); other kinds take a one-row loop (loop_fits) */
static VBMI_TARGET unsigned batch_rows_vbmi(BatchJob *j)
{
    switch (j->n) {
    case 5: return rows_vbmi(j, 5);
    case 6: return rows_vbmi(j, 6);
    default: return rows_vbmi(j, 7);
    }
}

/* Rows of five, six or seven cards (kind 5), four at a time, on CPUs with AVX2 (no AVX-512: the
 * same idea as rows_vbmi with 16-entry tables). Two rows per 128-bit half, one row per 64-bit
 * lane, pads 0xf8 + position as there (the repeat check: each byte against the lane rotated by 1
 * to 4 bytes; the range check: byte + 8 - n, bytewise maximum). The rank (card >> 2, below 16 for
 * a card) indexes VPSHUFB tables of the rank key's three bytes and the suit (card & 3) two tables of
 * nibble counters; a pad's index has bit 7 set, which VPSHUFB turns into 0. VPSADBW sums each
 * lane's bytes: the rank-key sum and the suit counts of four rows in a few instructions, with no
 * load per card. A byte over 51 still indexes a table entry by its low bits (entries 13..15 are 0),
 * so a bad row's key is a sum of at most n rank keys: its slot stays within BAD_ROW_SLACK. The
 * offset and value are looked up one row at a time (gathers: the other loop, avx2-gather); flush
 * rows are listed and redone by the scalar lookup after each block. */
static uint8_t SH2[8][32] __attribute__((aligned(32)));   /* n: lane byte 8r + k <- row byte nr + k, per half */
static uint8_t PAD2[8][32] __attribute__((aligned(32)));  /* n: 0xf8 + k for k >= n */
static uint8_t P802[8][32] __attribute__((aligned(32)));  /* n: 0x80 on the pads */
static uint8_t ROT2[4][32] __attribute__((aligned(32)));  /* rotate each 8-byte lane by 1..4 bytes */
static uint8_t TK2[5][32] __attribute__((aligned(32)));   /* rank key bytes 0..2; suits 0-1, suits 2-3 */

static void build_avx2(void)
{
    for (int h = 0; h < 2; h++)
        for (int b = 0; b < 16; b++) {
            int r = b >> 3, k = b & 7;
            for (int n = 5; n <= 7; n++) {
                SH2[n][16 * h + b] = (uint8_t)(k < n ? n * r + k : 0x80);
                PAD2[n][16 * h + b] = (uint8_t)(k < n ? 0 : 0xf8 + k);
                P802[n][16 * h + b] = (uint8_t)(k < n ? 0 : 0x80);
            }
            for (int s = 0; s < 4; s++) ROT2[s][16 * h + b] = (uint8_t)((b & 8) | ((b + s + 1) & 7));
            for (int t = 0; t < 3; t++) TK2[t][16 * h + b] = (uint8_t)(b < 13 ? RK[b] >> (8 * t) : 0);
            TK2[3][16 * h + b] = (uint8_t)(b == 0 ? 1 : b == 1 ? 16 : 0);
            TK2[4][16 * h + b] = (uint8_t)(b == 2 ? 1 : b == 3 ? 16 : 0);
        }
}

#define BLOCK2 2048      /* rows per block: its flush rows are redone right after it */
#define AVX2_TARGET __attribute__((target("avx2,popcnt")))
static inline __attribute__((always_inline)) AVX2_TARGET unsigned rows_avx2(BatchJob *j, const int n,
                                                                            const int gather)
{
    const uint8_t *cards = j->cards;
    uint16_t *out = j->out;
    Py_ssize_t i = j->lo;
    const Py_ssize_t hi = j->hi;
    const __m256i sh = _mm256_load_si256((const __m256i *)SH2[n]), pad = _mm256_load_si256((const __m256i *)PAD2[n]),
                  p80 = _mm256_load_si256((const __m256i *)P802[n]);
    const __m256i r1 = _mm256_load_si256((const __m256i *)ROT2[0]), r2 = _mm256_load_si256((const __m256i *)ROT2[1]),
                  r3 = _mm256_load_si256((const __m256i *)ROT2[2]), r4 = _mm256_load_si256((const __m256i *)ROT2[3]);
    const __m256i k0t = _mm256_load_si256((const __m256i *)TK2[0]), k1t = _mm256_load_si256((const __m256i *)TK2[1]),
                  k2t = _mm256_load_si256((const __m256i *)TK2[2]), s0t = _mm256_load_si256((const __m256i *)TK2[3]),
                  s1t = _mm256_load_si256((const __m256i *)TK2[4]);
    const __m256i zero = _mm256_setzero_si256(), wrap = _mm256_set1_epi8((char)(8 - n)),
                  m3f = _mm256_set1_epi8(0x3f), m3 = _mm256_set1_epi8(3),
                  bias = _mm256_set1_epi64x(0x3333), flushbits = _mm256_set1_epi64x(0x8888);
    __m256i accmax = zero, dup = zero;
    int64_t flushed[BLOCK2 + 4];
    uint64_t kk[4] __attribute__((aligned(32)));
    while (hi - i >= 8) {     /* a step reads 16 bytes at row i + 2: 8 rows left keep it inside */
        Py_ssize_t end = i + BLOCK2;
        if (end > hi - 4) end = hi - 4;
        int nf = 0;
        for (; i + 4 <= end; i += 4) {
            const uint8_t *p = cards + i * n;
            const __m256i raw = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p)),
                                                        _mm_loadu_si128((const __m128i *)(p + 2 * n)), 1);
            const __m256i c = _mm256_or_si256(_mm256_shuffle_epi8(raw, sh), pad);
            __m256i eq = _mm256_cmpeq_epi8(c, _mm256_shuffle_epi8(c, r1));
            eq = _mm256_or_si256(eq, _mm256_cmpeq_epi8(c, _mm256_shuffle_epi8(c, r2)));
            eq = _mm256_or_si256(eq, _mm256_cmpeq_epi8(c, _mm256_shuffle_epi8(c, r3)));
            eq = _mm256_or_si256(eq, _mm256_cmpeq_epi8(c, _mm256_shuffle_epi8(c, r4)));
            dup = _mm256_or_si256(dup, eq);
            accmax = _mm256_max_epu8(accmax, _mm256_add_epi8(c, wrap));
            const __m256i rk = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(c, 2), m3f), p80);
            const __m256i su = _mm256_or_si256(_mm256_and_si256(c, m3), p80);
            const __m256i k0 = _mm256_sad_epu8(_mm256_shuffle_epi8(k0t, rk), zero);
            const __m256i k1 = _mm256_sad_epu8(_mm256_shuffle_epi8(k1t, rk), zero);
            const __m256i k2 = _mm256_sad_epu8(_mm256_shuffle_epi8(k2t, rk), zero);
            const __m256i key = _mm256_add_epi64(_mm256_add_epi64(k0, _mm256_slli_epi64(k1, 8)), _mm256_slli_epi64(k2, 16));
            const __m256i s = _mm256_or_si256(_mm256_sad_epu8(_mm256_shuffle_epi8(s0t, su), zero),
                                              _mm256_slli_epi64(_mm256_sad_epu8(_mm256_shuffle_epi8(s1t, su), zero), 8));
            const __m256i nofl = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_add_epi64(s, bias), flushbits), zero);
            unsigned fm = ~(unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(nofl)) & 15u;
            if (n == 7) {     /* 3 % of 7-card rows are flushes, a step in nine has one: no branch */
                flushed[nf] = i; nf += fm & 1;
                flushed[nf] = i + 1; nf += fm >> 1 & 1;
                flushed[nf] = i + 2; nf += fm >> 2 & 1;
                flushed[nf] = i + 3; nf += fm >> 3;
            } else {          /* 0.2 % (5 cards) to 1 % (6): the branch is cheaper */
                for (; fm; fm &= fm - 1) flushed[nf++] = i + __builtin_ctz(fm);
            }
            if (gather) {         /* OFF5 / VAL5 / VAL have one entry spare for the upper halves */
                __m128i off, slot;
                const __m256i pack = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
                if (n == 5) {
                    off = _mm256_i64gather_epi32((const int *)OFF5, _mm256_and_si256(key, _mm256_set1_epi64x(NROWS5 - 1)), 2);
                    off = _mm_and_si128(off, _mm_set1_epi32(0xffff));
                    slot = _mm_add_epi32(off, _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                        _mm256_srli_epi64(key, ROW5_BITS), pack)));
                    slot = _mm_i32gather_epi32((const int *)VAL5, slot, 2);
                } else {
                    off = _mm256_i64gather_epi32((const int *)OFF, _mm256_and_si256(key, _mm256_set1_epi64x(NROWS - 1)), 4);
                    slot = _mm_add_epi32(off, _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                        _mm256_srli_epi64(key, ROW_BITS), pack)));
                    slot = _mm_i32gather_epi32((const int *)VAL, slot, 2);
                }
                slot = _mm_and_si128(slot, _mm_set1_epi32(0xffff));
                _mm_storel_epi64((__m128i *)(out + i), _mm_packus_epi32(slot, slot));
            } else {
                _mm256_store_si256((__m256i *)kk, key);
                for (int l = 0; l < 4; l++) {
                    const uint32_t k = (uint32_t)kk[l];
                    out[i + l] = n == 5 ? VAL5[(k >> ROW5_BITS) + OFF5[k & (NROWS5 - 1)]]
                                        : VAL[(k >> ROW_BITS) + OFF[k & (NROWS - 1)]];
                }
            }
        }
        for (int f = 0; f < nf; f++)         /* this block's flushes */
            out[flushed[f]] = rank_row_scalar(cards + flushed[f] * n, n, 5);
    }
    const __m256i thr = _mm256_set1_epi8((char)(59 - n));
    unsigned bad = !_mm256_testz_si256(dup, dup)
                   || _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(accmax, thr), thr)) != -1;
    return tail_rows(cards, out, i, hi, n) | bad;     /* the last rows, fewer than eight */
}

static AVX2_TARGET unsigned batch_rows_avx2(BatchJob *j)
{
    switch (j->n) {
    case 5: return rows_avx2(j, 5, 0);
    case 6: return rows_avx2(j, 6, 0);
    default: return rows_avx2(j, 7, 0);
    }
}

static AVX2_TARGET unsigned batch_rows_avx2_gather(BatchJob *j)
{
    switch (j->n) {
    case 5: return rows_avx2(j, 5, 1);
    case 6: return rows_avx2(j, 6, 1);
    default: return rows_avx2(j, 7, 1);
    }
}

#else
#define batch_rows_plain_only 1
#endif

/* ---------------------------------------------------------------- the batch loops */

/* Which loop is fastest depends on the CPU model, not only on its flags (the AVX-512 VBMI loop is
 * 1.9x the one-row loop on one Intel core and 0.8x on an AMD core with the same flags), so every
 * loop the CPU can run is kept, and tablegames.poker times them all on first use (time_loops, a
 * few milliseconds) and picks the fastest for each row size (set_loop); evaluator.py caches the
 * choice per CPU model and build. Until then, the last loop in this table that the CPU runs. */
typedef struct { const char *name, *what; rows_fn fn; int five_only; int ok; } Loop;
static Loop LOOPS[] = {
    {"scalar", "one row a step, portable C (popcount in software)", batch_rows_plain, 0, 1},
#ifndef batch_rows_plain_only
    {"popcnt", "one row a step, POPCNT", batch_rows_popcnt, 0, 0},
    {"vpopcnt", "one row a step, AVX-512 VPOPCNTDQ (popcounts summed in a vector)", batch_rows_vpopcnt, 0, 0},
    {"avx2-gather", "four rows a step, AVX2 (VPSHUFB rank keys summed by VPSADBW), offset and value gathered",
     batch_rows_avx2_gather, 1, 0},
    {"avx2", "four rows a step, AVX2 (VPSHUFB rank keys summed by VPSADBW), offset and value one row at a time",
     batch_rows_avx2, 1, 0},
    {"avx512vbmi", "eight rows a step, AVX-512 VBMI and IFMA (VPERMB rank keys summed by VPSADBW), gathered",
     batch_rows_vbmi, 1, 0},
#endif
};
#define NLOOPS ((int)(sizeof LOOPS / sizeof LOOPS[0]))
static int LOOP_OF[8];     /* rows of n cards (3..7) -> the loop (index in LOOPS) that ranks them */

/* the loop runs here and ranks rows of n cards (the vector loops: kind 5 only, 5 to 7 cards) */
static int loop_fits(int l, int n) { return LOOPS[l].ok && n >= 3 && n <= 7 && (n >= 5 || !LOOPS[l].five_only); }

static void build_loops(void)
{
#ifndef batch_rows_plain_only
    __builtin_cpu_init();
    LOOPS[1].ok = __builtin_cpu_supports("popcnt");
    LOOPS[2].ok = __builtin_cpu_supports("avx512vpopcntdq") && __builtin_cpu_supports("avx512vl")
                  && __builtin_cpu_supports("popcnt");
    LOOPS[3].ok = LOOPS[4].ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    LOOPS[5].ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                  && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")
                  && __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512ifma")
                  && __builtin_cpu_supports("popcnt");
    build_t7();
    build_avx2();
#endif
    for (int n = 3; n <= 7; n++)
        for (int l = 0; l < NLOOPS; l++)
            if (loop_fits(l, n)) LOOP_OF[n] = l;
}

static int loop_named(const char *name)
{
    for (int l = 0; l < NLOOPS; l++)
        if (strcmp(LOOPS[l].name, name) == 0) return l;
    return -1;
}

static void *batch_worker(void *arg)
{
    BatchJob *j = arg;
    unsigned bad = j->fn(j);
    if (bad) find_bad_row(j);
    return NULL;
}

static int kind_ok(int kind, int n)
{
    if (kind == 5) return n >= 5 && n <= 7;
    return (kind == 4 || kind == 3) && n == kind;
}

static int get_threads(int req, Py_ssize_t work)
{
    int t = req > 0 ? req : ncpu();
    if (work < 100000) t = 1;
    return t;
}

static PyObject *py_rank_batch(PyObject *self, PyObject *args)
{
    Py_buffer cards, out;
    int n, kind, threads = 0;
    if (!PyArg_ParseTuple(args, "y*iiw*|i", &cards, &n, &kind, &out, &threads)) return NULL;
    PyObject *ret = NULL;
    if (!kind_ok(kind, n)) {
        PyErr_Format(PyExc_ValueError, "a %d-card evaluation takes %s cards per hand, not %d",
                     kind, kind == 5 ? "5, 6 or 7" : kind == 4 ? "4" : "3", n);
        goto done;
    }
    if (cards.len % n || out.len != (cards.len / n) * 2) {
        PyErr_SetString(PyExc_ValueError, "cards must be N*n bytes and out N uint16 values");
        goto done;
    }
    Py_ssize_t N = cards.len / n;
    int nt = get_threads(threads, N);
    BatchJob jobs[64];
    if (nt > 64) nt = 64;
    for (int t = 0; t < nt; t++) {
        jobs[t].cards = cards.buf; jobs[t].out = out.buf; jobs[t].n = n; jobs[t].kind = kind;
        jobs[t].lo = N * t / nt; jobs[t].hi = N * (t + 1) / nt; jobs[t].bad_row = -1;
        jobs[t].fn = LOOPS[LOOP_OF[n]].fn;
    }
    Py_BEGIN_ALLOW_THREADS
    run_threads(nt, batch_worker, jobs, sizeof jobs[0]);
    Py_END_ALLOW_THREADS
    for (int t = 0; t < nt; t++)
        if (jobs[t].bad_row >= 0) {
            PyErr_Format(PyExc_ValueError, "hand %zd: %s", jobs[t].bad_row,
                         jobs[t].bad_why == 1 ? "a card number outside 0..51" : "a card given twice");
            goto done;
        }
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    PyBuffer_Release(&cards);
    PyBuffer_Release(&out);
    return ret;
}

/* ---------------------------------------------------------------- enumeration */

typedef struct {
    const uint8_t *deck; int D, n, kind;
    int five;                 /* kind 5, five cards in all (fixed + n): the five-card table */
    v2u h0;                   /* the fixed cards */
    const v2u *dv;            /* CARDV of each deck card, in deck order */
    uint16_t *out;            /* values, lexicographic order of deck positions, or NULL */
    uint8_t *combos;          /* cards of each combination (n per row), or NULL */
    uint64_t *hist;           /* nvalues + 1 counters, or NULL (per thread) */
    int *next_first;          /* shared work counter: next first index to take */
    pthread_mutex_t *lock;
    const uint64_t *first_off;/* combinations before first index i */
} EnumJob;

static uint64_t binom(int n, int k)
{
    if (k < 0 || k > n) return 0;
    uint64_t r = 1;
    for (int i = 1; i <= k; i++) r = r * (uint64_t)(n - k + i) / (uint64_t)i;
    return r;
}

enum { EM_OUT = 1, EM_HIST = 2, EM_COMBOS = 4, EM_FIVE = 8 };

/* EM_FIVE: hands of five cards exactly look up the five-card table (it stays in the first-level
 * cache: all 2,598,960 hands in about 0.6 of the time), as rank_batch's five-card rows do. The walk
 * with several outputs at once (walk_any) keeps the shared table. */
static inline uint16_t lookup_m(v2u h, int mode) { return mode & EM_FIVE ? lookup5(h[0], h[1]) : lookup_v(h); }

/* The innermost loop: the partial hand x plus each card of deck[i0..D), combination numbers
 * from *idx on; cur holds the cards of the levels above (for the combinations output). mode is
 * a constant wherever this is inlined, so each use gets a loop with no tests in it. */
static inline __attribute__((always_inline)) void innermost(const EnumJob *j, const int mode, v2u x, int i0,
                                                            uint64_t *idx, uint8_t *cur, int l)
{
    const uint8_t *deck = j->deck;
    const v2u *dv = j->dv;
    const int D = j->D, n = j->n;
    if ((mode & ~EM_FIVE) == EM_OUT) {
        uint16_t *o = j->out + *idx;
        for (int i = i0; i < D; i++) *o++ = lookup_m(x + dv[i], mode);
    } else if ((mode & ~EM_FIVE) == EM_HIST) {
        uint64_t *hist = j->hist;
        for (int i = i0; i < D; i++) hist[lookup_m(x + dv[i], mode)]++;
    } else if (mode == EM_COMBOS) {
        uint8_t *o = j->combos + *idx * n;
        for (int i = i0; i < D; i++, o += n) {
            cur[l] = deck[i];
            memcpy(o, cur, n);
        }
    } else {
        for (int i = i0; i < D; i++) {
            uint16_t v = lookup_m(x + dv[i], mode);
            uint64_t at = *idx + (uint64_t)(i - i0);
            if (j->out) j->out[at] = v;
            if (j->hist) j->hist[v]++;
            if (j->combos) { cur[l] = deck[i]; memcpy(j->combos + at * n, cur, n); }
        }
    }
    *idx += (uint64_t)(D - i0);
}

/* Every combination whose first card is deck[first], in lexicographic order (idx = the first
 * one's number), as plain nested loops (N a constant: the partial hands stay in registers).
 * The deck was checked once for the whole call, so nothing is checked here: a combination is
 * its first N - 1 cards' partial hand (one vector add per level) plus one card and one lookup. */
#define OPEN(d, p) for (int i##d = i##p + 1; i##d <= D - (N - d); i##d++) { \
                       const v2u x##d = x##p + j->dv[i##d]; cur[d] = deck[i##d];
static inline __attribute__((always_inline)) void walk(const EnumJob *j, const int mode, const int N,
                                                       int first, uint64_t idx)
{
    const uint8_t *deck = j->deck;
    const int D = j->D;
    uint8_t cur[8];
    const int i0 = first;
    const v2u x0 = j->h0 + j->dv[i0];
    cur[0] = deck[i0];
    if (N == 1) {                       /* one card: the combination is deck[first] alone */
        uint16_t v = lookup_m(x0, mode);
        if (j->out) j->out[idx] = v;
        if (j->hist) j->hist[v]++;
        if (j->combos) j->combos[idx] = cur[0];
    } else if (N == 2) {
        innermost(j, mode, x0, i0 + 1, &idx, cur, 1);
    } else if (N == 3) {
        OPEN(1, 0) innermost(j, mode, x1, i1 + 1, &idx, cur, 2); }
    } else if (N == 4) {
        OPEN(1, 0) OPEN(2, 1) innermost(j, mode, x2, i2 + 1, &idx, cur, 3); } }
    } else if (N == 5) {
        OPEN(1, 0) OPEN(2, 1) OPEN(3, 2) innermost(j, mode, x3, i3 + 1, &idx, cur, 4); } } }
    } else if (N == 6) {
        OPEN(1, 0) OPEN(2, 1) OPEN(3, 2) OPEN(4, 3) innermost(j, mode, x4, i4 + 1, &idx, cur, 5); } } } }
    } else if (N == 7) {
        OPEN(1, 0) OPEN(2, 1) OPEN(3, 2) OPEN(4, 3) OPEN(5, 4)
            innermost(j, mode, x5, i5 + 1, &idx, cur, 6); } } } } }
    }
}
#undef OPEN

typedef void (*walk_fn)(const EnumJob *, int, uint64_t);
#define WALKS(name, mode) \
    static void name##1(const EnumJob *j, int f, uint64_t i) { walk(j, mode, 1, f, i); } \
    static void name##2(const EnumJob *j, int f, uint64_t i) { walk(j, mode, 2, f, i); } \
    static void name##3(const EnumJob *j, int f, uint64_t i) { walk(j, mode, 3, f, i); } \
    static void name##4(const EnumJob *j, int f, uint64_t i) { walk(j, mode, 4, f, i); } \
    static void name##5(const EnumJob *j, int f, uint64_t i) { walk(j, mode, 5, f, i); } \
    static void name##6(const EnumJob *j, int f, uint64_t i) { walk(j, mode, 6, f, i); } \
    static void name##7(const EnumJob *j, int f, uint64_t i) { walk(j, mode, 7, f, i); } \
    static const walk_fn name[8] = {NULL, name##1, name##2, name##3, name##4, name##5, name##6, name##7};
WALKS(walk_any, 0)
WALKS(walk_out, EM_OUT)
WALKS(walk_hist, EM_HIST)
WALKS(walk_combos, EM_COMBOS)
WALKS(walk_out_five, EM_OUT | EM_FIVE)
WALKS(walk_hist_five, EM_HIST | EM_FIVE)

static void *enum_worker(void *arg)
{
    EnumJob *j = arg;
    int mode = (j->out ? EM_OUT : 0) | (j->hist ? EM_HIST : 0) | (j->combos ? EM_COMBOS : 0);
    walk_fn fn = (mode == EM_OUT ? (j->five ? walk_out_five : walk_out) :
                  mode == EM_HIST ? (j->five ? walk_hist_five : walk_hist) :
                  mode == EM_COMBOS ? walk_combos : walk_any)[j->n];
    for (;;) {
        pthread_mutex_lock(j->lock);
        int i = (*j->next_first)++;
        pthread_mutex_unlock(j->lock);
        if (i > j->D - j->n) break;
        fn(j, i, j->first_off[i]);
    }
    return NULL;
}

/* enumerate(kind, deck, n, fixed, out_values|None, out_hist|None, out_combos|None, threads) */
static PyObject *py_enumerate(PyObject *self, PyObject *args)
{
    Py_buffer deck, fixed;
    PyObject *o_out, *o_hist, *o_combos;
    int kind, n, threads = 0;
    if (!PyArg_ParseTuple(args, "iy*iy*OOO|i", &kind, &deck, &n, &fixed, &o_out, &o_hist,
                          &o_combos, &threads))
        return NULL;
    Py_buffer vout = {0}, vhist = {0}, vcomb = {0};
    PyObject *ret = NULL;
    int D = (int)deck.len, F = (int)fixed.len, T = F + n;
    const uint8_t *dk = deck.buf, *fx = fixed.buf;
    uint64_t seen = 0;
    v2u h0 = hand0(kind);
    if (n < 1 || n > D || !kind_ok(kind, T)) {
        PyErr_Format(PyExc_ValueError, "cannot make %d-card hands from %d fixed cards plus %d of %d",
                     kind, F, n, D);
        goto done;
    }
    for (int i = 0; i < D + F; i++) {
        uint8_t c = i < D ? dk[i] : fx[i - D];
        if (c >= 52) { PyErr_SetString(PyExc_ValueError, "card number outside 0..51"); goto done; }
        if (seen >> c & 1) { PyErr_SetString(PyExc_ValueError, "a card is in the deck twice or also fixed"); goto done; }
        seen |= 1ull << c;
        if (i >= D) h0 += CARDV[c];
    }
    uint64_t total = binom(D, n);
    if (o_out != Py_None) {
        if (PyObject_GetBuffer(o_out, &vout, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)) goto done;
        if ((uint64_t)vout.len != total * 2) { PyErr_SetString(PyExc_ValueError, "values buffer size"); goto done; }
    }
    if (o_hist != Py_None) {
        if (PyObject_GetBuffer(o_hist, &vhist, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)) goto done;
        if (vhist.len != (NVALUES[kind] + 1) * 8) { PyErr_SetString(PyExc_ValueError, "histogram buffer size"); goto done; }
    }
    if (o_combos != Py_None) {
        if (PyObject_GetBuffer(o_combos, &vcomb, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)) goto done;
        if ((uint64_t)vcomb.len != total * n) { PyErr_SetString(PyExc_ValueError, "combos buffer size"); goto done; }
    }
    uint64_t *first_off = malloc((D + 1) * sizeof *first_off);
    for (int i = 0; i <= D; i++) first_off[i] = total - binom(D - i, n);
    int nt = get_threads(threads, (Py_ssize_t)(total > PY_SSIZE_T_MAX ? PY_SSIZE_T_MAX : total));
    if (nt > 64) nt = 64;
    EnumJob jobs[64];
    uint64_t *hists = o_hist != Py_None ? calloc((size_t)nt * (NVALUES[kind] + 1), 8) : NULL;
    int next_first = 0;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    v2u dv[52];
    for (int i = 0; i < D; i++) dv[i] = CARDV[dk[i]];
    for (int t = 0; t < nt; t++) {
        jobs[t].deck = dk; jobs[t].dv = dv; jobs[t].D = D; jobs[t].n = n; jobs[t].kind = kind;
        jobs[t].h0 = h0; jobs[t].five = kind == 5 && T == 5;
        jobs[t].out = vout.buf; jobs[t].combos = vcomb.buf;
        jobs[t].hist = hists ? hists + (size_t)t * (NVALUES[kind] + 1) : NULL;
        jobs[t].next_first = &next_first; jobs[t].lock = &lock; jobs[t].first_off = first_off;
    }
    Py_BEGIN_ALLOW_THREADS
    run_threads(nt, enum_worker, jobs, sizeof jobs[0]);
    Py_END_ALLOW_THREADS
    if (hists) {
        int64_t *h = vhist.buf;
        for (int v = 0; v <= NVALUES[kind]; v++) {
            uint64_t s = 0;
            for (int t = 0; t < nt; t++) s += hists[(size_t)t * (NVALUES[kind] + 1) + v];
            h[v] = (int64_t)s;
        }
        free(hists);
    }
    free(first_off);
    ret = PyLong_FromUnsignedLongLong(total);
done:
    PyBuffer_Release(&deck);
    PyBuffer_Release(&fixed);
    if (vout.obj) PyBuffer_Release(&vout);
    if (vhist.obj) PyBuffer_Release(&vhist);
    if (vcomb.obj) PyBuffer_Release(&vcomb);
    return ret;
}

/* rank(kind, cards) for one hand: the fast scalar path for settlement code */
static PyObject *py_rank(PyObject *self, PyObject *args)
{
    Py_buffer cards;
    int kind;
    if (!PyArg_ParseTuple(args, "iy*", &kind, &cards)) return NULL;
    int n = (int)cards.len;
    const uint8_t *h = cards.buf;
    PyObject *ret = NULL;
    if (!kind_ok(kind, n)) {
        PyErr_Format(PyExc_ValueError, "a %d-card evaluation takes %s cards, not %d",
                     kind, kind == 5 ? "5, 6 or 7" : kind == 4 ? "4" : "3", n);
        goto done;
    }
    uint64_t sum = init_for(kind), bits = 0;
    for (int i = 0; i < n; i++) {
        if (h[i] >= 52) { PyErr_SetString(PyExc_ValueError, "card number outside 0..51"); goto done; }
        if (bits & CB[h[i]]) { PyErr_SetString(PyExc_ValueError, "a card given twice"); goto done; }
        sum += CK[h[i]]; bits |= CB[h[i]];
    }
    ret = PyLong_FromLong(lookup(sum, bits));
done:
    PyBuffer_Release(&cards);
    return ret;
}

/* loops() -> [(name, what, (row sizes))]: the batch loops this CPU can run */
static PyObject *py_loops(PyObject *self, PyObject *noargs)
{
    PyObject *list = PyList_New(0);
    for (int l = 0; list && l < NLOOPS; l++) {
        if (!LOOPS[l].ok) continue;
        PyObject *item = LOOPS[l].five_only ? Py_BuildValue("(ss(iii))", LOOPS[l].name, LOOPS[l].what, 5, 6, 7)
                                            : Py_BuildValue("(ss(iiiii))", LOOPS[l].name, LOOPS[l].what, 3, 4, 5, 6, 7);
        if (!item || PyList_Append(list, item)) { Py_XDECREF(item); Py_DECREF(list); return NULL; }
        Py_DECREF(item);
    }
    return list;
}

/* set_loop(n, name): rows of n cards go through that loop from now on */
static PyObject *py_set_loop(PyObject *self, PyObject *args)
{
    int n;
    const char *name;
    if (!PyArg_ParseTuple(args, "is", &n, &name)) return NULL;
    int l = loop_named(name);
    if (l < 0 || !loop_fits(l, n)) {
        PyErr_Format(PyExc_ValueError, "%s is not a batch loop this CPU runs for rows of %d cards", name, n);
        return NULL;
    }
    LOOP_OF[n] = l;
    Py_RETURN_NONE;
}

static double thread_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* time_loops(rows=8192, rounds=5) -> {n: {loop: ns per hand}}: every loop the CPU runs on the same
 * random rows of 3 to 7 cards (kind 3, 4, 5), each the best of `rounds` rounds in which the loops
 * take turns (a busy spell on a shared machine then hits them all); thread CPU time. */
static PyObject *py_time_loops(PyObject *self, PyObject *args)
{
    int rows = 8192, rounds = 5;
    if (!PyArg_ParseTuple(args, "|ii", &rows, &rounds)) return NULL;
    if (rows < 64 || rows > (1 << 20) || rounds < 1 || rounds > 1000) {
        PyErr_SetString(PyExc_ValueError, "time_loops: rows 64..2^20, rounds 1..1000");
        return NULL;
    }
    uint8_t *buf[8] = {0};
    uint16_t *out = malloc((size_t)rows * sizeof *out);
    double best[8][NLOOPS];
    int ok = out != NULL;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int n = 3; n <= 7 && ok; n++) {
        ok = (buf[n] = malloc((size_t)rows * n)) != NULL;
        for (int r = 0; ok && r < rows; r++) {
            uint64_t seen = 0;
            for (int k = 0; k < n; k++) {
                unsigned c;
                do {
                    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                    c = (unsigned)((s >> 32) % 52);
                } while (seen >> c & 1);
                seen |= 1ull << c;
                buf[n][(size_t)r * n + k] = (uint8_t)c;
            }
        }
        for (int l = 0; l < NLOOPS; l++) best[n][l] = -1;
    }
    if (!ok) {
        for (int n = 3; n <= 7; n++) free(buf[n]);
        free(out);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    for (int round = 0; round < rounds; round++)
        for (int n = 3; n <= 7; n++)
            for (int l = 0; l < NLOOPS; l++) {
                if (!loop_fits(l, n)) continue;
                BatchJob job = {buf[n], out, 0, rows, n, n >= 5 ? 5 : n, -1, 0, LOOPS[l].fn};
                double t0 = thread_seconds();
                job.fn(&job);
                double t = (thread_seconds() - t0) / rows * 1e9;
                if (best[n][l] < 0 || t < best[n][l]) best[n][l] = t;
            }
    Py_END_ALLOW_THREADS
    for (int n = 3; n <= 7; n++) free(buf[n]);
    free(out);
    PyObject *res = PyDict_New();
    for (int n = 3; res && n <= 7; n++) {
        PyObject *d = PyDict_New(), *key = PyLong_FromLong(n);
        for (int l = 0; d && l < NLOOPS; l++) {
            if (!loop_fits(l, n)) continue;
            PyObject *v = PyFloat_FromDouble(best[n][l]);
            if (!v || PyDict_SetItemString(d, LOOPS[l].name, v)) { Py_XDECREF(v); Py_CLEAR(d); break; }
            Py_DECREF(v);
        }
        if (!d || !key || PyDict_SetItem(res, key, d)) Py_CLEAR(res);
        Py_XDECREF(d);
        Py_XDECREF(key);
    }
    return res;
}

static PyObject *py_info(PyObject *self, PyObject *noargs)
{
    return Py_BuildValue("{s:I,s:I,s:i,s:n,s:I,s:n,s:O,s:{i:s,i:s,i:s,i:s,i:s}}", "rows", NROWS, "slots", NSLOTS,
                         "multisets", NMS,
                         "table_bytes", (Py_ssize_t)(sizeof OFF + NSLOTS * 2 + sizeof FL + sizeof CARDV),
                         "five_card_slots", NSLOTS5, "five_card_table_bytes", (Py_ssize_t)(sizeof OFF5 + NSLOTS5 * 2),
                         "precomputed_offsets", PRECOMPUTED ? Py_True : Py_False,
                         "batch_loop", 3, LOOPS[LOOP_OF[3]].name, 4, LOOPS[LOOP_OF[4]].name, 5, LOOPS[LOOP_OF[5]].name,
                         6, LOOPS[LOOP_OF[6]].name, 7, LOOPS[LOOP_OF[7]].name);
}

static PyObject *py_offsets(PyObject *self, PyObject *noargs)
{
    return PyBytes_FromStringAndSize((const char *)OFF, sizeof OFF);
}

static PyMethodDef methods[] = {
    {"rank", py_rank, METH_VARARGS, "rank(kind, cards: bytes) -> value of one hand"},
    {"rank_batch", py_rank_batch, METH_VARARGS,
     "rank_batch(cards: N*n bytes, n, kind, out: writable N uint16, threads=0)"},
    {"enumerate", py_enumerate, METH_VARARGS,
     "enumerate(kind, deck: bytes, n, fixed: bytes, values|None, hist|None, combos|None, threads=0)"
     " -> number of combinations"},
    {"info", py_info, METH_NOARGS,
     "sizes of the lookup tables, whether the offsets were precomputed, the batch loop of each row size"},
    {"loops", py_loops, METH_NOARGS, "loops() -> [(name, what, row sizes)]: the batch loops this CPU runs"},
    {"set_loop", py_set_loop, METH_VARARGS, "set_loop(n, name): rows of n cards go through that batch loop"},
    {"time_loops", py_time_loops, METH_VARARGS,
     "time_loops(rows=8192, rounds=5) -> {n: {loop: ns per hand}} (best round, thread CPU time)"},
    {"offsets", py_offsets, METH_NOARGS, "the perfect hash's row offsets (NROWS uint32, native order)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_fastpoker",
                                    "C core of tablectl.poker (see tablectl/poker/evaluator.py)", -1,
                                    methods};

PyMODINIT_FUNC PyInit__fastpoker(void)
{
    if (VAL == NULL && build_all() != 0) {
        PyErr_SetString(PyExc_RuntimeError, "_fastpoker: building the lookup tables failed");
        return NULL;
    }
    return PyModule_Create(&moddef);
}
