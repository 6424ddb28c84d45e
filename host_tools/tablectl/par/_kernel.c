/* Complete-enumeration kernels for PAR sheets (issue 7).
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
    return Py_BuildValue("{s:N,s:K}", "strategies", strategies, "indifferent", acc.indifferent);
}

/* ---------- Colorado Hold'em (three cards, discard one, three community cards) ---------- */

#define NFINE 23 /* categories with the pair split by its rank: 0..9 as NCAT (pair unused), 10 + pair rank */
static uint8_t FINE_OF_RANK5[8192];

static int suit_perm_min(const int *c, int n, int *perm_out)
{
    /* smallest colex index of the hand over the 24 suit permutations; perm_out gets the map */
    static const int P[24][4] = {
        {0,1,2,3},{0,1,3,2},{0,2,1,3},{0,2,3,1},{0,3,1,2},{0,3,2,1},{1,0,2,3},{1,0,3,2},
        {1,2,0,3},{1,2,3,0},{1,3,0,2},{1,3,2,0},{2,0,1,3},{2,0,3,1},{2,1,0,3},{2,1,3,0},
        {2,3,0,1},{2,3,1,0},{3,0,1,2},{3,0,2,1},{3,1,0,2},{3,1,2,0},{3,2,0,1},{3,2,1,0}};
    int best = -1;
    for (int p = 0; p < 24; p++) {
        int d[8];
        for (int i = 0; i < n; i++) d[i] = (c[i] & ~3) | P[p][c[i] & 3];
        sort_small(d, n);
        int ix = 0;
        for (int i = 0; i < n; i++) ix += (int)BINOM[d[i]][i + 1];
        if (best < 0 || ix < best) { best = ix; memcpy(perm_out, P[p], sizeof(int) * 4); }
    }
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

static PyMethodDef METHODS[] = {
    {"init", k_init, METH_NOARGS, "build the rank tables; returns the number of five-card ranks"},
    {"progress", k_progress, METH_NOARGS, "(done, total) of the running kernel"},
    {"rank5", k_rank5, METH_VARARGS, "rank5(c0..c4) -> (dense rank, category)"},
    {"key_of_rank5", k_key_of_rank5, METH_VARARGS, "key_of_rank5(rank) -> category<<20 | rank nibbles"},
    {"category_counts5", k_category_counts5, METH_NOARGS, "five-card hands per category"},
    {"tcp_counts", k_tcp_counts, METH_VARARGS, "Three Card Poker: per player hand, dealer outcomes"},
    {"colorado_counts", k_colorado_counts, METH_NOARGS, "Colorado Hold'em: final hands per discard"},
    {"stud", k_stud, METH_VARARGS, "Caribbean Stud style game, up card, full enumeration"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_kernel", "PAR sheet enumeration kernels", -1, METHODS};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&MODULE); }
