/* tests/test_mm_pipe.c: the Matrix Market reader's threaded paths against its one-thread reader:
 * streams (gzip files and FIFOs longer than one read buffer) parsed by worker threads while the
 * calling thread reads on, the CSR build from the parts as stored (mirrors of a stored triangle
 * placed by the build), and the segmented CSR build itself. Every outcome (matrix, info,
 * status, message) must be the one-thread reader's, whatever the count of threads and wherever
 * a fault lies: bad tokens, indices out of range, too many or too few entries, a line over
 * 1 MiB, a gzip stream cut short or corrupt, duplicates summing to infinity. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/coo_csr.h"
#include "io/mm_internal.h"
#include "tests/testutil.h"

/* ---- text and files ----------------------------------------------------------------------- */

typedef struct text {
  char *p;
  size_t n, cap;
} text_t;

static void put(text_t *t, const char *s, size_t n)
{
  if (t->n + n + 1 > t->cap) {
    size_t c = t->cap ? t->cap : 1 << 16;
    while (t->n + n + 1 > c) c *= 2;
    char *q = realloc(t->p, c);
    CU_ASSERT_FATAL(q != NULL);
    t->p = q;
    t->cap = c;
  }
  memcpy(t->p + t->n, s, n);
  t->n += n;
  t->p[t->n] = '\0';
}

static void putf(text_t *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void putf(text_t *t, const char *fmt, ...)
{
  char b[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  CU_ASSERT_FATAL(n >= 0 && (size_t)n < sizeof b);
  put(t, b, (size_t)n);
}

static int write_file(const char *path, const void *p, size_t n)
{
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = n ? fwrite(p, 1, n, f) : 0;
  return (fclose(f) == 0 && w == n) ? 0 : -1;
}

/* CRC-32 (gzip's) of n bytes, continuing crc. */
static uint32_t crc32_of(uint32_t crc, const unsigned char *p, size_t n)
{
  static uint32_t table[256];
  if (!table[1])
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
  crc = ~crc;
  while (n--) crc = table[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

static void put_le32(text_t *t, uint32_t v)
{
  unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  put(t, (const char *)b, 4);
}

/* `members` gzip members holding [p, p + n) between them, written with stored deflate blocks
 * (the format's uncompressed blocks: no zlib needed here, and any build reads them). */
static void gzip_text(text_t *out, const char *p, size_t n, int members)
{
  size_t at = 0;
  for (int m = 0; m < members; ++m) {
    const size_t end = m == members - 1 ? n : n / (size_t)members * (size_t)(m + 1);
    static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
    put(out, (const char *)head, sizeof head);
    const size_t start = at;
    do {
      const size_t len = end - at > 65535 ? 65535 : end - at;
      const unsigned char b[5] = {(unsigned char)(at + len == end), (unsigned char)len,
                                  (unsigned char)(len >> 8), (unsigned char)~len,
                                  (unsigned char)(~len >> 8)};
      put(out, (const char *)b, 5);
      put(out, p + at, len);
      at += len;
    } while (at < end);
    put_le32(out, crc32_of(0, (const unsigned char *)p + start, end - start));
    put_le32(out, (uint32_t)(end - start));
  }
}

/* A FIFO at path fed from the file src by `cat` in a child process (exec'd at once); the reader
 * may stop early, and cat then dies of SIGPIPE. */
/* ---- random files ------------------------------------------------------------------------- */

static const char *const g_sym[] = {"general", "symmetric", "skew-symmetric"};
static const char *const g_field[] = {"real", "integer", "pattern"};

typedef struct shape {
  int sym, field;  /* indices into g_sym, g_field */
  int both;        /* a symmetric file with entries on both sides */
  int64_t n;       /* n x n */
  int64_t entries; /* lines of entries */
} shape_t;

/* A value token of the field's kind: short and long decimals, exponents, integers. */
static void put_value(text_t *t, uint64_t *s, int field)
{
  const uint64_t u = gs_test_next(s);
  const double v = (gs_test_uniform(s) - 0.5) * 4.0;
  if (field == 1) {
    putf(t, " %lld", (long long)(u % 2001) - 1000);
    return;
  }
  switch (u % 5) {
  case 0: putf(t, " %.17g", v); break;
  case 1: putf(t, " %.6g", v); break;
  case 2: putf(t, " %.3e", v * 1e-5); break;
  case 3: putf(t, " %d", (int)(u % 7) - 3); break;
  default: putf(t, " %.12f", v); break;
  }
}

/* A coordinate file of the given shape: entries (with repeats of earlier positions, so that
 * duplicates are summed) among comment lines, blank lines, CRLF ends and extra blanks. Entry
 * lines are numbered in *lines (1-based line numbers of every entry, for faults). */
static void random_file(text_t *t, uint64_t *s, const shape_t *sh, int64_t *lines)
{
  t->n = 0;
  putf(t, "%%%%MatrixMarket matrix coordinate %s %s\n", g_field[sh->field], g_sym[sh->sym]);
  put(t, "% a comment\n", 12);
  putf(t, "%lld %lld %lld\n", (long long)sh->n, (long long)sh->n, (long long)sh->entries);
  int64_t line = 4, pi = 1, pj = 1;
  for (int64_t e = 0; e < sh->entries; ++e) {
    const uint64_t u = gs_test_next(s);
    if (u % 97 == 0) {
      put(t, "% comment between entries\n", 26);
      ++line;
    }
    if (u % 89 == 1) {
      put(t, "\n", 1);
      ++line;
    }
    int64_t i = 1 + (int64_t)(gs_test_next(s) % (uint64_t)sh->n);
    int64_t j = 1 + (int64_t)(gs_test_next(s) % (uint64_t)sh->n);
    if (u % 13 == 2) { /* a repeat of the previous position */
      i = pi;
      j = pj;
    }
    if (sh->sym == 1 && !(sh->both && u % 7 == 3) && i < j) { /* lower triangle */
      int64_t x = i;
      i = j;
      j = x;
    }
    if (sh->sym == 2) { /* strictly lower (n >= 2) */
      if (i == j) {
        if (i == 1)
          i = 2;
        else
          j = i - 1;
      }
      if (i < j) {
        int64_t x = i;
        i = j;
        j = x;
      }
    }
    pi = i;
    pj = j;
    if (u % 31 == 5) put(t, "  ", 2);
    putf(t, "%lld %lld", (long long)i, (long long)j);
    if (sh->field != 2) put_value(t, s, sh->field);
    if (u % 29 == 4)
      put(t, "\r\n", 2);
    else
      put(t, "\n", 1);
    lines[e] = line++;
  }
}

/* ---- comparing outcomes ------------------------------------------------------------------- */

typedef struct outcome {
  gs_status_t st;
  char msg[1100];
  gs_csr_t *A;
  gs_coo_t *C;
  gs_mm_info_t info;
} outcome_t;

static void outcome_free(outcome_t *o)
{
  gs_csr_destroy(&o->A);
  gs_coo_destroy(&o->C);
}

static int csr_same(const gs_csr_t *a, const gs_csr_t *b)
{
  if (!a || !b) return a == b;
  if (a->m != b->m || a->n != b->n || a->nnz != b->nnz || a->symmetry != b->symmetry) return 0;
  if (memcmp(a->row_ptr, b->row_ptr, ((size_t)a->m + 1) * sizeof *a->row_ptr) != 0) return 0;
  const size_t n = (size_t)a->nnz;
  return n == 0 || (memcmp(a->col, b->col, n * sizeof *a->col) == 0 &&
                    memcmp(a->val, b->val, n * sizeof *a->val) == 0);
}

static int coo_same(const gs_coo_t *a, const gs_coo_t *b)
{
  if (!a || !b) return a == b;
  if (a->m != b->m || a->n != b->n || a->nnz != b->nnz || a->symmetry != b->symmetry) return 0;
  const size_t n = (size_t)a->nnz;
  return n == 0 || (memcmp(a->row, b->row, n * sizeof *a->row) == 0 &&
                    memcmp(a->col, b->col, n * sizeof *a->col) == 0 &&
                    memcmp(a->val, b->val, n * sizeof *a->val) == 0);
}

enum { VIA_FILE, VIA_FIFO };
enum { READ_CSR, READ_STRICT, READ_COO };

/* One read of `path` (through a FIFO fed from it when via is VIA_FIFO) on nt threads. */
static void read_one(const char *path, int via, int how, int nt, outcome_t *o)
{
  memset(o, 0, sizeof *o);
  gs_mm_set_threads(nt);
  const char *p = path;
  static char fifo[700];
  pid_t pid = -1;
  if (via == VIA_FIFO) {
    snprintf(fifo, sizeof fifo, "%s.fifo", path);
    pid = gs_test_fifo_feed(fifo, path);
    CU_ASSERT_FATAL(pid > 0);
    p = fifo;
  }
  if (how == READ_COO)
    o->st = gs_mm_read_coo(p, &o->C);
  else
    o->st = gs_mm_read_csr_ex(p, how == READ_STRICT ? GS_MM_STRICT : 0, &o->A, &o->info);
  snprintf(o->msg, sizeof o->msg, "%s", o->st == GS_SUCCESS ? "" : gs_last_error());
  gs_test_fifo_done(pid);
  if (via == VIA_FIFO) unlink(fifo);
}

/* The reads of path on 2..4 threads against the one on one thread; returns the one-thread
 * status (the CSR read). A difference is printed with the case's name. */
static gs_status_t compare_threads(const char *path, int via, const char *what)
{
  gs_status_t first = GS_SUCCESS;
  for (int how = READ_CSR; how <= READ_COO; ++how) {
    outcome_t o1, on;
    read_one(path, via, how, 1, &o1);
    if (how == READ_CSR) first = o1.st;
    for (int nt = 2; nt <= 4; ++nt) {
      if (gs_test_quick() && nt == 3) continue;
      read_one(path, via, how, nt, &on);
      const int same = o1.st == on.st && strcmp(o1.msg, on.msg) == 0 && csr_same(o1.A, on.A) &&
                       coo_same(o1.C, on.C) && memcmp(&o1.info, &on.info, sizeof o1.info) == 0;
      if (!same) {
        printf("\n  %s (%s, read %d, %d threads): status %d '%s', one thread %d '%s'\n", what,
               via == VIA_FIFO ? "fifo" : "file", how, nt, on.st, on.msg, o1.st, o1.msg);
        CU_FAIL("threaded read differs from the one-thread read");
      }
      outcome_free(&on);
    }
    if (how == READ_CSR && o1.st == GS_SUCCESS) { /* and gs_coo_to_csr of the COO */
      outcome_t oc;
      read_one(path, VIA_FILE, READ_COO, 1, &oc);
      gs_csr_t *R = NULL;
      CU_ASSERT_FATAL(oc.st == GS_SUCCESS && gs_coo_to_csr(&R, oc.C) == GS_SUCCESS);
      if (!csr_same(o1.A, R)) {
        printf("\n  %s: the CSR read differs from gs_coo_to_csr of the COO read\n", what);
        CU_FAIL("CSR read differs from gs_coo_to_csr");
      }
      gs_csr_destroy(&R);
      outcome_free(&oc);
    }
    outcome_free(&o1);
  }
  return first;
}

/* The text as a plain file and as gzip (one or three members); both compared, plain through a
 * FIFO too. Returns the one-thread status of the plain file. */
static gs_status_t compare_all(const text_t *t, const char *what)
{
  static char plain[700], gz[700];
  snprintf(plain, sizeof plain, "%s", gs_test_tmpfile("pipe.mtx"));
  snprintf(gz, sizeof gz, "%s", gs_test_tmpfile("pipe.mtx.gz"));
  CU_ASSERT_FATAL(write_file(plain, t->p, t->n) == 0);
  const gs_status_t st = compare_threads(plain, VIA_FILE, what);
  compare_threads(plain, VIA_FIFO, what);
  if (gs_mm_has_gzip()) {
    text_t z = {0};
    gzip_text(&z, t->p, t->n, (int)(t->n % 3) == 0 ? 3 : 1);
    CU_ASSERT_FATAL(write_file(gz, z.p, z.n) == 0);
    compare_threads(gz, VIA_FILE, what);
    free(z.p);
  }
  return st;
}

/* ---- tests -------------------------------------------------------------------------------- */

/* About `mib` MiB of entries: the stream paths need more than one 1 MiB buffer. */
static int64_t entries_for(double mib) { return (int64_t)(mib * 1048576.0 / 24.0); }

/* Random files of every symmetry and field, 2-5 MiB, read on 1-4 threads from a plain file, a
 * FIFO and gzip: the same CSR, COO and info. */
static void test_streams_ok(void)
{
  uint64_t s = gs_test_seed() ^ 0x51be;
  text_t t = {0};
  const int rounds = gs_test_quick() ? 2 : 7;
  for (int r = 0; r < rounds; ++r) {
    shape_t sh;
    sh.sym = (int)(gs_test_next(&s) % 3);
    sh.field = (int)(gs_test_next(&s) % 3);
    if (sh.sym == 2 && sh.field == 2) sh.field = 0; /* no skew pattern */
    sh.both = sh.sym == 1 && gs_test_next(&s) % 2;
    sh.n = 2 + (int64_t)(gs_test_next(&s) % (r % 2 ? 50 : 200000));
    sh.entries = entries_for(gs_test_quick() ? 1.6 : 2.0 + 3.0 * gs_test_uniform(&s));
    int64_t *lines = malloc((size_t)sh.entries * sizeof *lines);
    CU_ASSERT_FATAL(lines != NULL);
    random_file(&t, &s, &sh, lines);
    char what[128];
    snprintf(what, sizeof what, "%s %s n=%lld, %lld entries%s", g_field[sh.field],
             g_sym[sh.sym], (long long)sh.n, (long long)sh.entries, sh.both ? ", both" : "");
    CU_ASSERT_EQUAL(compare_all(&t, what), GS_SUCCESS);
    free(lines);
  }
  free(t.p);
}

/* One fault at a random entry line (or in the size line's count), in files of 2-4 MiB: the same
 * status and message on every thread count and every source. */
static void test_streams_faults(void)
{
  uint64_t s = gs_test_seed() ^ 0xfa17;
  text_t t = {0}, u = {0};
  const int rounds = gs_test_quick() ? 3 : 14;
  for (int r = 0; r < rounds; ++r) {
    shape_t sh = {(int)(gs_test_next(&s) % 2), 0, 0, 1000,
                  entries_for(2.0 + 2.0 * gs_test_uniform(&s))};
    int64_t *lines = malloc((size_t)sh.entries * sizeof *lines);
    CU_ASSERT_FATAL(lines != NULL);
    random_file(&t, &s, &sh, lines);
    /* the fault's entry: anywhere, or near a 1 MiB boundary */
    int64_t e = (int64_t)(gs_test_next(&s) % (uint64_t)sh.entries);
    if (r % 3 == 1) e = (int64_t)((double)sh.entries * (1.0 / 24.0 * (double)(1 + r % 4)));
    const int kind = r % 7;
    if (e >= sh.entries - 1) e = sh.entries - 2; /* an entry line follows it */
    /* the text before the fault's line, and after it */
    const char *at = t.p;
    for (int64_t l = 1; l < lines[e]; ++l) at = strchr(at, '\n') + 1;
    const char *after = strchr(at, '\n') + 1;
    const size_t head = (size_t)(at - t.p), tail = t.n - (size_t)(after - t.p);
    u.n = 0;
    const char *name = "";
    if (kind == 4) { /* more entries than declared: the size line says e */
      name = "more entries than declared";
      const char *sz = strchr(strchr(t.p, '\n') + 1, '\n') + 1, *sz_end = strchr(sz, '\n') + 1;
      put(&u, t.p, (size_t)(sz - t.p));
      putf(&u, "%lld %lld %lld\n", (long long)sh.n, (long long)sh.n, (long long)e);
      put(&u, sz_end, t.n - (size_t)(sz_end - t.p));
    } else if (kind == 5) { /* the file ends before the entry: fewer than declared */
      name = "fewer entries";
      put(&u, t.p, head);
    } else {
      put(&u, t.p, head);
      switch (kind) {
      case 0: name = "bad token"; put(&u, "1 x 2\n", 6); break;
      case 1: name = "row out of range"; put(&u, "1001 1 2\n", 9); break;
      case 2: name = "text after the entry"; put(&u, "1 1 2 3\n", 8); break;
      case 3: { /* a line longer than 1 MiB */
        name = "long line";
        char *x = malloc(1100000);
        CU_ASSERT_FATAL(x != NULL);
        memset(x, '7', 1100000);
        put(&u, "1 1 ", 4);
        put(&u, x, 1100000);
        put(&u, "\n", 1);
        free(x);
        break;
      }
      default: name = "infinite sum"; put(&u, "5 3 1e308\n", 10); break;
      }
      put(&u, after, tail);
      if (kind == 6) { /* the last entry line completes the sum */
        char *last = u.p + u.n - 1;
        while (last > u.p && last[-1] != '\n') --last;
        u.n = (size_t)(last - u.p);
        put(&u, "5 3 1e308\n", 10);
      }
    }
    char what[160];
    snprintf(what, sizeof what, "%s at entry %lld of %lld (line %lld), %s", name, (long long)e,
             (long long)sh.entries, (long long)lines[e], g_sym[sh.sym]);
    CU_ASSERT_NOT_EQUAL(compare_all(&u, what), GS_SUCCESS);
    free(lines);
  }
  free(t.p);
  free(u.p);
}

/* A gzip stream cut short or with a wrong check value, at several points of a 3 MiB file (and
 * a fault before the cut): the same status and message on every thread count. */
static void test_gzip_cut(void)
{
  if (!gs_mm_has_gzip()) return;
  uint64_t s = gs_test_seed() ^ 0x9c07;
  text_t t = {0}, z = {0};
  shape_t sh = {1, 0, 0, 5000, entries_for(3.0)};
  int64_t *lines = malloc((size_t)sh.entries * sizeof *lines);
  CU_ASSERT_FATAL(lines != NULL);
  random_file(&t, &s, &sh, lines);
  const char *gz = gs_test_tmpfile("cut.mtx.gz");
  const int cuts = gs_test_quick() ? 2 : 6;
  for (int c = 0; c <= cuts; ++c) {
    z.n = 0;
    if (c == cuts) { /* a fault in the text, then a cut after it */
      char *at = t.p + t.n / 3;
      while (*at != '\n') ++at;
      at[1] = 'x';
    }
    gzip_text(&z, t.p, t.n, 1);
    size_t keep = c < cuts ? (size_t)((double)z.n * (0.1 + 0.85 * (double)c / cuts)) : z.n * 2 / 3;
    if (c == 1) { /* all there, but the check value is wrong */
      keep = z.n;
      z.p[z.n - 6] ^= 0x5a;
    }
    CU_ASSERT_FATAL(write_file(gz, z.p, keep) == 0);
    char what[64];
    snprintf(what, sizeof what, "gzip cut at %zu of %zu bytes", keep, z.n);
    gs_mm_set_threads(1);
    gs_csr_t *A = NULL;
    gs_status_t st = gs_mm_read_csr(gz, &A);
    CU_ASSERT_EQUAL(st, GS_ERR_PARSE);
    if (c < cuts) { /* the stream's own fault */
      char want[800];
      snprintf(want, sizeof want, "%s: truncated or corrupt gzip data", gz);
      CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
    }
    gs_csr_destroy(&A);
    compare_threads(gz, VIA_FILE, what);
  }
  free(lines);
  free(t.p);
  free(z.p);
}

/* The segmented CSR build against gs_coo_to_csr of the expanded COO: random stored triangles
 * (duplicates, empty segments, zeros) cut into random segments, mirrored as symmetric or
 * skew-symmetric, on 1-5 threads. */
static void test_segment_build(void)
{
  uint64_t s = gs_test_seed() ^ 0x5e65;
  const int64_t csr_min = gs_coo_to_csr_min;
  gs_coo_to_csr_min = 1;
  const int rounds = gs_test_quick() ? 6 : 40;
  for (int r = 0; r < rounds; ++r) {
    const gs_idx_t n = 1 + (gs_idx_t)(gs_test_next(&s) % 200);
    const int64_t nnz = (int64_t)(gs_test_next(&s) % 3000);
    const gs_symmetry_t mirror = (gs_symmetry_t)(r % 3); /* general, symmetric, skew */
    gs_coo_t *T = NULL, *X = NULL;
    CU_ASSERT_FATAL(gs_coo_create(&T, n, n, nnz) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_coo_create(&X, n, n, 2 * nnz) == GS_SUCCESS);
    for (int64_t k = 0; k < nnz; ++k) {
      const uint64_t u = gs_test_next(&s);
      gs_idx_t i = (gs_idx_t)(gs_test_next(&s) % (uint64_t)n);
      gs_idx_t j = u % 4 == 0 ? i : (gs_idx_t)(gs_test_next(&s) % (uint64_t)n);
      if (u % 5 == 1 && k > 0) { /* a duplicate of an earlier entry, or of its mirror */
        const int64_t e = (int64_t)(gs_test_next(&s) % (uint64_t)k);
        i = u % 2 ? T->row[e] : T->col[e];
        j = u % 2 ? T->col[e] : T->row[e];
      }
      const double v = u % 17 == 0 ? 0.0 : gs_test_uniform(&s) - 0.5;
      T->row[k] = i;
      T->col[k] = j;
      T->val[k] = v;
      X->row[X->nnz] = i;
      X->col[X->nnz] = j;
      X->val[X->nnz++] = v;
      if (mirror != GS_SYM_GENERAL && i != j) {
        X->row[X->nnz] = j;
        X->col[X->nnz] = i;
        X->val[X->nnz++] = mirror == GS_SYM_SKEW ? -v : v;
      }
    }
    T->nnz = nnz;
    X->symmetry = mirror;
    gs_csr_t *R = NULL;
    CU_ASSERT_FATAL(gs_coo_to_csr(&R, X) == GS_SUCCESS);
    /* random segments, some empty */
    gs_coo_seg_t seg[16];
    int nseg = 0;
    int64_t at = 0;
    while (nseg < 15 && at < nnz) {
      const int64_t len = (int64_t)(gs_test_next(&s) % (uint64_t)(nnz / 4 + 2));
      const int64_t end = at + len > nnz ? nnz : at + len;
      seg[nseg++] = (gs_coo_seg_t){T->row + at, T->col + at, T->val + at, end - at};
      at = end;
    }
    seg[nseg++] = (gs_coo_seg_t){T->row + at, T->col + at, T->val + at, nnz - at};
    for (int nt = 1; nt <= 5; ++nt) {
      gs_csr_t *A = NULL;
      int64_t bad[2];
      CU_ASSERT_FATAL(gs_coo_segs_to_csr(&A, n, n, seg, nseg, mirror, mirror, nt, bad) ==
                      GS_SUCCESS);
      CU_ASSERT_EQUAL(bad[0], -1);
      if (!csr_same(R, A)) {
        printf("\n  n=%d, %lld stored, %d segments, mirror %d, %d threads: differs\n", n,
               (long long)nnz, nseg, (int)mirror, nt);
        CU_FAIL("segmented CSR build differs from gs_coo_to_csr");
      }
      gs_csr_destroy(&A);
    }
    gs_csr_destroy(&R);
    gs_coo_destroy(&T);
    gs_coo_destroy(&X);
  }
  /* a mirrored triangle of a matrix that is not square is refused */
  gs_csr_t *A = NULL;
  int64_t bad[2];
  gs_idx_t r0 = 0, c0 = 0;
  double v0 = 1.0;
  const gs_coo_seg_t one = {&r0, &c0, &v0, 1};
  CU_ASSERT_EQUAL(gs_coo_segs_to_csr(&A, 2, 3, &one, 1, GS_SYM_SYMMETRIC, GS_SYM_SYMMETRIC, 1,
                                     bad),
                  GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(A);
  gs_coo_to_csr_min = csr_min;
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"streams: random files as on one thread (file, FIFO, gzip)", test_streams_ok},
      {"streams: one fault anywhere, the same message on 1-4 threads", test_streams_faults},
      {"streams: gzip cut short or corrupt", test_gzip_cut},
      {"segmented CSR build with mirrors equals gs_coo_to_csr", test_segment_build},
      CU_TEST_INFO_NULL,
  };
  const int rc = gs_test_main("mm_pipe", tests, 0);
  gs_mm_set_threads(0);
  return rc;
}
