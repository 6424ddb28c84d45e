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
 *  - no flush: the rank-key sum is mapped by a perfect hash (MULT, DISP, VAL) straight
 *    to the value of the best hand of that rank multiset, precomputed at import.
 *  - flush: the 13-bit rank mask of the flush suit indexes FL, the best flush / straight flush.
 * A hand is 7 additions, 7 ORs, one test and two or three loads from tables that fit in L2.
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

#define BUCKET_BITS 14
#define NBUCKETS (1u << BUCKET_BITS)
#define SLOT_BITS 17
#define NSLOTS (1u << SLOT_BITS)

static uint64_t CK[52];          /* rank key + suit counter increment */
static uint64_t CB[52];          /* 1 << (16*suit + rank): distinct bits, flush masks */
static uint64_t MULT;            /* hash multiplier in use */
static uint32_t *DISP;           /* bucket -> displacement */
static uint16_t *VAL;            /* slot -> value of that rank multiset (size 3, 4 or 5..7) */
static uint16_t FL[8192];        /* rank mask of one suit -> value (3, 4 or 5+ bits) */
static const int NVALUES[8] = {0, 0, 0, 741, 2535, 7462, 7462, 7462};

static inline uint64_t init_for(int kind) { return (uint64_t)((8 - kind) * 0x1111u) << 32; }

static inline uint16_t lookup(uint64_t sum, uint64_t bits)
{
    uint64_t f = (sum >> 32) & 0x8888u;
    if (__builtin_expect(f != 0, 0)) {
        int s = __builtin_ctzll(f) >> 2;
        return FL[(bits >> (16 * s)) & 0x1fffu];
    }
    uint64_t p = (uint64_t)(uint32_t)sum * MULT;
    return VAL[((p >> 30) & (NSLOTS - 1)) ^ DISP[p >> (64 - BUCKET_BITS)]];
}

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

static uint32_t slot_of(uint32_t k)
{
    uint64_t p = (uint64_t)k * MULT;
    return ((p >> 30) & (NSLOTS - 1)) ^ DISP[p >> (64 - BUCKET_BITS)];
}

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

/* Perfect hash ("hash and displace"): one 64-bit multiply gives a bucket (top bits) and a
 * home slot (middle bits); each bucket has a displacement XORed into its keys' home slots, chosen
 * at build time, fullest bucket first, so that no two keys share a slot. */
static const uint64_t MULTS[] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull,
                                 0xD6E8FEB86659FD93ull, 0xFF51AFD7ED558CCDull, 0xC4CEB9FE1A85EC53ull};

static int try_hash(uint64_t mult)
{
    uint32_t *bcount = calloc(NBUCKETS + 1, sizeof *bcount);
    uint32_t *bstart = calloc(NBUCKETS + 1, sizeof *bstart);
    uint32_t *items = malloc(NMS * sizeof *items), *fill = calloc(NBUCKETS, sizeof *fill);
    uint8_t *used = calloc(NSLOTS, 1);
    uint32_t *order = malloc(NBUCKETS * sizeof *order);
    int ok = 1;
    for (int i = 0; i < NMS; i++) if (MS[i].size >= 3) bcount[(MS[i].key * mult) >> (64 - BUCKET_BITS)]++;
    for (uint32_t b = 0; b < NBUCKETS; b++) bstart[b + 1] = bstart[b] + bcount[b];
    for (int i = 0; i < NMS; i++) {
        if (MS[i].size < 3) continue;
        uint32_t b = (uint32_t)((MS[i].key * mult) >> (64 - BUCKET_BITS));
        items[bstart[b] + fill[b]++] = (uint32_t)(((MS[i].key * mult) >> 30) & (NSLOTS - 1));
    }
    uint32_t maxc = 0, no = 0;
    for (uint32_t b = 0; b < NBUCKETS; b++) if (bcount[b] > maxc) maxc = bcount[b];
    for (uint32_t c = maxc; c >= 1; c--)
        for (uint32_t b = 0; b < NBUCKETS; b++) if (bcount[b] == c) order[no++] = b;
    for (uint32_t k = 0; k < no && ok; k++) {
        uint32_t b = order[k], n = bcount[b], *hs = items + bstart[b], d;
        for (d = 0; d < NSLOTS; d++) {
            uint32_t j = 0;
            for (; j < n; j++) {
                uint32_t s = hs[j] ^ d;
                if (used[s]) break;
                used[s] = 2;                    /* tentatively taken: catches clashes inside the bucket */
            }
            for (uint32_t i = 0; i < j; i++) used[hs[i] ^ d] = 0;
            if (j == n) break;
        }
        if (d == NSLOTS) { ok = 0; break; }
        for (uint32_t j = 0; j < n; j++) used[hs[j] ^ d] = 1;
        DISP[b] = d;
    }
    free(bcount); free(bstart); free(items); free(fill); free(used); free(order);
    return ok;
}

static int build_hash(void)
{
    DISP = calloc(NBUCKETS, sizeof *DISP);
    VAL = calloc(NSLOTS, sizeof *VAL);
    for (size_t i = 0; i < sizeof MULTS / sizeof MULTS[0]; i++)
        if (try_hash(MULTS[i])) { MULT = MULTS[i]; return 0; }
    return -1;
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

static int build_all(void)
{
    for (int c = 0; c < 52; c++) {
        CK[c] = RK[c >> 2] + (1ull << (32 + 4 * (c & 3)));
        CB[c] = 1ull << (16 * (c & 3) + (c >> 2));
    }
    uint8_t cnt[13] = {0};
    gen_ms(0, 0, 0, cnt);
    if (build_classes() || build_hash() || build_values()) return -1;
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

typedef struct {
    const uint8_t *cards; uint16_t *out; Py_ssize_t lo, hi; int n, kind;
    Py_ssize_t bad_row; int bad_why;   /* 1 card out of range, 2 duplicate */
} BatchJob;

#define BATCH_LOOP(N)                                                            \
    for (Py_ssize_t i = j->lo; i < j->hi; i++) {                                 \
        const uint8_t *h = j->cards + i * (N);                                   \
        uint64_t sum = init, bits = 0, dup = 0; uint8_t badc = 0;                \
        for (int k = 0; k < (N); k++) {                                          \
            uint8_t c = h[k]; badc |= (uint8_t)(c >= 52); c = c < 52 ? c : 0;   \
            sum += CK[c]; dup |= bits & CB[c]; bits |= CB[c];                    \
        }                                                                        \
        if (__builtin_expect(badc | (dup != 0), 0)) {                            \
            j->bad_row = i; j->bad_why = badc ? 1 : 2; return NULL;             \
        }                                                                        \
        out[i] = lookup(sum, bits);                                              \
    }

static void *batch_worker(void *arg)
{
    BatchJob *j = arg;
    uint16_t *out = j->out;
    uint64_t init = init_for(j->kind);
    switch (j->n) {
    case 3: BATCH_LOOP(3) break;
    case 4: BATCH_LOOP(4) break;
    case 5: BATCH_LOOP(5) break;
    case 6: BATCH_LOOP(6) break;
    case 7: BATCH_LOOP(7) break;
    }
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
    uint64_t sum0, bits0;
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

static void enum_rec(EnumJob *j, int depth, int start, uint64_t sum, uint64_t bits,
                     uint64_t *idx, uint8_t *cur)
{
    const uint8_t *deck = j->deck;
    if (depth == j->n - 1) {          /* innermost: one loop, no recursion */
        for (int i = start; i < j->D; i++) {
            uint8_t c = deck[i];
            uint16_t v = lookup(sum + CK[c], bits | CB[c]);
            if (j->hist) j->hist[v]++;
            if (j->out) j->out[*idx] = v;
            if (j->combos) {
                cur[depth] = c;
                memcpy(j->combos + *idx * j->n, cur, j->n);
            }
            (*idx)++;
        }
        return;
    }
    for (int i = start; i <= j->D - (j->n - depth); i++) {
        uint8_t c = deck[i];
        cur[depth] = c;
        enum_rec(j, depth + 1, i + 1, sum + CK[c], bits | CB[c], idx, cur);
    }
}

static void *enum_worker(void *arg)
{
    EnumJob *j = arg;
    uint8_t cur[8];
    for (;;) {
        pthread_mutex_lock(j->lock);
        int i = (*j->next_first)++;
        pthread_mutex_unlock(j->lock);
        if (i > j->D - j->n) break;
        uint64_t idx = j->first_off[i];
        uint8_t c = j->deck[i];
        cur[0] = c;
        if (j->n == 1) {
            uint16_t v = lookup(j->sum0 + CK[c], j->bits0 | CB[c]);
            if (j->hist) j->hist[v]++;
            if (j->out) j->out[idx] = v;
            if (j->combos) j->combos[idx] = c;
        } else {
            enum_rec(j, 1, i + 1, j->sum0 + CK[c], j->bits0 | CB[c], &idx, cur);
        }
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
    uint64_t seen = 0, sum0 = init_for(kind), bits0 = 0;
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
        if (i >= D) { sum0 += CK[c]; bits0 |= CB[c]; }
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
    for (int t = 0; t < nt; t++) {
        jobs[t].deck = dk; jobs[t].D = D; jobs[t].n = n; jobs[t].kind = kind;
        jobs[t].sum0 = sum0; jobs[t].bits0 = bits0;
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

static PyObject *py_info(PyObject *self, PyObject *noargs)
{
    return Py_BuildValue("{s:I,s:I,s:i,s:K,s:n}", "buckets", NBUCKETS, "slots", NSLOTS,
                         "multisets", NMS, "multiplier", (unsigned long long)MULT,
                         "table_bytes", (Py_ssize_t)(NBUCKETS * 4 + NSLOTS * 2 + sizeof FL + sizeof CK));
}

static PyMethodDef methods[] = {
    {"rank", py_rank, METH_VARARGS, "rank(kind, cards: bytes) -> value of one hand"},
    {"rank_batch", py_rank_batch, METH_VARARGS,
     "rank_batch(cards: N*n bytes, n, kind, out: writable N uint16, threads=0)"},
    {"enumerate", py_enumerate, METH_VARARGS,
     "enumerate(kind, deck: bytes, n, fixed: bytes, values|None, hist|None, combos|None, threads=0)"
     " -> number of combinations"},
    {"info", py_info, METH_NOARGS, "sizes of the lookup tables"},
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
