/* Caribbean Draw Poker, rulebook 000: the player and the dealer both draw (docs/PAR.md).
 *
 * Included by _kernel.c (it shares the rank tables, BINOM and the progress counter).
 *
 * The game.  The player has five cards P and folds or calls; a caller keeps K and discards D
 * (up to two) and draws N.  The dealer has five face-down cards H, keeps KH by rule 12 and
 * draws M.  With R = P + N (the player's five cards, discards and draws), the dealer's play is
 * a "path" (H, M) from the 52 - |R| cards outside R; what is owed depends on the player's final
 * rank x = rank(K + N) against the dealer's final rank y.  Weighing each dealer path by
 * W[m] = L / C(47 - |R|, m) (m = cards the dealer draws) makes every H weigh L, so counts stay
 * integers.
 *
 * The dealer's draw makes a path up to seven cards, so counting paths that avoid R by the
 * subset counts of the other kernels would need every subset of 2.5e9 paths.  Instead:
 *
 *  1. Blind part.  Suits matter to the dealer only through flushes: four to a flush changes
 *     what he keeps, and a flush changes the final rank.  A "blind" dealer who sees ranks only
 *     (no flush, no four-flush) plays the same as the real one on every H except a no-pair H
 *     with four or five cards of one suit, and his final hands differ only when the real
 *     final hand is a flush.  The blind dealer's paths avoiding R depend on R's rank counts
 *     alone (counts of cards per rank), so they are counted by rank patterns with binomial
 *     weights, once per rank-count vector of R (75,140 vectors of 5, 6 or 7 cards).
 *
 *  2. Corrections.  The paths where the two dealers differ (about 1e8: the real paths of
 *     four-flush and flush hands with a plus sign, the blind paths of the same hands with a
 *     minus sign, and each flush-completing draw to three suited cards as plus real rank,
 *     minus blind rank) are swept in rank order into counts per card subset T of at most seven
 *     cards; the corrections of the paths avoiding R are sum over T in R of (-1)^|T| count[T].
 *
 * Player hands are taken one per suit-isomorphism class for the final five cards F (134,459
 * classes, each weighed by its class size); for each F every discard set D (0, 1 or 2 cards
 * outside F) gives R = F + D and the dealer's outcome counts, which are credited to every
 * player option (P = K + D, keep K) that can end in F with those discards.  The options of a
 * class are then compared exactly.
 */

#define CD_NMS5 6188                 /* multisets of five ranks, C(17, 5) (13 of them invalid) */
#define CD_NPAIR 1326
#define CD_NACC 13                   /* per (class, option): nq, tie, lose, win[10] */
/* the 16 options (discard masks of at most two cards) numbered 0..15 */
static const int8_t CD_OPT[32] = {0, 1, 2, 6, 3, 7, 8, -1, 4, 9, 10, -1, 11, -1, -1, -1,
                                  5, 12, 13, -1, 14, -1, -1, -1, 15, -1, -1, -1, -1, -1, -1, -1};

static const int64_t CD_W[3][3] = {{1722, 41, 2}, {820, 20, 1}, {1560, 39, 2}}; /* |R| = 5, 6, 7 */
static const int64_t CD_L[3] = {1722, 820, 1560};
static const int64_t CD_DEAL_FACTOR[3] = {1560, 78, 2}; /* deals per weighted unit, by cards drawn */

static int cd_ready = 0;
static uint16_t CD_NFR[CD_NMS5];     /* non-flush rank of a five-rank multiset (0xFFFF invalid) */
static uint8_t CD_MSVALID[CD_NMS5];
static int CD_POS_BELOW[8192];       /* multisets (in rank order) with non-flush rank below r */
static uint16_t CD_ORDER[CD_NMS5];   /* valid multisets sorted by non-flush rank */
static int CD_NVALID;
/* blind action of each five-rank multiset: m cards drawn, final multiset for each draw */
static uint8_t CD_BM[CD_NMS5];
static uint16_t CD_FIN1[CD_NMS5][13];
static uint16_t CD_FIN2[CD_NMS5][13][13];
static uint8_t CD_MSCNT[CD_NMS5][13];
static int CD_FIRST_FLUSH, CD_QRANK;

/* suit-isomorphism classes of five-card hands */
static int32_t *CD_CLS;              /* colex5 -> class id */
static uint8_t *CD_POSMAP;           /* colex5 -> [5] position of each card in the class representative */
/* the same two facts in one word, for the credits (one random read of 10 MB instead of two of
 * 23 MB): class | (number of the position map among the 120 orders of five) << 20; and per
 * order and set of positions of the hand, the option of the representative it is */
static uint32_t *CD_CP;
static int8_t CD_OPTOF[120][32];
static int32_t *CD_REP;              /* class -> colex5 of its representative */
static int32_t *CD_CSIZE;            /* class -> hands in the class */
static int CD_NCLS;

/* blind table per rank-count vector */
typedef struct {
    int64_t nq, below_flush;
    int nf, ready;
    uint16_t fidx[21];
    int64_t below[21], eq[21];
} cd_blind_t;
static cd_blind_t *CD_BT[3];         /* |R| = 5, 6, 7, indexed by multiset index */
static const int CD_NMS[3] = {6188, 18564, 50388};

/* correction paths, bucketed by final rank */
typedef struct { uint8_t c[7]; uint8_t info; } cd_path_t; /* info: n | m << 3 | neg << 7 */
static cd_path_t *CD_PATHS;
static int64_t *CD_PSTART;           /* [NRANK5 + 1] */
static int64_t CD_NPATHS;

#include <time.h>
#include <sys/mman.h>

/* Zeroed memory for the big tables that are read and written at random (the accumulators,
 * the subset counts, the class maps): asked for in 2 MB pages where the system has them
 * (madvise), since at 4 KB a page per access misses the TLB as well as the cache. */
static void *cd_big_calloc(size_t bytes)
{
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
    if (bytes >= (4u << 20)) {
        size_t *p = mmap(NULL, bytes + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
        madvise(p, bytes + 4096, MADV_HUGEPAGE);
        p[0] = bytes + 4096;                       /* the mapping's size, for cd_big_free */
        p[1] = 0x6364726177u;
        return (char *)p + 4096;
    }
#endif
    size_t *p = calloc(1, bytes + 4096);
    if (!p) return NULL;
    p[1] = 0;
    return (char *)p + 4096;
}

static void cd_big_free(void *q)
{
    if (!q) return;
    size_t *p = (size_t *)((char *)q - 4096);
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
    if (p[1] == 0x6364726177u) { munmap(p, p[0]); return; }
#endif
    free(p);
}
static double cd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int ms_index(const int *r, int k) /* r ascending */
{
    int ix = 0;
    for (int i = 0; i < k; i++) ix += (int)BINOM[r[i] + i][i + 1];
    return ix;
}


/* the five-card hand after c (ascending cards) in colex order; 0 after the last */
static inline int next_hand5(int *c)
{
    for (int i = 0; i < 5; i++) {
        int top = i < 4 ? c[i + 1] : 52;
        if (c[i] + 1 < top) {
            c[i]++;
            for (int j = 0; j < i; j++) c[j] = j;
            return 1;
        }
    }
    return 0;
}

/* the ascending k-set with colex index ix (cards of a hand, or ranks + position of a multiset) */
static void colex_unrank(int64_t ix, int k, int *c)
{
    for (int i = k - 1; i >= 0; i--) {
        int s = i;
        while ((int64_t)BINOM[s + 1][i + 1] <= ix) s++;
        ix -= (int64_t)BINOM[s][i + 1];
        c[i] = s;
    }
}

static inline void unrank_hand5(int64_t ix, int *c) { colex_unrank(ix, 5, c); }

/* ---------- rule 12: what the dealer keeps ---------- */

/* keep mask (bit i = h[i] kept) of the dealer's five cards h, as the settlement engine reads
 * rule 12 (tablectl/games/caribbean_draw.py dealer_draw) */
static int cd_dealer_keep(const int *h)
{
    int rk = rank5_any(h), cat = CAT_OF_RANK5[rk];
    if (cat >= STRAIGHT) return 31;
    int cnt[13] = {0}, scnt[4] = {0};
    for (int i = 0; i < 5; i++) { cnt[h[i] >> 2]++; scnt[h[i] & 3]++; }
    int mask = 0;
    if (cat == TRIPS) {
        for (int i = 0; i < 5; i++) if (cnt[h[i] >> 2] == 3) mask |= 1 << i;
        return mask;
    }
    if (cat == TWO_PAIR) {
        for (int i = 0; i < 5; i++) if (cnt[h[i] >> 2] == 2) mask |= 1 << i;
        return mask;
    }
    if (cat == PAIR) {
        int hi = -1, hiat = -1;
        for (int i = 0; i < 5; i++) {
            int r = h[i] >> 2;
            if (cnt[r] == 2) mask |= 1 << i;
            else if (r > hi) { hi = r; hiat = i; }
        }
        return mask | 1 << hiat;
    }
    /* no pair: four to a flush first */
    for (int s = 0; s < 4; s++)
        if (scnt[s] == 4) {
            for (int i = 0; i < 5; i++) if ((h[i] & 3) == s) mask |= 1 << i;
            return mask;
        }
    /* four to a straight: open-ended first, then the higher straight, then the higher cards */
    int best = -1, best_open = -1, best_top = -1, best_r[4] = {0};
    for (int drop = 0; drop < 5; drop++) {
        int r[4], n = 0;
        for (int i = 0; i < 5; i++) if (i != drop) r[n++] = h[i] >> 2;
        sort_small(r, 4);
        int top = -1;
        for (int lo = -1; lo <= 8; lo++) {
            int ok = 1;
            for (int j = 0; j < 4; j++) {
                int v = (r[j] == 12 && lo == -1) ? -1 : r[j];
                if (v < lo || v > lo + 4) { ok = 0; break; }
            }
            if (ok) top = lo + 4;
        }
        if (top < 0) continue;
        int open = (r[3] - r[0] == 3) && r[0] >= 0 && r[0] + 3 <= 11;
        int better = 0;
        if (best < 0) better = 1;
        else if (open != best_open) better = open > best_open;
        else if (top != best_top) better = top > best_top;
        else {
            for (int j = 3; j >= 0; j--)
                if (r[j] != best_r[j]) { better = r[j] > best_r[j]; break; }
        }
        if (better) {
            best = drop; best_open = open; best_top = top;
            memcpy(best_r, r, sizeof r);
        }
    }
    if (best >= 0) return 31 & ~(1 << best);
    /* no pair, nothing to draw to: keep the three highest */
    int order[5] = {0, 1, 2, 3, 4};
    for (int i = 1; i < 5; i++) {
        int v = order[i], j = i - 1;
        while (j >= 0 && (h[order[j]] >> 2) > (h[v] >> 2)) { order[j + 1] = order[j]; j--; }
        order[j + 1] = v;
    }
    return 1 << order[2] | 1 << order[3] | 1 << order[4];
}

/* the blind dealer: the same rule on the same ranks with the suits spread (no four-flush) */
static inline int cd_blind_keep(const int *h_sorted)
{
    int rep[5];
    for (int i = 0; i < 5; i++) rep[i] = (h_sorted[i] & ~3) | (i & 3);
    return cd_dealer_keep(rep);
}

static inline int cd_nfr_cards(const int *c) /* non-flush rank of five cards (any suits) */
{
    int r[5];
    for (int i = 0; i < 5; i++) r[i] = c[i] >> 2;
    sort_small(r, 5);
    return CD_NFR[ms_index(r, 5)];
}

/* ---------- tables ---------- */

static void cd_build_groups(void);

static int cmp_ms_by_nfr(const void *a, const void *b)
{
    return (int)CD_NFR[*(const uint16_t *)a] - (int)CD_NFR[*(const uint16_t *)b];
}

static int cd_build_basic(void)
{
    /* five-rank multisets */
    int r[5];
    memset(CD_MSVALID, 0, sizeof CD_MSVALID);
    for (r[0] = 0; r[0] < 13; r[0]++)
     for (r[1] = r[0]; r[1] < 13; r[1]++)
      for (r[2] = r[1]; r[2] < 13; r[2]++)
       for (r[3] = r[2]; r[3] < 13; r[3]++)
        for (r[4] = r[3]; r[4] < 13; r[4]++) {
            int ix = ms_index(r, 5);
            memset(CD_MSCNT[ix], 0, 13);
            for (int i = 0; i < 5; i++) CD_MSCNT[ix][r[i]]++;
            if (r[0] == r[4]) { CD_NFR[ix] = 0xFFFF; continue; }
            CD_MSVALID[ix] = 1;
            int c[5];
            for (int i = 0; i < 5; i++) c[i] = r[i] * 4 + (i & 3); /* at most two of a suit */
            CD_NFR[ix] = (uint16_t)rank5_any(c);
            /* the blind dealer's action on these ranks, and the final multiset of each draw */
            int keep = cd_blind_keep(c);
            int kr[5], nk = 0;
            for (int i = 0; i < 5; i++) if (keep >> i & 1) kr[nk++] = r[i];
            CD_BM[ix] = (uint8_t)(5 - nk);
            if (nk == 4) {
                for (int x = 0; x < 13; x++) {
                    int f[5] = {kr[0], kr[1], kr[2], kr[3], x};
                    sort_small(f, 5);
                    CD_FIN1[ix][x] = (uint16_t)ms_index(f, 5);
                }
            } else if (nk == 3) {
                for (int x = 0; x < 13; x++)
                    for (int y = x; y < 13; y++) {
                        int f[5] = {kr[0], kr[1], kr[2], x, y};
                        sort_small(f, 5);
                        CD_FIN2[ix][x][y] = (uint16_t)ms_index(f, 5);
                    }
            }
        }
    CD_NVALID = 0;
    for (int ix = 0; ix < CD_NMS5; ix++) if (CD_MSVALID[ix]) CD_ORDER[CD_NVALID++] = (uint16_t)ix;
    qsort(CD_ORDER, CD_NVALID, sizeof(uint16_t), cmp_ms_by_nfr);
    for (int x = 0, j = 0; x < 8192; x++) {
        while (j < CD_NVALID && CD_NFR[CD_ORDER[j]] < x) j++;
        CD_POS_BELOW[x] = j;
    }
    CD_FIRST_FLUSH = -1;
    for (int x = 0; x < NRANK5; x++) if (CAT_OF_RANK5[x] == FLUSH) { CD_FIRST_FLUSH = x; break; }
    cd_build_groups();
    return 0;
}

static uint8_t *CD_PERMOF;           /* colex5 -> suit permutation (SUIT_PERMS) to the representative */

static int cd_build_classes(void)
{
    const int (*P)[4] = SUIT_PERMS;
    CD_CLS = cd_big_calloc(sizeof(int32_t) * NH5);
    CD_POSMAP = cd_big_calloc((size_t)NH5 * 5);
    int32_t *canon = malloc(sizeof(int32_t) * NH5);
    uint8_t *permof = CD_PERMOF = malloc(NH5);
    if (!CD_CLS || !CD_POSMAP || !canon || !permof) return -1;
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < NH5; i++) {
        const uint8_t *hc = SORTED5[i].c;
        int c[5] = {hc[0], hc[1], hc[2], hc[3], hc[4]};
        int ix = (int)colex5(c), bp = 0;
        int best = suit_perm_min_ix(c, 5, &bp);
        canon[ix] = best;
        permof[ix] = (uint8_t)bp;
    }
    int32_t *cid = malloc(sizeof(int32_t) * NH5);
    if (!cid) return -1;
    int n = 0;
    for (int64_t ix = 0; ix < NH5; ix++) cid[ix] = (canon[ix] == ix) ? n++ : -1;
    CD_NCLS = n;
    CD_REP = malloc(sizeof(int32_t) * n);
    CD_CSIZE = calloc(n, sizeof(int32_t));
    if (!CD_REP || !CD_CSIZE) return -1;
    for (int64_t ix = 0; ix < NH5; ix++) {
        if (cid[ix] >= 0) CD_REP[cid[ix]] = (int32_t)ix;
        CD_CLS[ix] = cid[canon[ix]];
        CD_CSIZE[CD_CLS[ix]]++;
    }
    /* position map: card at sorted position j of hand ix goes to position POSMAP[ix][j] of the representative */
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < NH5; i++) {
        const uint8_t *hc = SORTED5[i].c;
        int c[5] = {hc[0], hc[1], hc[2], hc[3], hc[4]};
        int ix = (int)colex5(c), p = permof[ix];
        int d[5];
        for (int j = 0; j < 5; j++) d[j] = (c[j] & ~3) | P[p][c[j] & 3];
        for (int j = 0; j < 5; j++) {
            int pos = 0;
            for (int k = 0; k < 5; k++) if (d[k] < d[j]) pos++;
            CD_POSMAP[(size_t)ix * 5 + j] = (uint8_t)pos;
        }
    }
    /* the 120 orders of five positions, numbered through their base-5 code */
    static int16_t num[3125];
    int nperm = 0;
    for (int code = 0; code < 3125; code++) {
        int p[5], seen = 0, ok = 1;
        for (int j = 0, c = code; j < 5; j++, c /= 5) { p[j] = c % 5; if (seen >> p[j] & 1) ok = 0; seen |= 1 << p[j]; }
        num[code] = -1;
        if (!ok) continue;
        num[code] = (int16_t)nperm;
        for (int isd = 0; isd < 32; isd++) {
            int cm = 0;
            for (int b = 0; b < 5; b++) if (isd >> b & 1) cm |= 1 << p[b];
            CD_OPTOF[nperm][isd] = CD_OPT[cm];
        }
        nperm++;
    }
    CD_CP = cd_big_calloc(sizeof(uint32_t) * NH5);
    if (!CD_CP) return -1;
    #pragma omp parallel for schedule(static)
    for (int64_t ix = 0; ix < NH5; ix++) {
        const uint8_t *pm = &CD_POSMAP[(size_t)ix * 5];
        int code = pm[0] + 5 * pm[1] + 25 * pm[2] + 125 * pm[3] + 625 * pm[4];
        CD_CP[ix] = (uint32_t)CD_CLS[ix] | (uint32_t)num[code] << 20;
    }
    free(canon); free(cid);
    return 0;
}

/* The blind dealer's hands that keep three cards and draw two, grouped by the kept ranks K.
 * Every such hand is K plus two discarded ranks d1 < d2, distinct and not in K (a no-pair hand
 * keeps its three highest, a pair its pair and highest other card, three of a kind its three:
 * cd_build_groups checks this of every hand and leaves any other to the plain loop). */
#define CD_NGRP 455                  /* multisets of three ranks, C(15, 3) */
static int16_t CD_GRP[CD_NMS5];      /* group of a multiset that draws two, or -1 */
static uint8_t CD_GD[CD_NMS5][2];    /* its discarded ranks d1 < d2 */
static uint16_t CD_GFIN2[CD_NGRP][13][13]; /* K plus drawn ranks x <= y -> final multiset */
static uint8_t CD_GK[CD_NGRP][3], CD_GKN[CD_NGRP]; /* K's distinct ranks and their counts */
static uint8_t CD_GKC[CD_NGRP][3];
static int CD_GSTART[CD_NGRP + 1];
static uint16_t CD_GIX[CD_NMS5];     /* multisets by group */
static uint8_t CD_NZR[CD_NMS5][5], CD_NZC[CD_NMS5][5], CD_NNZ[CD_NMS5]; /* a multiset's ranks, counts */

static void cd_build_groups(void)
{
    int cnt[CD_NGRP + 1];
    memset(cnt, 0, sizeof cnt);
    for (int ix = 0; ix < CD_NMS5; ix++) {
        CD_GRP[ix] = -1;
        CD_NNZ[ix] = 0;
        for (int r = 0; r < 13; r++)
            if (CD_MSCNT[ix][r]) { CD_NZR[ix][CD_NNZ[ix]] = (uint8_t)r; CD_NZC[ix][CD_NNZ[ix]] = CD_MSCNT[ix][r]; CD_NNZ[ix]++; }
        if (!CD_MSVALID[ix] || CD_BM[ix] != 2) continue;
        /* kept ranks: the multiset whose FIN2 row this is (recover K from any final: K + x + y) */
        int c[5];
        for (int i = 0; i < 5; i++) c[i] = 0;
        int r5[5], n = 0;
        for (int r = 0; r < 13; r++) for (int j = 0; j < CD_MSCNT[ix][r]; j++) r5[n++] = r;
        int h[5];
        for (int i = 0; i < 5; i++) h[i] = r5[i] * 4 + (i & 3);
        int keep = cd_blind_keep(h), kr[3], nk = 0, dr[2], nd = 0;
        for (int i = 0; i < 5; i++) { if (keep >> i & 1) { if (nk < 3) kr[nk] = r5[i]; nk++; } else { if (nd < 2) dr[nd] = r5[i]; nd++; } }
        (void)c;
        if (nk != 3 || nd != 2 || dr[0] == dr[1]) continue;
        if (dr[0] == kr[0] || dr[0] == kr[1] || dr[0] == kr[2] || dr[1] == kr[0] || dr[1] == kr[1] || dr[1] == kr[2]) continue;
        int g = ms_index(kr, 3);       /* kr ascending: r5 is */
        CD_GRP[ix] = (int16_t)g;
        CD_GD[ix][0] = (uint8_t)(dr[0] < dr[1] ? dr[0] : dr[1]);
        CD_GD[ix][1] = (uint8_t)(dr[0] < dr[1] ? dr[1] : dr[0]);
        cnt[g + 1]++;
        CD_GKN[g] = 0;
        for (int i = 0; i < 3; i++) {
            if (i && kr[i] == kr[i - 1]) { CD_GKC[g][CD_GKN[g] - 1]++; continue; }
            CD_GK[g][CD_GKN[g]] = (uint8_t)kr[i]; CD_GKC[g][CD_GKN[g]] = 1; CD_GKN[g]++;
        }
        for (int x = 0; x < 13; x++)
            for (int y = x; y < 13; y++) CD_GFIN2[g][x][y] = CD_FIN2[ix][x][y];
    }
    CD_GSTART[0] = 0;
    for (int g = 0; g < CD_NGRP; g++) CD_GSTART[g + 1] = CD_GSTART[g] + cnt[g + 1];
    int fill[CD_NGRP];
    for (int g = 0; g < CD_NGRP; g++) fill[g] = CD_GSTART[g];
    for (int ix = 0; ix < CD_NMS5; ix++) if (CD_GRP[ix] >= 0) CD_GIX[fill[CD_GRP[ix]]++] = (uint16_t)ix;
}

/* the blind dealer's outcome histogram (by final multiset) over the cards outside a removed
 * set with rank counts v (k cards).
 * A hand H weighs w(H) = prod over ranks of C(a[r], H[r]) (a = cards left of each rank); a
 * hand that keeps K and draws two spreads w(H) * W2 over the finals K + x + y by the pairs
 * left, a2[x] a2[y] (or C(a2[x], 2)), with a2 = a - H = a' - [d1] - [d2] (a' = a - K). Summed
 * over a group's hands that is
 *   sum c (a'x - dx)(a'y - dy) = S0 a'x a'y - a'x S1[y] - a'y S1[x] + S2[x][y]   (x < y)
 *   sum c C(a'x - dx, 2)       = S0 C(a'x, 2) - S1[x] (a'x - 1)
 * with c = w(H) W2, S0 = sum c, S1[r] = sum of c over the hands discarding r and S2[x][y] over
 * those discarding x and y: one pass over the 91 pairs per group instead of per hand. */
static void cd_blind_hist(const int *v, int k, int64_t *hist)
{
    const int64_t *W = CD_W[k - 5];
    int a[13];
    for (int r = 0; r < 13; r++) a[r] = 4 - v[r];
    memset(hist, 0, sizeof(int64_t) * CD_NMS5);
    for (int ix = 0; ix < CD_NMS5; ix++) {
        if (!CD_MSVALID[ix] || CD_GRP[ix] >= 0) continue;
        int64_t w = 1;
        for (int i = 0; i < CD_NNZ[ix]; i++) w *= (int64_t)BINOM[a[CD_NZR[ix][i]]][CD_NZC[ix][i]];
        if (!w) continue;
        const uint8_t *h = CD_MSCNT[ix];
        int m = CD_BM[ix];
        if (m == 0) hist[ix] += w * W[0];
        else if (m == 1) {
            for (int x = 0; x < 13; x++) { int a2 = a[x] - h[x]; if (a2) hist[CD_FIN1[ix][x]] += w * W[1] * a2; }
        } else {
            int a2[13];
            for (int r = 0; r < 13; r++) a2[r] = a[r] - h[r];
            for (int x = 0; x < 13; x++) {
                if (!a2[x]) continue;
                if (a2[x] >= 2) hist[CD_FIN2[ix][x][x]] += w * W[2] * (a2[x] * (a2[x] - 1) / 2);
                for (int y = x + 1; y < 13; y++)
                    if (a2[y]) hist[CD_FIN2[ix][x][y]] += w * W[2] * a2[x] * a2[y];
            }
        }
    }
    for (int g = 0; g < CD_NGRP; g++) {
        if (CD_GSTART[g] == CD_GSTART[g + 1]) continue;
        int64_t wk = W[2];
        int ap[13];
        for (int r = 0; r < 13; r++) ap[r] = a[r];
        for (int i = 0; i < CD_GKN[g]; i++) {
            wk *= (int64_t)BINOM[a[CD_GK[g][i]]][CD_GKC[g][i]];
            ap[CD_GK[g][i]] -= CD_GKC[g][i];
        }
        if (!wk) continue;
        int64_t S0 = 0, S1[13] = {0};
        const uint16_t (*fin)[13] = CD_GFIN2[g];
        for (int j = CD_GSTART[g]; j < CD_GSTART[g + 1]; j++) {
            int ix = CD_GIX[j], d1 = CD_GD[ix][0], d2 = CD_GD[ix][1];
            int64_t c = wk * a[d1] * a[d2];
            if (!c) continue;
            S0 += c; S1[d1] += c; S1[d2] += c;
            hist[fin[d1][d2]] += c;
        }
        if (!S0) continue;
        for (int x = 0; x < 13; x++) {
            int64_t ax = ap[x];
            int64_t diag = S0 * (ax * (ax - 1) / 2) - S1[x] * (ax - 1);
            if (diag) hist[fin[x][x]] += diag;
            for (int y = x + 1; y < 13; y++) {
                int64_t ay = ap[y];
                int64_t t = S0 * ax * ay - ax * S1[y] - ay * S1[x];
                if (t) hist[fin[x][y]] += t;
            }
        }
    }
}

static int64_t cd_total(int k) /* every dealer path weighed, |R| = k */
{
    return (int64_t)BINOM[52 - k][5] * CD_L[k - 5];
}

/* rank counts of multiset index ix of size k */
static void ms_counts(int ix, int k, int *v)
{
    int s[7];
    colex_unrank(ix, k, s); /* s[i] = rank + i */
    memset(v, 0, sizeof(int) * 13);
    for (int i = 0; i < k; i++) v[s[i] - i]++;
}

static void cd_sub5(const int *v, int r, int need, int *cur, cd_blind_t *bt, const int64_t *prefix, const int64_t *hist)
{
    if (need == 0) {
        int f[5], n = 0;
        for (int x = 0; x < 13; x++) for (int j = 0; j < cur[x]; j++) f[n++] = x;
        int fx = ms_index(f, 5);
        if (!CD_MSVALID[fx]) return;
        int i = bt->nf++;
        bt->fidx[i] = (uint16_t)fx;
        bt->below[i] = prefix[CD_POS_BELOW[CD_NFR[fx]]];
        bt->eq[i] = hist[fx];
        return;
    }
    if (r >= 13) return;
    for (int j = (v[r] < need ? v[r] : need); j >= 0; j--) {
        cur[r] = j;
        cd_sub5(v, r + 1, need - j, cur, bt, prefix, hist);
    }
    cur[r] = 0;
}

/* one rank-count vector's entry, computed on first use (threads may race to the same entry;
 * they write the same bytes, and the ready flag is set last) */
static const cd_blind_t *cd_blind_entry(int k, int ix)
{
    cd_blind_t *bt = &CD_BT[k - 5][ix];
    if (__atomic_load_n(&bt->ready, __ATOMIC_ACQUIRE)) return bt;
    int64_t hist[CD_NMS5], prefix[CD_NMS5 + 1];
    int v[13];
    ms_counts(ix, k, v);
    cd_blind_t e;
    memset(&e, 0, sizeof e);
    cd_blind_hist(v, k, hist);
    prefix[0] = 0;
    for (int j = 0; j < CD_NVALID; j++) prefix[j + 1] = prefix[j] + hist[CD_ORDER[j]];
    e.nq = prefix[CD_POS_BELOW[CD_QRANK]];
    e.below_flush = prefix[CD_POS_BELOW[CD_FIRST_FLUSH]];
    int cur[13] = {0};
    cd_sub5(v, 0, 5, cur, &e, prefix, hist);
    memcpy(bt, &e, sizeof e);
    __atomic_store_n(&bt->ready, 1, __ATOMIC_RELEASE);
    return bt;
}

/* every entry at once, in parallel (the full enumeration needs nearly all of them) */
static void cd_build_blind_all(void)
{
    for (int k = 5; k <= 7; k++) {
        #pragma omp parallel for schedule(dynamic, 64)
        for (int ix = 0; ix < CD_NMS[k - 5]; ix++) {
            int v[13];
            ms_counts(ix, k, v);
            int bad = 0;
            for (int r = 0; r < 13; r++) if (v[r] > 4) bad = 1;
            if (!bad) cd_blind_entry(k, ix);
        }
    }
}

/* blind outcome (nq, below, eq) for removed rank counts v (k cards) at player's final F */
static inline const cd_blind_t *cd_blind_of(const int *ranks_sorted, int k)
{
    return cd_blind_entry(k, ms_index(ranks_sorted, k));
}

static inline void cd_blind_at(const cd_blind_t *bt, int k, int fidx, int frank, int64_t *below, int64_t *eq)
{
    int cat = CAT_OF_RANK5[frank];
    if (cat == STRAIGHT_FLUSH || cat == ROYAL) { *below = cd_total(k); *eq = 0; return; }
    if (cat == FLUSH) { *below = bt->below_flush; *eq = 0; return; }
    for (int i = 0; i < bt->nf; i++)
        if (bt->fidx[i] == fidx) { *below = bt->below[i]; *eq = bt->eq[i]; return; }
    *below = -1; *eq = -1; /* cannot happen: F's ranks are part of R's */
}

/* ---------- correction paths ---------- */

typedef void (*cd_emit_fn)(void *ctx, const int *s, int n, int m, int neg, int y);

static uint16_t *CD_KEEPC;           /* colex5 -> 0x8000 | real keep | blind keep << 5, once known */

/* every correction path of the dealer's five cards h (sorted; hc its colex index, or -1).
 * The blind dealer's final rank comes from the rank tables (his play depends on the ranks
 * alone: CD_FIN1 / CD_FIN2 of h's rank multiset), the real one's from the rank of the five
 * cards; each is computed only where the path needs it. */
static void cd_paths_of(const int *h, int64_t hc, cd_emit_fn emit, void *ctx)
{
    int rm = 0;
    for (int i = 0; i < 5; i++) rm |= 1 << (h[i] >> 2);
    if (__builtin_popcount(rm) != 5) return; /* a pair: the blind dealer is exact */
    int tk, bk;
    if (hc >= 0 && CD_KEEPC && CD_KEEPC[hc]) { tk = CD_KEEPC[hc] & 31; bk = (CD_KEEPC[hc] >> 5) & 31; }
    else {
        tk = cd_dealer_keep(h); bk = cd_blind_keep(h);
        if (hc >= 0 && CD_KEEPC) CD_KEEPC[hc] = (uint16_t)(0x8000 | tk | bk << 5);
    }
    int hr[5];
    for (int i = 0; i < 5; i++) hr[i] = h[i] >> 2;
    int hix = ms_index(hr, 5);
    int used[52] = {0};
    for (int i = 0; i < 5; i++) used[h[i]] = 1;
    for (int pass = 0; pass < 2; pass++) {
        int keep = pass ? bk : tk, neg = pass;
        if (tk == bk && pass) break;
        int kc[5], nk = 0;
        for (int i = 0; i < 5; i++) if (keep >> i & 1) kc[nk++] = h[i];
        int m = 5 - nk;
        int ksuit = kc[0] & 3, ksuited = 1;
        for (int i = 1; i < nk; i++) if ((kc[i] & 3) != ksuit) ksuited = 0;
        if (tk == bk && !ksuited) return; /* same play, and no flush can come of it */
        /* real rank needed: the real dealer's path, or both when the plays agree */
        int want_t = tk == bk || !neg, want_b = tk == bk || neg;
        int s[7];
        if (m == 0) {
            memcpy(s, h, sizeof(int) * 5);
            int yt = want_t ? rank5_any(h) : 0, yb = want_b ? CD_NFR[hix] : 0;
            if (tk == bk) { if (yt != yb) { emit(ctx, s, 5, 0, 0, yt); emit(ctx, s, 5, 0, 1, yb); } }
            else emit(ctx, s, 5, 0, neg, neg ? yb : yt);
        } else if (m == 1) {
            for (int c = 0; c < 52; c++) {
                if (used[c]) continue;
                int f[5] = {kc[0], kc[1], kc[2], kc[3], c};
                int yt = want_t ? rank5_any(f) : 0, yb = want_b ? CD_NFR[CD_FIN1[hix][c >> 2]] : 0;
                int n = 0, placed = 0;
                for (int i = 0; i < 5; i++) {
                    if (!placed && c < h[i]) { s[n++] = c; placed = 1; }
                    s[n++] = h[i];
                }
                if (!placed) s[n++] = c;
                if (tk == bk) {
                    if (yt != yb) { emit(ctx, s, 6, 1, 0, yt); emit(ctx, s, 6, 1, 1, yb); }
                } else emit(ctx, s, 6, 1, neg, neg ? yb : yt);
            }
        } else {
            for (int c1 = 0; c1 < 52; c1++) {
                if (used[c1]) continue;
                if (tk == bk && (c1 & 3) != ksuit) continue;
                for (int c2 = c1 + 1; c2 < 52; c2++) {
                    if (used[c2]) continue;
                    if (tk == bk && (c2 & 3) != ksuit) continue;
                    int f[5] = {kc[0], kc[1], kc[2], c1, c2};
                    int yt = want_t ? rank5_any(f) : 0, yb = want_b ? CD_NFR[CD_FIN2[hix][c1 >> 2][c2 >> 2]] : 0;
                    int n = 0, i = 0, extra[2] = {c1, c2}, e = 0;
                    while (i < 5 || e < 2) {
                        if (e < 2 && (i >= 5 || extra[e] < h[i])) s[n++] = extra[e++];
                        else s[n++] = h[i++];
                    }
                    if (tk == bk) {
                        if (yt != yb) { emit(ctx, s, 7, 2, 0, yt); emit(ctx, s, 7, 2, 1, yb); }
                    } else emit(ctx, s, 7, 2, neg, neg ? yb : yt);
                }
            }
        }
    }
}

typedef struct { int64_t *count; cd_path_t *out; int64_t *fill; int y0, y1; int64_t base; } cd_collect_t; /* count and fill: one chunk's row */

static void cd_emit_count(void *ctx, const int *s, int n, int m, int neg, int y)
{
    cd_collect_t *cc = ctx;
    cc->count[y]++;
}

static inline void cd_path_pack(cd_path_t *p, const int *s, int n, int m, int neg)
{
    for (int i = 0; i < 7; i++) p->c[i] = (uint8_t)(i < n ? s[i] : 255);
    p->info = (uint8_t)(n | m << 3 | neg << 7);
}

static void cd_emit_store(void *ctx, const int *s, int n, int m, int neg, int y)
{
    cd_collect_t *cc = ctx;
    if (y < cc->y0 || y >= cc->y1) return;
    cd_path_pack(&cc->out[cc->fill[y]++ - cc->base], s, n, m, neg);
}

static int64_t CD_PATHS_HMAX = -2;
#define CD_CHUNKS 256
static int64_t *CD_POFF;             /* [CD_CHUNKS][8192]: position of (hand chunk, rank)'s first path */
static int64_t CD_PBASE, CD_PCAP;    /* CD_PATHS holds the paths from position CD_PBASE on */
static int CD_PY0 = -1, CD_PY1 = -1; /* ... those with final rank in [CD_PY0, CD_PY1) */

static inline const cd_path_t *cd_path(int64_t q) { return &CD_PATHS[q - CD_PBASE]; }

static void cd_paths_pass(int64_t nh, int store)
{
    #pragma omp parallel for schedule(dynamic, 1)
    for (int ch = 0; ch < CD_CHUNKS; ch++) {
        int64_t lo = nh * ch / CD_CHUNKS, hi = nh * (ch + 1) / CD_CHUNKS;
        if (lo >= hi) continue;
        int64_t fill[8192];
        cd_collect_t cc = {CD_POFF + (size_t)ch * 8192, CD_PATHS, fill, CD_PY0, CD_PY1, CD_PBASE};
        if (store) memcpy(fill, CD_POFF + (size_t)ch * 8192, sizeof fill);
        int c[5];
        unrank_hand5(lo, c);
        for (int64_t i = lo; i < hi; i++) {
            cd_paths_of(c, i, store ? cd_emit_store : cd_emit_count, &cc);
            next_hand5(c);
        }
    }
}

/* the correction paths of the dealer hands with colex index below hmax (all: -1), bucketed by
 * final rank: counted here (CD_PSTART), stored a range of ranks at a time by cd_load_paths, so
 * that they never all take memory at once (76,751,576 paths, 8 bytes each). Each hand's two
 * plays are kept in CD_KEEPC from the counting pass on, so a later pass only enumerates. */
static int cd_build_paths(int64_t hmax)
{
    if (CD_POFF && CD_PATHS_HMAX == hmax) return 0;
    free(CD_PATHS); free(CD_PSTART); free(CD_POFF);
    CD_PATHS = NULL; CD_PCAP = 0; CD_PY0 = CD_PY1 = -1;
    int64_t nh = hmax < 0 || hmax > NH5 ? NH5 : hmax;
    CD_POFF = calloc((size_t)CD_CHUNKS * 8192, sizeof(int64_t));
    CD_PSTART = malloc(sizeof(int64_t) * (NRANK5 + 1));
    if (!CD_KEEPC) CD_KEEPC = calloc(NH5, sizeof(uint16_t));
    if (!CD_POFF || !CD_PSTART || !CD_KEEPC) return -1;
    cd_paths_pass(nh, 0);
    /* turn the counts per (chunk, rank) into positions, ranks outermost */
    int64_t at = 0;
    for (int y = 0; y < NRANK5; y++) {
        CD_PSTART[y] = at;
        for (int ch = 0; ch < CD_CHUNKS; ch++) {
            int64_t n = CD_POFF[(size_t)ch * 8192 + y];
            CD_POFF[(size_t)ch * 8192 + y] = at;
            at += n;
        }
    }
    CD_PSTART[NRANK5] = at;
    CD_NPATHS = at;
    CD_PATHS_HMAX = hmax;
    return 0;
}

/* store the paths with final rank y0 .. y1 - 1 (cd_build_paths first) */
static int cd_load_paths(int y0, int y1)
{
    int64_t need = CD_PSTART[y1] - CD_PSTART[y0];
    if (need > CD_PCAP) {
        free(CD_PATHS);
        CD_PCAP = need;
        CD_PATHS = malloc(sizeof(cd_path_t) * (size_t)(need ? need : 1));
        if (!CD_PATHS) { CD_PCAP = 0; return -1; }
    }
    CD_PY0 = y0; CD_PY1 = y1; CD_PBASE = CD_PSTART[y0];
    int64_t nh = CD_PATHS_HMAX < 0 || CD_PATHS_HMAX > NH5 ? NH5 : CD_PATHS_HMAX;
    if (need) cd_paths_pass(nh, 1);
    return 0;
}

/* the end of the range of ranks stored together from y0 on: at most about limit paths (one
 * rank alone if it has more) */
static int cd_paths_range_end(int y0, int64_t limit)
{
    int y1 = y0 + 1;
    while (y1 < NRANK5 && CD_PSTART[y1 + 1] - CD_PSTART[y0] <= limit) y1++;
    return y1;
}

static int cd_prepare(int qrank)
{
    if (cd_ready) return CD_QRANK == qrank ? 0 : -2;
    CD_QRANK = qrank;
    if (cd_build_basic()) return -1;
    if (cd_build_classes()) return -1;
    for (int kk = 0; kk < 3; kk++) {
        CD_BT[kk] = calloc(CD_NMS[kk], sizeof(cd_blind_t));
        if (!CD_BT[kk]) return -1;
    }
    cd_ready = 1;
    return 0;
}

/* ---------- subset counts (sets of up to seven cards) ---------- */

/* Counts per card set T of the correction paths (so far in the sweep) that contain T, signed:
 * c5[T][m] for |T| <= 5 by cards drawn m, c6[T][m - 1] for |T| = 6 (m >= 1), c7[T] for |T| = 7
 * (m = 2). Their sizes bound their types: a seven-card set is the path itself, reached from at
 * most 21 dealer hands (5 of its 7 cards) with one sign each, |c7| <= 21; a six-card set is in
 * at most 6 one-card-draw paths (|c6[.][0]| <= 6) and in the seven-card sets through 46 more
 * cards (|c6[.][1]| <= 46 * 21 = 966). So int8 and int16 hold them exactly, which makes the
 * two big tables 4 and 2 times smaller than int32 (134 MB and 81 MB) and their reads cheaper;
 * the sums of up to five cards (35 MB) stay int32. */
typedef struct { int8_t *c7; int16_t *c6; int32_t *c5; } cd_ctr_t;
static int64_t CD_OFF5[7];

static int cd_ctr_alloc(cd_ctr_t *t)
{
    CD_OFF5[0] = 0;
    for (int k = 0; k < 6; k++) CD_OFF5[k + 1] = CD_OFF5[k] + (int64_t)BINOM[52][k];
    t->c7 = cd_big_calloc((size_t)BINOM[52][7] * sizeof(int8_t));
    t->c6 = cd_big_calloc((size_t)BINOM[52][6] * 2 * sizeof(int16_t));
    t->c5 = cd_big_calloc((size_t)CD_OFF5[6] * 3 * sizeof(int32_t));
    return (t->c7 && t->c6 && t->c5) ? 0 : -1;
}

static void cd_ctr_free(cd_ctr_t *t) { cd_big_free(t->c7); cd_big_free(t->c6); cd_big_free(t->c5); }

static inline void cd_ctr_read(const cd_ctr_t *t, int64_t ix, int k, int64_t *out, int sign)
{
    if (k == 7) out[2] += sign * (int64_t)t->c7[ix];
    else if (k == 6) { const int16_t *p = &t->c6[ix * 2]; out[1] += sign * (int64_t)p[0]; out[2] += sign * (int64_t)p[1]; }
    else { const int32_t *p = &t->c5[(CD_OFF5[k] + ix) * 3]; out[0] += sign * (int64_t)p[0]; out[1] += sign * (int64_t)p[1]; out[2] += sign * (int64_t)p[2]; }
}

/* add paths [from, to) to the subset counts: each of the nt threads of the calling team
 * takes the subsets whose size is its number modulo nt, so no two threads touch one count
 * (with two threads the split is exactly even: a set has as many even as odd subsets).
 * A path's up to 128 counts sit at scattered places, so a thread works out the counts of the
 * path CD_ADD_AHEAD places ahead and prefetches them while it adds to those of the current
 * one; each count still gets its adds in path order (the same partial sums as one by one). */
#define CD_ADD_AHEAD 6
typedef struct { int n; int8_t d; uint8_t kind[128]; uint32_t at[128]; } cd_upd_t;
static void cd_add_list(cd_ctr_t *t, const cd_path_t *paths, int64_t np, int me, int nt);
static inline const cd_path_t *cd_path(int64_t q);
static inline void cd_add_paths_team(cd_ctr_t *t, int64_t from, int64_t to, int me, int nt)
{
    if (to > from) cd_add_list(t, cd_path(from), to - from, me, nt);
}
static void cd_add_paths(cd_ctr_t *t, int64_t from, int64_t to)
{
    #pragma omp parallel if (to - from > 2048)
    {
        int me = 0, nt = 1;
#ifdef _OPENMP
        me = omp_get_thread_num(); nt = omp_get_num_threads();
#endif
        cd_add_paths_team(t, from, to, me, nt);
    }
}

/* thread me's share of the adds of paths[0 .. np), in a team of nt (called by every thread of
 * the team; the caller puts a barrier after it before the counts are read) */
static void cd_add_list(cd_ctr_t *t, const cd_path_t *paths, int64_t np, int me, int nt)
{
    const int64_t from = 0, to = np;
    {
        cd_upd_t ring[CD_ADD_AHEAD + 1];
        for (int64_t q = from; q < to + CD_ADD_AHEAD; q++) {
            if (q < to) {
                const cd_path_t *p = &paths[q];
                cd_upd_t *u = &ring[q % (CD_ADD_AHEAD + 1)];
                int n = p->info & 7, m = (p->info >> 3) & 3;
                u->d = (p->info & 0x80) ? -1 : 1;
                int64_t ix[128];
                int sz[128];
                ix[0] = 0; sz[0] = 0;
                int cnt = 1;
                /* with two threads, the subsets of the other cards and the top card decide:
                 * of S and S + top exactly one has this thread's parity, so half the subsets
                 * are worked out, not all of them and half thrown away */
                int pair_split = nt == 2, nlow = pair_split ? n - 1 : n;
                for (int i = 0; i < nlow; i++) {
                    int c = p->c[i];
                    for (int j = 0; j < cnt; j++) {
                        ix[cnt + j] = ix[j] + (int64_t)BINOM[c][sz[j] + 1];
                        sz[cnt + j] = sz[j] + 1;
                    }
                    cnt *= 2;
                }
                if (pair_split) {
                    int top = p->c[n - 1];   /* the cards are ascending: top is the highest */
                    for (int j = 0; j < cnt; j++)
                        if ((sz[j] & 1) != me) { ix[j] += (int64_t)BINOM[top][sz[j] + 1]; sz[j]++; }
                }
                int nu = 0;
                for (int j = 0; j < cnt; j++) {
                    int k = sz[j];
                    /* with one or two threads every subset worked out is this thread's (the
                     * parity split above); the test would cost a division per subset */
                    if (nt > 2 && k % nt != me) continue;
                    if (k == 7) { u->kind[nu] = 7; u->at[nu] = (uint32_t)ix[j]; __builtin_prefetch(&t->c7[ix[j]], 1); }
                    else if (k == 6) { u->kind[nu] = 6; u->at[nu] = (uint32_t)(ix[j] * 2 + (m - 1)); __builtin_prefetch(&t->c6[u->at[nu]], 1); }
                    else { u->kind[nu] = 5; u->at[nu] = (uint32_t)((CD_OFF5[k] + ix[j]) * 3 + m); __builtin_prefetch(&t->c5[u->at[nu]], 1); }
                    nu++;
                }
                u->n = nu;
            }
            int64_t r = q - CD_ADD_AHEAD;
            if (r >= from) {
                const cd_upd_t *u = &ring[r % (CD_ADD_AHEAD + 1)];
                int d = u->d;
                for (int j = 0; j < u->n; j++) {
                    if (u->kind[j] == 7) t->c7[u->at[j]] += d;
                    else if (u->kind[j] == 6) t->c6[u->at[j]] += d;
                    else t->c5[u->at[j]] += d;
                }
            }
        }
    }
}

/* Every correction path ending below rank y1 added to the counts straight from the dealer
 * hands, in no particular order: below the qualifier the sweep only adds (no class is read
 * there), and the counts at the qualifier are the same sums whichever order the paths come in.
 * Each thread of the team enumerates every hand's paths (a pass costs about a second) and
 * adds its own share of each path's subsets (cd_add_list), so no two threads touch one count
 * and nothing is stored: this replaces storing the paths a range of ranks at a time (two
 * thirds of them are below the qualifier, a pass over every hand for each 6 million). */
typedef struct { cd_path_t *buf; int64_t n; int y1; cd_ctr_t *t; int me, nt; } cd_direct_t;
#define CD_DIRECT_BUF 4096

static void cd_emit_direct(void *ctx, const int *s, int n, int m, int neg, int y)
{
    cd_direct_t *dc = ctx;
    if (y >= dc->y1) return;
    cd_path_pack(&dc->buf[dc->n++], s, n, m, neg);
    if (dc->n == CD_DIRECT_BUF) { cd_add_list(dc->t, dc->buf, dc->n, dc->me, dc->nt); dc->n = 0; }
}

static int cd_add_below(cd_ctr_t *t, int y1)
{
    int64_t nh = CD_PATHS_HMAX < 0 || CD_PATHS_HMAX > NH5 ? NH5 : CD_PATHS_HMAX;
    int failed = 0;
    #pragma omp parallel
    {
        int me = 0, nt = 1;
#ifdef _OPENMP
        me = omp_get_thread_num(); nt = omp_get_num_threads();
#endif
        cd_direct_t dc = {malloc(sizeof(cd_path_t) * CD_DIRECT_BUF), 0, y1, t, me, nt};
        if (!dc.buf) {
            #pragma omp atomic write
            failed = 1;
        } else {
            int c[5];
            unrank_hand5(0, c);
            for (int64_t i = 0; i < nh; i++) {
                cd_paths_of(c, i, cd_emit_direct, &dc);
                next_hand5(c);
                if (me == 0 && (i & 4095) == 0) PROGRESS_DONE = 60 + (long)(200 * i / nh);
            }
            if (dc.n) cd_add_list(t, dc.buf, dc.n, me, nt);
            free(dc.buf);
        }
    }
    return failed ? -1 : 0;
}

/* For the final hand f (sorted): out[0..2] base, out[3 + 3 * d] single d, out[3 + 156 + 3 * pair]
 * pair (d1 < d2, pair = C(d1,1) + C(d2,2)) of sum over T in f of (-1)^|T| count[T + extra].
 *
 * About 36,000 reads per hand at scattered places of 250 MB, so the time is the memory's
 * latency: for each subset T of f the indices of all its reads are worked out first, then read
 * with the read CD_PF_AHEAD places further on prefetched, so that many misses are in flight at
 * once instead of the few the processor finds on its own. */
#define CD_RSZ (3 + 3 * 52 + 3 * CD_NPAIR)
#define CD_PF_AHEAD 40
static void cd_read_all(const cd_ctr_t *t, const int *f, int64_t *out)
{
    memset(out, 0, sizeof(int64_t) * CD_RSZ);
    int inf[52] = {0};
    for (int i = 0; i < 5; i++) inf[f[i]] = 1;
    /* the cards outside f and the pairs of them, with where their sums go */
    int outs[47], no = 0;
    for (int d = 0; d < 52; d++) if (!inf[d]) outs[no++] = d;
    int16_t pd1[CD_NPAIR], pd2[CD_NPAIR];
    int32_t pout[CD_NPAIR];
    int np = 0;
    for (int b = 1; b < no; b++)
        for (int a = 0; a < b; a++) {
            pd1[np] = (int16_t)outs[a]; pd2[np] = (int16_t)outs[b];
            pout[np] = 3 + 156 + 3 * (int32_t)(outs[a] + BINOM[outs[b]][2]);
            np++;
        }
    uint32_t ix[CD_NPAIR + CD_PF_AHEAD];
    for (int mask = 0; mask < 32; mask++) {
        int tc[5], k = 0;
        for (int i = 0; i < 5; i++) if (mask >> i & 1) tc[k++] = f[i];
        int64_t sign = (k & 1) ? -1 : 1;
        int64_t P0[6], P1[6], S1[6], S2[6];
        P0[0] = P1[0] = 0;
        for (int i = 0; i < k; i++) {
            P0[i + 1] = P0[i] + (int64_t)BINOM[tc[i]][i + 1];
            P1[i + 1] = P1[i] + (int64_t)BINOM[tc[i]][i + 2];
        }
        S1[k] = S2[k] = 0;
        for (int i = k - 1; i >= 0; i--) {
            S1[i] = S1[i + 1] + (int64_t)BINOM[tc[i]][i + 2];
            S2[i] = S2[i + 1] + (int64_t)BINOM[tc[i]][i + 3];
        }
        cd_ctr_read(t, P0[k], k, out, sign);
        /* per card d outside f: its index as the single extra card (one), and its parts of a
         * pair's index as the lower (lo1) and the higher (hi2) card */
        int64_t one[52], lo1[52], hi2[52];
        for (int d = 0, j = 0; d < 52; d++) {
            while (j < k && tc[j] < d) j++;
            one[d] = P0[j] + S1[j] + (int64_t)BINOM[d][j + 1];
            lo1[d] = P0[j] - P1[j] + (int64_t)BINOM[d][j + 1];
            hi2[d] = P1[j] + S2[j] + (int64_t)BINOM[d][j + 2];
        }
        for (int i = 0; i < no; i++) cd_ctr_read(t, one[outs[i]], k + 1, out + 3 + 3 * outs[i], sign);
        for (int p = 0; p < np; p++) ix[p] = (uint32_t)(hi2[pd2[p]] + lo1[pd1[p]]);
        for (int p = np; p < np + CD_PF_AHEAD; p++) ix[p] = ix[np - 1];
        if (k + 2 == 7) {
            const int8_t *c7 = t->c7;
            for (int p = 0; p < np; p++) {
                __builtin_prefetch(&c7[ix[p + CD_PF_AHEAD]]);
                out[pout[p] + 2] += sign * c7[ix[p]];
            }
        } else if (k + 2 == 6) {
            const int16_t *c6 = t->c6;
            for (int p = 0; p < np; p++) {
                __builtin_prefetch(&c6[(size_t)ix[p + CD_PF_AHEAD] * 2]);
                const int16_t *q = &c6[(size_t)ix[p] * 2];
                out[pout[p] + 1] += sign * q[0];
                out[pout[p] + 2] += sign * q[1];
            }
        } else {
            const int32_t *c5 = t->c5 + CD_OFF5[k + 2] * 3;
            for (int p = 0; p < np; p++) {
                __builtin_prefetch(&c5[(size_t)ix[p + CD_PF_AHEAD] * 3]);
                const int32_t *q = &c5[(size_t)ix[p] * 3];
                out[pout[p]] += sign * q[0];
                out[pout[p] + 1] += sign * q[1];
                out[pout[p] + 2] += sign * q[2];
            }
        }
    }
}

/* the correction for discards D (nd = 0, 1, 2 cards) from cd_read_all's output, weighed */
static inline int64_t cd_corr(const int64_t *rd, int nd, int d1, int d2)
{
    const int64_t *W = CD_W[nd];
    int64_t v[3];
    for (int m = 0; m < 3; m++) {
        v[m] = rd[m];
        if (nd >= 1) v[m] -= rd[3 + 3 * d1 + m];
        if (nd == 2) v[m] += -rd[3 + 3 * d2 + m] + rd[3 + 156 + 3 * ((int64_t)d1 + BINOM[d2][2]) + m];
    }
    return v[0] * W[0] + v[1] * W[1] + v[2] * W[2];
}

#define CD_PATHS_LIMIT 9000000  /* paths stored at once (72 MB) */
#define CD_DIRECT_EQ 12000      /* default: below this many paths at a rank, equal counts are summed directly */
static inline void cd_small_add(int64_t *c, const cd_path_t *p);

/* ---------- one removed set, two independent ways (for the tests) ---------- */

/* every dealer path avoiding R, real rules: (nq, below x, equal x), weighed */
static void cd_dealer_brute(const int *R, int nr, int x, int64_t *out)
{
    int used[52] = {0};
    for (int i = 0; i < nr; i++) used[R[i]] = 1;
    int pool[52], n = 0;
    for (int c = 0; c < 52; c++) if (!used[c]) pool[n++] = c;
    const int64_t *W = CD_W[nr - 5];
    int64_t nq = 0, below = 0, eq = 0;
    #pragma omp parallel for schedule(dynamic, 1) reduction(+:nq, below, eq)
    for (int i4 = 4; i4 < n; i4++) {
        int h[5], a[5];
        a[4] = i4;
        for (a[3] = 3; a[3] < a[4]; a[3]++)
         for (a[2] = 2; a[2] < a[3]; a[2]++)
          for (a[1] = 1; a[1] < a[2]; a[1]++)
           for (a[0] = 0; a[0] < a[1]; a[0]++) {
               int inh[52] = {0};
               for (int j = 0; j < 5; j++) { h[j] = pool[a[j]]; inh[h[j]] = 1; }
               int keep = cd_dealer_keep(h), kc[5], nk = 0;
               for (int j = 0; j < 5; j++) if (keep >> j & 1) kc[nk++] = h[j];
               int m = 5 - nk;
               #define CD_TALLY(y, w) do { int y_ = (y); if (y_ < CD_QRANK) nq += (w); \
                   if (y_ < x) below += (w); else if (y_ == x) eq += (w); } while (0)
               if (m == 0) CD_TALLY(rank5_any(h), W[0]);
               else if (m == 1) {
                   for (int j = 0; j < n; j++) {
                       if (inh[pool[j]]) continue;
                       int f[5] = {kc[0], kc[1], kc[2], kc[3], pool[j]};
                       CD_TALLY(rank5_any(f), W[1]);
                   }
               } else {
                   for (int j2 = 0; j2 < n; j2++) {
                       if (inh[pool[j2]]) continue;
                       for (int j1 = 0; j1 < j2; j1++) {
                           if (inh[pool[j1]]) continue;
                           int f[5] = {kc[0], kc[1], kc[2], pool[j1], pool[j2]};
                           CD_TALLY(rank5_any(f), W[2]);
                       }
                   }
               }
               #undef CD_TALLY
           }
    }
    out[0] = nq; out[1] = below; out[2] = eq;
}

typedef struct { const int *used; int x; int64_t W[3]; int64_t nq, below, eq; int64_t hmax; } cd_split_t;

static void cd_emit_split(void *ctx, const int *s, int n, int m, int neg, int y)
{
    cd_split_t *sp = ctx;
    for (int i = 0; i < n; i++) if (sp->used[s[i]]) return;
    int64_t w = sp->W[m] * (neg ? -1 : 1);
    if (y < CD_QRANK) sp->nq += w;
    if (y < sp->x) sp->below += w;
    else if (y == sp->x) sp->eq += w;
}

/* blind table (by R's rank counts, computed afresh) plus the correction paths avoiding R;
 * hmax >= 0 keeps only the corrections of dealer hands with colex index below hmax */
static void cd_dealer_split(const int *R, int nr, int x, int64_t hmax, int64_t *blind, int64_t *corr)
{
    int used[52] = {0}, v[13] = {0};
    for (int i = 0; i < nr; i++) { used[R[i]] = 1; v[R[i] >> 2]++; }
    int64_t *hist = malloc(sizeof(int64_t) * CD_NMS5);
    cd_blind_hist(v, nr, hist);
    blind[0] = blind[1] = blind[2] = 0;
    for (int ix = 0; ix < CD_NMS5; ix++) {
        if (!CD_MSVALID[ix] || !hist[ix]) continue;
        int y = CD_NFR[ix];
        if (y < CD_QRANK) blind[0] += hist[ix];
        if (y < x) blind[1] += hist[ix];
        else if (y == x) blind[2] += hist[ix];
    }
    free(hist);
    cd_split_t sp = {used, x, {CD_W[nr - 5][0], CD_W[nr - 5][1], CD_W[nr - 5][2]}, 0, 0, 0, hmax};
    int c[5] = {0, 1, 2, 3, 4};
    for (int64_t i = 0; i < (hmax >= 0 && hmax < NH5 ? hmax : NH5); i++, next_hand5(c))
        if (!used[c[0]] && !used[c[1]] && !used[c[2]] && !used[c[3]] && !used[c[4]])
            cd_paths_of(c, -1, cd_emit_split, &sp);
    corr[0] = sp.nq; corr[1] = sp.below; corr[2] = sp.eq;
}

/* ---------- the full enumeration ---------- */

typedef struct { int cls; int f[5]; int nd, d[2]; int64_t corr[3]; int found; } cd_debug_t;

static int cmp_cls_by_rank(const void *a, const void *b)
{
    int x = RANK5[CD_REP[*(const int32_t *)a]], y = RANK5[CD_REP[*(const int32_t *)b]];
    return x != y ? x - y : *(const int32_t *)a - *(const int32_t *)b;
}

static void cd_rep_cards(int cls, int *f)
{
    unrank_hand5(CD_REP[cls], f);
}

/* what the dealer's counts mean for a player's final rank x (rules 13, 14): below and le are
 * the dealer paths ranking below / at most x, nq those not qualifying, total all of them */
static inline void cd_outcome(int x, int64_t below, int64_t le, int64_t nq, int64_t total,
                              int64_t *win, int64_t *tie, int64_t *lose)
{
    if (x >= CD_QRANK) { *win = below - nq; *tie = le - below; *lose = total - le; }
    else { *win = 0; *tie = 0; *lose = total - nq; }  /* every path at or below x fails to qualify */
}

/* The outcome of (F, D) is credited in two parts at two moments of the sweep, which add up to
 * cd_outcome's (nq, win, tie, lose):
 *  CD_PART_NQ, when the sweep reaches the qualifier (the counts then hold exactly the paths that
 *  do not qualify; cnt = their reading for F): a player below the qualifier gets his whole
 *  outcome (nq, 0, 0, total - nq); one at or above it gets (nq, -nq, 0, 0);
 *  CD_PART_RANK, at F's own rank x >= qualifier (before / after: the readings without and with
 *  the paths ending at x): (0, below, le - below, total - le).
 * So a player below the qualifier needs one reading of the counts, not three.
 *  CD_PART_DEBUG: the readings of a player below the qualifier at his own rank, for the debug
 *  queries only (nothing credited). */
enum { CD_PART_NQ, CD_PART_RANK, CD_PART_DEBUG };

/* Credits of one F: each of its 1,129 discard sets D goes to every option (P = K + D, keep K)
 * that ends in F with those discards: 11,046 credits, each an add to accumulators at a random
 * place among 224 MB found through two random table reads (class, positions). That chain of
 * misses, not the arithmetic, is the cost, so the credits are listed first and then worked
 * through as a pipeline: the table entries of the credit 2 * CD_CR_AHEAD on and the
 * accumulators of the one CD_CR_AHEAD on are prefetched while the current one is added. */
#define CD_NDSETS (1 + 47 + 1081)
#define CD_NCREDITS (1 + 47 * 5 + 1081 * 10)
#define CD_CR_AHEAD 12
typedef struct {
    int32_t cix[CD_NCREDITS + 2 * CD_CR_AHEAD];  /* colex index of the option's hand P */
    uint8_t cisd[CD_NCREDITS];                   /* which of P's positions are discards */
    int16_t cdj[CD_NCREDITS];                    /* its discard set (index into the D list) */
    int64_t *ca[CD_NCREDITS + CD_CR_AHEAD];      /* its accumulators */
    int64_t val[CD_NDSETS][4];                   /* weighed nq, tie, lose, win of each D */
    const cd_blind_t *bt[CD_NDSETS];
    int8_t dnd[CD_NDSETS], dd[CD_NDSETS][2];
} cd_work_t;

static void cd_process_f(int cls, const int64_t *before, const int64_t *after, const int64_t *cnt,
                         int64_t *acc, cd_debug_t *dbg, int ndbg, int part, cd_work_t *w)
{
    static const int A[10] = {0,0,0,0,1,1,1,2,2,3}, B[10] = {1,2,3,4,2,3,4,3,4,4};
    int f[5];
    cd_rep_cards(cls, f);
    int fr[5];
    for (int i = 0; i < 5; i++) fr[i] = f[i] >> 2;
    int fidx = ms_index(fr, 5);  /* f is sorted by card, so its ranks are sorted too */
    int frank = RANK5[CD_REP[cls]], cat = CAT_OF_RANK5[frank];
    int64_t wF = CD_CSIZE[cls];
    int inf[52] = {0};
    for (int i = 0; i < 5; i++) inf[f[i]] = 1;
    /* the discard sets D and the blind dealer's entries of R = F + D */
    int nds = 0;
    for (int nd = 0; nd <= 2; nd++) {
        for (int d2 = 0; d2 < 52; d2++) {
            if (nd >= 1 && inf[d2]) continue;
            for (int d1 = 0; d1 < (nd == 2 ? d2 : 1); d1++) {
                if (nd == 2 && inf[d1]) continue;
                int d[2] = {0, 0}, rr[7];
                if (nd == 1) d[0] = d2;
                else if (nd == 2) { d[0] = d1; d[1] = d2; }
                /* R's ranks, sorted */
                int n = 0, j = 0, di = 0, dr[2] = {nd ? d[0] >> 2 : 0, nd == 2 ? d[1] >> 2 : 0};
                while (j < 5 || di < nd) {
                    if (di < nd && (j >= 5 || dr[di] < fr[j])) rr[n++] = dr[di++];
                    else rr[n++] = fr[j++];
                }
                w->bt[nds] = cd_blind_of(rr, 5 + nd);
                __builtin_prefetch(w->bt[nds]);
                w->dnd[nds] = (int8_t)nd; w->dd[nds][0] = (int8_t)d[0]; w->dd[nds][1] = (int8_t)d[1];
                nds++;
                if (nd == 0) break;
            }
            if (nd == 0) break;
        }
    }
    /* each D's outcome */
    for (int j = 0; j < nds; j++) {
        int nd = w->dnd[j], d[2] = {w->dd[j][0], w->dd[j][1]}, k = 5 + nd;
        int64_t total = cd_total(k);
        const cd_blind_t *bt = w->bt[j];
        int a1 = nd ? d[0] : 0, a2 = nd == 2 ? d[1] : 0;
        int64_t cq = 0, cb = 0, ca = 0, nq = 0, win = 0, tie = 0, lose = 0;
        if (part == CD_PART_NQ) {
            cq = cd_corr(cnt, nd, a1, a2);
            nq = bt->nq + cq;
            if (frank < CD_QRANK) lose = total - nq;
            else win = -nq;
        } else {
            int64_t bbelow, beq;
            cd_blind_at(bt, k, fidx, frank, &bbelow, &beq);
            cb = cd_corr(before, nd, a1, a2);
            ca = cd_corr(after, nd, a1, a2);
            int64_t below = bbelow + cb, le = bbelow + beq + ca;
            win = below; tie = le - below; lose = total - le;
        }
        w->val[j][0] = nq * wF; w->val[j][1] = tie * wF; w->val[j][2] = lose * wF; w->val[j][3] = win * wF;
        for (int q = 0; q < ndbg; q++)
            if (dbg[q].cls == cls && dbg[q].nd == nd && (nd < 1 || dbg[q].d[0] == d[0]) && (nd < 2 || dbg[q].d[1] == d[1])) {
                if (part == CD_PART_NQ) dbg[q].corr[0] = cq;
                else { dbg[q].corr[1] = cb; dbg[q].corr[2] = ca - cb; }
                dbg[q].found |= part == CD_PART_NQ ? 1 : 2;
            }
    }
    if (part == CD_PART_DEBUG) return;
    /* the credits: for each D, the options that end in F with discards D (the drawn cards N
     * are 0, 1 or 2 of F's positions), as their hands P */
    int nc = 0;
    for (int j = 0; j < nds; j++) {
        int nd = w->dnd[j], d[2] = {w->dd[j][0], w->dd[j][1]};
        int nsub = nd == 0 ? 1 : nd == 1 ? 5 : 10;
        for (int s = 0; s < nsub; s++) {
            int out1 = -1, out2 = -1; /* positions in f of the drawn cards N */
            if (nd == 1) out1 = s;
            else if (nd == 2) { out1 = A[s]; out2 = B[s]; }
            int p[5], isd = 0, n = 0, jj = 0, di = 0;
            int k[5], nk = 0;
            for (int i = 0; i < 5; i++) if (i != out1 && i != out2) k[nk++] = f[i];
            while (jj < nk || di < nd) {
                if (di < nd && (jj >= nk || d[di] < k[jj])) { isd |= 1 << n; p[n++] = d[di++]; }
                else p[n++] = k[jj++];
            }
            w->cix[nc] = (int32_t)colex5(p);
            w->cisd[nc] = (uint8_t)isd;
            w->cdj[nc] = (int16_t)j;
            nc++;
        }
    }
    for (int i = nc; i < nc + 2 * CD_CR_AHEAD; i++) w->cix[i] = w->cix[nc - 1];
    /* the pipeline: table entries prefetched at i + 2 AHEAD, accumulators found and prefetched
     * at i + AHEAD, added at i */
    for (int i = 0; i < 2 * CD_CR_AHEAD; i++) __builtin_prefetch(&CD_CP[w->cix[i]]);
    for (int i = 0; i < CD_CR_AHEAD && i < nc; i++) {
        uint32_t cp = CD_CP[w->cix[i]];
        w->ca[i] = acc + ((int64_t)(cp & 0xFFFFF) * 16 + CD_OPTOF[cp >> 20][w->cisd[i]]) * CD_NACC;
        __builtin_prefetch(w->ca[i], 1);
        __builtin_prefetch(w->ca[i] + 3 + cat, 1);
    }
    for (int i = 0; i < nc; i++) {
        int i2 = i + 2 * CD_CR_AHEAD, i1 = i + CD_CR_AHEAD;
        __builtin_prefetch(&CD_CP[w->cix[i2]]);
        if (i1 < nc) {
            uint32_t cp = CD_CP[w->cix[i1]];
            w->ca[i1] = acc + ((int64_t)(cp & 0xFFFFF) * 16 + CD_OPTOF[cp >> 20][w->cisd[i1]]) * CD_NACC;
            __builtin_prefetch(w->ca[i1], 1);
            __builtin_prefetch(w->ca[i1] + 3 + cat, 1);
        }
        int64_t *a = w->ca[i];
        const int64_t *v = w->val[w->cdj[i]];
        /* each thread has its own accumulators: plain adds; a part of the outcome leaves some
         * of the four at zero */
        if (v[0]) a[0] += v[0];
        if (v[1]) a[1] += v[1];
        if (v[2]) a[2] += v[2];
        if (v[3]) a[3 + cat] += v[3];
    }
}

static inline __int128 cd_evnum(const int64_t *a, const int *pays)
{
    __int128 v = (__int128)a[0] - 3 * (__int128)a[2];
    for (int c = 0; c < NCAT; c++) v += (__int128)a[3 + c] * (1 + 2 * pays[c]);
    return v;
}

static PyObject *u128_to_py(unsigned __int128 v)
{
    PyObject *hi = PyLong_FromUnsignedLongLong((unsigned long long)(v >> 64));
    PyObject *lo = PyLong_FromUnsignedLongLong((unsigned long long)v);
    PyObject *sh = PyLong_FromLong(64);
    PyObject *t = PyNumber_Lshift(hi, sh);
    PyObject *r = PyNumber_Add(t, lo);
    Py_DECREF(hi); Py_DECREF(lo); Py_DECREF(sh); Py_DECREF(t);
    return r;
}

typedef struct {
    unsigned __int128 fold, nq, tie, lose, win[NCAT];
    int64_t hands_fold, hands_draw[NCAT][3];   /* by the initial hand's category */
} cd_strat_t;

/* cdraw(pays, qrank, hmax, fmax, debug) -> dict; see caribbean_draw.py */
static PyObject *k_cdraw(PyObject *self, PyObject *args)
{
    int pays[NCAT], qrank;
    long long hmax, fmax, direct_eq = CD_DIRECT_EQ;
    PyObject *debug, *focus;
    /* checkpoints (tablegames/par/checkpoint.py): parts > 0 splits the run into parts whose
     * credits add; after each, save(done, parts, accumulators) may keep them; resume_done > 0
     * reads the accumulators of that many parts from resume_path at resume_offset */
    int parts = 0, resume_done = 0;
    PyObject *save = Py_None, *resume_path = Py_None;
    Py_ssize_t resume_offset = 0;
    if (!PyArg_ParseTuple(args, "(iiiiiiiiii)iLLOO|LiOiOn", &pays[0], &pays[1], &pays[2], &pays[3], &pays[4],
                          &pays[5], &pays[6], &pays[7], &pays[8], &pays[9], &qrank, &hmax, &fmax, &debug, &focus,
                          &direct_eq, &parts, &save, &resume_done, &resume_path, &resume_offset))
        return NULL;
    if (!PyList_Check(focus)) { PyErr_SetString(PyExc_TypeError, "focus must be a list"); return NULL; }
    if (!PyList_Check(debug)) { PyErr_SetString(PyExc_TypeError, "debug must be a list"); return NULL; }
    if (parts && (parts < 2 || PyList_Size(debug) || PyList_Size(focus))) {
        PyErr_SetString(PyExc_ValueError, "checkpoints need at least 2 parts and no debug or focus hands");
        return NULL;
    }
    if (save != Py_None && !PyCallable_Check(save)) { PyErr_SetString(PyExc_TypeError, "save must be callable"); return NULL; }
    const char *rpath = NULL;
    if (resume_done > 0) {
        if (resume_path == Py_None || !(rpath = PyUnicode_AsUTF8(resume_path))) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "resume_done needs resume_path");
            return NULL;
        }
    }
    int ndbg = (int)PyList_Size(debug);
    cd_debug_t *dbg = calloc(ndbg ? ndbg : 1, sizeof(cd_debug_t));
    for (int q = 0; q < ndbg; q++) {
        int c[7], n;
        PyObject *t = PyList_GetItem(debug, q);
        if (!PyArg_ParseTuple(t, "(iiiii)i(ii)", &c[0], &c[1], &c[2], &c[3], &c[4], &n, &c[5], &c[6])) { free(dbg); return NULL; }
        memcpy(dbg[q].f, c, sizeof(int) * 5);
        dbg[q].nd = n; dbg[q].d[0] = c[5]; dbg[q].d[1] = c[6];
    }
    int rc = 0;
    double secs[5] = {0}, t0 = cd_now();
    /* the progress counter in thousandths, by the share of the time each part takes (the
     * phases tablegames/par/cdraw.py names, measured on a full run): tables 4 %, the path counts
     * 2 %, the paths below the qualifier 20 % (by dealer hand), the non-qualifying reading 44 %
     * (by its parts), the sweep 30 % (by the classes it has reached) */
    PROGRESS_DONE = 0; PROGRESS_TOTAL = 1000;
    int64_t *acc = NULL, *accs[8] = {NULL};
    int nthr = 1;
#ifdef _OPENMP
    nthr = omp_get_max_threads();
    if (nthr > 8) nthr = 8;  /* each thread's accumulators take 224 MB */
#endif
    cd_ctr_t main_t = {0};
    int32_t *order = NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = cd_prepare(qrank);
    if (!rc && fmax < 0) cd_build_blind_all();
    PROGRESS_DONE = 40;
    secs[0] = cd_now() - t0;
    if (!rc) rc = cd_build_paths(hmax);
    PROGRESS_DONE = 60;
    secs[1] = cd_now() - t0 - secs[0];
    if (!rc) {
        for (int t = 0; t < nthr; t++) {
            accs[t] = cd_big_calloc((size_t)CD_NCLS * 16 * CD_NACC * sizeof(int64_t));
            if (!accs[t]) rc = -1;
        }
        acc = accs[0];
        if (rc || cd_ctr_alloc(&main_t)) rc = -1;
    }
    if (!rc && resume_done > 0) {
        /* the parts done so far: their credits, summed over the threads, are the first thread's */
        size_t bytes = (size_t)CD_NCLS * 16 * CD_NACC * sizeof(int64_t);
        FILE *fh = fopen(rpath, "rb");
        if (!fh || fseek(fh, (long)resume_offset, SEEK_SET) || fread(acc, 1, bytes, fh) != bytes) rc = -4;
        if (fh) fclose(fh);
    }
    /* debug queries: map (F, D) to the class representative's frame */
    for (int q = 0; !rc && q < ndbg; q++) {
        int f[5];
        memcpy(f, dbg[q].f, sizeof f);
        sort_small(f, 5);
        int ix = (int)colex5(f), p = CD_PERMOF[ix];
        dbg[q].cls = CD_CLS[ix];
        int d[2] = {0, 0};
        for (int i = 0; i < dbg[q].nd; i++) d[i] = (dbg[q].d[i] & ~3) | SUIT_PERMS[p][dbg[q].d[i] & 3];
        if (dbg[q].nd == 2 && d[0] > d[1]) { int t = d[0]; d[0] = d[1]; d[1] = t; }
        dbg[q].d[0] = d[0]; dbg[q].d[1] = d[1];
    }
    if (!rc) {
        order = malloc(sizeof(int32_t) * CD_NCLS);
        int nf = 0;
        for (int c = 0; c < CD_NCLS; c++) if (fmax < 0 || c < fmax) order[nf++] = c;
        qsort(order, nf, sizeof(int32_t), cmp_cls_by_rank);
        /* The parts, when checkpointed: the non-qualifying reading in pnq ranges of classes, then
         * the sweep from the qualifier on cut at ranks yb[1..nyb-1] (yb[0] = the qualifier), so
         * that each piece holds about as many classes. done = parts finished: up to pnq, the
         * reading's ranges; pnq + j, the sweep below rank yb[j]. The plan depends only on the
         * classes and the qualifier, so a resumed run cuts where the first one did. */
        int pnq = parts ? parts / 3 : 1, psw = parts ? parts - pnq : 1, nyb = 1;
        if (pnq < 1) pnq = 1;
        if (psw < 1) psw = 1;
        int *yb = malloc(sizeof(int) * (psw + 1));
        int oq0 = 0;                     /* the first class at or above the qualifier */
        while (oq0 < nf && RANK5[CD_REP[order[oq0]]] < qrank) oq0++;
        if (!yb) rc = -1;
        else {
            yb[0] = qrank;
            for (int j = 1; j < psw; j++) {
                int64_t at = oq0 + (int64_t)(nf - oq0) * j / psw;
                if (at >= nf) break;
                int y = RANK5[CD_REP[order[at]]];
                if (y > yb[nyb - 1]) yb[nyb++] = y;
            }
        }
        int nparts = pnq + nyb;
        if (parts && resume_done >= nparts) rc = -5;
        int skip_below = parts && resume_done > pnq ? yb[resume_done - pnq] : -1;
        int nq_from = parts ? (resume_done < pnq ? resume_done : pnq) : 0;
        int next_yb = parts && resume_done >= pnq ? resume_done - pnq + 1 : 1;
        /* keep the parts done so far: every thread's credits into the first's, then save() */
#define CD_SAVE(done_) do { \
            if (!rc && parts && save != Py_None) { \
                int64_t nacc_ = (int64_t)CD_NCLS * 16 * CD_NACC; \
                for (int t_ = 1; t_ < nthr; t_++) { \
                    _Pragma("omp parallel for schedule(static)") \
                    for (int64_t j_ = 0; j_ < nacc_; j_++) { acc[j_] += accs[t_][j_]; accs[t_][j_] = 0; } \
                } \
                Py_BLOCK_THREADS \
                PyObject *mv_ = PyMemoryView_FromMemory((char *)acc, (Py_ssize_t)(nacc_ * sizeof(int64_t)), PyBUF_READ); \
                PyObject *r_ = mv_ ? PyObject_CallFunction(save, "iiO", (done_), nparts, mv_) : NULL; \
                PyObject *et_, *ev_, *tb_; \
                PyErr_Fetch(&et_, &ev_, &tb_);   /* save()'s exception, kept across the release */ \
                if (mv_) { PyObject *rel_ = PyObject_CallMethod(mv_, "release", NULL); Py_XDECREF(rel_); Py_DECREF(mv_); } \
                PyErr_Clear(); \
                PyErr_Restore(et_, ev_, tb_); \
                if (!r_) rc = -3; \
                Py_XDECREF(r_); \
                Py_UNBLOCK_THREADS \
            } \
        } while (0)
        /* The sweep, rank by rank. A class at rank x >= the qualifier needs the counts read
         * before the paths of rank x are added and after; a class below it needs nothing here
         * (its part came with the qualifier's reading). Work is grouped so that the threads meet
         * as seldom as possible: one parallel phase per rank that has classes (the readings
         * after rank y - 1 and before rank y are of the same counts, so they run together),
         * and the paths of ranks without classes added in one go. */
        int64_t *bufs[2] = {NULL, NULL};
        size_t bufcaps[2] = {0, 0};
        int cur = 0;                     /* bufs[cur]: the readings before the pending rank */
        int oi = 0, py = -1, pnl = 0;    /* pending: rank py's pnl classes at order[po0 ..] */
        int32_t *plv = NULL;
        int64_t add_from = 0, add_to = 0;
        double tsweep = cd_now(), secs1_count = secs[1];
        /* below the qualifier nothing is read unless debug classes are: the paths there are
         * added straight from the hands */
        int direct_below = !ndbg && qrank > 0 && qrank < NRANK5;
        if (!rc && direct_below && cd_add_below(&main_t, qrank)) rc = -1;
        if (direct_below) PROGRESS_DONE = 260;
        for (int y = 0; y <= NRANK5 && !rc; y++) {
            int o0 = oi, nl = 0;
            int32_t *lv = order + o0;
            if (direct_below && y < qrank) {      /* its paths are in the counts already */
                while (oi < nf && RANK5[CD_REP[order[oi]]] == y) oi++;
                continue;
            }
            if (y < NRANK5) {
                while (oi < nf && RANK5[CD_REP[order[oi]]] == y) oi++;
                /* below the qualifier only the debug classes are read at their own rank */
                if (y < skip_below) nl = 0;          /* resumed: these ranks' parts are done */
                else if (y >= qrank) nl = oi - o0;
                else if (ndbg) {
                    for (int i = o0; i < oi; i++)
                        for (int q = 0; q < ndbg; q++)
                            if (dbg[q].cls == order[i]) { int t = order[o0 + nl]; order[o0 + nl] = order[i]; order[i] = t; nl++; break; }
                }
            }
            int nqpass = y == qrank && y >= skip_below;
            /* at a part's end (a checkpoint), the pending rank's classes are finished first, on
             * their own, so that the parts done are whole ranks */
            int cut = parts && next_yb < nyb && y == yb[next_yb];
            for (int sub = cut ? 0 : 1; sub < 2 && !rc; sub++) {
            int nl_now = sub ? nl : 0, nq_now = sub ? nqpass : 0;
            if (pnl || nl_now || nq_now) {
                /* the paths up to here are added by the same team that then reads (one meeting
                 * of the threads per rank instead of two: on a shared machine every meeting
                 * waits for the thread the scheduler put off last) */
                int64_t af = add_from, at = add_to;
                add_from = add_to;
                if ((size_t)nl_now > bufcaps[cur ^ 1]) {
                    free(bufs[cur ^ 1]);
                    bufcaps[cur ^ 1] = nl_now;
                    bufs[cur ^ 1] = malloc(sizeof(int64_t) * CD_RSZ * nl_now);
                    if (!bufs[cur ^ 1]) { rc = -1; break; }
                }
                int64_t *pbuf = bufs[cur], *nbuf = bufs[cur ^ 1];
                int total = pnl + nl_now;
                #pragma omp parallel num_threads(nthr) if (total > 1 || at - af > 2048)
                {
                    int64_t *after = malloc(sizeof(int64_t) * CD_RSZ);
                    cd_work_t *work = malloc(sizeof(cd_work_t));
                    int me = 0, nt = 1;
#ifdef _OPENMP
                    me = omp_get_thread_num(); nt = omp_get_num_threads();
#endif
                    if (at > af) cd_add_paths_team(&main_t, af, at, me, nt);
                    #pragma omp barrier
                    #pragma omp for schedule(dynamic, 1)
                    for (int i = 0; i < total; i++) {
                        int f[5];
                        if (i >= pnl) {          /* rank y: the counts before its paths */
                            cd_rep_cards(lv[i - pnl], f);
                            cd_read_all(&main_t, f, nbuf + (size_t)(i - pnl) * CD_RSZ);
                            continue;
                        }
                        /* rank py: the counts after its paths, then its classes' outcome */
                        cd_rep_cards(plv[i], f);
                        int64_t npy = CD_PSTART[py + 1] - CD_PSTART[py];
                        const int64_t *bf = pbuf + (size_t)i * CD_RSZ;
                        if (npy < direct_eq) {
                            /* few paths end at this rank: add the ones avoiding F to the counts
                             * read before (cheaper than reading 36,000 scattered counts again) */
                            memset(after, 0, sizeof(int64_t) * CD_RSZ);
                            uint64_t fm = 0;
                            for (int j = 0; j < 5; j++) fm |= 1ull << f[j];
                            for (int64_t q = CD_PSTART[py]; q < CD_PSTART[py + 1]; q++) {
                                const cd_path_t *pp = cd_path(q);
                                int n = pp->info & 7, hit = 0;
                                for (int j = 0; j < n; j++) hit |= (fm >> pp->c[j]) & 1;
                                if (!hit) cd_small_add(after, pp);
                            }
                            for (int j = 0; j < CD_RSZ; j++) after[j] += bf[j];
                        } else cd_read_all(&main_t, f, after);
                        cd_process_f(plv[i], bf, after, after, accs[me], dbg, ndbg,
                                     py >= qrank ? CD_PART_RANK : CD_PART_DEBUG, work);
                    }
                    free(after); free(work);
                }
                pnl = 0;
                cur ^= 1;
            }
            if (nq_now) {
                /* the counts hold exactly the paths that do not qualify: every class's first part */
                double tq = cd_now();
                for (int part = nq_from; part < pnq && !rc; part++) {
                    int i0 = (int)((int64_t)nf * part / pnq), i1 = (int)((int64_t)nf * (part + 1) / pnq);
                    #pragma omp parallel num_threads(nthr)
                    {
                        int64_t *rd = malloc(sizeof(int64_t) * CD_RSZ);
                        cd_work_t *work = malloc(sizeof(cd_work_t));
                        int me = 0;
#ifdef _OPENMP
                        me = omp_get_thread_num();
#endif
                        #pragma omp for schedule(dynamic, 16)
                        for (int i = i0; i < i1; i++) {
                            int f[5];
                            cd_rep_cards(order[i], f);
                            cd_read_all(&main_t, f, rd);
                            cd_process_f(order[i], rd, rd, rd, accs[me], dbg, ndbg, CD_PART_NQ, work);
                        }
                        free(rd); free(work);
                    }
                    PROGRESS_DONE = 260 + 440 * (part + 1) / pnq;
                    CD_SAVE(part + 1);
                }
                secs[2] = cd_now() - tq;
            }
            if (sub == 0) { CD_SAVE(pnq + next_yb); next_yb++; }
            }
            if (rc) break;
            if (y == NRANK5) break;
            if (y >= CD_PY1 || CD_PY0 < 0) {
                if (add_to > add_from) cd_add_paths(&main_t, add_from, add_to);
                double tl = cd_now();
                if (cd_load_paths(y, cd_paths_range_end(y, CD_PATHS_LIMIT))) { rc = -1; break; }
                secs[1] += cd_now() - tl;
                add_from = add_to = CD_PSTART[y];
            }
            add_to = CD_PSTART[y + 1];      /* rank y's paths: added before the next reading */
            if (nl) { py = y; pnl = nl; plv = lv; }
            if (y % 16 == 0) {
                if (y < qrank) PROGRESS_DONE = 60 + 200 * y / qrank;
                else if (y > qrank && nf > oq0) PROGRESS_DONE = 700 + (int)(300 * (int64_t)(oi - oq0) / (nf - oq0));
            }
        }
        free(bufs[0]); free(bufs[1]); free(yb);
#undef CD_SAVE
        for (int t = 1; t < nthr && !rc; t++) {
            for (int64_t j = 0; j < (int64_t)CD_NCLS * 16 * CD_NACC; j++) acc[j] += accs[t][j];
            cd_big_free(accs[t]);
            accs[t] = NULL;
        }
        secs[3] = cd_now() - tsweep - secs[2] - (secs[1] - secs1_count);
        free(CD_PATHS); CD_PATHS = NULL; CD_PCAP = 0; CD_PY0 = CD_PY1 = -1;
    }
    cd_ctr_free(&main_t);
    Py_END_ALLOW_THREADS
    if (rc) {
        for (int t = 0; t < nthr; t++) cd_big_free(accs[t]);
        free(order); free(dbg);
        if (rc == -2) PyErr_SetString(PyExc_ValueError, "qualifier differs from the prepared one");
        else if (rc == -3) { /* save() raised: its exception stands */ }
        else if (rc == -4) PyErr_Format(PyExc_OSError, "cannot read the checkpoint %s", rpath);
        else if (rc == -5) PyErr_Format(PyExc_ValueError, "checkpoint: %d parts done, the plan has fewer", resume_done);
        else PyErr_NoMemory();
        return NULL;
    }

    /* equal options of a class: the classes' symmetries spread one option's credit over its
     * images; they are worth the same, so each gets the mean */
    int64_t mismatch = 0;
    for (int c = 0; c < CD_NCLS; c++) {
        int f[5];
        cd_rep_cards(c, f);
        int perms[24][5], np = 0;
        for (int p = 0; p < 24; p++) {
            int d[5];
            for (int j = 0; j < 5; j++) d[j] = (f[j] & ~3) | SUIT_PERMS[p][f[j] & 3];
            int e[5];
            memcpy(e, d, sizeof e);
            sort_small(e, 5);
            if ((int)colex5(e) != CD_REP[c]) continue;
            for (int j = 0; j < 5; j++) { int pos = 0; for (int k = 0; k < 5; k++) if (d[k] < d[j]) pos++; perms[np][j] = pos; }
            np++;
        }
        if (np <= 1) continue;
        int done[32] = {0};
        for (int mask = 0; mask < 32; mask++) {
            if (done[mask] || __builtin_popcount(mask) > 2) continue;
            int orb[24], no = 0;
            for (int p = 0; p < np; p++) {
                int im = 0;
                for (int j = 0; j < 5; j++) if (mask >> j & 1) im |= 1 << perms[p][j];
                int seen = 0;
                for (int q = 0; q < no; q++) if (orb[q] == im) seen = 1;
                if (!seen) orb[no++] = im;
            }
            for (int q = 0; q < no; q++) done[orb[q]] = 1;
            if (no == 1) continue;
            for (int j = 0; j < CD_NACC; j++) {
                int64_t s = 0;
                for (int q = 0; q < no; q++) s += acc[((int64_t)c * 16 + CD_OPT[orb[q]]) * CD_NACC + j];
                if (s % no) mismatch++;
                for (int q = 0; q < no; q++) acc[((int64_t)c * 16 + CD_OPT[orb[q]]) * CD_NACC + j] = s / no;
            }
        }
    }

    /* each class: the best option, exactly; and the dealer's own rule as the simple strategy */
    cd_strat_t st[2];
    memset(st, 0, sizeof st);
    PyObject *strategy = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)CD_NCLS * 8);
    uint8_t *sb = (uint8_t *)PyBytes_AS_STRING(strategy);
    int64_t bad_total = 0, indifferent = 0, differs = 0;
    unsigned __int128 foldper = (unsigned __int128)BINOM[47][5] * 2686320u;
    for (int c = 0; c < CD_NCLS; c++) {
        int64_t csize = CD_CSIZE[c];
        int f[5];
        cd_rep_cards(c, f);
        int icat = CAT_OF_RANK5[RANK5[CD_REP[c]]];
        int best = -1;
        __int128 bnum = 0, bden = 1;
        for (int mask = 0; mask < 32; mask++) {
            int k = __builtin_popcount(mask);
            if (k > 2) continue;
            const int64_t *a = acc + ((int64_t)c * 16 + CD_OPT[mask]) * CD_NACC;
            __int128 den = (__int128)BINOM[47][k] * BINOM[47 - k][5] * CD_L[k] * csize;
            __int128 sum = (__int128)a[0] + a[1] + a[2];
            for (int j = 0; j < NCAT; j++) sum += a[3 + j];
            if (fmax < 0 && sum != den) bad_total++;
            __int128 num = cd_evnum(a, pays);
            if (best < 0 || num * bden > bnum * den) { best = mask; bnum = num; bden = den; }
        }
        int fold = bnum < -bden;
        if (bnum == -bden) indifferent += csize;
        int simple = 31 & ~cd_dealer_keep(f);
        /* f is sorted, so the keep mask's positions are the representative's positions */
        int choice[2] = {fold ? 255 : best, simple};
        {
            const int64_t *a = acc + ((int64_t)c * 16 + CD_OPT[simple]) * CD_NACC;
            int k = __builtin_popcount(simple);
            __int128 den = (__int128)BINOM[47][k] * BINOM[47 - k][5] * CD_L[k] * csize;
            __int128 num = cd_evnum(a, pays);
            if (fold || num * bden != bnum * den) differs += csize;
        }
        for (int s = 0; s < 2; s++) {
            if (choice[s] == 255) {
                st[s].fold += foldper * (unsigned)csize;
                st[s].hands_fold += csize;
                continue;
            }
            int k = __builtin_popcount(choice[s]);
            const int64_t *a = acc + ((int64_t)c * 16 + CD_OPT[choice[s]]) * CD_NACC;
            unsigned __int128 fac = (unsigned __int128)CD_DEAL_FACTOR[k];
            st[s].nq += (unsigned __int128)a[0] * fac;
            st[s].tie += (unsigned __int128)a[1] * fac;
            st[s].lose += (unsigned __int128)a[2] * fac;
            for (int j = 0; j < NCAT; j++) st[s].win[j] += (unsigned __int128)a[3 + j] * fac;
            st[s].hands_draw[icat][k] += csize;
        }
        int32_t rep = CD_REP[c];
        memcpy(sb + (size_t)c * 8, &rep, 4);
        sb[(size_t)c * 8 + 4] = (uint8_t)csize;
        sb[(size_t)c * 8 + 5] = (uint8_t)choice[0];
        sb[(size_t)c * 8 + 6] = (uint8_t)simple;
        sb[(size_t)c * 8 + 7] = 0;
    }
    /* the options of the focus hands, each in its own cards' order */
    PyObject *fl = PyList_New(PyList_Size(focus));
    for (Py_ssize_t q = 0; q < PyList_Size(focus); q++) {
        int h[5];
        if (!PyArg_ParseTuple(PyList_GetItem(focus, q), "iiiii", &h[0], &h[1], &h[2], &h[3], &h[4])) { cd_big_free(acc); free(order); return NULL; }
        sort_small(h, 5);
        int ix = (int)colex5(h), c = CD_CLS[ix];
        PyObject *opts = PyList_New(0);
        for (int mask = 0; mask < 32; mask++) {
            int k = __builtin_popcount(mask);
            if (k > 2) continue;
            int cm = 0;
            for (int i = 0; i < 5; i++) if (mask >> i & 1) cm |= 1 << CD_POSMAP[(size_t)ix * 5 + i];
            const int64_t *a = acc + ((int64_t)c * 16 + CD_OPT[cm]) * CD_NACC;
            PyObject *win = PyList_New(NCAT);
            for (int j = 0; j < NCAT; j++) PyList_SET_ITEM(win, j, PyLong_FromLongLong(a[3 + j] / CD_CSIZE[c]));
            PyObject *t = Py_BuildValue("(iLLLN)", mask, (long long)(a[0] / CD_CSIZE[c]), (long long)(a[1] / CD_CSIZE[c]),
                                        (long long)(a[2] / CD_CSIZE[c]), win);
            PyList_Append(opts, t);
            Py_DECREF(t);
        }
        PyList_SET_ITEM(fl, q, opts);
    }
    cd_big_free(acc); free(order);
    PyObject *strats = PyList_New(2);
    for (int s = 0; s < 2; s++) {
        PyObject *win = PyList_New(NCAT), *draws = PyList_New(NCAT);
        for (int j = 0; j < NCAT; j++) {
            PyList_SET_ITEM(win, j, u128_to_py(st[s].win[j]));
            PyList_SET_ITEM(draws, j, Py_BuildValue("[LLL]", (long long)st[s].hands_draw[j][0],
                                                     (long long)st[s].hands_draw[j][1], (long long)st[s].hands_draw[j][2]));
        }
        PyList_SET_ITEM(strats, s, Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:L,s:N}",
            "fold", u128_to_py(st[s].fold), "noq", u128_to_py(st[s].nq), "tie", u128_to_py(st[s].tie),
            "lose", u128_to_py(st[s].lose), "win", win, "hands_fold", (long long)st[s].hands_fold, "hands_draw", draws));
    }
    PyObject *dl = PyList_New(ndbg);
    for (int q = 0; q < ndbg; q++)
        PyList_SET_ITEM(dl, q, Py_BuildValue("(iLLL)", dbg[q].found, (long long)dbg[q].corr[0],
                                             (long long)dbg[q].corr[1], (long long)dbg[q].corr[2]));
    free(dbg);
    secs[4] = cd_now() - t0 - secs[0] - secs[1] - secs[2] - secs[3];
    return Py_BuildValue("{s:(ddddd),s:N,s:N,s:N,s:L,s:L,s:L,s:L,s:i,s:L,s:N}",
                         "seconds", secs[0], secs[1], secs[2], secs[3], secs[4], "focus", fl, "strategies", strats, "strategy", strategy,
                         "indifferent", (long long)indifferent, "differs", (long long)differs,
                         "bad_totals", (long long)bad_total, "mismatch", (long long)mismatch,
                         "classes", CD_NCLS, "paths", (long long)CD_NPATHS, "debug", dl);
}

/* ---------- one player hand, all its options, directly (tablectl par --hand, and a check) ---------- */

typedef struct { const int *inp; cd_path_t *buf; uint16_t *y; int64_t n, cap; int failed; } cd_handpaths_t;

static void cd_emit_hand(void *ctx, const int *s, int n, int m, int neg, int y)
{
    cd_handpaths_t *hp = ctx;
    for (int i = 0; i < n; i++) if (hp->inp[s[i]]) return;
    if (hp->n == hp->cap) {
        hp->cap = hp->cap ? hp->cap * 2 : 1 << 20;
        cd_path_t *nb = realloc(hp->buf, sizeof(cd_path_t) * (size_t)hp->cap);
        uint16_t *ny = realloc(hp->y, sizeof(uint16_t) * (size_t)hp->cap);
        if (!nb || !ny) { hp->failed = 1; hp->n = 0; if (nb) hp->buf = nb; if (ny) hp->y = ny; return; }
        hp->buf = nb; hp->y = ny;
    }
    cd_path_pack(&hp->buf[hp->n], s, n, m, neg);
    hp->y[hp->n++] = (uint16_t)y;
}

typedef struct { int x; int opt; int nd; int d[2]; int f[5]; } cd_hq_t;

static int cmp_hq(const void *a, const void *b) { return ((const cd_hq_t *)a)->x - ((const cd_hq_t *)b)->x; }

/* counts of the paths containing nothing / one given card / two given cards:
 * [m], [3 + 3 d + m], [3 + 156 + 3 pair + m], the layout cd_corr reads */
static inline void cd_small_add(int64_t *c, const cd_path_t *p)
{
    int n = p->info & 7, m = (p->info >> 3) & 3, sign = (p->info & 0x80) ? -1 : 1;
    c[m] += sign;
    for (int i = 0; i < n; i++) {
        c[3 + 3 * p->c[i] + m] += sign;
        for (int j = 0; j < i; j++) c[3 + 156 + 3 * ((int64_t)p->c[j] + BINOM[p->c[i]][2]) + m] += sign;
    }
}

/* every option of the sorted hand p: out[mask * CD_NACC ...] (nq, tie, lose, win[10]), weighed,
 * for the discard masks of at most two cards */
static int cd_hand(const int *p, int64_t *out)
{
    int inp[52] = {0};
    for (int i = 0; i < 5; i++) inp[p[i]] = 1;
    cd_handpaths_t hp = {inp, NULL, NULL, 0, 0, 0};
    int c[5] = {0, 1, 2, 3, 4};
    do {
        if (!inp[c[0]] && !inp[c[1]] && !inp[c[2]] && !inp[c[3]] && !inp[c[4]]) cd_paths_of(c, -1, cd_emit_hand, &hp);
    } while (next_hand5(c));
    if (hp.failed) { free(hp.buf); free(hp.y); return -1; }
    /* the queries: every option and every draw */
    int nq = 0;
    cd_hq_t *qs = malloc(sizeof(cd_hq_t) * 12000);
    int64_t *before = malloc(sizeof(int64_t) * 12000 * 3);
    int64_t *cnt = calloc(CD_RSZ, sizeof(int64_t)), *snap = malloc(sizeof(int64_t) * CD_RSZ);
    int64_t *start = calloc(NRANK5 + 2, sizeof(int64_t));
    cd_path_t *sorted = malloc(sizeof(cd_path_t) * (size_t)(hp.n + 1));
    if (!qs || !before || !cnt || !snap || !start || !sorted) return -1;
    for (int mask = 0; mask < 32; mask++) {
        int k = __builtin_popcount(mask);
        if (k > 2) continue;
        int kc[5], nk = 0;
        for (int i = 0; i < 5; i++) if (!(mask >> i & 1)) kc[nk++] = p[i];
        for (int d2 = 0; d2 < 52; d2++) {
            if (k >= 1 && inp[d2]) continue;
            for (int d1 = 0; d1 < (k == 2 ? d2 : 1); d1++) {
                if (k == 2 && inp[d1]) continue;
                cd_hq_t *q = &qs[nq++];
                q->opt = mask; q->nd = k;
                q->d[0] = k == 2 ? d1 : d2; q->d[1] = d2;
                int f[5];
                for (int i = 0; i < nk; i++) f[i] = kc[i];
                if (k >= 1) f[nk] = q->d[0];
                if (k == 2) f[nk + 1] = q->d[1];
                sort_small(f, 5);
                memcpy(q->f, f, sizeof f);
                q->x = rank5_any(f);
                if (k == 0) break;
            }
            if (k == 0) break;
        }
    }
    qsort(qs, nq, sizeof(cd_hq_t), cmp_hq);
    for (int64_t i = 0; i < hp.n; i++) start[hp.y[i] + 1]++;
    for (int y = 0; y < NRANK5; y++) start[y + 1] += start[y];
    {
        int64_t *fill = malloc(sizeof(int64_t) * (NRANK5 + 1));
        memcpy(fill, start, sizeof(int64_t) * (NRANK5 + 1));
        for (int64_t i = 0; i < hp.n; i++) sorted[fill[hp.y[i]]++] = hp.buf[i];
        free(fill);
    }
    free(hp.buf); free(hp.y);
    memset(out, 0, sizeof(int64_t) * 32 * CD_NACC);
    /* sweep: the drawn cards N are the removed cards beyond P, so a query reads the counts of
     * the paths that avoid P (all of them here) minus those containing a card of N */
    int qi = 0;
    for (int y = 0; y <= NRANK5; y++) {
        if (y == CD_QRANK) memcpy(snap, cnt, sizeof(int64_t) * CD_RSZ);
        int q0 = qi;
        while (qi < nq && qs[qi].x == y) {
            cd_hq_t *q = &qs[qi];
            before[3 * qi] = cd_corr(cnt, q->nd, q->d[0], q->d[1]);
            qi++;
        }
        if (y == NRANK5) break;
        for (int64_t i = start[y]; i < start[y + 1]; i++) cd_small_add(cnt, &sorted[i]);
        for (int j = q0; j < qi; j++) before[3 * j + 1] = cd_corr(cnt, qs[j].nd, qs[j].d[0], qs[j].d[1]);
    }
    for (int j = 0; j < nq; j++) {
        cd_hq_t *q = &qs[j];
        int k = 5 + q->nd;
        /* removed ranks: P's and N's */
        int rr[7], n = 0;
        for (int i = 0; i < 5; i++) rr[n++] = p[i] >> 2;
        for (int i = 0; i < q->nd; i++) rr[n++] = q->d[i] >> 2;
        sort_small(rr, n);
        const cd_blind_t *bt = cd_blind_of(rr, k);
        int fr[5];
        for (int i = 0; i < 5; i++) fr[i] = q->f[i] >> 2;
        int64_t bbelow, beq;
        cd_blind_at(bt, k, ms_index(fr, 5), q->x, &bbelow, &beq);
        int64_t nq = bt->nq + cd_corr(snap, q->nd, q->d[0], q->d[1]), win, tie, lose;
        cd_outcome(q->x, bbelow + before[3 * j], bbelow + beq + before[3 * j + 1], nq, cd_total(k), &win, &tie, &lose);
        out[q->opt * CD_NACC + 0] += nq;
        out[q->opt * CD_NACC + 1] += tie;
        out[q->opt * CD_NACC + 2] += lose;
        out[q->opt * CD_NACC + 3 + CAT_OF_RANK5[q->x]] += win;
    }
    free(qs); free(before); free(cnt); free(snap); free(start); free(sorted);
    return 0;
}

/* cdraw_hand(qrank, (c0..c4)) -> list of (discard mask, nq, tie, lose, [win per category], weight total) */
static PyObject *k_cdraw_hand(PyObject *self, PyObject *args)
{
    int qrank, p[5];
    if (!PyArg_ParseTuple(args, "i(iiiii)", &qrank, &p[0], &p[1], &p[2], &p[3], &p[4])) return NULL;
    int seen[52] = {0};
    for (int i = 0; i < 5; i++) {
        if (p[i] < 0 || p[i] >= 52 || seen[p[i]]) { PyErr_SetString(PyExc_ValueError, "bad or repeated card"); return NULL; }
        seen[p[i]] = 1;
    }
    sort_small(p, 5);
    int64_t out[32 * CD_NACC];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = cd_prepare(qrank);
    if (!rc) rc = cd_hand(p, out);
    Py_END_ALLOW_THREADS
    if (rc) return PyErr_NoMemory();
    PyObject *lst = PyList_New(0);
    for (int mask = 0; mask < 32; mask++) {
        int k = __builtin_popcount(mask);
        if (k > 2) continue;
        const int64_t *a = out + mask * CD_NACC;
        PyObject *win = PyList_New(NCAT);
        for (int j = 0; j < NCAT; j++) PyList_SET_ITEM(win, j, PyLong_FromLongLong(a[3 + j]));
        long long den = (long long)(BINOM[47][k] * BINOM[47 - k][5] * CD_L[k]);
        PyObject *t = Py_BuildValue("(iLLLNL)", mask, (long long)a[0], (long long)a[1], (long long)a[2], win, den);
        PyList_Append(lst, t);
        Py_DECREF(t);
    }
    return lst;
}

static int cd_parse_removed(PyObject *seq, int *R, int *nr)
{
    PyObject *fast = PySequence_Fast(seq, "removed cards must be a sequence");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n < 5 || n > 7) { Py_DECREF(fast); PyErr_SetString(PyExc_ValueError, "5 to 7 removed cards"); return -1; }
    int seen[52] = {0};
    for (Py_ssize_t i = 0; i < n; i++) {
        long c = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (c < 0 || c >= 52 || seen[c]) { Py_DECREF(fast); PyErr_SetString(PyExc_ValueError, "bad or repeated card"); return -1; }
        seen[c] = 1;
        R[i] = (int)c;
    }
    *nr = (int)n;
    Py_DECREF(fast);
    return 0;
}

/* cdraw_dealer_brute(removed, x, qrank) -> (nq, below, eq): every dealer path, real rules */
static PyObject *k_cdraw_dealer_brute(PyObject *self, PyObject *args)
{
    PyObject *seq; int x, qrank, R[7], nr;
    if (!PyArg_ParseTuple(args, "Oii", &seq, &x, &qrank)) return NULL;
    if (cd_parse_removed(seq, R, &nr)) return NULL;
    int64_t out[3];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = cd_prepare(qrank);
    if (!rc) cd_dealer_brute(R, nr, x, out);
    Py_END_ALLOW_THREADS
    if (rc) return PyErr_NoMemory();
    return Py_BuildValue("(LLL)", (long long)out[0], (long long)out[1], (long long)out[2]);
}

/* cdraw_dealer_split(removed, x, qrank, hmax) -> ((blind nq, below, eq), (correction nq, below, eq)) */
static PyObject *k_cdraw_dealer_split(PyObject *self, PyObject *args)
{
    PyObject *seq; int x, qrank, R[7], nr; long long hmax;
    if (!PyArg_ParseTuple(args, "OiiL", &seq, &x, &qrank, &hmax)) return NULL;
    if (cd_parse_removed(seq, R, &nr)) return NULL;
    int64_t b[3], c[3];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = cd_prepare(qrank);
    if (!rc) cd_dealer_split(R, nr, x, hmax, b, c);
    Py_END_ALLOW_THREADS
    if (rc) return PyErr_NoMemory();
    return Py_BuildValue("((LLL)(LLL))", (long long)b[0], (long long)b[1], (long long)b[2],
                         (long long)c[0], (long long)c[1], (long long)c[2]);
}

/* cdraw_level_paths(qrank) -> correction paths per final rank (for tuning and the docs) */
static PyObject *k_cdraw_level_paths(PyObject *self, PyObject *args)
{
    int qrank, rc;
    if (!PyArg_ParseTuple(args, "i", &qrank)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = cd_prepare(qrank);
    if (!rc) rc = cd_build_paths(-1);
    Py_END_ALLOW_THREADS
    if (rc) return PyErr_NoMemory();
    PyObject *out = PyList_New(NRANK5);
    for (int y = 0; y < NRANK5; y++) PyList_SET_ITEM(out, y, PyLong_FromLongLong(CD_PSTART[y + 1] - CD_PSTART[y]));
    return out;
}

/* cdraw_dealer_qualifies(qrank) -> deals (in 1/1081ths) in which the dealer qualifies: every
 * five-card hand drawn out by rule 12 against each draw of the 47 cards he does not hold (the
 * player's cards are as unknown to his draw as the rest of the deck), one hand per suit class
 * weighed by the class's size. tablegames.par.cdraw checks it against a count by rank sets. */
static PyObject *k_cdraw_dealer_qualifies(PyObject *self, PyObject *args)
{
    int qrank, rc;
    if (!PyArg_ParseTuple(args, "i", &qrank)) return NULL;
    int64_t total = 0;
    Py_BEGIN_ALLOW_THREADS
    rc = cd_prepare(qrank);
    if (!rc) {
        #pragma omp parallel for schedule(dynamic, 256) reduction(+:total)
        for (int c = 0; c < CD_NCLS; c++) {
            int h[5], kc[5], nk = 0, inh[52] = {0};
            unrank_hand5(CD_REP[c], h);
            for (int i = 0; i < 5; i++) inh[h[i]] = 1;
            int keep = cd_dealer_keep(h);
            for (int i = 0; i < 5; i++) if (keep >> i & 1) kc[nk++] = h[i];
            int64_t hits = 0, per = 1081;  /* 1/1081ths of a deal per draw */
            if (nk == 5) hits = rank5_any(h) >= qrank;
            else if (nk == 4) {
                per = 1081 / 47;
                for (int d = 0; d < 52; d++) {
                    if (inh[d]) continue;
                    int f[5] = {kc[0], kc[1], kc[2], kc[3], d};
                    hits += rank5_any(f) >= qrank;
                }
            } else {
                per = 1;
                for (int d2 = 0; d2 < 52; d2++) {
                    if (inh[d2]) continue;
                    for (int d1 = 0; d1 < d2; d1++) {
                        if (inh[d1]) continue;
                        int f[5] = {kc[0], kc[1], kc[2], d1, d2};
                        hits += rank5_any(f) >= qrank;
                    }
                }
            }
            total += hits * per * CD_CSIZE[c];
        }
    }
    Py_END_ALLOW_THREADS
    if (rc) return rc == -2 ? (PyErr_SetString(PyExc_ValueError, "qualifier differs from the prepared one"), NULL) : PyErr_NoMemory();
    return PyLong_FromLongLong((long long)total);
}

/* cdraw_dealer_keep(c0..c4) -> keep mask of rule 12, for the cross-check with the settlement engine */
static PyObject *k_cdraw_dealer_keep(PyObject *self, PyObject *args)
{
    int h[5];
    if (!PyArg_ParseTuple(args, "iiiii", &h[0], &h[1], &h[2], &h[3], &h[4])) return NULL;
    return Py_BuildValue("i", cd_dealer_keep(h));
}
