/* bench/mm_read_bench.c: Matrix Market reading speed of gs_mm_read_coo (and gs_mm_read_csr).
 *
 *   mm_read_bench [PATH | ENTRIES] [REPEATS] [--keep]
 *
 * With an existing file PATH, reads it; otherwise generates a random `coordinate real general`
 * file of ENTRIES entries (default 1000000, about 32 MB; 2500000 give about 81 MB; values printed
 * with %.17g as our writer and most exporters do) in $TMPDIR (or /tmp), reads it, and removes it
 * unless --keep is given (then its path is printed, e.g. for bench/mm_scipy_compare.py). Each
 * read is timed separately (single thread; wall clock and process CPU time; the file in the page
 * cache after the first read); one line per measurement, then the medians. The last line is
 * machine-readable for bench/mm_scipy_compare.py:
 *   median_s=S median_cpu_s=C mb_per_s=R bytes=B nnz=N */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpusolve.h"

static double clock_s(clockid_t id)
{
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
/* CPU time of this (single-threaded) process: less disturbed than the wall clock on a busy
 * machine. */
static double cpu_now(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *t, int n)
{
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static uint64_t next(uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* A random n x n coordinate file with `entries` entries in random order, n = entries / 10. */
static int generate(const char *path, long long entries)
{
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  long long n = entries / 10 > 0 ? entries / 10 : 1;
  uint64_t s = 12345;
  fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%% gpusolve mm_read_bench\n");
  fprintf(f, "%lld %lld %lld\n", n, n, entries);
  for (long long k = 0; k < entries; ++k) {
    long long i = (long long)(next(&s) % (uint64_t)n) + 1;
    long long j = (long long)(next(&s) % (uint64_t)n) + 1;
    double v = (double)(next(&s) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    fprintf(f, "%lld %lld %.17g\n", i, j, v);
  }
  return fclose(f);
}

int main(int argc, char **argv)
{
  const char *arg = argc > 1 ? argv[1] : NULL;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  int keep = argc > 3 && strcmp(argv[3], "--keep") == 0;
  if (reps < 1) reps = 1;
  char tmp[4096] = "";
  const char *path = arg;
  struct stat sb;
  if (!arg || stat(arg, &sb) != 0) {
    long long entries = arg ? atoll(arg) : 1000000;
    if (entries < 1) {
      fprintf(stderr, "usage: %s [PATH | ENTRIES] [REPEATS] [--keep]\n", argv[0]);
      return 2;
    }
    const char *dir = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/gs_mm_bench_%ld.mtx", dir && *dir ? dir : "/tmp", (long)getpid());
    double t0 = now();
    if (generate(tmp, entries) != 0) {
      fprintf(stderr, "mm_read_bench: cannot write %s\n", tmp);
      unlink(tmp);
      return 3;
    }
    printf("generated %s: %lld entries in %.2f s\n", tmp, entries, now() - t0);
    path = tmp;
    if (stat(path, &sb) != 0) return 3;
  }
  double mb = (double)sb.st_size / 1e6;
  double *t = malloc((size_t)reps * sizeof *t), *c = malloc((size_t)reps * sizeof *c);
  long long nnz = 0;
  int rc = 0;
  if (!t || !c) return 3;
  printf("file %s: %.1f MB\n", path, mb);
  for (int r = 0; r < reps; ++r) {
    gs_coo_t *A = NULL;
    double t0 = now(), c0 = cpu_now();
    gs_status_t st = gs_mm_read_coo(path, &A);
    t[r] = now() - t0;
    c[r] = cpu_now() - c0;
    if (st != GS_SUCCESS) {
      fprintf(stderr, "mm_read_bench: %s\n", gs_last_error());
      rc = 1;
      goto out;
    }
    nnz = (long long)A->nnz;
    printf("gs_mm_read_coo run %d: %.4f s  %.1f MB/s  %.1f M entries/s  (cpu %.4f s)\n", r + 1,
           t[r], mb / t[r], (double)nnz / t[r] / 1e6, c[r]);
    gs_coo_destroy(&A);
  }
  double med = median(t, reps), med_cpu = median(c, reps);
  for (int r = 0; r < reps; ++r) {
    gs_csr_t *C = NULL;
    double t0 = now();
    gs_status_t st = gs_mm_read_csr(path, &C);
    t[r] = now() - t0;
    if (st != GS_SUCCESS) {
      fprintf(stderr, "mm_read_bench: %s\n", gs_last_error());
      rc = 1;
      goto out;
    }
    gs_csr_destroy(&C);
  }
  double med_csr = median(t, reps);
  printf("gs_mm_read_csr median of %d: %.4f s  %.1f MB/s\n", reps, med_csr, mb / med_csr);
  printf("gs_mm_read_coo median of %d: %.4f s  %.1f MB/s  %.1f M entries/s\n", reps, med,
         mb / med, (double)nnz / med / 1e6);
  printf("gs_mm_read_coo median cpu time of %d: %.4f s  %.1f MB/s\n", reps, med_cpu,
         mb / med_cpu);
  printf("median_s=%.6f median_cpu_s=%.6f mb_per_s=%.1f bytes=%lld nnz=%lld\n", med, med_cpu,
         mb / med, (long long)sb.st_size, nnz);
out:
  free(t);
  free(c);
  if (tmp[0] && keep)
    printf("kept %s\n", tmp);
  else if (tmp[0])
    unlink(tmp);
  return rc;
}
