/* io/mm_write.c: the Matrix Market writer (CSR matrices and dense vectors, plain or .gz; a build
 * without zlib refuses a .gz name with GS_ERR_UNSUPPORTED before creating anything).
 *
 * Writing goes to a temporary file next to the target that is renamed over it at the end, so a
 * failure leaves no partial file; values are printed with %.17g, which reads back exactly. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#ifdef GS_HAVE_ZLIB
#include <zlib.h>
#endif

#include "core/error.h"
#include "gpusolve/io.h"
#include "io/mm_internal.h"

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

/* The body of a CSR file (A validated by the caller). */
static void write_csr_body(mm_sink *k, const void *arg)
{
  const gs_csr_t *A = arg;
  sink_text(k, "%%MatrixMarket matrix coordinate real general\n");
  char *p = sink_room(k), *p0 = p;
  p = put_uint(p, (uint64_t)A->m);
  *p++ = ' ';
  p = put_uint(p, (uint64_t)A->n);
  *p++ = ' ';
  p = put_uint(p, (uint64_t)A->nnz);
  *p++ = '\n';
  k->len += (size_t)(p - p0);
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t q = A->row_ptr[i]; q < A->row_ptr[i + 1]; ++q) {
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

/* Writes body(arg) to path: through a temporary file renamed over path at the end (removed on
 * failure), gzip-compressed when path ends in ".gz". An existing path that is not a regular
 * file (a device, a FIFO) is written directly. */
static gs_status_t write_file(const char *path, void (*body)(mm_sink *, const void *),
                              const void *arg)
{
  gs_status_t st = GS_SUCCESS;
  char eb[128];
  char *tmp = NULL;
  int fd = -1, tmp_made = 0;
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
  struct stat sb;
  int direct = stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
  if (direct) {
    if (S_ISDIR(sb.st_mode)) {
      st = MM_ERROR(GS_ERR_IO, path, 0, "cannot write: %s", gs_mm_strerror(EISDIR, eb, sizeof eb));
      goto cleanup;
    }
    fd = open(path, O_WRONLY | O_TRUNC);
    if (fd < 0) {
      st = MM_ERROR(GS_ERR_IO, path, 0, "cannot open for writing: %s",
                    gs_mm_strerror(errno, eb, sizeof eb));
      goto cleanup;
    }
  } else {
    size_t n = strlen(path) + 64;
    tmp = malloc(n);
    if (!tmp) {
      st = MM_ERROR(GS_ERR_HOST_MEMORY, path, 0, "out of host memory");
      goto cleanup;
    }
    static _Atomic unsigned counter;
    for (int tries = 0; fd < 0; ++tries) {
      snprintf(tmp, n, "%s.tmp.%ld.%u", path, (long)getpid(), counter++);
      fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
      if (fd < 0 && (errno != EEXIST || tries > 100)) {
        st = MM_ERROR(GS_ERR_IO, path, 0, "cannot create %s: %s", tmp,
                      gs_mm_strerror(errno, eb, sizeof eb));
        goto cleanup;
      }
    }
    tmp_made = 1;
  }
#ifdef GS_HAVE_ZLIB
  if (gs_mm_ends_with_gz(path)) {
    k.gz = gzdopen(fd, "wb6");
    if (!k.gz) {
      st = MM_ERROR(GS_ERR_HOST_MEMORY, path, 0, "out of host memory opening a gzip stream");
      goto cleanup;
    }
  } else
#endif
  {
    k.f = fdopen(fd, "wb");
    if (!k.f) {
      st = MM_ERROR(GS_ERR_IO, path, 0, "cannot write: %s", gs_mm_strerror(errno, eb, sizeof eb));
      goto cleanup;
    }
  }
  fd = -1; /* owned by the stream now */
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
  if (tmp_made) {
    if (rename(tmp, path) != 0) {
      st = MM_ERROR(GS_ERR_IO, path, 0, "cannot rename %s over it: %s", tmp,
                    gs_mm_strerror(errno, eb, sizeof eb));
      goto cleanup;
    }
    tmp_made = 0;
  }
cleanup:
#ifdef GS_HAVE_ZLIB
  if (k.gz) gzclose(k.gz);
#endif
  if (k.f) fclose(k.f);
  if (fd >= 0) close(fd);
  if (tmp_made) unlink(tmp);
  free(tmp);
  free(k.buf);
  return st;
}

gs_status_t gs_mm_write_csr(const char *path, const gs_csr_t *A)
{
  if (!path || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_write_csr: NULL argument");
  GS_CHECK(gs_csr_validate(A));
  return write_file(path, write_csr_body, A);
}

gs_status_t gs_mm_write_csr_stream(FILE *f, const gs_csr_t *A)
{
  gs_status_t st = GS_SUCCESS;
  char eb[128];
  mm_sink k;
  if (!f || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_write_csr_stream: NULL argument");
  GS_CHECK(gs_csr_validate(A));
  memset(&k, 0, sizeof k);
  k.f = f;
  k.buf = malloc(MM_OUT_BLOCK);
  if (!k.buf) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory for a write buffer");
  write_csr_body(&k, A);
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
