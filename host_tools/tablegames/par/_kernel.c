/* Complete-enumeration kernels for PAR sheets (docs/PAR.md).
 *
 * Cards are 0..51, card = rank * 4 + suit, rank 0 = deuce .. 12 = ace.
 * A k-card set is indexed by its colex number sum_j C(c_j, j+1) over its sorted cards.
 *
 * Hand ranks are dense integers, stronger hands greater.  The tables here are built by this
 * file alone (the PAR code does not depend on the settlement engine's evaluator, and the
 * tests cross-check the two).
 *
 * The dealer-versus-player kernels count, for one player hand P and one removed card set,
 * the dealer hands below / equal to P's rank that avoid the removed cards.  Doing that by
 * looping over dealer hands costs 10^12 evaluations; instead the kernels sweep all hands
 * in rank order and keep, for every card subset T of at most four cards, how many dealer
 * hands seen so far contain T.  By inclusion-exclusion the dealer hands that avoid a
 * removed set R number sum over T subset of R of (-1)^|T| count[T].
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define NCARDS 52
#define NH5 2598960
#define NH4 270725
#define NH3 22100

/* categories shared with the Python side (tablectl.par.cards.CATEGORIES) */
enum { HIGH, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH, ROYAL, NCAT };

static uint64_t BINOM[64][8];
static int64_t SUBOFF[6];          /* offset of the k-card subsets in a subset-count table */
static int64_t NSUB;               /* subsets of 0..4 cards of the deck */

static uint16_t *RANK5;            /* colex index -> dense rank */
static int NRANK5;
static uint8_t CAT_OF_RANK5[8192];
static uint32_t KEY_OF_RANK5[8192];

typedef struct {
    uint8_t c[5];
    uint8_t cat;
    uint16_t rank;
} hand5_t;
static hand5_t *SORTED5;           /* every five-card hand, ascending rank */

static int build_tables4(void);
static uint16_t *RANK4;
static volatile long PROGRESS_DONE = 0, PROGRESS_TOTAL = 0;

static int tables_ready = 0;

/* ---------- five-card keys ---------- */

static uint32_t key5(const int *cards)
{
    int cnt[13] = {0};
    int suit0 = cards[0] & 3, flush = 1;
    unsigned mask = 0;
    for (int i = 0; i < 5; i++) {
        int r = cards[i] >> 2;
        cnt[r]++;
        mask |= 1u << r;
        if ((cards[i] & 3) != suit0) flush = 0;
    }
    int distinct = __builtin_popcount(mask);
    int straight_top = -1;
    if (distinct == 5) {
        int hi = 31 - __builtin_clz(mask), lo = __builtin_ctz(mask);
        if (hi - lo == 4) straight_top = hi;
        else if (mask == 0x100F) straight_top = 3; /* A-2-3-4-5: the five is high */
    }
    if (straight_top >= 0) {
        if (flush) return (uint32_t)((straight_top == 12 ? ROYAL : STRAIGHT_FLUSH) << 20 | straight_top << 16);
        return (uint32_t)(STRAIGHT << 20 | straight_top << 16);
    }
    /* ranks ordered by (count desc, rank desc) */
    int order[5], n = 0;
    for (int c = 4; c >= 1; c--)
        for (int r = 12; r >= 0; r--)
            if (cnt[r] == c) order[n++] = r;
    int cat;
    if (flush) cat = FLUSH;
    else if (cnt[order[0]] == 4) cat = QUADS;
    else if (cnt[order[0]] == 3) cat = (cnt[order[1]] == 2) ? FULL_HOUSE : TRIPS;
    else if (cnt[order[0]] == 2) cat = (cnt[order[1]] == 2) ? TWO_PAIR : PAIR;
    else cat = HIGH;
    uint32_t key = (uint32_t)cat << 20;
    for (int i = 0; i < n; i++) key |= (uint32_t)order[i] << (16 - 4 * i);
    return key;
}

static inline int64_t colex5(const int *c) /* c sorted ascending */
{
    return (int64_t)(BINOM[c[0]][1] + BINOM[c[1]][2] + BINOM[c[2]][3] + BINOM[c[3]][4] + BINOM[c[4]][5]);
}

static inline void sort_small(int *a, int n)
{
    for (int i = 1; i < n; i++) {
        int v = a[i], j = i - 1;
        while (j >= 0 && a[j] > v) { a[j + 1] = a[j]; j--; }
        a[j + 1] = v;
    }
}

static inline int rank5_any(const int *cards) /* any order */
{
    int c[5];
    memcpy(c, cards, sizeof c);
    sort_small(c, 5);
    return RANK5[colex5(c)];
}

static int cmp_hand5(const void *a, const void *b)
{
    const hand5_t *x = a, *y = b;
    return (int)x->rank - (int)y->rank;
}

static int build_tables(void)
{
    if (tables_ready) return 0;
    for (int n = 0; n < 64; n++) {
        BINOM[n][0] = 1;
        for (int k = 1; k < 8; k++) BINOM[n][k] = n ? BINOM[n - 1][k - 1] + BINOM[n - 1][k] : 0;
    }
    SUBOFF[0] = 0;
    for (int k = 0; k < 5; k++) SUBOFF[k + 1] = SUBOFF[k] + (int64_t)BINOM[NCARDS][k];
    NSUB = SUBOFF[5];

    uint32_t *keys = malloc(sizeof(uint32_t) * NH5);
    uint8_t *seen = calloc((size_t)NCAT << 20, 1);
    uint16_t *dense = malloc(sizeof(uint16_t) * ((size_t)NCAT << 20));
    RANK5 = malloc(sizeof(uint16_t) * NH5);
    SORTED5 = malloc(sizeof(hand5_t) * NH5);
    if (!keys || !seen || !dense || !RANK5 || !SORTED5) return -1;
    int c[5];
    for (c[4] = 4; c[4] < 52; c[4]++)
     for (c[3] = 3; c[3] < c[4]; c[3]++)
      for (c[2] = 2; c[2] < c[3]; c[2]++)
       for (c[1] = 1; c[1] < c[2]; c[1]++)
        for (c[0] = 0; c[0] < c[1]; c[0]++) {
            int64_t ix = colex5(c);
            keys[ix] = key5(c);
            seen[keys[ix]] = 1;
        }
    int r = 0;
    for (uint32_t k = 0; k < ((uint32_t)NCAT << 20); k++)
        if (seen[k]) {
            dense[k] = (uint16_t)r;
            CAT_OF_RANK5[r] = (uint8_t)(k >> 20);
            KEY_OF_RANK5[r] = k;
            r++;
        }
    NRANK5 = r;
    for (c[4] = 4; c[4] < 52; c[4]++)
     for (c[3] = 3; c[3] < c[4]; c[3]++)
      for (c[2] = 2; c[2] < c[3]; c[2]++)
       for (c[1] = 1; c[1] < c[2]; c[1]++)
        for (c[0] = 0; c[0] < c[1]; c[0]++) {
            int64_t ix = colex5(c);
            uint16_t rk = dense[keys[ix]];
            RANK5[ix] = rk;
            hand5_t *h = &SORTED5[ix];
            for (int i = 0; i < 5; i++) h->c[i] = (uint8_t)c[i];
            h->rank = rk;
            h->cat = CAT_OF_RANK5[rk];
        }
    qsort(SORTED5, NH5, sizeof(hand5_t), cmp_hand5);
    free(keys); free(seen); free(dense);
    tables_ready = 1;
    return 0;
}

/* ---------- inclusion-exclusion over subsets of at most four cards ---------- */

static int MASK_POP[64];

/* Fill idx[] with the subset-table index of every subset of at most four of the n sorted
 * cards c[] (n <= 6); returns how many, with sign[] = (-1)^|T|. */
static inline int subsets_upto4(const int *c, int n, int64_t *idx, int *sign)
{
    int m = 0;
    for (int mask = 0; mask < (1 << n); mask++) {
        int k = MASK_POP[mask];
        if (k > 4) continue;
        int64_t ix = SUBOFF[k];
        int j = 0;
        for (int i = 0; i < n; i++)
            if (mask >> i & 1) { ix += (int64_t)BINOM[c[i]][++j]; }
        idx[m] = ix;
        sign[m] = (k & 1) ? -1 : 1;
        m++;
    }
    return m;
}

static inline int64_t ie_sum(const int32_t *cnt, const int64_t *idx, const int *sign, int m)
{
    int64_t s = 0;
    for (int i = 0; i < m; i++) s += sign[i] * (int64_t)cnt[idx[i]];
    return s;
}

/* add one dealer hole set h[4] (sorted) to the subset counts */
static inline void add_hole4(int32_t *cnt, const int *h)
{
    for (int mask = 0; mask < 16; mask++) {
        int k = MASK_POP[mask];
        int64_t ix = SUBOFF[k];
        int j = 0;
        for (int i = 0; i < 4; i++)
            if (mask >> i & 1) ix += (int64_t)BINOM[h[i]][++j];
        cnt[ix]++;
    }
}

/* ---------- Python API ---------- */

static PyObject *k_init(PyObject *self, PyObject *args)
{
    for (int m = 0; m < 64; m++) MASK_POP[m] = __builtin_popcount(m);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = build_tables();
    Py_END_ALLOW_THREADS
    if (rc) return PyErr_NoMemory();
    return Py_BuildValue("i", NRANK5);
}

static PyObject *k_progress(PyObject *self, PyObject *args)
{
    return Py_BuildValue("(ll)", PROGRESS_DONE, PROGRESS_TOTAL);
}

/* rank5(c0..c4) -> (dense rank, category) */
static PyObject *k_rank5(PyObject *self, PyObject *args)
{
    int c[5];
    if (!PyArg_ParseTuple(args, "iiiii", &c[0], &c[1], &c[2], &c[3], &c[4])) return NULL;
    for (int i = 0; i < 5; i++)
        if (c[i] < 0 || c[i] >= 52) { PyErr_SetString(PyExc_ValueError, "card out of range"); return NULL; }
    int r = rank5_any(c);
    return Py_BuildValue("(ii)", r, CAT_OF_RANK5[r]);
}

/* category_counts5() -> list of NCAT counts over all five-card hands */
static PyObject *k_category_counts5(PyObject *self, PyObject *args)
{
    uint64_t n[NCAT] = {0};
    for (int64_t i = 0; i < NH5; i++) n[SORTED5[i].cat]++;
    PyObject *out = PyList_New(NCAT);
    for (int i = 0; i < NCAT; i++) PyList_SET_ITEM(out, i, PyLong_FromUnsignedLongLong(n[i]));
    return out;
}

/* rank_table(n) -> bytes: uint16 dense rank of every n-card hand (n = 5 or 4) in colex order */
static PyObject *k_rank_table(PyObject *self, PyObject *args)
{
    int n;
    if (!PyArg_ParseTuple(args, "i", &n)) return NULL;
    if (n == 5) return PyBytes_FromStringAndSize((const char *)RANK5, (Py_ssize_t)NH5 * 2);
    if (n != 4) { PyErr_SetString(PyExc_ValueError, "n must be 4 or 5"); return NULL; }
    if (build_tables4()) return PyErr_NoMemory();
    return PyBytes_FromStringAndSize((const char *)RANK4, (Py_ssize_t)NH4 * 2);
}

/* key_of_rank5(r) -> the sortable key (category << 20 | rank nibbles) */
static PyObject *k_key_of_rank5(PyObject *self, PyObject *args)
{
    int r;
    if (!PyArg_ParseTuple(args, "i", &r)) return NULL;
    if (r < 0 || r >= NRANK5) { PyErr_SetString(PyExc_ValueError, "rank out of range"); return NULL; }
    return Py_BuildValue("I", KEY_OF_RANK5[r]);
}

/* ---------- Three Card Poker ---------- */

/* three-card categories, Three Card Poker order */
enum { T_HIGH, T_PAIR, T_FLUSH, T_STRAIGHT, T_TRIPS, T_SF, NCAT3 };

static uint32_t key3(const int *c)
{
    int r[3] = {c[0] >> 2, c[1] >> 2, c[2] >> 2};
    sort_small(r, 3); /* ascending */
    int flush = (c[0] & 3) == (c[1] & 3) && (c[1] & 3) == (c[2] & 3);
    int top = -1;
    if (r[0] != r[1] && r[1] != r[2]) {
        if (r[2] - r[0] == 2) top = r[2];
        else if (r[0] == 0 && r[1] == 1 && r[2] == 12) top = 1; /* A-2-3, the lowest straight */
    }
    if (r[0] == r[2]) return (uint32_t)(T_TRIPS << 12 | r[0] << 8);
    if (top >= 0) return (uint32_t)((flush ? T_SF : T_STRAIGHT) << 12 | top << 8);
    if (flush) return (uint32_t)(T_FLUSH << 12 | r[2] << 8 | r[1] << 4 | r[0]);
    if (r[0] == r[1]) return (uint32_t)(T_PAIR << 12 | r[0] << 8 | r[2] << 4);
    if (r[1] == r[2]) return (uint32_t)(T_PAIR << 12 | r[1] << 8 | r[0] << 4);
    return (uint32_t)(T_HIGH << 12 | r[2] << 8 | r[1] << 4 | r[0]);
}

/* tcp_counts(qualify_key) -> bytes: int32 [22100][6] = cat, key, dealer-not-qualifying,
 * player-beats-qualifying-dealer, tie, player-loses, over the 18,424 dealer hands.
 * Player hands in colex order.  The dealer qualifies with a key >= qualify_key. */
static PyObject *k_tcp_counts(PyObject *self, PyObject *args)
{
    unsigned qkey;
    if (!PyArg_ParseTuple(args, "I", &qkey)) return NULL;
    uint32_t *key = malloc(sizeof(uint32_t) * NH3);
    uint64_t *mask = malloc(sizeof(uint64_t) * NH3);
    PyObject *buf = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)NH3 * 6 * 4);
    if (!key || !mask || !buf) { free(key); free(mask); Py_XDECREF(buf); return PyErr_NoMemory(); }
    int32_t *out = (int32_t *)PyBytes_AS_STRING(buf);
    int c[3];
    for (c[2] = 2; c[2] < 52; c[2]++)
     for (c[1] = 1; c[1] < c[2]; c[1]++)
      for (c[0] = 0; c[0] < c[1]; c[0]++) {
        int64_t ix = (int64_t)(BINOM[c[0]][1] + BINOM[c[1]][2] + BINOM[c[2]][3]);
        key[ix] = key3(c);
        mask[ix] = (1ull << c[0]) | (1ull << c[1]) | (1ull << c[2]);
      }
    PROGRESS_DONE = 0; PROGRESS_TOTAL = NH3;
    Py_BEGIN_ALLOW_THREADS
    #pragma omp parallel for schedule(dynamic, 64)
    for (int p = 0; p < NH3; p++) {
        int32_t nq = 0, win = 0, tie = 0, lose = 0;
        uint32_t kp = key[p];
        uint64_t mp = mask[p];
        for (int d = 0; d < NH3; d++) {
            if (mask[d] & mp) continue;
            uint32_t kd = key[d];
            if (kd < qkey) nq++;
            else if (kp > kd) win++;
            else if (kp == kd) tie++;
            else lose++;
        }
        int32_t *o = out + (int64_t)p * 6;
        o[0] = (int32_t)(kp >> 12); o[1] = (int32_t)kp; o[2] = nq; o[3] = win; o[4] = tie; o[5] = lose;
        __sync_fetch_and_add(&PROGRESS_DONE, 1);
    }
    Py_END_ALLOW_THREADS
    free(key); free(mask);
    return buf;
}

/* ---------- Caribbean Stud (dealer: five cards, one of them face up) ---------- */

typedef struct {
    /* per strategy (0 optimal, 1 simple): combinations by outcome */
    uint64_t fold[2], noq[2], win[2][NCAT], tie[2][NCAT], lose[2];
    uint64_t raise_sit[2][NCAT], fold_sit[2][NCAT]; /* (hand, up card) situations */
    uint64_t indifferent;                            /* situations where raise == fold */
    /* optimal decisions for no-pair hands: by the five ranks (colex of 5 of 13) and up-card rank */
    uint64_t hc_raise[1287][13], hc_total[1287][13];
} stud_acc_t;

/* stud(pays[10], tie_wins, qualify_rank, simple_min_cat) -> tuple of counts.
 * pays: bet pays (x to 1) by the player's category; ante pays 1 to 1.
 * Raise = 2 antes.  tie_wins: 0 tie pushes, 1 tie settled for the player.
 * Optimal: raise iff EV(raise) > EV(fold) given the five cards and the dealer's up card. */
static PyObject *k_stud(PyObject *self, PyObject *args)
{
    int pays[NCAT], tie_wins, qrank, simple_min;
    if (!PyArg_ParseTuple(args, "(iiiiiiiiii)iii", &pays[0], &pays[1], &pays[2], &pays[3], &pays[4],
                          &pays[5], &pays[6], &pays[7], &pays[8], &pays[9], &tie_wins, &qrank, &simple_min))
        return NULL;
    stud_acc_t acc;
    memset(&acc, 0, sizeof acc);
    int failed = 0;
    PROGRESS_DONE = 0; PROGRESS_TOTAL = 13;
    const int64_t N = 163185; /* C(46,4) dealer hole sets */
    Py_BEGIN_ALLOW_THREADS
    #pragma omp parallel
    {
        stud_acc_t a;
        memset(&a, 0, sizeof a);
        int32_t *cnt = calloc((size_t)NSUB, sizeof(int32_t));
        int32_t *snap = malloc((size_t)NSUB * sizeof(int32_t));
        int32_t *lt = malloc((size_t)NH5 * sizeof(int32_t));
        int32_t *eq = malloc((size_t)NH5 * sizeof(int32_t));
        if (!cnt || !snap || !lt || !eq) failed = 1;
        #pragma omp for schedule(dynamic, 1)
        for (int ur = 0; ur < 13; ur++) {
            if (failed) continue;
            int u = ur * 4; /* up card of suit 0; the other suits are the same by symmetry */
            memset(cnt, 0, (size_t)NSUB * sizeof(int32_t));
            int64_t idx[32]; int sign[32];
            for (int64_t g = 0, gend; g < NH5; g = gend) {
                int rk = SORTED5[g].rank;
                for (gend = g; gend < NH5 && SORTED5[gend].rank == rk; gend++) ;
                if (rk == qrank) memcpy(snap, cnt, (size_t)NSUB * sizeof(int32_t));
                for (int64_t i = g; i < gend; i++) {
                    const uint8_t *hc = SORTED5[i].c;
                    if (hc[0] == u || hc[1] == u || hc[2] == u || hc[3] == u || hc[4] == u) continue;
                    int c[5] = {hc[0], hc[1], hc[2], hc[3], hc[4]};
                    int m = subsets_upto4(c, 5, idx, sign);
                    lt[i] = (int32_t)ie_sum(cnt, idx, sign, m);
                }
                for (int64_t i = g; i < gend; i++) {
                    const uint8_t *hc = SORTED5[i].c;
                    int h[4], n = 0, has = 0;
                    for (int j = 0; j < 5; j++) { if (hc[j] == u) has = 1; else if (n < 4) h[n++] = hc[j]; }
                    if (has) add_hole4(cnt, h);
                }
                for (int64_t i = g; i < gend; i++) {
                    const uint8_t *hc = SORTED5[i].c;
                    if (hc[0] == u || hc[1] == u || hc[2] == u || hc[3] == u || hc[4] == u) continue;
                    int c[5] = {hc[0], hc[1], hc[2], hc[3], hc[4]};
                    int m = subsets_upto4(c, 5, idx, sign);
                    eq[i] = (int32_t)(ie_sum(cnt, idx, sign, m) - lt[i]);
                }
            }
            for (int64_t i = 0; i < NH5; i++) {
                const uint8_t *hc = SORTED5[i].c;
                if (hc[0] == u || hc[1] == u || hc[2] == u || hc[3] == u || hc[4] == u) continue;
                int c[5] = {hc[0], hc[1], hc[2], hc[3], hc[4]};
                int m = subsets_upto4(c, 5, idx, sign);
                int64_t nq = ie_sum(snap, idx, sign, m);
                int cat = SORTED5[i].cat;
                int64_t win, tie, lose;
                if (SORTED5[i].rank >= qrank) {
                    win = lt[i] - nq; tie = eq[i]; lose = N - lt[i] - eq[i];
                } else {
                    win = 0; tie = 0; lose = N - nq;
                }
                int64_t winv = 1 + 2 * (int64_t)pays[cat];
                int64_t ev_raise = nq + win * winv + tie * (tie_wins ? winv : 0) - lose * 3;
                int raise_opt = ev_raise > -N;
                if (ev_raise == -N) a.indifferent += 4;
                int raise_simple = cat >= simple_min;
                if (cat == HIGH || cat == FLUSH) {
                    int r5[5];
                    for (int j = 0; j < 5; j++) r5[j] = hc[j] >> 2; /* ascending, distinct */
                    int pat = 0;
                    for (int j = 0; j < 5; j++) pat += (int)BINOM[r5[j]][j + 1];
                    if (cat == HIGH) {
                        a.hc_total[pat][ur] += 4;
                        if (raise_opt) a.hc_raise[pat][ur] += 4;
                    }
                }
                for (int s = 0; s < 2; s++) {
                    int r = s ? raise_simple : raise_opt;
                    if (r) {
                        a.raise_sit[s][cat] += 4;
                        a.noq[s] += 4 * nq;
                        a.win[s][cat] += 4 * win;
                        a.tie[s][cat] += 4 * tie;
                        a.lose[s] += 4 * lose;
                    } else {
                        a.fold_sit[s][cat] += 4;
                        a.fold[s] += 4 * N;
                    }
                }
            }
            __sync_fetch_and_add(&PROGRESS_DONE, 1);
        }
        #pragma omp critical
        {
            uint64_t *dst = (uint64_t *)&acc, *src = (uint64_t *)&a;
            for (size_t k = 0; k < sizeof(stud_acc_t) / sizeof(uint64_t); k++) dst[k] += src[k];
        }
        free(cnt); free(snap); free(lt); free(eq);
    }
    Py_END_ALLOW_THREADS
    if (failed) return PyErr_NoMemory();
    PyObject *strategies = PyList_New(2);
    for (int s = 0; s < 2; s++) {
        PyObject *win = PyList_New(NCAT), *tie = PyList_New(NCAT), *rs = PyList_New(NCAT), *fs = PyList_New(NCAT);
        for (int k = 0; k < NCAT; k++) {
            PyList_SET_ITEM(win, k, PyLong_FromUnsignedLongLong(acc.win[s][k]));
            PyList_SET_ITEM(tie, k, PyLong_FromUnsignedLongLong(acc.tie[s][k]));
            PyList_SET_ITEM(rs, k, PyLong_FromUnsignedLongLong(acc.raise_sit[s][k]));
            PyList_SET_ITEM(fs, k, PyLong_FromUnsignedLongLong(acc.fold_sit[s][k]));
        }
        PyList_SET_ITEM(strategies, s, Py_BuildValue("{s:K,s:K,s:N,s:N,s:K,s:N,s:N}",
            "fold", acc.fold[s], "noq", acc.noq[s], "win", win, "tie", tie, "lose", acc.lose[s],
            "raise_situations", rs, "fold_situations", fs));
    }
    PyObject *hc = PyList_New(0);
    for (int pat = 0; pat < 1287; pat++)
        for (int ur = 0; ur < 13; ur++)
            if (acc.hc_raise[pat][ur]) {
                PyObject *t = Py_BuildValue("(iiKK)", pat, ur, acc.hc_raise[pat][ur], acc.hc_total[pat][ur]);
                PyList_Append(hc, t);
                Py_DECREF(t);
            }
    return Py_BuildValue("{s:N,s:K,s:N}", "strategies", strategies, "indifferent", acc.indifferent,
                         "high_card_raises", hc);
}

/* ---------- Colorado Hold'em (three cards, discard one, three community cards) ---------- */

#define NFINE 23 /* categories with the pair split by its rank: 0..9 as NCAT (pair unused), 10 + pair rank */
static uint8_t FINE_OF_RANK5[8192];

static const int SUIT_PERMS[24][4] = {
    {0,1,2,3},{0,1,3,2},{0,2,1,3},{0,2,3,1},{0,3,1,2},{0,3,2,1},{1,0,2,3},{1,0,3,2},
    {1,2,0,3},{1,2,3,0},{1,3,0,2},{1,3,2,0},{2,0,1,3},{2,0,3,1},{2,1,0,3},{2,1,3,0},
    {2,3,0,1},{2,3,1,0},{3,0,1,2},{3,0,2,1},{3,1,0,2},{3,1,2,0},{3,2,0,1},{3,2,1,0}};

/* smallest colex index of the hand over the 24 suit permutations; *which gets the first
 * permutation (index into SUIT_PERMS) that reaches it */
static int suit_perm_min_ix(const int *c, int n, int *which)
{
    int best = -1;
    for (int p = 0; p < 24; p++) {
        int d[8];
        for (int i = 0; i < n; i++) d[i] = (c[i] & ~3) | SUIT_PERMS[p][c[i] & 3];
        sort_small(d, n);
        int ix = 0;
        for (int i = 0; i < n; i++) ix += (int)BINOM[d[i]][i + 1];
        if (best < 0 || ix < best) { best = ix; *which = p; }
    }
    return best;
}

static int suit_perm_min(const int *c, int n, int *perm_out)
{
    /* the same, with the permutation's map in perm_out */
    int p = 0, best = suit_perm_min_ix(c, n, &p);
    memcpy(perm_out, SUIT_PERMS[p], sizeof(int) * 4);
    return best;
}

/* colorado_counts() -> bytes: int32 [22100][4 + 3 * NFINE]: instant-winner kind (0 none,
 * 1 three of a kind, 2 three-card straight flush), 3 unused, then for each discard (the
 * card at sorted position d) the final five-card hands by fine category over the 18,424
 * community sets.  Hands are computed once per suit-isomorphism class. */
static PyObject *k_colorado_counts(PyObject *self, PyObject *args)
{
    const int W = 4 + 3 * NFINE;
    for (int r = 0; r < NRANK5; r++) {
        int cat = CAT_OF_RANK5[r];
        FINE_OF_RANK5[r] = (uint8_t)(cat == PAIR ? 10 + ((KEY_OF_RANK5[r] >> 16) & 15) : cat);
    }
    PyObject *buf = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)NH3 * W * 4);
    int *canon = malloc(sizeof(int) * NH3), (*perm)[4] = malloc(sizeof(int[4]) * NH3);
    if (!buf || !canon || !perm) { Py_XDECREF(buf); free(canon); free(perm); return PyErr_NoMemory(); }
    int32_t *out = (int32_t *)PyBytes_AS_STRING(buf);
    memset(out, 0, (size_t)NH3 * W * 4);
    static int HC[NH3][3];
    int c[3], ncanon = 0;
    for (c[2] = 2; c[2] < 52; c[2]++)
     for (c[1] = 1; c[1] < c[2]; c[1]++)
      for (c[0] = 0; c[0] < c[1]; c[0]++) {
        int ix = (int)(BINOM[c[0]][1] + BINOM[c[1]][2] + BINOM[c[2]][3]);
        memcpy(HC[ix], c, sizeof c);
        canon[ix] = suit_perm_min(c, 3, perm[ix]);
        if (canon[ix] == ix) ncanon++;
      }
    PROGRESS_DONE = 0; PROGRESS_TOTAL = ncanon;
    Py_BEGIN_ALLOW_THREADS
    #pragma omp parallel for schedule(dynamic, 4)
    for (int h = 0; h < NH3; h++) {
        if (canon[h] != h) continue;
        const int *p = HC[h];
        int32_t *o = out + (int64_t)h * W;
        int r0 = p[0] >> 2, r1 = p[1] >> 2, r2 = p[2] >> 2;
        int suited = (p[0] & 3) == (p[1] & 3) && (p[1] & 3) == (p[2] & 3);
        int run = (r1 == r0 + 1 && r2 == r1 + 1) || (r0 == 0 && r1 == 1 && r2 == 12);
        o[0] = (r0 == r2) ? 1 : (suited && run) ? 2 : 0;
        uint64_t used = (1ull << p[0]) | (1ull << p[1]) | (1ull << p[2]);
        for (int d = 0; d < 3; d++) {
            int k0 = p[d == 0 ? 1 : 0], k1 = p[d == 2 ? 1 : 2];
            int32_t *f = o + 4 + d * NFINE;
            int t[3];
            for (t[2] = 2; t[2] < 52; t[2]++) {
                if (used >> t[2] & 1) continue;
                for (t[1] = 1; t[1] < t[2]; t[1]++) {
                    if (used >> t[1] & 1) continue;
                    for (t[0] = 0; t[0] < t[1]; t[0]++) {
                        if (used >> t[0] & 1) continue;
                        int m[5], i = 0, j = 0, n = 0, k[2] = {k0, k1};
                        while (i < 2 && j < 3) m[n++] = (k[i] < t[j]) ? k[i++] : t[j++];
                        while (i < 2) m[n++] = k[i++];
                        while (j < 3) m[n++] = t[j++];
                        f[FINE_OF_RANK5[RANK5[colex5(m)]]]++;
                    }
                }
            }
        }
        __sync_fetch_and_add(&PROGRESS_DONE, 1);
    }
    Py_END_ALLOW_THREADS
    /* copy each class's counts to its other members, mapping the discarded card */
    for (int h = 0; h < NH3; h++) {
        int g = canon[h];
        if (g == h) continue;
        int32_t *o = out + (int64_t)h * W, *src = out + (int64_t)g * W;
        o[0] = src[0];
        for (int d = 0; d < 3; d++) {
            int x = HC[h][d], y = (x & ~3) | perm[h][x & 3], e = 0;
            while (HC[g][e] != y) e++;
            memcpy(o + 4 + d * NFINE, src + 4 + e * NFINE, sizeof(int32_t) * NFINE);
        }
    }
    free(canon); free(perm);
    return buf;
}

/* ---------- four-card hands (California Draw Poker) ---------- */

/* four-card categories, weakest first: rulebook 003's Action Bet table lists four of a kind,
 * straight flush, three of a kind, straight, flush, two pair in that order */
enum { F_HIGH, F_PAIR, F_TWO_PAIR, F_FLUSH, F_STRAIGHT, F_TRIPS, F_SF, F_QUADS, NCAT4 };

static uint16_t *RANK4;
static int NRANK4;
static uint8_t CAT_OF_RANK4[4096];
typedef struct { uint8_t c[4]; uint8_t cat; uint8_t pad; uint16_t rank; } hand4_t;
static hand4_t *SORTED4;
static int tables4_ready = 0;

static inline int64_t colex4(const int *c)
{
    return (int64_t)(BINOM[c[0]][1] + BINOM[c[1]][2] + BINOM[c[2]][3] + BINOM[c[3]][4]);
}

static uint32_t key4(const int *cards)
{
    int cnt[13] = {0};
    int suit0 = cards[0] & 3, flush = 1;
    unsigned mask = 0;
    for (int i = 0; i < 4; i++) {
        int r = cards[i] >> 2;
        cnt[r]++;
        mask |= 1u << r;
        if ((cards[i] & 3) != suit0) flush = 0;
    }
    int top = -1;
    if (__builtin_popcount(mask) == 4) {
        int hi = 31 - __builtin_clz(mask), lo = __builtin_ctz(mask);
        if (hi - lo == 3) top = hi;
        else if (mask == 0x1007) top = 2; /* A-2-3-4: the four is high */
    }
    if (top >= 0) return (uint32_t)((flush ? F_SF : F_STRAIGHT) << 16 | top << 12);
    int order[4], n = 0;
    for (int c = 4; c >= 1; c--)
        for (int r = 12; r >= 0; r--)
            if (cnt[r] == c) order[n++] = r;
    int cat;
    if (cnt[order[0]] == 4) cat = F_QUADS;
    else if (cnt[order[0]] == 3) cat = F_TRIPS;
    else if (flush) cat = F_FLUSH;
    else if (cnt[order[0]] == 2) cat = (cnt[order[1]] == 2) ? F_TWO_PAIR : F_PAIR;
    else cat = F_HIGH;
    uint32_t key = (uint32_t)cat << 16;
    for (int i = 0; i < n; i++) key |= (uint32_t)order[i] << (12 - 4 * i);
    return key;
}

static int cmp_hand4(const void *a, const void *b)
{
    return (int)((const hand4_t *)a)->rank - (int)((const hand4_t *)b)->rank;
}

static int build_tables4(void)
{
    if (tables4_ready) return 0;
    uint32_t *keys = malloc(sizeof(uint32_t) * NH4);
    uint8_t *seen = calloc((size_t)NCAT4 << 16, 1);
    uint16_t *dense = malloc(sizeof(uint16_t) * ((size_t)NCAT4 << 16));
    RANK4 = malloc(sizeof(uint16_t) * NH4);
    SORTED4 = malloc(sizeof(hand4_t) * NH4);
    if (!keys || !seen || !dense || !RANK4 || !SORTED4) return -1;
    int c[4];
    for (c[3] = 3; c[3] < 52; c[3]++)
     for (c[2] = 2; c[2] < c[3]; c[2]++)
      for (c[1] = 1; c[1] < c[2]; c[1]++)
       for (c[0] = 0; c[0] < c[1]; c[0]++) {
           int64_t ix = colex4(c);
           keys[ix] = key4(c);
           seen[keys[ix]] = 1;
       }
    int r = 0;
    for (uint32_t k = 0; k < ((uint32_t)NCAT4 << 16); k++)
        if (seen[k]) { dense[k] = (uint16_t)r; CAT_OF_RANK4[r] = (uint8_t)(k >> 16); r++; }
    NRANK4 = r;
    for (c[3] = 3; c[3] < 52; c[3]++)
     for (c[2] = 2; c[2] < c[3]; c[2]++)
      for (c[1] = 1; c[1] < c[2]; c[1]++)
       for (c[0] = 0; c[0] < c[1]; c[0]++) {
           int64_t ix = colex4(c);
           uint16_t rk = dense[keys[ix]];
           RANK4[ix] = rk;
           hand4_t *h = &SORTED4[ix];
           for (int i = 0; i < 4; i++) h->c[i] = (uint8_t)c[i];
           h->rank = rk; h->cat = CAT_OF_RANK4[rk]; h->pad = 0;
       }
    qsort(SORTED4, NH4, sizeof(hand4_t), cmp_hand4);
    free(keys); free(seen); free(dense);
    tables4_ready = 1;
    return 0;
}

static PyObject *k_rank4(PyObject *self, PyObject *args)
{
    int c[4];
    if (!PyArg_ParseTuple(args, "iiii", &c[0], &c[1], &c[2], &c[3])) return NULL;
    for (int i = 0; i < 4; i++)
        if (c[i] < 0 || c[i] >= 52) { PyErr_SetString(PyExc_ValueError, "card out of range"); return NULL; }
    if (build_tables4()) return PyErr_NoMemory();
    sort_small(c, 4);
    int r = RANK4[colex4(c)];
    return Py_BuildValue("(ii)", r, CAT_OF_RANK4[r]);
}

static PyObject *k_category_counts4(PyObject *self, PyObject *args)
{
    if (build_tables4()) return PyErr_NoMemory();
    uint64_t n[NCAT4] = {0};
    for (int64_t i = 0; i < NH4; i++) n[SORTED4[i].cat]++;
    PyObject *out = PyList_New(NCAT4);
    for (int i = 0; i < NCAT4; i++) PyList_SET_ITEM(out, i, PyLong_FromUnsignedLongLong(n[i]));
    return out;
}

/* colex index (among 4-sets) of the sorted 3-set k plus card x (x not in k) */
static inline int64_t colex3plus(const int *k, int x)
{
    int m[4], n = 0, i = 0;
    while (i < 3 && k[i] < x) m[n++] = k[i++];
    m[n++] = x;
    while (i < 3) m[n++] = k[i++];
    return colex4(m);
}

typedef struct {
    uint64_t fold[2];
    uint64_t win[2][NCAT4], tie[2][NCAT4], lose[2][NCAT4];   /* deals, by the player's final hand */
    uint64_t fold_sit[2][NCAT4], stand_sit[2][NCAT4], draw_sit[2][NCAT4]; /* situations, by initial hand */
    uint64_t indifferent;
} cal_acc_t;

/* california(bonus[8], simple_call_min, simple_stand_min) -> counts.
 * Player: four cards, sees the dealer's up card u; folds (loses the ante) or calls (= ante)
 * and stands or discards one card and draws one.  Dealer: u plus the best three of four
 * hole cards.  Higher four-card hand wins ante and call 1 to 1, tie pushes; bonus[cat]
 * pays the ante x to 1 on the player's final hand whatever the dealer holds.
 * Every (four cards, up card, four hole cards, next card) is one deal.  Optional: probe_hand
 * (colex) and probe_u return that situation's expected values; only_ur >= 0 enumerates the
 * up cards of that rank alone (tests). */
static PyObject *k_california(PyObject *self, PyObject *args)
{
    int bonus[NCAT4], simple_call, simple_stand;
    long long probe_hand = -1;
    int probe_u = -1, only_ur = -1;
    int64_t probe_ev[5] = {0};
    if (!PyArg_ParseTuple(args, "(iiiiiiii)ii|Lii", &bonus[0], &bonus[1], &bonus[2], &bonus[3], &bonus[4],
                          &bonus[5], &bonus[6], &bonus[7], &simple_call, &simple_stand, &probe_hand, &probe_u,
                          &only_ur))
        return NULL;
    if (build_tables4()) return PyErr_NoMemory();
    cal_acc_t acc;
    memset(&acc, 0, sizeof acc);
    int failed = 0;
    const int64_t N4 = 178365, N5 = 163185, W = 43; /* C(47,4), C(46,4), next cards unseen by a stander */
    const int64_t TOT = N5 * 47;                    /* = N4 * 43 = 7,669,695 per (hand, up card) */
    PROGRESS_DONE = 0; PROGRESS_TOTAL = 13;
    Py_BEGIN_ALLOW_THREADS
    #pragma omp parallel
    {
        cal_acc_t a;
        memset(&a, 0, sizeof a);
        int32_t *cnt = calloc((size_t)NSUB, sizeof(int32_t));
        int32_t *ltF = malloc((size_t)NH4 * 52 * sizeof(int32_t));
        int32_t *eqF = malloc((size_t)NH4 * 52 * sizeof(int32_t));
        int32_t *ltS = malloc((size_t)NH4 * sizeof(int32_t));
        int32_t *eqS = malloc((size_t)NH4 * sizeof(int32_t));
        uint32_t *dval = malloc((size_t)NH4 * sizeof(uint32_t));
        uint8_t (*dh)[4] = malloc((size_t)NH4 * 4);
        uint8_t (*dsorted)[4] = malloc((size_t)NH4 * 4);
        int32_t *dstart = malloc(sizeof(int32_t) * (NRANK4 + 2));
        if (!cnt || !ltF || !eqF || !ltS || !eqS || !dval || !dh || !dsorted || !dstart) failed = 1;
        #pragma omp for schedule(dynamic, 1)
        for (int ur = 0; ur < 13; ur++) {
            if (failed || (only_ur >= 0 && ur != only_ur)) continue;
            int u = ur * 4;
            memset(cnt, 0, (size_t)NSUB * sizeof(int32_t));
            /* dealer hole sets: value = best four-card hand of u and three of them */
            int nd = 0;
            memset(dstart, 0, sizeof(int32_t) * (NRANK4 + 2));
            for (int64_t i = 0; i < NH4; i++) {
                const uint8_t *hc = SORTED4[i].c;
                if (hc[0] == u || hc[1] == u || hc[2] == u || hc[3] == u) continue;
                int best = 0;
                for (int j = 0; j < 4; j++) {
                    int m[4], n = 0;
                    for (int k = 0; k < 4; k++) if (k != j) m[n++] = hc[k];
                    m[3] = u;
                    sort_small(m, 4);
                    int r = RANK4[colex4(m)];
                    if (r > best) best = r;
                }
                dval[nd] = (uint32_t)best;
                memcpy(dh[nd], hc, 4);
                dstart[best + 1]++;
                nd++;
            }
            for (int r = 0; r < NRANK4; r++) dstart[r + 1] += dstart[r];
            {
                int32_t *fill = malloc(sizeof(int32_t) * (NRANK4 + 1));
                memcpy(fill, dstart, sizeof(int32_t) * (NRANK4 + 1));
                for (int i = 0; i < nd; i++) memcpy(dsorted[fill[dval[i]]++], dh[i], 4);
                free(fill);
            }
            /* sweep the four-card ranks */
            for (int64_t g = 0, gend; g < NH4; g = gend) {
                int rk = SORTED4[g].rank;
                for (gend = g; gend < NH4 && SORTED4[gend].rank == rk; gend++) ;
                for (int phase = 0; phase < 2; phase++) {
                    if (phase == 1)
                        for (int d = dstart[rk]; d < dstart[rk + 1]; d++) {
                            int h[4] = {dsorted[d][0], dsorted[d][1], dsorted[d][2], dsorted[d][3]};
                            add_hole4(cnt, h);
                        }
                    for (int64_t i = g; i < gend; i++) {
                        const uint8_t *fc = SORTED4[i].c;
                        if (fc[0] == u || fc[1] == u || fc[2] == u || fc[3] == u) continue;
                        int f[4] = {fc[0], fc[1], fc[2], fc[3]};
                        int64_t fix = colex4(f);
                        int64_t sF = 0;
                        int32_t *outF = (phase ? eqF : ltF) + fix * 52;
                        int32_t *ltRow = ltF + fix * 52;
                        /* the subsets T of F: sign and, for |T| <= 3, the colex of T plus any x */
                        int64_t accx[52];
                        memset(accx, 0, sizeof accx);
                        for (int mask = 0; mask < 16; mask++) {
                            int k = MASK_POP[mask], t[4], n = 0;
                            for (int b = 0; b < 4; b++) if (mask >> b & 1) t[n++] = f[b];
                            int64_t ix = SUBOFF[k];
                            for (int j = 0; j < k; j++) ix += (int64_t)BINOM[t[j]][j + 1];
                            int sgn = (k & 1) ? -1 : 1;
                            sF += sgn * (int64_t)cnt[ix];
                            if (k == 4) continue;
                            /* T plus x, for x outside F: low part, x at position p, high part */
                            int64_t low[5], high[5];
                            low[0] = 0;
                            for (int p = 0; p < k; p++) low[p + 1] = low[p] + (int64_t)BINOM[t[p]][p + 1];
                            high[k] = 0;
                            for (int p = k - 1; p >= 0; p--) high[p] = high[p + 1] + (int64_t)BINOM[t[p]][p + 2];
                            int p = 0;
                            int64_t base = SUBOFF[k + 1];
                            for (int x = 0; x < 52; x++) {
                                while (p < k && t[p] < x) p++;
                                if (p < k && t[p] == x) continue;
                                accx[x] -= sgn * (int64_t)cnt[base + low[p] + (int64_t)BINOM[x][p + 1] + high[p]];
                            }
                        }
                        /* dealer hands avoiding F and x: sum over T of F and T plus x */
                        for (int x = 0; x < 52; x++) {
                            if (x == u || x == f[0] || x == f[1] || x == f[2] || x == f[3]) continue;
                            int64_t v = sF + accx[x];
                            outF[x] = phase ? (int32_t)(v - ltRow[x]) : (int32_t)v;
                        }
                        if (phase) eqS[fix] = (int32_t)(sF - ltS[fix]); else ltS[fix] = (int32_t)sF;
                    }
                }
            }
            /* decisions and totals for every player hand with this up card */
            for (int64_t i = 0; i < NH4; i++) {
                const uint8_t *pc = SORTED4[i].c;
                if (pc[0] == u || pc[1] == u || pc[2] == u || pc[3] == u) continue;
                int p[4] = {pc[0], pc[1], pc[2], pc[3]};
                int cp = SORTED4[i].cat;
                int64_t pix = colex4(p);
                int64_t ls = ltS[pix], es = eqS[pix], los = N4 - ls - es;
                int64_t ev_stand = W * (2 * ls - 2 * los + bonus[cp] * N4);
                int64_t ev_draw[4];
                for (int di = 0; di < 4; di++) {
                    int k[3], n = 0;
                    for (int j = 0; j < 4; j++) if (j != di) k[n++] = p[j];
                    int x = p[di];
                    int64_t ev = 0;
                    for (int c = 0; c < 52; c++) {
                        if (c == u || c == p[0] || c == p[1] || c == p[2] || c == p[3]) continue;
                        int64_t fix = colex3plus(k, c);
                        int64_t lt = ltF[fix * 52 + x], eq = eqF[fix * 52 + x], lo = N5 - lt - eq;
                        ev += 2 * lt - 2 * lo + bonus[CAT_OF_RANK4[RANK4[fix]]] * N5;
                    }
                    ev_draw[di] = ev;
                }
                if (pix == probe_hand && u == probe_u) {
                    probe_ev[0] = ev_stand;
                    for (int di = 0; di < 4; di++) probe_ev[1 + di] = ev_draw[di];
                }
                /* optimal: fold < stand < draw (in card order) among equals */
                int choice = -2; /* -2 fold, -1 stand, 0..3 discard */
                int64_t best = -TOT;
                if (ev_stand > best) { best = ev_stand; choice = -1; }
                else if (ev_stand == best) a.indifferent += 4;
                for (int di = 0; di < 4; di++)
                    if (ev_draw[di] > best) { best = ev_draw[di]; choice = di; }
                /* simple: call with simple_call or better; stand with simple_stand or better;
                 * else discard the lowest card that is not part of a pair */
                int simple = -2;
                if (cp >= simple_call) {
                    if (cp >= simple_stand) simple = -1;
                    else {
                        for (int j = 0; j < 4; j++) {
                            int paired = 0;
                            for (int l = 0; l < 4; l++) if (l != j && (p[l] >> 2) == (p[j] >> 2)) paired = 1;
                            if (!paired) { simple = j; break; }
                        }
                        if (simple == -2) simple = -1;
                    }
                }
                for (int s = 0; s < 2; s++) {
                    int ch = s ? simple : choice;
                    if (ch == -2) {
                        a.fold[s] += 4 * (uint64_t)TOT;
                        a.fold_sit[s][cp] += 4;
                    } else if (ch == -1) {
                        a.stand_sit[s][cp] += 4;
                        a.win[s][cp] += 4 * (uint64_t)(W * ls);
                        a.tie[s][cp] += 4 * (uint64_t)(W * es);
                        a.lose[s][cp] += 4 * (uint64_t)(W * los);
                    } else {
                        a.draw_sit[s][cp] += 4;
                        int k[3], n = 0;
                        for (int j = 0; j < 4; j++) if (j != ch) k[n++] = p[j];
                        int x = p[ch];
                        for (int c = 0; c < 52; c++) {
                            if (c == u || c == p[0] || c == p[1] || c == p[2] || c == p[3]) continue;
                            int64_t fix = colex3plus(k, c);
                            int64_t lt = ltF[fix * 52 + x], eq = eqF[fix * 52 + x], lo = N5 - lt - eq;
                            int cf = CAT_OF_RANK4[RANK4[fix]];
                            a.win[s][cf] += 4 * (uint64_t)lt;
                            a.tie[s][cf] += 4 * (uint64_t)eq;
                            a.lose[s][cf] += 4 * (uint64_t)lo;
                        }
                    }
                }
            }
            __sync_fetch_and_add(&PROGRESS_DONE, 1);
        }
        #pragma omp critical
        {
            uint64_t *dst = (uint64_t *)&acc, *src = (uint64_t *)&a;
            for (size_t k = 0; k < sizeof(cal_acc_t) / sizeof(uint64_t); k++) dst[k] += src[k];
        }
        free(cnt); free(ltF); free(eqF); free(ltS); free(eqS); free(dval); free(dh); free(dsorted); free(dstart);
    }
    Py_END_ALLOW_THREADS
    if (failed) return PyErr_NoMemory();
    PyObject *strategies = PyList_New(2);
    for (int s = 0; s < 2; s++) {
        PyObject *l[6];
        uint64_t *src[6] = {acc.win[s], acc.tie[s], acc.lose[s], acc.fold_sit[s], acc.stand_sit[s], acc.draw_sit[s]};
        for (int j = 0; j < 6; j++) {
            l[j] = PyList_New(NCAT4);
            for (int k = 0; k < NCAT4; k++) PyList_SET_ITEM(l[j], k, PyLong_FromUnsignedLongLong(src[j][k]));
        }
        PyList_SET_ITEM(strategies, s, Py_BuildValue("{s:K,s:N,s:N,s:N,s:N,s:N,s:N}", "fold", acc.fold[s],
            "win", l[0], "tie", l[1], "lose", l[2], "fold_situations", l[3], "stand_situations", l[4],
            "draw_situations", l[5]));
    }
    return Py_BuildValue("{s:N,s:K,s:(LLLLL)}", "strategies", strategies, "indifferent", acc.indifferent,
                         "probe", probe_ev[0], probe_ev[1], probe_ev[2], probe_ev[3], probe_ev[4]);
}

/* california_brute(bonus[8], p0..p3, u) -> (stand, discard p0..p3): the expected-value
 * numerators (over 7,669,695) by direct loops over every dealer hand, no sweep: the
 * test oracle for k_california. */
static int dealer4(int u, const int *h)
{
    int best = 0;
    for (int j = 0; j < 4; j++) {
        int m[4], n = 0;
        for (int k = 0; k < 4; k++) if (k != j) m[n++] = h[k];
        m[3] = u;
        sort_small(m, 4);
        int r = RANK4[colex4(m)];
        if (r > best) best = r;
    }
    return best;
}

static PyObject *k_california_brute(PyObject *self, PyObject *args)
{
    int bonus[NCAT4], p[4], u;
    if (!PyArg_ParseTuple(args, "(iiiiiiii)(iiii)i", &bonus[0], &bonus[1], &bonus[2], &bonus[3], &bonus[4],
                          &bonus[5], &bonus[6], &bonus[7], &p[0], &p[1], &p[2], &p[3], &u))
        return NULL;
    if (build_tables4()) return PyErr_NoMemory();
    sort_small(p, 4);
    int64_t ev[5] = {0};
    Py_BEGIN_ALLOW_THREADS
    int deck[52], nd = 0;
    for (int c = 0; c < 52; c++) if (c != u && c != p[0] && c != p[1] && c != p[2] && c != p[3]) deck[nd++] = c;
    int rp = RANK4[colex4(p)];
    /* each hole set once, then the 43 next cards (unused by a stander) */
    for (int a = 0; a < nd; a++) for (int b = a + 1; b < nd; b++) for (int c = b + 1; c < nd; c++) for (int d = c + 1; d < nd; d++) {
        int h[4] = {deck[a], deck[b], deck[c], deck[d]};
        int dv = dealer4(u, h);
        ev[0] += 43 * ((rp > dv ? 2 : rp < dv ? -2 : 0) + bonus[CAT_OF_RANK4[rp]]);
        for (int n = 0; n < nd; n++) {
            int x = deck[n];
            if (x == h[0] || x == h[1] || x == h[2] || x == h[3]) continue;
            for (int di = 0; di < 4; di++) {
                int f[4], m = 0;
                for (int j = 0; j < 4; j++) if (j != di) f[m++] = p[j];
                f[3] = x;
                sort_small(f, 4);
                int rf = RANK4[colex4(f)];
                ev[1 + di] += (rf > dv ? 2 : rf < dv ? -2 : 0) + bonus[CAT_OF_RANK4[rf]];
            }
        }
    }
    Py_END_ALLOW_THREADS
    return Py_BuildValue("(LLLLL)", ev[0], ev[1], ev[2], ev[3], ev[4]);
}

/* ---------- Caribbean poker with clear bets and a bought sixth card (rulebook 004) ---------- */

#define NH6 20358520 /* C(52,6) */
static uint16_t *BEST6;  /* colex6 -> rank of the best five of the six */
static uint8_t *XSTAR6;  /* colex6 -> the lowest card whose discard leaves that best five */

static int build_tables6(void)
{
    if (BEST6) return 0;
    uint16_t *best = malloc(sizeof(uint16_t) * (size_t)NH6);
    uint8_t *xs = malloc((size_t)NH6);
    if (!best || !xs) { free(best); free(xs); return -1; }
    #pragma omp parallel for schedule(dynamic, 1)
    for (int c5 = 5; c5 < 52; c5++) {
        int c[6];
        c[5] = c5;
        for (c[4] = 4; c[4] < c[5]; c[4]++)
         for (c[3] = 3; c[3] < c[4]; c[3]++)
          for (c[2] = 2; c[2] < c[3]; c[2]++)
           for (c[1] = 1; c[1] < c[2]; c[1]++)
            for (c[0] = 0; c[0] < c[1]; c[0]++) {
                int64_t ix = 0;
                for (int i = 0; i < 6; i++) ix += (int64_t)BINOM[c[i]][i + 1];
                int b = -1, bx = 0;
                for (int d = 0; d < 6; d++) {
                    int f[5], n = 0;
                    for (int i = 0; i < 6; i++) if (i != d) f[n++] = c[i];
                    int r = RANK5[colex5(f)];
                    if (r > b || (r == b && c[d] < bx)) { b = r; bx = c[d]; }
                }
                best[ix] = (uint16_t)b;
                xs[ix] = (uint8_t)bx;
            }
    }
    XSTAR6 = xs;
    BEST6 = best;
    return 0;
}

static inline int64_t colex5plus(const int *f, int x)
{
    int m[6], n = 0, i = 0;
    while (i < 5 && f[i] < x) m[n++] = f[i++];
    m[n++] = x;
    while (i < 5) m[n++] = f[i++];
    int64_t ix = 0;
    for (int j = 0; j < 6; j++) ix += (int64_t)BINOM[m[j]][j + 1];
    return ix;
}

#define NSTRAT6 5
typedef struct {
    uint64_t fold[NSTRAT6], noq[NSTRAT6], win[NSTRAT6][NCAT], lose[NSTRAT6];
    uint64_t bfold[NSTRAT6], bnoq[NSTRAT6], bwin[NSTRAT6][NCAT], blose[NSTRAT6];
    uint64_t sit_fold[NSTRAT6][NCAT], sit_raise[NSTRAT6][NCAT], sit_buy[NSTRAT6][NCAT];
} clear_acc_t;

/* raise EV (numerator over n) and its parts; a tie is settled for the player (rulebook 004) */
static inline int64_t clear_raise(int64_t lt, int64_t eq, int64_t nq, int rank, int qrank, int pay, int64_t n,
                                  int64_t *win, int64_t *lose)
{
    int64_t w = rank >= qrank ? lt - nq + eq : 0;
    int64_t l = n - nq - w;
    *win = w; *lose = l;
    return nq + w * (1 + 2 * (int64_t)pay) - 3 * l;
}

/* clearbet(pays[10], qrank, pass_after_buy) -> counts for five strategies: 0 optimal (may buy
 * a sixth card), 1 simple (raise a pair or better, never buy), 2 dark bet (always raise,
 * unseen), 3 optimal without buying, 4 always buy and bet.  pass_after_buy: the player may
 * still pass after seeing the sixth card (else a purchase commits him to the bet).  Deal: five player cards, up card, four hole cards, the next card (which a
 * buyer receives): C(52,5) x 47 x C(46,4) x 42. */
static PyObject *k_clearbet(PyObject *self, PyObject *args)
{
    int pays[NCAT], qrank, pass_after_buy, only_ur = -1, probe_u = -1;
    long long probe_hand = -1;
    int64_t probe_ev[2] = {0, 0};
    if (!PyArg_ParseTuple(args, "(iiiiiiiiii)ip|iLi", &pays[0], &pays[1], &pays[2], &pays[3], &pays[4], &pays[5],
                          &pays[6], &pays[7], &pays[8], &pays[9], &qrank, &pass_after_buy, &only_ur, &probe_hand,
                          &probe_u))
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = build_tables6();
    Py_END_ALLOW_THREADS
    if (rc) return PyErr_NoMemory();
    clear_acc_t acc;
    memset(&acc, 0, sizeof acc);
    int failed = 0;
    const int64_t N5 = 163185, N6 = 148995, NEXT = 42, BUYTOT = 46 * 148995; /* = 42 * N5 */
    PROGRESS_DONE = 0; PROGRESS_TOTAL = only_ur >= 0 ? 1 : 13;
    Py_BEGIN_ALLOW_THREADS
    #pragma omp parallel
    {
        clear_acc_t a;
        memset(&a, 0, sizeof a);
        int32_t *cnt = calloc((size_t)NSUB, sizeof(int32_t));
        int32_t *snap = malloc((size_t)NSUB * sizeof(int32_t));
        int32_t *lt5 = malloc((size_t)NH5 * sizeof(int32_t)), *eq5 = malloc((size_t)NH5 * sizeof(int32_t));
        int32_t *nq5 = malloc((size_t)NH5 * sizeof(int32_t));
        int32_t *lt6 = malloc((size_t)NH6 * sizeof(int32_t)), *eq6 = malloc((size_t)NH6 * sizeof(int32_t));
        int32_t *nq6 = malloc((size_t)NH6 * sizeof(int32_t));
        if (!cnt || !snap || !lt5 || !eq5 || !nq5 || !lt6 || !eq6 || !nq6) failed = 1;
        #pragma omp for schedule(dynamic, 1)
        for (int ur = 0; ur < 13; ur++) {
            if (failed || (only_ur >= 0 && ur != only_ur)) continue;
            int u = ur * 4;
            /* the dealer hands below the qualifier, for the not-qualifying counts */
            memset(cnt, 0, (size_t)NSUB * sizeof(int32_t));
            for (int64_t i = 0; i < NH5 && SORTED5[i].rank < qrank; i++) {
                const uint8_t *hc = SORTED5[i].c;
                int h[4], n = 0, has = 0;
                for (int j = 0; j < 5; j++) { if (hc[j] == u) has = 1; else if (n < 4) h[n++] = hc[j]; }
                if (has) add_hole4(cnt, h);
            }
            memcpy(snap, cnt, (size_t)NSUB * sizeof(int32_t));
            memset(cnt, 0, (size_t)NSUB * sizeof(int32_t));
            for (int64_t g = 0, gend; g < NH5; g = gend) {
                int rk = SORTED5[g].rank;
                for (gend = g; gend < NH5 && SORTED5[gend].rank == rk; gend++) ;
                for (int phase = 0; phase < 2; phase++) {
                    if (phase == 1)
                        for (int64_t i = g; i < gend; i++) {
                            const uint8_t *hc = SORTED5[i].c;
                            int h[4], n = 0, has = 0;
                            for (int j = 0; j < 5; j++) { if (hc[j] == u) has = 1; else if (n < 4) h[n++] = hc[j]; }
                            if (has) add_hole4(cnt, h);
                        }
                    for (int64_t i = g; i < gend; i++) {
                        const uint8_t *hc = SORTED5[i].c;
                        if (hc[0] == u || hc[1] == u || hc[2] == u || hc[3] == u || hc[4] == u) continue;
                        int f[5] = {hc[0], hc[1], hc[2], hc[3], hc[4]};
                        int64_t f5 = colex5(f);
                        /* subsets of F: all up to four cards (for F itself), and the low/high
                         * partial sums of those up to three (for F plus a card x) */
                        int64_t sc = 0, ss = 0;
                        int nt = 0, tk[32], tsg[32];
                        int64_t tlow[32][5], thigh[32][5];
                        for (int mask = 0; mask < 32; mask++) {
                            int k = MASK_POP[mask], t[5], n = 0;
                            if (k > 4) continue;
                            for (int b = 0; b < 5; b++) if (mask >> b & 1) t[n++] = f[b];
                            int64_t ix = SUBOFF[k];
                            for (int j = 0; j < k; j++) ix += (int64_t)BINOM[t[j]][j + 1];
                            int sgn = (k & 1) ? -1 : 1;
                            sc += sgn * (int64_t)cnt[ix];
                            if (phase == 0) ss += sgn * (int64_t)snap[ix];
                            if (k == 4) continue;
                            tk[nt] = k; tsg[nt] = sgn;
                            tlow[nt][0] = 0;
                            for (int p = 0; p < k; p++) tlow[nt][p + 1] = tlow[nt][p] + (int64_t)BINOM[t[p]][p + 1];
                            thigh[nt][k] = 0;
                            for (int p = k - 1; p >= 0; p--) thigh[nt][p] = thigh[nt][p + 1] + (int64_t)BINOM[t[p]][p + 2];
                            nt++;
                        }
                        if (phase == 0) { lt5[f5] = (int32_t)sc; nq5[f5] = (int32_t)ss; }
                        else eq5[f5] = (int32_t)(sc - lt5[f5]);
                        /* the six-card sets whose best five is F (x the lowest such discard) */
                        for (int x = 0; x < 52; x++) {
                            if (x == u || x == f[0] || x == f[1] || x == f[2] || x == f[3] || x == f[4]) continue;
                            int64_t c6 = colex5plus(f, x);
                            if (BEST6[c6] != rk || XSTAR6[c6] != x) continue;
                            int64_t vc = sc, vs = ss;
                            int it = 0;
                            for (int mask = 0; mask < 32; mask++) {
                                int k = MASK_POP[mask];
                                if (k > 3) continue;
                                int p = 0;
                                for (int b = 0; b < 5; b++) if ((mask >> b & 1) && f[b] < x) p++;
                                int64_t ix = SUBOFF[k + 1] + tlow[it][p] + (int64_t)BINOM[x][p + 1] + thigh[it][p];
                                vc -= tsg[it] * (int64_t)cnt[ix];
                                if (phase == 0) vs -= tsg[it] * (int64_t)snap[ix];
                                it++;
                            }
                            if (phase == 0) { lt6[c6] = (int32_t)vc; nq6[c6] = (int32_t)vs; }
                            else eq6[c6] = (int32_t)(vc - lt6[c6]);
                        }
                    }
                }
            }
            /* decisions per player hand */
            for (int64_t i = 0; i < NH5; i++) {
                const uint8_t *pc = SORTED5[i].c;
                if (pc[0] == u || pc[1] == u || pc[2] == u || pc[3] == u || pc[4] == u) continue;
                int p[5] = {pc[0], pc[1], pc[2], pc[3], pc[4]};
                int cp = SORTED5[i].cat, rp = SORTED5[i].rank;
                int64_t p5 = colex5(p);
                int64_t w5, l5;
                int64_t r5 = clear_raise(lt5[p5], eq5[p5], nq5[p5], rp, qrank, pays[cp], N5, &w5, &l5);
                int64_t nobuy = (r5 > -N5 ? r5 : -N5) * NEXT;
                int64_t buy = -BUYTOT; /* the sixth card costs one ante */
                for (int c = 0; c < 52; c++) {
                    if (c == u || c == p[0] || c == p[1] || c == p[2] || c == p[3] || c == p[4]) continue;
                    int64_t c6 = colex5plus(p, c);
                    int r6 = BEST6[c6];
                    int64_t w, l;
                    int64_t v = clear_raise(lt6[c6], eq6[c6], nq6[c6], r6, qrank, pays[CAT_OF_RANK5[r6]], N6, &w, &l);
                    buy += (pass_after_buy && v < -N6) ? -N6 : v;
                }
                if (p5 == probe_hand && u == probe_u) { probe_ev[0] = nobuy; probe_ev[1] = buy; }
                /* choices: 0 fold, 1 raise, 2 buy (then the better of fold and raise per card;
                 * strategy 4 buys always and bets a pair or better) */
                int ch[NSTRAT6];
                int64_t best = -N5 * NEXT;
                ch[0] = 0;
                if (nobuy > best) { best = nobuy; ch[0] = 1; }
                if (buy > best) { best = buy; ch[0] = 2; }
                ch[1] = cp >= PAIR ? 1 : 0;
                ch[2] = 1;
                ch[3] = r5 > -N5 ? 1 : 0;
                ch[4] = 2;
                for (int s = 0; s < NSTRAT6; s++) {
                    if (ch[s] == 0) {
                        a.fold[s] += 4 * (uint64_t)(N5 * NEXT);
                        a.sit_fold[s][cp] += 4;
                    } else if (ch[s] == 1) {
                        a.sit_raise[s][cp] += 4;
                        a.noq[s] += 4 * (uint64_t)(nq5[p5] * NEXT);
                        a.win[s][cp] += 4 * (uint64_t)(w5 * NEXT);
                        a.lose[s] += 4 * (uint64_t)(l5 * NEXT);
                    } else {
                        a.sit_buy[s][cp] += 4;
                        for (int c = 0; c < 52; c++) {
                            if (c == u || c == p[0] || c == p[1] || c == p[2] || c == p[3] || c == p[4]) continue;
                            int64_t c6 = colex5plus(p, c);
                            int r6 = BEST6[c6], cat6 = CAT_OF_RANK5[r6];
                            int64_t w, l;
                            int64_t v = clear_raise(lt6[c6], eq6[c6], nq6[c6], r6, qrank, pays[cat6], N6, &w, &l);
                            if (s == 4 || !pass_after_buy || v > -N6) {
                                a.bnoq[s] += 4 * (uint64_t)nq6[c6];
                                a.bwin[s][cat6] += 4 * (uint64_t)w;
                                a.blose[s] += 4 * (uint64_t)l;
                            } else {
                                a.bfold[s] += 4 * (uint64_t)N6;
                            }
                        }
                    }
                }
            }
            __sync_fetch_and_add(&PROGRESS_DONE, 1);
        }
        #pragma omp critical
        {
            uint64_t *dst = (uint64_t *)&acc, *src = (uint64_t *)&a;
            for (size_t k = 0; k < sizeof(clear_acc_t) / sizeof(uint64_t); k++) dst[k] += src[k];
        }
        free(cnt); free(snap); free(lt5); free(eq5); free(nq5); free(lt6); free(eq6); free(nq6);
    }
    Py_END_ALLOW_THREADS
    if (failed) return PyErr_NoMemory();
    PyObject *strategies = PyList_New(NSTRAT6);
    for (int s = 0; s < NSTRAT6; s++) {
        PyObject *l[5];
        uint64_t *src[5] = {acc.win[s], acc.bwin[s], acc.sit_fold[s], acc.sit_raise[s], acc.sit_buy[s]};
        for (int j = 0; j < 5; j++) {
            l[j] = PyList_New(NCAT);
            for (int k = 0; k < NCAT; k++) PyList_SET_ITEM(l[j], k, PyLong_FromUnsignedLongLong(src[j][k]));
        }
        PyList_SET_ITEM(strategies, s, Py_BuildValue("{s:K,s:K,s:N,s:K,s:K,s:K,s:N,s:K,s:N,s:N,s:N}",
            "fold", acc.fold[s], "noq", acc.noq[s], "win", l[0], "lose", acc.lose[s],
            "buy_fold", acc.bfold[s], "buy_noq", acc.bnoq[s], "buy_win", l[1], "buy_lose", acc.blose[s],
            "fold_situations", l[2], "raise_situations", l[3], "buy_situations", l[4]));
    }
    return Py_BuildValue("{s:N,s:(LL)}", "strategies", strategies, "probe", probe_ev[0], probe_ev[1]);
}

/* clearbet_brute(pays, qrank, p0..p4, u) -> (no buy, buy): expected-value numerators over
 * 6,853,770 by direct loops over every sixth card and dealer hand (test oracle). */
static PyObject *k_clearbet_brute(PyObject *self, PyObject *args)
{
    int pays[NCAT], qrank, pass_after_buy, p[5], u;
    if (!PyArg_ParseTuple(args, "(iiiiiiiiii)ip(iiiii)i", &pays[0], &pays[1], &pays[2], &pays[3], &pays[4],
                          &pays[5], &pays[6], &pays[7], &pays[8], &pays[9], &qrank, &pass_after_buy, &p[0], &p[1],
                          &p[2], &p[3], &p[4], &u))
        return NULL;
    if (build_tables6()) return PyErr_NoMemory();
    sort_small(p, 5);
    int64_t nobuy_raise = 0, buy = 0;
    Py_BEGIN_ALLOW_THREADS
    int deck[52], nd = 0;
    for (int c = 0; c < 52; c++) if (c != u && c != p[0] && c != p[1] && c != p[2] && c != p[3] && c != p[4]) deck[nd++] = c;
    int rp = RANK5[colex5(p)];
    /* without buying: every hole set, and the 42 next cards that stay in the stub */
    for (int a = 0; a < nd; a++) for (int b = a + 1; b < nd; b++) for (int c = b + 1; c < nd; c++) for (int d = c + 1; d < nd; d++) {
        int h[5] = {u, deck[a], deck[b], deck[c], deck[d]};
        int rd = rank5_any(h);
        int64_t v = rd < qrank ? 1 : rp >= rd ? 1 + 2 * (int64_t)pays[CAT_OF_RANK5[rp]] : -3;
        nobuy_raise += 42 * v;
    }
    /* buying: for each sixth card, the better of passing and betting the best five */
    for (int n = 0; n < nd; n++) {
        int x = deck[n], six[6] = {p[0], p[1], p[2], p[3], p[4], x};
        sort_small(six, 6);
        int64_t ix = 0;
        for (int i = 0; i < 6; i++) ix += (int64_t)BINOM[six[i]][i + 1];
        int r6 = BEST6[ix];
        int64_t raise = 0, cnt = 0;
        for (int a = 0; a < nd; a++) { if (a == n) continue;
         for (int b = a + 1; b < nd; b++) { if (b == n) continue;
          for (int c = b + 1; c < nd; c++) { if (c == n) continue;
           for (int d = c + 1; d < nd; d++) { if (d == n) continue;
            int h[5] = {u, deck[a], deck[b], deck[c], deck[d]};
            int rd = rank5_any(h);
            raise += rd < qrank ? 1 : r6 >= rd ? 1 + 2 * (int64_t)pays[CAT_OF_RANK5[r6]] : -3;
            cnt++;
        }}}}
        buy += (pass_after_buy && raise < -cnt) ? -cnt : raise;
    }
    buy -= 6853770;
    Py_END_ALLOW_THREADS
    int64_t nobuy = nobuy_raise > -6853770 ? nobuy_raise : -6853770;
    return Py_BuildValue("(LL)", nobuy, buy);
}

/* stud_brute(pays, tie_wins, qrank, p0..p4, u) -> raise EV numerator over the 163,185 hole
 * sets (folding is -163,185), by a direct loop: one situation of Caribbean Stud. */
static PyObject *k_stud_brute(PyObject *self, PyObject *args)
{
    int pays[NCAT], tie_wins, qrank, p[5], u;
    if (!PyArg_ParseTuple(args, "(iiiiiiiiii)pi(iiiii)i", &pays[0], &pays[1], &pays[2], &pays[3], &pays[4],
                          &pays[5], &pays[6], &pays[7], &pays[8], &pays[9], &tie_wins, &qrank, &p[0], &p[1],
                          &p[2], &p[3], &p[4], &u))
        return NULL;
    int64_t ev = 0, n = 0;
    int deck[52], nd = 0;
    for (int c = 0; c < 52; c++) if (c != u && c != p[0] && c != p[1] && c != p[2] && c != p[3] && c != p[4]) deck[nd++] = c;
    int rp = rank5_any(p);
    int64_t winv = 1 + 2 * (int64_t)pays[CAT_OF_RANK5[rp]];
    for (int a = 0; a < nd; a++) for (int b = a + 1; b < nd; b++) for (int c = b + 1; c < nd; c++) for (int d = c + 1; d < nd; d++) {
        int h[5] = {u, deck[a], deck[b], deck[c], deck[d]};
        int rd = rank5_any(h);
        ev += rd < qrank ? 1 : rp > rd ? winv : rp == rd ? (tie_wins ? winv : 0) : -3;
        n++;
    }
    return Py_BuildValue("(LL)", ev, n);
}

#include "_cdraw.c"

static PyMethodDef METHODS[] = {
    {"init", k_init, METH_NOARGS, "build the rank tables; returns the number of five-card ranks"},
    {"progress", k_progress, METH_NOARGS, "(done, total) of the running kernel"},
    {"rank5", k_rank5, METH_VARARGS, "rank5(c0..c4) -> (dense rank, category)"},
    {"key_of_rank5", k_key_of_rank5, METH_VARARGS, "key_of_rank5(rank) -> category<<20 | rank nibbles"},
    {"rank_table", k_rank_table, METH_VARARGS, "rank_table(n) -> uint16 ranks of all n-card hands, colex order"},
    {"category_counts5", k_category_counts5, METH_NOARGS, "five-card hands per category"},
    {"tcp_counts", k_tcp_counts, METH_VARARGS, "Three Card Poker: per player hand, dealer outcomes"},
    {"colorado_counts", k_colorado_counts, METH_NOARGS, "Colorado Hold'em: final hands per discard"},
    {"rank4", k_rank4, METH_VARARGS, "rank4(c0..c3) -> (dense rank, four-card category)"},
    {"category_counts4", k_category_counts4, METH_NOARGS, "four-card hands per category"},
    {"california", k_california, METH_VARARGS, "California Draw Poker, full enumeration"},
    {"california_brute", k_california_brute, METH_VARARGS, "California Draw Poker, one situation by brute force"},
    {"clearbet", k_clearbet, METH_VARARGS, "rulebook 004 clear bet with a bought sixth card, full enumeration"},
    {"clearbet_brute", k_clearbet_brute, METH_VARARGS, "rulebook 004, one situation by brute force"},
    {"stud_brute", k_stud_brute, METH_VARARGS, "Caribbean Stud, one situation by brute force"},
    {"stud", k_stud, METH_VARARGS, "Caribbean Stud style game, up card, full enumeration"},
    {"cdraw", k_cdraw, METH_VARARGS, "Caribbean Draw Poker (rulebook 000), full enumeration"},
    {"cdraw_dealer_brute", k_cdraw_dealer_brute, METH_VARARGS, "Caribbean Draw: dealer paths avoiding a removed set, by brute force"},
    {"cdraw_dealer_split", k_cdraw_dealer_split, METH_VARARGS, "Caribbean Draw: the same as blind table plus corrections"},
    {"cdraw_level_paths", k_cdraw_level_paths, METH_VARARGS, "Caribbean Draw: correction paths per final rank"},
    {"cdraw_hand", k_cdraw_hand, METH_VARARGS, "Caribbean Draw: every option of one hand, exactly"},
    {"cdraw_dealer_keep", k_cdraw_dealer_keep, METH_VARARGS, "Caribbean Draw: rule 12 keep mask"},
    {"cdraw_dealer_qualifies", k_cdraw_dealer_qualifies, METH_VARARGS, "Caribbean Draw: deals in which the dealer qualifies, in 1/1081ths"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_kernel", "PAR sheet enumeration kernels", -1, METHODS};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&MODULE); }
