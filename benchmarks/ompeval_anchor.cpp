// The anchor side of benchmarks/bench_eval.py: OMPEval (zekyll/OMPEval, not part of this repository)
// timed on the hands bench_eval.py wrote, doing the same work as the tablegames.poker calls it is
// compared with. Written for this project; bench_eval.py compiles it against the OMPEval
// sources in ../shared/anchors/ompeval into a temporary directory.
//
//   anchor HANDS5 HANDS7 N REPS OUTDIR
//
// HANDS5 / HANDS7: N rows of 5 / 7 card bytes (card = 4 * rank + suit, OMPEval's numbering too).
// Prints one JSON line of CPU seconds (best of REPS) and writes OUTDIR/omp_v5, omp_v7 (uint16 values
// of every hand, for the cross-check), omp_e5 (all five-card hands) and omp_h7 (uint64 histogram of all 7-card sets by
// OMPEval value) after the timed runs.
#include "omp/HandEvaluator.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <time.h>
#include <vector>

using namespace omp;

// CPU time of this thread: what the loop itself used, whatever else the shared machine runs
// (bench_eval.py times tablegames.poker the same way)
static double cpu_now()
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static std::vector<uint8_t> read_file(const char *path, size_t n)
{
    std::vector<uint8_t> v(n);
    FILE *f = std::fopen(path, "rb");
    if (!f || std::fread(v.data(), 1, n, f) != n) {
        std::fprintf(stderr, "cannot read %zu bytes from %s\n", n, path);
        std::exit(2);
    }
    std::fclose(f);
    return v;
}

static void write_file(const std::string &path, const void *p, size_t n)
{
    FILE *f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(p, 1, n, f) != n) {
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
        std::exit(2);
    }
    std::fclose(f);
}

// values of N hands of K cards, each Hand built from its card bytes in the loop
template <int K>
static double time_random(const HandEvaluator &ev, const uint8_t *cards, size_t n, uint16_t *out, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = cpu_now();
        for (size_t i = 0; i < n; i++) {
            const uint8_t *c = cards + i * K;
            Hand h = Hand::empty();
            for (int k = 0; k < K; k++) h += Hand(c[k]);
            out[i] = ev.evaluate(h);
        }
        double s = cpu_now() - t0;
        if (s < best) best = s;
    }
    return best;
}

// all 2,598,960 five-card hands, incrementally, values written in enumeration order
static double time_enum5(const HandEvaluator &ev, std::vector<uint16_t> &out, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = cpu_now();
        size_t i = 0;
        for (unsigned a = 0; a < 52; a++) {
            Hand ha = Hand::empty() + a;
            for (unsigned b = a + 1; b < 52; b++) {
                Hand hb = ha + b;
                for (unsigned c = b + 1; c < 52; c++) {
                    Hand hc = hb + c;
                    for (unsigned d = c + 1; d < 52; d++) {
                        Hand hd = hc + d;
                        for (unsigned e = d + 1; e < 52; e++) out[i++] = ev.evaluate(hd + e);
                    }
                }
            }
        }
        double s = cpu_now() - t0;
        if (s < best) best = s;
    }
    return best;
}

// all 133,784,560 seven-card sets, incrementally, counted by value
static double time_enum7(const HandEvaluator &ev, std::vector<uint64_t> &hist, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        std::fill(hist.begin(), hist.end(), 0);
        double t0 = cpu_now();
        for (unsigned a = 0; a < 52; a++) {
            Hand ha = Hand::empty() + a;
            for (unsigned b = a + 1; b < 52; b++) {
                Hand hb = ha + b;
                for (unsigned c = b + 1; c < 52; c++) {
                    Hand hc = hb + c;
                    for (unsigned d = c + 1; d < 52; d++) {
                        Hand hd = hc + d;
                        for (unsigned e = d + 1; e < 52; e++) {
                            Hand he = hd + e;
                            for (unsigned f = e + 1; f < 52; f++) {
                                Hand hf = he + f;
                                for (unsigned g = f + 1; g < 52; g++) hist[ev.evaluate(hf + g)]++;
                            }
                        }
                    }
                }
            }
        }
        double s = cpu_now() - t0;
        if (s < best) best = s;
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        std::fprintf(stderr, "usage: %s HANDS5 HANDS7 N REPS OUTDIR\n", argv[0]);
        return 2;
    }
    size_t n = std::strtoull(argv[3], nullptr, 10);
    int reps = std::atoi(argv[4]);
    std::string outdir = argv[5];
    std::vector<uint8_t> h5 = read_file(argv[1], n * 5), h7 = read_file(argv[2], n * 7);
    HandEvaluator ev;
    std::vector<uint16_t> v5(n), v7(n), e5(2598960);
    std::vector<uint64_t> hist(65536);
    double s5 = time_random<5>(ev, h5.data(), n, v5.data(), reps);
    double s7 = time_random<7>(ev, h7.data(), n, v7.data(), reps);
    double se5 = time_enum5(ev, e5, reps);
    double se7 = time_enum7(ev, hist, reps > 2 ? 2 : reps);
    write_file(outdir + "/omp_v5", v5.data(), n * 2);
    write_file(outdir + "/omp_v7", v7.data(), n * 2);
    write_file(outdir + "/omp_e5", e5.data(), e5.size() * 2);
    write_file(outdir + "/omp_h7", hist.data(), hist.size() * 8);
    std::printf("{\"random5_s\": %.6f, \"random7_s\": %.6f, \"enum5_s\": %.6f, \"enum7_s\": %.6f, \"n\": %zu}\n",
                s5, s7, se5, se7, n);
    return 0;
}
