/* bench/mm_read_bench.c: Matrix Market reading speed of gs_mm_read_coo and gs_mm_read_csr on
 * 1, 2 and all cores (or the thread counts asked for).
 *
 *   mm_read_bench [PATH | ENTRIES] [REPEATS] [--keep] [--threads LIST]
 *
 * With an existing file PATH, reads it; otherwise generates a random `coordinate real general`
 * file of ENTRIES entries (default 1000000, about 32 MB; 2500000 give about 81 MB; values printed
 * with %.17g as our writer and most exporters do) in $TMPDIR (or /tmp), reads it, and removes it
 * unless --keep is given (then its path is printed, e.g. for bench/mm_scipy_compare.py).
 * LIST is a comma-separated list of thread counts, "all" meaning the online cores (default
 * "1,2,all"; repeats dropped); each count is set with gs_mm_set_threads. Each read is timed
 * separately (wall clock; the file in the page cache after a first, untimed read); one line per
 * measurement, then per thread count one machine-readable line for bench/mm_scipy_compare.py:
 *   threads=K coo_s=S coo_mb_per_s=R csr_s=S csr_mb_per_s=R bytes=B nnz=N
 * (coo_s and csr_s the medians of REPEATS reads). The load average is printed before and after:
 * other work on the machine slows a parallel read most, so only timings at a low load compare. */
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

/* The three load averages of /proc/loadavg, or "unknown". */
static const char *loadavg(char *buf, size_t n)
{
  snprintf(buf, n, "unknown");
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return buf;
  double a, b, c;
  if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, n, "%.2f %.2f %.2f", a, b, c);
  fclose(f);
  return buf;
}

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

/* Parses "1,2,all" into counts (at most max, repeats dropped); returns how many, 0 if bad. */
static int parse_threads(const char *list, int *k, int max)
{
  int n = 0;
  const char *p = list;
  while (*p) {
    int v;
    if (strncmp(p, "all", 3) == 0) {
      v = (int)sysconf(_SC_NPROCESSORS_ONLN);
      if (v < 1) v = 1;
      p += 3;
    } else {
      char *e;
      long x = strtol(p, &e, 10);
      if (e == p || x < 1 || x > 1024) return 0;
      v = (int)x;
      p = e;
    }
    if (*p == ',') ++p;
    else if (*p) return 0;
    int dup = 0;
    for (int i = 0; i < n; ++i) dup |= k[i] == v;
    if (!dup && n < max) k[n++] = v;
  }
  return n;
}

int main(int argc, char **argv)
{
  const char *arg = NULL, *list = "1,2,all";
  int reps = 5, keep = 0, npos = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--keep") == 0) {
      keep = 1;
    } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      list = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1] == '-') {
      npos = 99;
    } else if (npos == 0) {
      arg = argv[i];
      npos = 1;
    } else if (npos == 1) {
      reps = atoi(argv[i]);
      npos = 2;
    } else {
      npos = 99;
    }
  }
  int threads[64], nthreads = parse_threads(list, threads, 64);
  if (npos > 2 || nthreads == 0) {
    fprintf(stderr, "usage: %s [PATH | ENTRIES] [REPEATS] [--keep] [--threads 1,2,all]\n",
            argv[0]);
    return 2;
  }
  if (reps < 1) reps = 1;
  char tmp[4096] = "";
  const char *path = arg;
  struct stat sb;
  if (!arg || stat(arg, &sb) != 0) {
    long long entries = arg ? atoll(arg) : 1000000;
    if (entries < 1) {
      fprintf(stderr, "usage: %s [PATH | ENTRIES] [REPEATS] [--keep] [--threads 1,2,all]\n",
              argv[0]);
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
  const double mb = (double)sb.st_size / 1e6;
  double *t = malloc((size_t)reps * sizeof *t), *c = malloc((size_t)reps * sizeof *c);
  double coo_s[64], csr_s[64];
  long long nnz = 0;
  int rc = 0;
  if (!t || !c) return 3;
  char la[64];
  printf("file %s: %.1f MB, %ld online cores, load average %s\n", path, mb,
         sysconf(_SC_NPROCESSORS_ONLN), loadavg(la, sizeof la));
  gs_coo_t *W = NULL; /* a first read, untimed: the file into the page cache */
  gs_mm_set_threads(1);
  if (gs_mm_read_coo(path, &W) != GS_SUCCESS) {
    fprintf(stderr, "mm_read_bench: %s\n", gs_last_error());
    rc = 1;
    goto out;
  }
  nnz = (long long)W->nnz;
  gs_coo_destroy(&W);
  for (int q = 0; q < nthreads; ++q) {
    gs_mm_set_threads(threads[q]);
    for (int r = 0; r < reps; ++r) {
      gs_coo_t *A = NULL;
      double t0 = now();
      gs_status_t st = gs_mm_read_coo(path, &A);
      t[r] = now() - t0;
      if (st != GS_SUCCESS) {
        fprintf(stderr, "mm_read_bench: %s\n", gs_last_error());
        rc = 1;
        goto out;
      }
      printf("gs_mm_read_coo, %d threads, run %d: %.4f s  %.1f MB/s  %.1f M entries/s\n",
             threads[q], r + 1, t[r], mb / t[r], (double)A->nnz / t[r] / 1e6);
      gs_coo_destroy(&A);
    }
    coo_s[q] = median(t, reps);
    for (int r = 0; r < reps; ++r) {
      gs_csr_t *C = NULL;
      double t0 = now();
      gs_status_t st = gs_mm_read_csr(path, &C);
      c[r] = now() - t0;
      if (st != GS_SUCCESS) {
        fprintf(stderr, "mm_read_bench: %s\n", gs_last_error());
        rc = 1;
        goto out;
      }
      printf("gs_mm_read_csr, %d threads, run %d: %.4f s  %.1f MB/s\n", threads[q], r + 1, c[r],
             mb / c[r]);
      gs_csr_destroy(&C);
    }
    csr_s[q] = median(c, reps);
  }
  printf("\nmedians of %d reads, %.1f MB, %lld entries (load average after: %s):\n", reps, mb,
         nnz, loadavg(la, sizeof la));
  printf("threads   COO s    COO MB/s   CSR s    CSR MB/s\n");
  for (int q = 0; q < nthreads; ++q)
    printf("%7d %8.4f %10.1f %8.4f %10.1f\n", threads[q], coo_s[q], mb / coo_s[q], csr_s[q],
           mb / csr_s[q]);
  for (int q = 0; q < nthreads; ++q)
    printf("threads=%d coo_s=%.6f coo_mb_per_s=%.1f csr_s=%.6f csr_mb_per_s=%.1f bytes=%lld "
           "nnz=%lld\n",
           threads[q], coo_s[q], mb / coo_s[q], csr_s[q], mb / csr_s[q], (long long)sb.st_size,
           nnz);
out:
  free(t);
  free(c);
  if (tmp[0] && keep)
    printf("kept %s\n", tmp);
  else if (tmp[0])
    unlink(tmp);
  return rc;
}
