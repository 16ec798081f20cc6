/* io/mm_internal.h: internals shared by the Matrix Market files of io/ (and exposed for tests).
 *
 * io/mm_float.c parses floating-point numbers, io/mm_read.c reads files, io/mm_write.c writes
 * them, io/mm.c holds the error helpers they share. The character and digit helpers below are
 * static inline so that the reader's hot loops and the number parser inline them. Not installed. */
#ifndef GS_IO_MM_INTERNAL_H
#define GS_IO_MM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpusolve/io.h"
#include "gpusolve/matrix.h"
#include "gpusolve/status.h"
#include "core/coo_csr.h"
#include "core/parallel.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Parses a decimal floating-point number at s (no leading white space skipped) exactly as
 * strtod() in the "C" locale would, bit for bit: a fast path (Clinger's exact cases, then the
 * Eisel-Lemire algorithm) handles numbers of up to 19 significant digits, everything else goes
 * to strtod(). Returns the end of the number (s itself when there is none) and stores the value
 * in *out. The fast path is only taken when the number is followed by white space or '\0', so
 * that hexadecimal and other strtod() syntax is never cut short.
 */
const char *gs_mm_parse_double(const char *s, double *out);

/**
 * The fast path of gs_mm_parse_double alone: a plain decimal number
 * ([+-]digits[.digits][(e|E)[+-]digits]) of at most 19 significant digits at p, where 8 bytes
 * must be readable at every position of the number (the reader's padded buffer). Returns its
 * end, or NULL when strtod() must decide.
 */
const char *gs_mm_fast_double(const char *p, double *out);

/* ---- errors (io/mm.c) ------------------------------------------------------------------- */

/** Records "PATH:LINE: cause" (line > 0) or "PATH: cause" for status st, raised at file:srcline. */
gs_status_t gs_mm_error(gs_status_t st, const char *file, int srcline, const char *path,
                        int64_t line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

#define MM_ERROR(st, path, line, ...)                                                         \
  gs_mm_error((st), __FILE__, __LINE__, (path), (line), __VA_ARGS__)
/* Raise a parse error inside a function with `st` and `cleanup:`. */
#define MM_FAIL(path, line, ...)                                                              \
  do {                                                                                        \
    st = MM_ERROR(GS_ERR_PARSE, (path), (line), __VA_ARGS__);                                 \
    goto cleanup;                                                                             \
  } while (0)

/** Thread-safe strerror (XSI strerror_r) into buf; returns buf. */
const char *gs_mm_strerror(int e, char *buf, size_t n);

/** Whether path ends in ".gz" (any case): such files are read and written gzip-compressed. */
int gs_mm_ends_with_gz(const char *path);

/** Why a build without zlib (no GS_HAVE_ZLIB) refuses gzip files, with GS_ERR_UNSUPPORTED. */
#define GS_MM_NO_ZLIB                                                                         \
  "this gpusolve was built without zlib (install zlib1g-dev, reconfigure and rebuild)"

/* ---- memory (io/mm.c) -------------------------------------------------------------------- */

/** Bytes of host memory this process may still allocate: MemAvailable (or the free physical
 *  pages), within a cgroup's memory limit and the headroom under RLIMIT_AS and RLIMIT_DATA.
 *  gs_mm_memory_limit > 0 replaces the probe (tests, the fuzzer). */
int64_t gs_mm_memory_available(void);
extern int64_t gs_mm_memory_limit;

/** "12.3 GiB" or "456.7 MiB" into buf; returns buf. */
const char *gs_mm_format_bytes(double bytes, char *buf, size_t n);

/* ---- threads (core/parallel.h) and the reader's parts (io/mm_par.c) ----------------------- */

/** Drops the whole pages inside [p, p + bytes) of a read-only private file mapping from this
 *  process (MADV_DONTNEED): they leave its resident set, and are read again from the file if
 *  touched. Only for such mappings: anonymous memory would read back as zeros. */
void gs_mm_advise_done(const void *p, size_t bytes);

/** Smallest part of the entry text given to one thread (bytes; default 1 MiB). A file whose
 *  entries are shorter than two parts is read on one thread. Tests lower it to split small
 *  files into many parts. Not thread-safe: set it before reading. */
extern size_t gs_mm_part_min;

/** Smallest share of a generated Laplacian given to one thread (entries; default 2^20): below
 *  two shares gs_gen_laplace fills on one thread. Tests lower it. Not thread-safe: set it before
 *  generating. (io/gen.c) */
extern int64_t gs_gen_share_min;

/* ---- in-memory reading (io/mm_read.c; the CSR build is core/coo_csr.h) ---------------------- */

/** gs_mm_read_coo / _csr / _vector on the bytes [data, data + len), named `name` in messages
 *  (as the path is). The bytes are copied (so they need no padding) and never decompressed.
 *  For the fuzzer and the tests. */
gs_status_t gs_mm_read_coo_mem(const char *name, const void *data, size_t len, gs_coo_t **out);
gs_status_t gs_mm_read_csr_mem(const char *name, const void *data, size_t len, gs_csr_t **out);
gs_status_t gs_mm_read_vector_mem(const char *name, const void *data, size_t len,
                                  gs_val_t **out, gs_idx_t *n);
gs_status_t gs_mm_read_csr_mem_ex(const char *name, const void *data, size_t len, unsigned flags,
                                  gs_csr_t **out, gs_mm_info_t *info);

/* The reader's hot path is inlined whatever the compiler's size heuristics say. */
#if defined(__GNUC__)
#define MM_INLINE static inline __attribute__((always_inline))
#else
#define MM_INLINE static inline
#endif

/* ---- characters and digits ---------------------------------------------------------------- */

/* White space inside a line ('\r' too, so that CRLF files read); '\n' ends a line. */
static inline int is_blank(char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
static inline int is_digit(char c) { return (unsigned)(c - '0') < 10u; }
static inline int is_end(char c) { return is_blank(c) || c == '\n'; }

/* Digits eight at a time (SWAR). Callers guarantee that 8 bytes can be read at p: the reader's
 * buffer has zeroed padding past its data, gs_mm_parse_double copies into a padded buffer. */
static inline uint64_t load8(const char *p)
{
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
/* How many of the 8 bytes in v (first byte lowest) are decimal digits before the first other
 * byte. A byte is a digit when its high nibble is 3 and stays 3 after adding 6; carries of the
 * addition only move upwards, past the first non-digit, so they cannot hide it. */
static inline int digits8(uint64_t v)
{
  const uint64_t hi = 0xF0F0F0F0F0F0F0F0u, threes = 0x3030303030303030u;
  uint64_t t = ((v & hi) ^ threes) | (((v + 0x0606060606060606u) & hi) ^ threes);
  return t ? __builtin_ctzll(t) >> 3 : 8;
}

/* Value of the first n (1..8) digit bytes of v: the digits are moved to the top and '0's put
 * before them, then pairs, quads and the halves are combined by multiplications. */
static inline uint64_t value8(uint64_t v, int n)
{
  if (n < 8) v = (v << (8 * (8 - n))) | (0x3030303030303030u >> (8 * n));
  v -= 0x3030303030303030u;
  v = v * 10 + (v >> 8);
  v = (((v & 0x000000FF000000FFu) * 0x000F424000000064u) +
       (((v >> 16) & 0x000000FF000000FFu) * 0x0000271000000001u)) >> 32;
  return v;
}
#else
static inline int digits8(uint64_t v)
{
  char b[8];
  memcpy(b, &v, 8);
  int n = 0;
  while (n < 8 && is_digit(b[n])) ++n;
  return n;
}
static inline uint64_t value8(uint64_t v, int n)
{
  char b[8];
  memcpy(b, &v, 8);
  uint64_t x = 0;
  for (int i = 0; i < n; ++i) x = 10 * x + (uint64_t)(b[i] - '0');
  return x;
}
#endif

/* ---- the number parser's fast path, inline (io/mm_float.c has the rest) ------------------- */

/** w * 10^q correctly rounded (w != 0, at most 19 digits, so w is exact) by the Eisel-Lemire
 *  algorithm. Returns 0 where it cannot decide cheaply (out of range, subnormal, overflow, an
 *  ambiguous product): the caller then uses strtod(). */
int gs_mm_eisel_lemire(uint64_t w, int64_t q, double *out);

static const double mm_pow10_[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static const uint64_t mm_pow10u_[9] = {1u,      10u,      100u,      1000u,     10000u,
                                      100000u, 1000000u, 10000000u, 100000000u};

/* Appends the digits at *pp to w (w*10^k + digits, wrapping past 19 digits: callers count them);
 * returns how many there were. */
MM_INLINE int64_t take_digits(const char **pp, uint64_t *w)
{
  const char *p = *pp;
  uint64_t x = *w;
  for (;;) {
    uint64_t v = load8(p);
    int n = digits8(v);
    if (n == 0) break;
    x = x * mm_pow10u_[n] + value8(v, n);
    p += n;
    if (n < 8) break;
  }
  int64_t k = p - *pp;
  *pp = p;
  *w = x;
  return k;
}

/* gs_mm_fast_double, inline for the reader's loop (see its comment above). */
MM_INLINE const char *mm_fast_double(const char *p, double *out)
{
  const int neg = *p == '-';
  p += neg | (*p == '+'); /* branch-free: signs are random in matrix data */
  const char *const d0 = p;
  uint64_t w = 0;
  while (*p == '0') ++p;
  int64_t nd = take_digits(&p, &w), e10 = 0;
  int any = p > d0;
  if (*p == '.') {
    const char *f = ++p;
    if (nd == 0)
      while (*p == '0') ++p; /* zeros of 0.000ddd are not significant */
    nd += take_digits(&p, &w);
    e10 = -(int64_t)(p - f);
    any |= p > f;
  }
  if (!any || nd > 19) return NULL;
  if (*p == 'e' || *p == 'E') {
    ++p;
    int eneg = 0;
    if (*p == '-') {
      eneg = 1;
      ++p;
    } else if (*p == '+') {
      ++p;
    }
    if (!is_digit(*p)) return NULL;
    int64_t e = 0;
    while (is_digit(*p)) {
      if (e < 100000) e = 10 * e + (*p - '0');
      ++p;
    }
    e10 += eneg ? -e : e;
  }
  double d;
  if (w == 0) {
    d = 0.0;
  } else if (w <= (1ull << 53) && e10 >= -22 && e10 <= 22) {
    /* Clinger: both operands exact, one correctly rounded operation. */
    d = (double)w;
    d = e10 < 0 ? d / mm_pow10_[-e10] : d * mm_pow10_[e10];
  } else if (!gs_mm_eisel_lemire(w, e10, &d)) {
    return NULL;
  }
  *out = neg ? -d : d;
  return p;
}

#ifdef __cplusplus
}
#endif
#endif
