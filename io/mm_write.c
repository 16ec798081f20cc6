/* io/mm_write.c: the Matrix Market writer (CSR matrices and dense vectors, plain or .gz; a build
 * without zlib refuses a .gz name with GS_ERR_UNSUPPORTED before creating anything).
 *
 * Files go through io/outfile.c: a temporary file next to the target renamed over it at the end
 * (a failure leaves no partial file), a link's target written, a device written in place. Values
 * are printed with %.17g, which reads back exactly. Symmetric and skew-symmetric storage hold
 * the lower triangle (strictly lower for skew), after a check that A mirrors itself bit for bit. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef GS_HAVE_ZLIB
#include <zlib.h>
#endif

#include "core/error.h"
#include "gpusolve/io.h"
#include "io/mm_internal.h"
#include "io/outfile.h"

#define MM_OUT_BLOCK ((size_t)1 << 20)
#define MM_OUT_LINE 96 /* longest line written: two indices and a %.17g value */

typedef struct mm_sink {
  FILE *f;
#ifdef GS_HAVE_ZLIB
  gzFile gz; /* set instead of f for a .gz name */
#endif
  char *buf;
  size_t len;
  int failed;
  int err; /* errno of the first failure, 0 when unknown */
} mm_sink;

static void sink_flush(mm_sink *k)
{
  if (!k->failed && k->len > 0) {
#ifdef GS_HAVE_ZLIB
    if (k->gz) {
      if (gzwrite(k->gz, k->buf, (unsigned)k->len) != (int)k->len) {
        int ze;
        gzerror(k->gz, &ze);
        k->failed = 1;
        k->err = ze == Z_ERRNO ? errno : 0;
      }
    } else
#endif
    if (fwrite(k->buf, 1, k->len, k->f) != k->len) {
      k->failed = 1;
      k->err = errno;
    }
  }
  k->len = 0;
}

/* Room for one more line. */
static inline char *sink_room(mm_sink *k)
{
  if (k->len + MM_OUT_LINE > MM_OUT_BLOCK) sink_flush(k);
  return k->buf + k->len;
}

static inline char *put_uint(char *p, uint64_t v)
{
  char t[24];
  int n = 0;
  do {
    t[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) *p++ = t[--n];
  return p;
}

static inline char *put_double(char *p, double v)
{
  return p + snprintf(p, 32, "%.17g", v);
}

static void sink_text(mm_sink *k, const char *text)
{
  size_t n = strlen(text);
  if (k->len + n > MM_OUT_BLOCK) sink_flush(k);
  memcpy(k->buf + k->len, text, n);
  k->len += n;
}

typedef struct csr_arg {
  const gs_csr_t *A;
  gs_symmetry_t storage; /* general: every entry; symmetric, skew: col <= row (skew: col < row) */
  gs_off_t stored;       /* entries written */
} csr_arg;

/* The body of a CSR file (A validated, and checked by csr_mirrors for symmetric storage). */
static void write_csr_body(mm_sink *k, const void *arg)
{
  const csr_arg *c = arg;
  const gs_csr_t *A = c->A;
  static const char *const banner[] = {/* by gs_symmetry_t */
                                       "%%MatrixMarket matrix coordinate real general\n",
                                       "%%MatrixMarket matrix coordinate real symmetric\n",
                                       "%%MatrixMarket matrix coordinate real skew-symmetric\n"};
  sink_text(k, banner[c->storage]);
  char *p = sink_room(k), *p0 = p;
  p = put_uint(p, (uint64_t)A->m);
  *p++ = ' ';
  p = put_uint(p, (uint64_t)A->n);
  *p++ = ' ';
  p = put_uint(p, (uint64_t)c->stored);
  *p++ = '\n';
  k->len += (size_t)(p - p0);
  const int half = c->storage != GS_SYM_GENERAL, strict = c->storage == GS_SYM_SKEW;
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t q = A->row_ptr[i]; q < A->row_ptr[i + 1]; ++q) {
      if (half && (A->col[q] > i || (strict && A->col[q] == i))) continue;
      p = p0 = sink_room(k);
      p = put_uint(p, (uint64_t)i + 1);
      *p++ = ' ';
      p = put_uint(p, (uint64_t)A->col[q] + 1);
      *p++ = ' ';
      p = put_double(p, A->val[q]);
      *p++ = '\n';
      k->len += (size_t)(p - p0);
    }
}

/* Whether A equals A^T (skew: -A^T, and no diagonal entry) bit for bit, with every row's columns
 * strictly increasing: then the lower triangle is the whole matrix. *lower: the entries with
 * col <= row. One pass: a cursor per row walks its lower part while the rows above meet their
 * upper entries in order. Returns 1, 0 (with the first mismatch in why), or -1 out of memory. */
static int csr_mirrors(const gs_csr_t *A, int skew, gs_off_t *lower, char *why, size_t whyn)
{
  if (A->m != A->n) {
    snprintf(why, whyn, "it is %d x %d, not square", A->m, A->n);
    return 0;
  }
  gs_off_t *next = malloc(((size_t)A->m + 1) * sizeof *next);
  if (!next) return -1;
  memcpy(next, A->row_ptr, (size_t)A->m * sizeof *next);
  int ok = 1;
  gs_off_t low = 0;
  for (gs_idx_t i = 0; i < A->m && ok; ++i) {
    const gs_off_t end = A->row_ptr[i + 1];
    /* the rows above consumed every entry left of the diagonal */
    if (next[i] < end && A->col[next[i]] < i) {
      snprintf(why, whyn, "entry (%d, %d) has no mirror (%d, %d)", i + 1, A->col[next[i]] + 1,
               A->col[next[i]] + 1, i + 1);
      ok = 0;
      break;
    }
    for (gs_off_t q = A->row_ptr[i]; q < end; ++q) {
      const gs_idx_t j = A->col[q];
      if (q > A->row_ptr[i] && j <= A->col[q - 1]) {
        snprintf(why, whyn, "row %d is not sorted", i + 1);
        ok = 0;
        break;
      }
      if (j < i) {
        ++low;
        continue;
      }
      if (j == i) {
        if (skew) {
          snprintf(why, whyn, "diagonal entry (%d, %d) in skew-symmetric storage", i + 1, i + 1);
          ok = 0;
          break;
        }
        ++low;
        continue;
      }
      /* upper entry (i, j): the next lower entry of row j must be (j, i) with the mirrored value */
      const gs_val_t want = skew ? -A->val[q] : A->val[q];
      if (next[j] >= A->row_ptr[j + 1] || A->col[next[j]] != i ||
          memcmp(&A->val[next[j]], &want, sizeof want) != 0) {
        snprintf(why, whyn, "entry (%d, %d) is not mirrored by (%d, %d)", i + 1, j + 1, j + 1,
                 i + 1);
        ok = 0;
        break;
      }
      ++next[j];
    }
  }
  free(next);
  *lower = low;
  return ok;
}

typedef struct vec_arg {
  const gs_val_t *x;
  gs_idx_t len;
} vec_arg;

static void write_vector_body(mm_sink *k, const void *arg)
{
  const vec_arg *a = arg;
  sink_text(k, "%%MatrixMarket matrix array real general\n");
  char *p = sink_room(k), *p0 = p;
  p = put_uint(p, (uint64_t)a->len);
  memcpy(p, " 1\n", 3);
  p += 3;
  k->len += (size_t)(p - p0);
  for (gs_idx_t i = 0; i < a->len; ++i) {
    p = p0 = sink_room(k);
    p = put_double(p, a->x[i]);
    *p++ = '\n';
    k->len += (size_t)(p - p0);
  }
}

/* Writes body(arg) to path through gs_outfile (io/outfile.h: a temporary renamed into place, a
 * link's target, a device in place), gzip-compressed when path ends in ".gz". */
static gs_status_t write_file(const char *path, void (*body)(mm_sink *, const void *),
                              const void *arg)
{
  gs_status_t st = GS_SUCCESS;
  char eb[128];
  gs_outfile_t o = {.fd = -1, .slot = -1};
  mm_sink k;
  memset(&k, 0, sizeof k);
#ifndef GS_HAVE_ZLIB
  if (gs_mm_ends_with_gz(path))
    return MM_ERROR(GS_ERR_UNSUPPORTED, path, 0, "cannot write gzip (.gz): %s", GS_MM_NO_ZLIB);
#endif

  k.buf = malloc(MM_OUT_BLOCK);
  if (!k.buf) {
    st = MM_ERROR(GS_ERR_HOST_MEMORY, path, 0, "out of host memory for a write buffer");
    goto cleanup;
  }
  GS_TRY(gs_outfile_open(&o, path));
#ifdef GS_HAVE_ZLIB
  if (gs_mm_ends_with_gz(path)) {
    k.gz = gzdopen(o.fd, "wb6");
    if (!k.gz) {
      st = MM_ERROR(GS_ERR_HOST_MEMORY, path, 0, "out of host memory opening a gzip stream");
      goto cleanup;
    }
  } else
#endif
  {
    k.f = fdopen(o.fd, "wb");
    if (!k.f) {
      st = MM_ERROR(GS_ERR_IO, path, 0, "cannot write: %s", gs_mm_strerror(errno, eb, sizeof eb));
      goto cleanup;
    }
  }
  o.fd = -1; /* owned by the stream now */
  body(&k, arg);
  sink_flush(&k);
  int close_failed;
#ifdef GS_HAVE_ZLIB
  if (k.gz) {
    int zr = gzclose(k.gz);
    close_failed = zr != Z_OK;
    if (close_failed && !k.err && zr == Z_ERRNO) k.err = errno;
    k.gz = NULL;
  } else
#endif
  {
    close_failed = fclose(k.f) != 0;
    if (close_failed && !k.err) k.err = errno;
  }
  k.f = NULL;
  if (k.failed || close_failed) {
    st = MM_ERROR(GS_ERR_IO, path, 0, "write failed: %s",
                  k.err ? gs_mm_strerror(k.err, eb, sizeof eb) : "gzip stream error");
    goto cleanup;
  }
  st = gs_outfile_commit(&o);
cleanup:
#ifdef GS_HAVE_ZLIB
  if (k.gz) gzclose(k.gz);
#endif
  if (k.f) fclose(k.f);
  gs_outfile_abort(&o); /* nothing left to do after a commit */
  free(k.buf);
  return st;
}

/* Validates A and the storage asked for, and fills the body's argument. */
static gs_status_t csr_prepare(const char *who, const gs_csr_t *A, gs_symmetry_t storage,
                               csr_arg *c)
{
  char why[160];
  GS_CHECK(gs_csr_validate(A));
  c->A = A;
  c->storage = storage;
  c->stored = A->nnz;
  if (storage == GS_SYM_GENERAL) return GS_SUCCESS;
  if (storage != GS_SYM_SYMMETRIC && storage != GS_SYM_SKEW)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: unknown storage %d", who, (int)storage);
  const int r = csr_mirrors(A, storage == GS_SYM_SKEW, &c->stored, why, sizeof why);
  if (r < 0)
    return GS_ERROR(GS_ERR_HOST_MEMORY, "%s: out of host memory for the symmetry check", who);
  if (r == 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: cannot write %s storage: %s", who,
                    storage == GS_SYM_SKEW ? "skew-symmetric" : "symmetric", why);
  return GS_SUCCESS;
}

gs_status_t gs_mm_write_csr_sym(const char *path, const gs_csr_t *A, gs_symmetry_t storage)
{
  csr_arg c;
  if (!path || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_write_csr: NULL argument");
  GS_CHECK(csr_prepare(path, A, storage, &c));
  return write_file(path, write_csr_body, &c);
}

gs_status_t gs_mm_write_csr(const char *path, const gs_csr_t *A)
{
  return gs_mm_write_csr_sym(path, A, GS_SYM_GENERAL);
}

gs_status_t gs_mm_write_csr_stream_sym(FILE *f, const gs_csr_t *A, gs_symmetry_t storage)
{
  gs_status_t st = GS_SUCCESS;
  char eb[128];
  mm_sink k;
  csr_arg c;
  if (!f || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_write_csr_stream: NULL argument");
  GS_CHECK(csr_prepare("gs_mm_write_csr_stream", A, storage, &c));
  memset(&k, 0, sizeof k);
  k.f = f;
  k.buf = malloc(MM_OUT_BLOCK);
  if (!k.buf) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory for a write buffer");
  write_csr_body(&k, &c);
  sink_flush(&k);
  if (!k.failed && fflush(f) != 0) {
    k.failed = 1;
    k.err = errno;
  }
  if (k.failed)
    GS_FAIL(GS_ERR_IO, "writing a Matrix Market stream failed: %s",
            k.err ? gs_mm_strerror(k.err, eb, sizeof eb) : "unknown error");
cleanup:
  free(k.buf);
  return st;
}

gs_status_t gs_mm_write_csr_stream(FILE *f, const gs_csr_t *A)
{
  return gs_mm_write_csr_stream_sym(f, A, GS_SYM_GENERAL);
}

gs_status_t gs_mm_check_output(const char *path)
{
#ifndef GS_HAVE_ZLIB
  if (path && gs_mm_ends_with_gz(path))
    return MM_ERROR(GS_ERR_UNSUPPORTED, path, 0, "cannot write gzip (.gz): %s", GS_MM_NO_ZLIB);
#endif
  return gs_outfile_check(path);
}

void gs_mm_remove_temporaries(void) { gs_outfile_remove_temps(); }

gs_status_t gs_mm_write_vector(const char *path, const gs_val_t *x, gs_idx_t len)
{
  if (!path || (!x && len > 0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_write_vector: NULL argument");
  if (len < 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_write_vector: negative length %d", len);
  for (gs_idx_t i = 0; i < len; ++i)
    if (!isfinite(x[i]))
      return GS_ERROR(GS_ERR_INVALID_ARG,
                      "%s: x[%d] is not finite (Matrix Market files hold finite values)", path, i);
  vec_arg a = {x, len};
  return write_file(path, write_vector_body, &a);
}
