/* io/mm_read.c: the Matrix Market reader (plain or gzip-compressed) into COO, CSR or a vector.
 *
 * Reading is built for speed: the file is read in 1 MiB blocks (through zlib for .gz files;
 * a build without zlib refuses them with GS_ERR_UNSUPPORTED),
 * every complete line of a block is parsed in place by hand-written integer and floating-point
 * parsers (no stdio scanning; numbers through io/mm_float.c, bit for bit strtod()), and the COO
 * is preallocated from the size line, within what the file can hold. On several threads a plain
 * file is mapped and cut into parts, and a stream (gzip, a pipe) read for a CSR is parsed by
 * the other threads block by block while the calling thread reads on (sections below); for a
 * CSR the entries stay as stored, in their parts, and the CSR build places the mirrors of a
 * stored triangle itself (core/coo_csr.c). The whole result is the one-thread reader's, every
 * error message included.
 *
 * Hostile input is bounded: lines are at most GS_MM_LINE_MAX bytes (the read buffer never
 * grows), and what the header declares is priced against the memory the process may still take
 * before any array is allocated (mm_budget). Checks of the entries sit where the parser already
 * touches them (the triangle counts, the integer range) or on the rare paths (summed duplicates
 * in the CSR build, the messages of faults).
 *
 * Every fault is reported as "PATH:LINE: cause" (or "PATH: cause" when it is not on a line):
 * GS_ERR_PARSE for the content, GS_ERR_IO for open and read failures, GS_ERR_UNSUPPORTED for
 * complex and hermitian files and, in a build without zlib, gzip files. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#ifdef GS_HAVE_ZLIB
#include <zlib.h>
#endif

#include "core/error.h"
#include "gpusolve/io.h"
#include "io/mm_internal.h"

/* ---- tokens --------------------------------------------------------------------------------- */

/* Copies the token at p (up to white space or the end of the line) for a message: at most 40
 * characters, "..." when longer, unprintable bytes as '?'. */
static const char *quote(const char *p, char *buf, size_t n)
{
  size_t k = 0;
  while (!is_end(*p) && k + 4 < n && k < 40) {
    unsigned char c = (unsigned char)*p++;
    buf[k++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
  }
  if (!is_end(*p)) {
    buf[k++] = '.';
    buf[k++] = '.';
    buf[k++] = '.';
  }
  buf[k] = '\0';
  return buf;
}

/* Case-insensitive comparison of the token [p, p + len) with a lowercase word. */
static int word_is(const char *p, size_t len, const char *word)
{
  size_t i = 0;
  for (; i < len && word[i]; ++i) {
    char c = p[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != word[i]) return 0;
  }
  return i == len && word[i] == '\0';
}

/* strtod() for what the fast path leaves (long, hexadecimal, special or malformed tokens). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static const char *parse_value_strtod(const char *p, double *v)
{
  char *end;
  *v = strtod(p, &end);
  if (end == p || !is_end(*end)) return NULL;
  return end;
}

/* A value token: returns its end (white space or '\n' must follow) or NULL. */
MM_INLINE const char *parse_value(const char *p, double *v)
{
  if (is_end(*p)) return NULL; /* strtod() would skip white space, even a newline */
  const char *e = mm_fast_double(p, v);
  if (e && is_end(*e)) return e;
  return parse_value_strtod(p, v);
}

/* An integer token ([+-]digits followed by white space or '\n'). */
static int is_integer_token(const char *p)
{
  if (*p == '+' || *p == '-') ++p;
  if (!is_digit(*p)) return 0;
  while (is_digit(*p)) ++p;
  return is_end(*p);
}

/* An index token: digits followed by white space or '\n'. Values past 18 digits saturate. */
static inline const char *parse_index(const char *p, uint64_t *out)
{
  uint64_t v = load8(p);
  int n = digits8(v);
  if (n == 0) return NULL;
  uint64_t x = value8(v, n);
  p += n;
  if (n == 8) {
    const char *s = p;
    while (is_digit(*p)) x = 10 * x + (uint64_t)(*p++ - '0');
    if (p - s > 10) x = UINT64_MAX;
  }
  if (!is_end(*p)) return NULL;
  *out = x;
  return p;
}

/* Whether the line [b, e) holds a CR before its end (trailing blanks aside): files whose lines
 * end in a CR alone, as classic Mac OS wrote them, read as one long line. */
static int lone_cr(const char *b, const char *e)
{
  while (e > b && is_blank(e[-1])) --e;
  return b < e && memchr(b, '\r', (size_t)(e - b)) != NULL;
}

/* The fault of a line longer than GS_MM_LINE_MAX, from its first GS_MM_LINE_MAX + 1 bytes at b
 * (the serial reader's full buffer; the others pass as many): binary data and CR line ends,
 * what such lines usually are, are named. */
static gs_status_t long_line_error(const char *path, int64_t line, const char *b, int srcline)
{
  const size_t n = GS_MM_LINE_MAX + 1;
  if (memchr(b, '\0', n))
    return gs_mm_error(GS_ERR_PARSE, __FILE__, srcline, path, line,
                       "NUL bytes and no line end within 1 MiB: binary data, not a Matrix "
                       "Market text file");
  if (memchr(b, '\r', n))
    return gs_mm_error(GS_ERR_PARSE, __FILE__, srcline, path, line,
                       "line longer than 1 MiB, with CR characters in it: lines ended by a CR "
                       "alone (classic Mac OS) must be converted to LF");
  return gs_mm_error(GS_ERR_PARSE, __FILE__, srcline, path, line, "line longer than 1 MiB");
}

/* The fault of a line with a CR inside (see lone_cr). */
#define CR_ERROR(path, line)                                                                  \
  MM_ERROR(GS_ERR_PARSE, (path), (line),                                                      \
           "a CR inside the line: lines ended by a CR alone (classic Mac OS) must be "         \
           "converted to LF")

/* ---- input: blocks of complete lines --------------------------------------------------------- */

#define MM_BLOCK GS_MM_LINE_MAX
/* Past the data: the '\n' given to a last line without one, then zeros, so that the number
 * parsers may read 8 bytes at any position before the end. */
#define MM_PAD 32

typedef struct mm_src {
  const char *path;
  int fd;
#ifdef GS_HAVE_ZLIB
  gzFile gz;           /* the decompressing stream of a gzip file, else NULL */
#endif
  char *buf;
  size_t cap;          /* data bytes buf can hold; MM_PAD more are allocated */
  size_t len;          /* bytes of data in buf */
  size_t lim;          /* just past the last '\n' in buf: [pos, lim) are complete lines */
  size_t pos;          /* start of the next line to parse */
  int64_t line;        /* number of the line that starts at pos */
  int eof;
  int64_t file_bytes;  /* size of a plain regular file, -1 when unknown */
  int64_t gz_bytes;    /* size of a gzip-compressed regular file, -1 otherwise */
  int regular;         /* a regular file or memory: can be read again (to find a line) */
  int64_t consumed;    /* bytes of the file read into buf so far (plain files and memory) */
} mm_src;

#ifdef GS_HAVE_ZLIB
#define SRC_GZ(s) ((s)->gz != NULL)
#else
#define SRC_GZ(s) 0
#endif

static gs_status_t src_open(mm_src *s, const char *path)
{
  char eb[128];
  memset(s, 0, sizeof *s);
  s->path = path;
  s->fd = -1;
  s->line = 1;
  s->file_bytes = -1;
  s->gz_bytes = -1;
  s->fd = open(path, O_RDONLY);
  if (s->fd < 0)
    return MM_ERROR(GS_ERR_IO, path, 0, "cannot open: %s", gs_mm_strerror(errno, eb, sizeof eb));
  struct stat sb;
  if (fstat(s->fd, &sb) != 0)
    return MM_ERROR(GS_ERR_IO, path, 0, "cannot open: %s", gs_mm_strerror(errno, eb, sizeof eb));
  if (S_ISDIR(sb.st_mode))
    return MM_ERROR(GS_ERR_IO, path, 0, "cannot open: %s", gs_mm_strerror(EISDIR, eb, sizeof eb));
  int gz = gs_mm_ends_with_gz(path);
  if (!gz && S_ISREG(sb.st_mode)) {
    /* gzip data under another name is read all the same (magic bytes 1f 8b). */
    unsigned char magic[2];
    if (pread(s->fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) gz = 1;
  }
  if (gz) {
#ifdef GS_HAVE_ZLIB
    s->gz = gzdopen(s->fd, "rb");
    if (!s->gz)
      return MM_ERROR(GS_ERR_HOST_MEMORY, path, 0, "out of host memory opening gzip stream");
    s->fd = -1; /* owned by the gzFile now */
    gzbuffer(s->gz, 1u << 18);
    if (S_ISREG(sb.st_mode)) s->gz_bytes = (int64_t)sb.st_size;
#else
    return MM_ERROR(GS_ERR_UNSUPPORTED, path, 0, "gzip-compressed, but %s", GS_MM_NO_ZLIB);
#endif
  } else if (S_ISREG(sb.st_mode)) {
    s->file_bytes = (int64_t)sb.st_size;
  }
  s->regular = S_ISREG(sb.st_mode);
  /* One byte over the longest line: a buffer full without a '\n' holds a line too long. */
  s->cap = MM_BLOCK + 1;
  s->buf = malloc(s->cap + MM_PAD);
  if (!s->buf) return MM_ERROR(GS_ERR_HOST_MEMORY, path, 0, "out of host memory for a read buffer");
  return GS_SUCCESS;
}

/* A source over bytes in memory: one copy, its last line given a '\n', zeros after. */
static gs_status_t src_open_mem(mm_src *s, const char *name, const void *data, size_t n)
{
  memset(s, 0, sizeof *s);
  s->path = name;
  s->fd = -1;
  s->line = 1;
  s->buf = malloc(n + 1 + MM_PAD);
  if (!s->buf)
    return MM_ERROR(GS_ERR_HOST_MEMORY, name, 0, "out of host memory for %zu bytes", n);
  if (n > 0) memcpy(s->buf, data, n);
  if (n > 0 && s->buf[n - 1] != '\n') s->buf[n++] = '\n';
  memset(s->buf + n, 0, MM_PAD);
  s->cap = n;
  s->len = n;
  s->lim = n;
  s->eof = 1;
  s->file_bytes = (int64_t)n;
  s->gz_bytes = -1;
  s->regular = 1;
  s->consumed = (int64_t)n;
  return GS_SUCCESS;
}

static void src_close(mm_src *s)
{
#ifdef GS_HAVE_ZLIB
  if (s->gz) gzclose(s->gz);
  s->gz = NULL;
#endif
  if (s->fd >= 0) close(s->fd);
  free(s->buf);
  s->fd = -1;
  s->buf = NULL;
}

/* Reads up to n bytes at dst; *got = 0 at the end of the file. */
static gs_status_t src_read(mm_src *s, char *dst, size_t n, size_t *got)
{
  char eb[128];
  *got = 0;
#ifdef GS_HAVE_ZLIB
  if (s->gz) {
    if (n > (size_t)INT_MAX) n = (size_t)INT_MAX;
    int r = gzread(s->gz, dst, (unsigned)n);
    int zerr = Z_OK;
    if (r < 0 || (size_t)r < n) gzerror(s->gz, &zerr);
    if (zerr == Z_ERRNO)
      return MM_ERROR(GS_ERR_IO, s->path, 0, "cannot read: %s",
                      gs_mm_strerror(errno, eb, sizeof eb));
    if (r < 0 || zerr == Z_BUF_ERROR || zerr == Z_DATA_ERROR || zerr == Z_STREAM_ERROR)
      return MM_ERROR(GS_ERR_PARSE, s->path, 0, "truncated or corrupt gzip data");
    if (zerr == Z_MEM_ERROR)
      return MM_ERROR(GS_ERR_HOST_MEMORY, s->path, 0, "out of host memory decompressing");
    *got = (size_t)r;
    return GS_SUCCESS;
  }
#endif
  for (;;) {
    ssize_t r = read(s->fd, dst, n);
    if (r >= 0) {
      *got = (size_t)r;
      s->consumed += r;
      return GS_SUCCESS;
    }
    if (errno != EINTR)
      return MM_ERROR(GS_ERR_IO, s->path, 0, "cannot read: %s",
                      gs_mm_strerror(errno, eb, sizeof eb));
  }
}

/* Makes [pos, lim) hold at least one complete line; *got = 0 when the file is exhausted. A last
 * line without its '\n' gets one; zeros follow the data (MM_PAD). */
static gs_status_t src_more(mm_src *s, int *got)
{
  size_t rest = s->len - s->pos;
  if (rest > 0 && s->pos > 0) memmove(s->buf, s->buf + s->pos, rest);
  s->len = rest;
  s->pos = 0;
  s->lim = 0;
  size_t scanned = rest; /* the carried-over tail holds no '\n' */
  *got = 0;
  for (;;) {
    for (size_t i = s->len; i > scanned; --i)
      if (s->buf[i - 1] == '\n') {
        s->lim = i;
        break;
      }
    if (s->lim) break;
    scanned = s->len;
    if (s->eof) {
      if (s->len == 0) return GS_SUCCESS;
      s->buf[s->len++] = '\n';
      s->lim = s->len;
      break;
    }
    if (s->len == s->cap) /* GS_MM_LINE_MAX + 1 bytes and no '\n' */
      return long_line_error(s->path, s->line, s->buf, __LINE__);
    size_t n;
    GS_CHECK(src_read(s, s->buf + s->len, s->cap - s->len, &n));
    if (n == 0)
      s->eof = 1;
    else
      s->len += n;
  }
  memset(s->buf + s->len, 0, MM_PAD - 1);
  *got = 1;
  return GS_SUCCESS;
}

/* The next line [*b, *e) (*e is its '\n'), its number in *ln; *got = 0 at the end. */
static gs_status_t src_line(mm_src *s, char **b, char **e, int64_t *ln, int *got)
{
  if (s->pos == s->lim) {
    GS_CHECK(src_more(s, got));
    if (!*got) return GS_SUCCESS;
  }
  char *p = s->buf + s->pos;
  char *nl = memchr(p, '\n', s->lim - s->pos);
  if ((size_t)(nl - p) > GS_MM_LINE_MAX) /* memory: nothing bounded the lines yet */
    return long_line_error(s->path, s->line, p, __LINE__);
  *b = p;
  *e = nl;
  *ln = s->line++;
  s->pos = (size_t)(nl + 1 - s->buf);
  *got = 1;
  return GS_SUCCESS;
}

/* ---- header: banner and size line ------------------------------------------------------------ */

enum { MM_COORDINATE, MM_ARRAY };
enum { MM_REAL, MM_INTEGER, MM_PATTERN };

typedef struct mm_header {
  int format, field;
  gs_symmetry_t sym;
  int64_t m, n;
  int64_t stored;    /* entries (coordinate) or values (array) the file holds */
  int64_t size_line; /* line number of the size line */
} mm_header;

/* Splits [b, e) at white space into at most max tokens; returns how many there were. */
static int split(const char *b, const char *e, const char **tok, size_t *len, int max)
{
  int k = 0;
  const char *p = b;
  while (p < e) {
    while (p < e && is_blank(*p)) ++p;
    if (p == e) break;
    const char *t = p;
    while (p < e && !is_blank(*p)) ++p;
    if (k < max) {
      tok[k] = t;
      len[k] = (size_t)(p - t);
    }
    ++k;
  }
  return k;
}

/* A size token: non-negative decimal, saturating at INT64_MAX. 0 when not one. */
static int size_token(const char *p, size_t len, int64_t *out)
{
  if (len == 0) return 0;
  int64_t v = 0;
  for (size_t i = 0; i < len; ++i) {
    if (!is_digit(p[i])) return 0;
    int d = p[i] - '0';
    v = (v > (INT64_MAX - d) / 10) ? INT64_MAX : 10 * v + d;
  }
  *out = v;
  return 1;
}

static gs_status_t read_header(mm_src *s, mm_header *h)
{
  const char *path = s->path;
  char *b = NULL, *e = NULL, qb[64];
  int64_t ln;
  int got;
  const char *tok[6];
  size_t len[6];
  memset(h, 0, sizeof *h);

  GS_CHECK(src_line(s, &b, &e, &ln, &got));
  if (!got) return MM_ERROR(GS_ERR_PARSE, path, 0, "empty file (no %%%%MatrixMarket banner)");
  /* what a text editor may have put there, named rather than "missing banner" */
  const unsigned char *u = (const unsigned char *)b;
  if (e - b >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF)
    return MM_ERROR(GS_ERR_PARSE, path, ln,
                    "a UTF-8 byte-order mark (EF BB BF) before %%%%MatrixMarket: save the file "
                    "without it");
  if (e - b >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF)))
    return MM_ERROR(GS_ERR_PARSE, path, ln,
                    "UTF-16 text (byte-order mark %02X %02X): save the file as ASCII or UTF-8",
                    u[0], u[1]);
  if (memchr(b, '\0', (size_t)(e - b)))
    return MM_ERROR(GS_ERR_PARSE, path, ln,
                    "NUL bytes in the first line: binary data, not a Matrix Market text file");
  if (lone_cr(b, e)) return CR_ERROR(path, ln);
  int nt = split(b, e, tok, len, 6);
  if (nt == 0)
    return MM_ERROR(GS_ERR_PARSE, path, ln,
                    "missing %%%%MatrixMarket banner: the first line is blank");
  if (!word_is(tok[0], len[0], "%%matrixmarket"))
    return MM_ERROR(GS_ERR_PARSE, path, ln,
                    "missing %%%%MatrixMarket banner: the first line begins with '%s'",
                    quote(tok[0], qb, sizeof qb));
  if (nt < 5)
    return MM_ERROR(GS_ERR_PARSE, path, ln,
                    "incomplete banner: expected %%%%MatrixMarket matrix FORMAT FIELD SYMMETRY");
  if (!word_is(tok[1], len[1], "matrix"))
    return MM_ERROR(GS_ERR_PARSE, path, ln, "unknown object '%s' (only 'matrix' is supported)",
                    quote(tok[1], qb, sizeof qb));
  if (word_is(tok[2], len[2], "coordinate"))
    h->format = MM_COORDINATE;
  else if (word_is(tok[2], len[2], "array"))
    h->format = MM_ARRAY;
  else
    return MM_ERROR(GS_ERR_PARSE, path, ln, "unknown format '%s' (expected coordinate or array)",
                    quote(tok[2], qb, sizeof qb));
  int complex = 0, hermitian = 0;
  if (word_is(tok[3], len[3], "real"))
    h->field = MM_REAL;
  else if (word_is(tok[3], len[3], "integer"))
    h->field = MM_INTEGER;
  else if (word_is(tok[3], len[3], "pattern"))
    h->field = MM_PATTERN;
  else if (word_is(tok[3], len[3], "complex"))
    complex = 1;
  else
    return MM_ERROR(GS_ERR_PARSE, path, ln,
                    "unknown field '%s' (expected real, integer, pattern or complex)",
                    quote(tok[3], qb, sizeof qb));
  if (word_is(tok[4], len[4], "general"))
    h->sym = GS_SYM_GENERAL;
  else if (word_is(tok[4], len[4], "symmetric"))
    h->sym = GS_SYM_SYMMETRIC;
  else if (word_is(tok[4], len[4], "skew-symmetric"))
    h->sym = GS_SYM_SKEW;
  else if (word_is(tok[4], len[4], "hermitian"))
    hermitian = 1;
  else
    return MM_ERROR(GS_ERR_PARSE, path, ln,
                    "unknown symmetry '%s' (expected general, symmetric, skew-symmetric or "
                    "hermitian)",
                    quote(tok[4], qb, sizeof qb));
  if (nt > 5)
    return MM_ERROR(GS_ERR_PARSE, path, ln, "unexpected text after the banner: '%s'",
                    quote(tok[5], qb, sizeof qb));
  if (complex)
    return MM_ERROR(GS_ERR_UNSUPPORTED, path, ln, "complex matrices are not supported");
  if (hermitian)
    return MM_ERROR(GS_ERR_UNSUPPORTED, path, ln, "hermitian matrices are not supported");
  if (h->field == MM_PATTERN && h->format == MM_ARRAY)
    return MM_ERROR(GS_ERR_PARSE, path, ln,
                    "the pattern field cannot be used with the array format");
  if (h->field == MM_PATTERN && h->sym == GS_SYM_SKEW)
    return MM_ERROR(GS_ERR_PARSE, path, ln, "a pattern matrix cannot be skew-symmetric");

  /* Comments and blank lines, then the size line. */
  for (;;) {
    GS_CHECK(src_line(s, &b, &e, &ln, &got));
    if (!got) return MM_ERROR(GS_ERR_PARSE, path, 0, "end of file before the size line");
    if (lone_cr(b, e)) return CR_ERROR(path, ln); /* would hide the lines after it */
    const char *p = b;
    while (p < e && is_blank(*p)) ++p;
    if (p < e && *p != '%') break;
  }
  h->size_line = ln;
  const int want = h->format == MM_COORDINATE ? 3 : 2;
  nt = split(b, e, tok, len, 4);
  int64_t v[3] = {0, 0, 0};
  for (int k = 0; k < want && k < nt; ++k)
    if (!size_token(tok[k], len[k], &v[k]))
      return MM_ERROR(GS_ERR_PARSE, path, ln, "bad size line: '%s' is not a non-negative integer",
                      quote(tok[k], qb, sizeof qb));
  if (nt < want)
    return MM_ERROR(GS_ERR_PARSE, path, ln, "bad size line: expected %s",
                    want == 3 ? "ROWS COLS ENTRIES" : "ROWS COLS");
  if (nt > want)
    return MM_ERROR(GS_ERR_PARSE, path, ln, "unexpected text after the size line: '%s'",
                    quote(tok[want], qb, sizeof qb));
  if (v[0] > INT32_MAX)
    return MM_ERROR(GS_ERR_PARSE, path, ln, "%s rows exceed the 32-bit index limit (%d)",
                    quote(tok[0], qb, sizeof qb), INT32_MAX);
  if (v[1] > INT32_MAX)
    return MM_ERROR(GS_ERR_PARSE, path, ln, "%s columns exceed the 32-bit index limit (%d)",
                    quote(tok[1], qb, sizeof qb), INT32_MAX);
  h->m = v[0];
  h->n = v[1];
  if (h->sym != GS_SYM_GENERAL && h->m != h->n)
    return MM_ERROR(GS_ERR_PARSE, path, ln, "a %s matrix must be square, this one is %lld x %lld",
                    gs_symmetry_string(h->sym), (long long)h->m, (long long)h->n);
  if (h->format == MM_COORDINATE)
    h->stored = v[2];
  else if (h->sym == GS_SYM_GENERAL)
    h->stored = h->m * h->n;
  else if (h->sym == GS_SYM_SYMMETRIC)
    h->stored = h->n * (h->n + 1) / 2;
  else
    h->stored = h->n * (h->n - 1) / 2;
  return GS_SUCCESS;
}

/* ---- entries ------------------------------------------------------------------------------ */

/* Makes room for `need` entries in A; the message names the file being read. */
static gs_status_t coo_reserve(gs_coo_t *A, int64_t need, const char *path)
{
  if (need <= A->cap) return GS_SUCCESS;
  if (gs_coo_reserve(A, need) != GS_SUCCESS)
    return MM_ERROR(GS_ERR_HOST_MEMORY, path, 0, "out of host memory for %lld entries",
                    (long long)need);
  return GS_SUCCESS;
}

/* The message for an index token at p that parse_index refused. */
static gs_status_t index_error(const char *path, int64_t line, const char *p, const char *what,
                               int64_t limit, int line_src)
{
  char qb[64];
  if (*p == '\n')
    return gs_mm_error(GS_ERR_PARSE, __FILE__, line_src, path, line, "missing %s index", what);
  if (*p == '-' && is_integer_token(p))
    return gs_mm_error(GS_ERR_PARSE, __FILE__, line_src, path, line,
                       "%s index %s out of range 1..%lld", what, quote(p, qb, sizeof qb),
                       (long long)limit);
  return gs_mm_error(GS_ERR_PARSE, __FILE__, line_src, path, line,
                     "%s index '%s' is not an integer", what, quote(p, qb, sizeof qb));
}

/* The message for a value token at p that parse_value refused or found not finite. */
static gs_status_t value_error(const char *path, int64_t line, const char *p, int line_src)
{
  char qb[64];
  if (*p == '\n') return gs_mm_error(GS_ERR_PARSE, __FILE__, line_src, path, line, "missing value");
  double v;
  if (parse_value(p, &v) && !isfinite(v))
    return gs_mm_error(GS_ERR_PARSE, __FILE__, line_src, path, line, "value '%s' is not finite",
                       quote(p, qb, sizeof qb));
  return gs_mm_error(GS_ERR_PARSE, __FILE__, line_src, path, line, "value '%s' is not a number",
                     quote(p, qb, sizeof qb));
}

/* In an integer file, a value that is a number but not an integer is its own fault. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static gs_status_t integer_check(const char *path, int64_t line, const char *p)
{
  char qb[64];
  double t;
  if (*p == '\n') return GS_SUCCESS;
  if (is_integer_token(p)) { /* doubles hold every integer up to 2^53 = 9007199254740992 */
    const char *d = p + (*p == '+' || *p == '-');
    while (*d == '0') ++d;
    size_t nd = 0;
    while (is_digit(d[nd])) ++nd;
    if (nd > 16 || (nd == 16 && memcmp(d, "9007199254740992", 16) > 0))
      return MM_ERROR(GS_ERR_PARSE, path, line,
                      "integer out of range: '%s' is beyond 2^53 in magnitude (not exact as a "
                      "double)",
                      quote(p, qb, sizeof qb));
    return GS_SUCCESS;
  }
  if (parse_value(p, &t))
    return MM_ERROR(GS_ERR_PARSE, path, line, "value '%s' is not an integer (the field is integer)",
                    quote(p, qb, sizeof qb));
  return GS_SUCCESS;
}

/* Parses one value at p (white space before it skipped by the caller); returns the position
 * after the trailing white space, or NULL with the error raised. */
MM_INLINE const char *entry_value(const char *path, int64_t line, const char *p, int field,
                                  double *v, gs_status_t *st)
{
  if (field == MM_INTEGER && (*st = integer_check(path, line, p)) != GS_SUCCESS) return NULL;
  const char *q = parse_value(p, v);
  if (!q || !isfinite(*v)) {
    *st = value_error(path, line, p, __LINE__);
    return NULL;
  }
  while (is_blank(*q)) ++q;
  return q;
}

/* One stretch of complete lines to parse: the whole of a serial block, or one part of the
 * parallel reader. Parsing may stop early (out of room, an error) and resume from pos. */
typedef struct mm_part {
  const char *pos, *end; /* lines still to parse; end is just past a '\n' */
  int64_t line;          /* number of the line at pos */
  int64_t k;             /* file entries read (a mirrored entry counts once) */
  int64_t nz;            /* COO entries written, indices from the arrays given to parse_entries */
  int64_t limit;         /* entries allowed: the next one is "more entries than declared" */
  /* symmetric and skew files: entries below (0) and above (1) the diagonal, and the first of
   * each: its line and (1-based) indices */
  int64_t tri_n[2], tri_line[2], tri_i[2], tri_j[2];
  /* the parallel reader's bookkeeping */
  const char *b;         /* first line */
  int64_t line0;         /* number of the first line */
  int64_t lines;         /* '\n' in [b, end) */
  int64_t base;          /* where its entries go in the COO */
  gs_status_t st;        /* outcome of its parse */
} mm_part;

/* The fault raised on the line starting at ls (its entry parsed up to somewhere before lim):
 * a line over GS_MM_LINE_MAX is that before anything else, as the serial reader's buffer finds
 * it; a line with a CR inside is named as such. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static gs_status_t line_fault(const char *path, int64_t line, const char *ls, const char *lim,
                              gs_status_t st)
{
  const char *nl = memchr(ls, '\n', (size_t)(lim - ls));
  if (!nl) return st; /* cannot be: parts end in '\n' */
  if ((size_t)(nl - ls) > GS_MM_LINE_MAX) return long_line_error(path, line, ls, __LINE__);
  if (st == GS_ERR_PARSE && lone_cr(ls, nl)) return CR_ERROR(path, line);
  return st;
}

/* Parses entries from pt->pos into row/col/val[pt->nz ...], up to index cap - 1, the stored
 * triangle mirrored when `expand` (else each entry as stored: the CSR build mirrors it).
 * Returns with pt->pos == pt->end when done, with pt->pos < pt->end when the next entry might
 * not fit (the caller makes room and calls again), or the first fault with its message. */
static gs_status_t parse_entries(const char *path, const mm_header *h, mm_part *pt,
                                 gs_idx_t *row, gs_idx_t *col, gs_val_t *val, int64_t cap,
                                 int expand)
{
  const int pattern = h->field == MM_PATTERN;
  const gs_symmetry_t sym = h->sym;
  const uint64_t m = (uint64_t)h->m, n = (uint64_t)h->n;
  const int mirror = expand && sym != GS_SYM_GENERAL;
  const int64_t limit = pt->limit, room = mirror ? 2 : 1;
  int64_t k = pt->k, nz = pt->nz, line = pt->line;
  const char *p = pt->pos, *ls = p;
  const char *const lim = pt->end;
  gs_status_t st = GS_SUCCESS;
  char qb[64];
  while (p < lim) {
    ls = p;
    while (is_blank(*p)) ++p;
    if (*p == '\n') { /* blank line */
      if ((size_t)(p - ls) > GS_MM_LINE_MAX) {
        st = GS_ERR_PARSE; /* line_fault names it */
        break;
      }
      ++p;
      ++line;
      continue;
    }
    if (*p == '%') { /* comment */
      p = (const char *)memchr(p, '\n', (size_t)(lim - p));
      if ((size_t)(p - ls) > GS_MM_LINE_MAX) {
        st = GS_ERR_PARSE;
        break;
      }
      ++p;
      ++line;
      continue;
    }
    if (k == limit) {
      st = MM_ERROR(GS_ERR_PARSE, path, line,
                    "more entries than the %lld declared in the size line", (long long)h->stored);
      break;
    }
    if (nz + room > cap) break; /* p is at the entry: the caller makes room */
    uint64_t i, j;
    double v = 1.0;
    const char *q = parse_index(p, &i);
    if (!q) {
      st = index_error(path, line, p, "row", h->m, __LINE__);
      break;
    }
    if (i - 1 >= m) {
      st = MM_ERROR(GS_ERR_PARSE, path, line, "row index %s out of range 1..%lld",
                    quote(p, qb, sizeof qb), (long long)h->m);
      break;
    }
    p = q;
    while (is_blank(*p)) ++p;
    q = parse_index(p, &j);
    if (!q) {
      st = index_error(path, line, p, "column", h->n, __LINE__);
      break;
    }
    if (j - 1 >= n) {
      st = MM_ERROR(GS_ERR_PARSE, path, line, "column index %s out of range 1..%lld",
                    quote(p, qb, sizeof qb), (long long)h->n);
      break;
    }
    p = q;
    while (is_blank(*p)) ++p;
    if (!pattern) {
      p = entry_value(path, line, p, h->field, &v, &st);
      if (!p) break;
    }
    if (*p != '\n') {
      st = MM_ERROR(GS_ERR_PARSE, path, line, "unexpected text after the entry: '%s'",
                    quote(p, qb, sizeof qb));
      break;
    }
    if ((size_t)(p - ls) > GS_MM_LINE_MAX) { /* blanks or a long number: the serial reader's */
      st = GS_ERR_PARSE;
      break;
    }
    if (sym == GS_SYM_SKEW && i == j && v != 0.0) {
      st = MM_ERROR(GS_ERR_PARSE, path, line,
                    "nonzero diagonal entry (%llu, %llu) in a skew-symmetric matrix",
                    (unsigned long long)i, (unsigned long long)j);
      break;
    }
    ++p;
    row[nz] = (gs_idx_t)(i - 1);
    col[nz] = (gs_idx_t)(j - 1);
    val[nz] = v;
    ++nz;
    if (sym != GS_SYM_GENERAL && i != j) {
      const int up = i < j; /* which triangle: counted for the both-triangles checks */
      if (pt->tri_n[up]++ == 0) {
        pt->tri_line[up] = line;
        pt->tri_i[up] = (int64_t)i;
        pt->tri_j[up] = (int64_t)j;
      }
      if (mirror) {
        row[nz] = (gs_idx_t)(j - 1);
        col[nz] = (gs_idx_t)(i - 1);
        val[nz] = sym == GS_SYM_SKEW ? -v : v;
        ++nz;
      }
    }
    ++line;
    ++k;
  }
  if (st != GS_SUCCESS) st = line_fault(path, line, ls, lim, st);
  pt->pos = p;
  pt->k = k;
  pt->nz = nz;
  pt->line = line;
  return st;
}

/* Adds the triangle counts of part pt, which follows those already in acc, to acc. */
static void tri_add(mm_part *acc, const mm_part *pt)
{
  for (int u = 0; u < 2; ++u) {
    if (acc->tri_n[u] == 0 && pt->tri_n[u] > 0) {
      acc->tri_line[u] = pt->tri_line[u];
      acc->tri_i[u] = pt->tri_i[u];
      acc->tri_j[u] = pt->tri_j[u];
    }
    acc->tri_n[u] += pt->tri_n[u];
  }
}

/* Coordinate entries into A, block by block on this thread (mirrored when `expand`); the
 * triangle counts into *tri. */
static gs_status_t read_coordinate(mm_src *s, const mm_header *h, gs_coo_t *A, mm_part *tri,
                                   int expand)
{
  const char *path = s->path;
  mm_part pt;
  memset(&pt, 0, sizeof pt);
  pt.limit = h->stored;
  pt.nz = A->nnz;
  pt.line = s->line;
  for (;;) {
    if (s->pos == s->lim) {
      int got;
      s->line = pt.line;
      A->nnz = pt.nz;
      GS_CHECK(src_more(s, &got));
      if (!got) break;
    }
    pt.pos = s->buf + s->pos;
    pt.end = s->buf + s->lim;
    for (;;) {
      GS_CHECK(parse_entries(path, h, &pt, A->row, A->col, A->val, A->cap, expand));
      if (pt.pos == pt.end) break;
      A->nnz = pt.nz;
      GS_CHECK(coo_reserve(A, pt.nz + 2, path));
    }
    s->pos = s->lim;
  }
  s->line = pt.line;
  A->nnz = pt.nz;
  if (pt.k < h->stored)
    return MM_ERROR(GS_ERR_PARSE, path, 0, "expected %lld entries, found %lld at end of file",
                    (long long)h->stored, (long long)pt.k);
  tri_add(tri, &pt);
  return GS_SUCCESS;
}

/* A new COO's arrays on huge pages (see gs_advise_huge): they are written once, in full. */
static void coo_advise(gs_coo_t *A)
{
  gs_advise_huge(A->row, (size_t)A->cap * sizeof *A->row);
  gs_advise_huge(A->col, (size_t)A->cap * sizeof *A->col);
  gs_advise_huge(A->val, (size_t)A->cap * sizeof *A->val);
}

/* The entries a read gathered, in file order: one COO (A), or stretches of storage never
 * packed together (seg: the parallel reader's parts in the slots of A, the pipeline's blocks in
 * store[]), which the CSR build takes as they are. Mirrors of a stored triangle are in place
 * when `expanded`, else left to the CSR build. */
typedef struct mm_entries {
  gs_coo_t *A;
  gs_coo_seg_t *seg;
  int nseg;
  void **store;
  int nstore;
  int expanded;
} mm_entries;

/* Out of memory for the reader's own bookkeeping, inside a function with `st` and `cleanup:`. */
#define MM_FAIL_MEM(path)                                                                     \
  do {                                                                                        \
    st = MM_ERROR(GS_ERR_HOST_MEMORY, (path), 0, "out of host memory for the reader");         \
    goto cleanup;                                                                             \
  } while (0)

static void entries_free(mm_entries *E)
{
  gs_coo_destroy(&E->A);
  free(E->seg);
  for (int i = 0; i < E->nstore; ++i) free(E->store[i]);
  free(E->store);
  memset(E, 0, sizeof *E);
}

/* The expanded COO of the stretches seg[0 .. nseg) (nnz entries once mirrored), each mirror
 * right after its entry, into a new *out. */
static gs_status_t entries_expand(const char *path, const mm_header *h, const gs_coo_seg_t *seg,
                                  int nseg, gs_symmetry_t mirror, int64_t nnz, gs_coo_t **out)
{
  gs_coo_t *A = NULL;
  if (gs_coo_create(&A, (gs_idx_t)h->m, (gs_idx_t)h->n, nnz) != GS_SUCCESS)
    return MM_ERROR(GS_ERR_HOST_MEMORY, path, 0, "out of host memory for %lld entries",
                    (long long)nnz);
  A->symmetry = h->sym;
  int64_t w = 0;
  for (int i = 0; i < nseg; ++i)
    for (int64_t k = 0; k < seg[i].n && w < nnz; ++k) {
      const gs_idx_t r = seg[i].row[k], c = seg[i].col[k];
      const gs_val_t v = seg[i].val[k];
      A->row[w] = r;
      A->col[w] = c;
      A->val[w++] = v;
      if (mirror != GS_SYM_GENERAL && r != c && w < nnz) {
        A->row[w] = c;
        A->col[w] = r;
        A->val[w++] = mirror == GS_SYM_SKEW ? -v : v;
      }
    }
  A->nnz = w;
  *out = A;
  return GS_SUCCESS;
}

/* ---- coordinate entries on several threads --------------------------------------------------
 *
 * The entry text is cut at line boundaries into parts (a few per thread, handed out through a
 * shared counter). A first pass counts each part's lines, which gives the number of its first
 * line and a slot in the COO big enough for its entries (a line holds at most one entry, two
 * once mirrored). The second pass parses every part into its slot with the serial parser.
 * Then, in file order, the first part with a fault, or the first part that would take the count
 * of entries past the size line's, is parsed again on the calling thread with the entries still
 * allowed: that raises exactly the serial reader's first error, in this thread's message. The
 * slots are finally packed together (nothing moves when every line holds an unmirrored entry),
 * or, for the CSR build, left where they are. */

typedef struct mm_par {
  const char *path;
  const mm_header *h;
  mm_part *parts;
  int nparts;
  int pass;             /* 0: count lines, 1: parse */
  int mapped;           /* parts before this one lie in a file mapping (dropped once parsed) */
  int expand;           /* mirrors in place (else left to the CSR build) */
  int mult;             /* slots a line may need: 2 when mirrors are in place */
  atomic_int next;      /* next part to take */
  gs_coo_t *A;
} mm_par;

/* '\n' in [b, e). The inner loop is written for the compiler to vectorise (compare, subtract
 * the mask, sum): a 32-bit sum of a block of 255 * 64 bytes cannot overflow. On x86-64 with GCC
 * an AVX2 clone is chosen at load time where the CPU has it (twice the bytes a step). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
__attribute__((target_clones("avx2", "default")))
#endif
static int64_t count_newlines(const char *b, const char *e)
{
  enum { BLOCK = 255 * 64 };
  int64_t c = 0;
  for (; e - b >= BLOCK; b += BLOCK) {
    uint32_t s = 0;
    for (int i = 0; i < BLOCK; ++i) s += b[i] == '\n';
    c += s;
  }
  for (; b < e; ++b) c += *b == '\n';
  return c;
}

static void par_work(void *arg, int t)
{
  (void)t;
  mm_par *P = arg;
  for (;;) {
    int i = atomic_fetch_add(&P->next, 1);
    if (i >= P->nparts) return;
    mm_part *pt = &P->parts[i];
    if (P->pass == 0) {
      pt->lines = count_newlines(pt->b, pt->end);
      continue;
    }
    pt->pos = pt->b;
    pt->line = pt->line0;
    pt->k = 0;
    pt->nz = 0;
    pt->limit = P->h->stored;
    memset(pt->tri_n, 0, sizeof pt->tri_n);
    const int64_t slot = P->mult * pt->lines;
    pt->st = parse_entries(P->path, P->h, pt, P->A->row + pt->base, P->A->col + pt->base,
                           P->A->val + pt->base, slot, P->expand);
    if (pt->st == GS_SUCCESS && pt->pos != pt->end) pt->st = GS_ERR_INTERNAL; /* cannot be */
    /* The text of a parsed part is not needed again (unless to re-raise a fault): out of the
     * resident set with it, so that the peak is not the whole file plus the whole COO. */
    if (i < P->mapped) gs_mm_advise_done(pt->b, (size_t)(pt->end - pt->b));
  }
}

/* Reads the entries [b, e) (complete lines, 8 readable bytes past every position before e;
 * a read-only file mapping when `mapped`), then the tail [tb, te) (a padded copy of the last
 * lines, or empty), starting at line `line`, on nt threads into *E: a packed COO with its
 * mirrors when `expand`, else the parts' slots as they are. */
static gs_status_t read_coordinate_parallel(const char *path, const mm_header *h, const char *b,
                                            const char *e, const char *tb, const char *te,
                                            int mapped, int64_t line, int nt, int expand,
                                            mm_entries *E, mm_part *tri)
{
  gs_status_t st = GS_SUCCESS;
  gs_coo_t *A = NULL;
  mm_par P;
  memset(&P, 0, sizeof P);
  const int mult = expand && h->sym != GS_SYM_GENERAL ? 2 : 1;
  int np = 4 * nt;
  int64_t bytes = e - b;
  if ((int64_t)np > bytes / (int64_t)(gs_mm_part_min ? gs_mm_part_min : 1))
    np = (int)(bytes / (int64_t)(gs_mm_part_min ? gs_mm_part_min : 1));
  if (np < 1) np = 1;
  P.parts = calloc((size_t)np + 1, sizeof *P.parts);
  if (!P.parts) {
    st = MM_ERROR(GS_ERR_HOST_MEMORY, path, 0, "out of host memory for the reader");
    goto cleanup;
  }
  const char *at = b;
  for (int i = 0; i < np; ++i) { /* cut just past the first '\n' at or after the even split */
    const char *cut = i == np - 1 ? e : b + bytes / np * (i + 1);
    if (cut < at) cut = at;
    if (cut < e) {
      const char *nlp = memchr(cut, '\n', (size_t)(e - cut));
      cut = nlp ? nlp + 1 : e;
    }
    P.parts[i].b = at;
    P.parts[i].end = cut;
    at = cut;
  }
  P.mapped = mapped ? np : 0;
  if (te > tb) {
    P.parts[np].b = tb;
    P.parts[np].end = te;
    ++np;
  }
  P.nparts = np;
  P.path = path;
  P.h = h;
  P.expand = expand;
  P.mult = mult;

  /* pass 0: lines per part, hence first line numbers and slots */
  atomic_init(&P.next, 0);
  P.pass = 0;
  gs_parallel(nt < np ? nt : np, par_work, &P);
  int64_t lines = 0;
  for (int i = 0; i < np; ++i) {
    P.parts[i].line0 = line + lines;
    P.parts[i].base = mult * lines;
    lines += P.parts[i].lines;
  }
  int64_t cap = mult * lines;
  GS_TRY(gs_coo_create(&A, (gs_idx_t)h->m, (gs_idx_t)h->n, cap));
  coo_advise(A);
  A->symmetry = h->sym;
  P.A = A;

  /* pass 1: parse */
  atomic_store(&P.next, 0);
  P.pass = 1;
  gs_parallel(nt < np ? nt : np, par_work, &P);

  /* the first fault in file order, as the serial reader meets it */
  int64_t k = 0;
  for (int i = 0; i < np; ++i) {
    mm_part *pt = &P.parts[i];
    if (pt->st == GS_SUCCESS && k + pt->k <= h->stored) {
      k += pt->k;
      continue;
    }
    pt->pos = pt->b;
    pt->line = pt->line0;
    pt->k = 0;
    pt->nz = 0;
    pt->limit = h->stored - k;
    memset(pt->tri_n, 0, sizeof pt->tri_n);
    st = parse_entries(path, h, pt, A->row + pt->base, A->col + pt->base, A->val + pt->base,
                       mult * pt->lines, expand);
    if (st == GS_SUCCESS)
      st = MM_ERROR(GS_ERR_INTERNAL, path, pt->line0,
                    "internal error: a part of the file parsed differently twice");
    goto cleanup;
  }
  if (k < h->stored)
    MM_FAIL(path, 0, "expected %lld entries, found %lld at end of file", (long long)h->stored,
            (long long)k);

  for (int i = 0; i < np; ++i) tri_add(tri, &P.parts[i]);
  if (!expand) { /* the CSR build takes the slots as they are */
    E->seg = malloc((size_t)(np > 0 ? np : 1) * sizeof *E->seg); /* np >= 1: GCC cannot see it */
    if (!E->seg) MM_FAIL_MEM(path);
    for (int i = 0; i < np; ++i) {
      const mm_part *pt = &P.parts[i];
      E->seg[i] = (gs_coo_seg_t){A->row + pt->base, A->col + pt->base, A->val + pt->base, pt->nz};
    }
    E->nseg = np;
    E->A = A;
    A = NULL;
    goto cleanup;
  }
  /* pack the slots */
  int64_t nz = 0;
  for (int i = 0; i < np; ++i) {
    mm_part *pt = &P.parts[i];
    if (pt->base != nz && pt->nz > 0) {
      memmove(A->row + nz, A->row + pt->base, (size_t)pt->nz * sizeof *A->row);
      memmove(A->col + nz, A->col + pt->base, (size_t)pt->nz * sizeof *A->col);
      memmove(A->val + nz, A->val + pt->base, (size_t)pt->nz * sizeof *A->val);
    }
    nz += pt->nz;
  }
  A->nnz = nz;
  E->A = A;
  E->expanded = 1;
  A = NULL;
cleanup:
  free(P.parts);
  gs_coo_destroy(&A);
  return st;
}

/* Array values (column-major; the lower triangle of a symmetric file, without the diagonal for
 * a skew-symmetric one) into A, mirrored. */
static gs_status_t read_array(mm_src *s, const mm_header *h, gs_coo_t *A)
{
  const char *path = s->path;
  const gs_symmetry_t sym = h->sym;
  const int64_t want = h->stored, m = h->m;
  int64_t k = 0, line = s->line;
  int64_t i = sym == GS_SYM_SKEW ? 1 : 0, j = 0; /* position of the next value */
  gs_status_t st = GS_SUCCESS;
  char qb[64];
  const int unbounded = s->fd < 0 && !SRC_GZ(s); /* memory: no buffer bounds its lines */
  for (;;) {
    if (s->pos == s->lim) {
      int got;
      s->line = line;
      GS_CHECK(src_more(s, &got));
      if (!got) break;
    }
    const char *p = s->buf + s->pos;
    const char *const lim = s->buf + s->lim;
    while (p < lim) {
      const char *const ls = p;
      /* a file's lines are bounded by the buffer; memory's are checked here, as the entries' */
      if (unbounded &&
          (size_t)((const char *)memchr(p, '\n', (size_t)(lim - p)) - p) > GS_MM_LINE_MAX)
        return long_line_error(path, line, p, __LINE__);
      while (is_blank(*p)) ++p;
      if (*p == '\n') {
        ++p;
        ++line;
        continue;
      }
      if (*p == '%') {
        p = (const char *)memchr(p, '\n', (size_t)(lim - p)) + 1;
        ++line;
        continue;
      }
      if (k == want)
        return line_fault(path, line, ls, lim,
                          MM_ERROR(GS_ERR_PARSE, path, line,
                                   "more values than the %lld of a %lld x %lld array",
                                   (long long)want, (long long)h->m, (long long)h->n));
      double v;
      p = entry_value(path, line, p, h->field, &v, &st);
      if (!p) return line_fault(path, line, ls, lim, st);
      if (*p != '\n')
        return line_fault(path, line, ls, lim,
                          MM_ERROR(GS_ERR_PARSE, path, line,
                                   "unexpected text after the value: '%s'",
                                   quote(p, qb, sizeof qb)));
      ++p;
      ++line;
      ++k;
      if (A->nnz + 2 > A->cap) GS_CHECK(coo_reserve(A, A->nnz + 2, path));
      A->row[A->nnz] = (gs_idx_t)i;
      A->col[A->nnz] = (gs_idx_t)j;
      A->val[A->nnz++] = v;
      if (sym != GS_SYM_GENERAL && i != j) {
        A->row[A->nnz] = (gs_idx_t)j;
        A->col[A->nnz] = (gs_idx_t)i;
        A->val[A->nnz++] = sym == GS_SYM_SKEW ? -v : v;
      }
      if (++i == m) {
        ++j;
        i = sym == GS_SYM_GENERAL ? 0 : sym == GS_SYM_SYMMETRIC ? j : j + 1;
      }
    }
    s->pos = s->lim;
  }
  s->line = line;
  if (k < want)
    return MM_ERROR(GS_ERR_PARSE, path, 0, "expected %lld values, found %lld at end of file",
                    (long long)want, (long long)k);
  return GS_SUCCESS;
}

/* ---- readers ------------------------------------------------------------------------------ */

/* The last lines of [b, e) that lie within 64 bytes of e: [*tb, e) starts a line, and every
 * position before *tb has 8 readable bytes. */
static const char *tail_start(const char *b, const char *e)
{
  const char *p = e - b > 65 ? e - 65 : b;
  while (p > b && p[-1] != '\n') --p;
  return p;
}

/* Coordinate entries on nt threads from the file behind s (plain, regular) or from its memory
 * (src_open_mem), starting at the line s->pos is at. *done = 0 (and nothing raised) when the
 * file cannot be mapped: the caller reads it serially. */
static gs_status_t read_parallel(mm_src *s, const mm_header *h, int nt, int expand,
                                 mm_entries *E, int *done, mm_part *tri)
{
  gs_status_t st = GS_SUCCESS;
  *done = 0;
  if (s->fd < 0) { /* memory: every line is in buf, zeros after */
    *done = 1;
    return read_coordinate_parallel(s->path, h, s->buf + s->pos, s->buf + s->lim, NULL, NULL, 0,
                                    s->line, nt, expand, E, tri);
  }
  const int64_t off = s->consumed - (int64_t)(s->len - s->pos), size = s->file_bytes;
  char *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, s->fd, 0);
  if (map == MAP_FAILED) return GS_SUCCESS;
  *done = 1;
  char *tail = NULL;
  const char *b = map + off, *e = map + size, *tb = tail_start(b, e);
  const size_t tn = (size_t)(e - tb);
  tail = malloc(tn + 1 + MM_PAD); /* the last lines, padded, a missing last '\n' added */
  if (!tail) {
    st = MM_ERROR(GS_ERR_HOST_MEMORY, s->path, 0, "out of host memory for a read buffer");
    goto cleanup;
  }
  memcpy(tail, tb, tn);
  size_t te = tn;
  if (te > 0 && tail[te - 1] != '\n') tail[te++] = '\n';
  memset(tail + te, 0, MM_PAD);
  st = read_coordinate_parallel(s->path, h, b, tb, tail, tail + te, 1, s->line, nt, expand, E,
                                tri);
cleanup:
  free(tail);
  munmap(map, (size_t)size);
  return st;
}

/* ---- coordinate entries of a stream on several threads ---------------------------------------
 *
 * A gzip file or a pipe cannot be cut into parts up front. For a CSR (the entries as stored,
 * mirrored by the CSR build) the calling thread reads it exactly as the serial reader does (the
 * same src_more calls: the same reads, line bound and faults) while the other threads parse what
 * it has read: each fill of the buffer is one block of complete lines, counted for the number of
 * the next block's first line and queued; instead of moving the unparsed tail down, the reader
 * goes on in another buffer of a small pool. A worker parses a block with the serial parser
 * into storage of its own (one slot a line, cut from chunks of 8-64 MiB on huge pages), left
 * there for the CSR build. Blocks are committed in file order, giving their buffers back. The first
 * block with a fault, or the first that takes the count of entries past the size line's, stops
 * the reading (nothing after it matters) and is parsed again on the calling thread with the
 * entries still allowed, as in the parallel reader; a fault of the reading itself is raised
 * after the blocks read before it, as the serial reader would. Short of buffers the reader
 * parses a queued block itself, and once the file is read it joins the workers. */

typedef struct mm_block {
  char *buf;        /* the buffer holding its text, given back once committed */
  mm_part pt;       /* its lines [pt.b, pt.end), pt.lines from pt.line0; the parse's outcome */
  gs_idx_t *row, *col; /* its entries, as stored (in the pipeline's chunks): pt.lines slots */
  gs_val_t *val;
  int done;         /* parsed */
} mm_block;

typedef struct mm_pipe {
  mm_src *s;
  const mm_header *h;
  pthread_mutex_t mu;
  pthread_cond_t more;  /* a block was queued, the reading ended, or a fault stops all */
  pthread_cond_t freed; /* a block was parsed (its buffer may have come back) */
  mm_block **blk;       /* every block, in file order */
  int nblk, capblk;
  int next;             /* the next block to parse */
  int commit;           /* the blocks before it are committed */
  int64_t k;            /* entries of the committed blocks */
  char **all;           /* every buffer, s's first one included */
  int nall, maxbuf;
  char **pool;          /* the free ones */
  int npool;
  int ended;            /* the reading ended */
  int stop;             /* a block's fault: no block after it matters */
  gs_status_t st;       /* the reading's own fault */
  void **chunk;         /* the blocks' entries, block after block, in chunks of 4-64 MiB */
  int nchunk, capchunk;
  char *free_at;        /* the unused rest of the last chunk */
  size_t free_bytes, chunk_bytes;
} mm_pipe;

/* Storage for `slots` entries of block B (kept when it has some), cut from the pipeline's
 * chunks: large ones on huge pages, as a COO's arrays; 0 when out of memory. */
static int block_store(mm_pipe *P, mm_block *B, int64_t slots)
{
  if (B->row) return 1;
  const size_t idx = ((size_t)slots * sizeof(gs_idx_t) + 7) & ~(size_t)7;
  const size_t need = 2 * idx + (size_t)slots * sizeof(gs_val_t);
  int ok = 1;
  pthread_mutex_lock(&P->mu);
  if (P->free_bytes < need) {
    size_t c = P->chunk_bytes < ((size_t)4 << 20) ? (size_t)4 << 20 : P->chunk_bytes;
    if (c < ((size_t)64 << 20)) c *= 2;
    if (c < need) c = need;
    char *p = NULL;
    if (P->nchunk == P->capchunk) {
      const int n = P->capchunk ? 2 * P->capchunk : 16;
      void **q = realloc(P->chunk, (size_t)n * sizeof *q);
      if (q) {
        P->chunk = q;
        P->capchunk = n;
      }
    }
    if (P->nchunk < P->capchunk) p = malloc(c);
    if (p) {
      gs_advise_huge(p, c);
      P->chunk[P->nchunk++] = p;
      P->free_at = p;
      P->free_bytes = c;
      P->chunk_bytes = c;
    } else {
      ok = 0;
    }
  }
  if (ok) {
    char *p = P->free_at;
    P->free_at += need;
    P->free_bytes -= need;
    B->row = (gs_idx_t *)p;
    B->col = (gs_idx_t *)(p + idx);
    B->val = (gs_val_t *)(p + 2 * idx);
  }
  pthread_mutex_unlock(&P->mu);
  return ok;
}

/* Parses block B from its first line, `limit` entries allowed. */
static gs_status_t block_parse(mm_pipe *P, mm_block *B, int64_t limit)
{
  mm_part *pt = &B->pt;
  const int64_t slots = pt->lines;
  if (!block_store(P, B, slots))
    return MM_ERROR(GS_ERR_HOST_MEMORY, P->s->path, 0, "out of host memory for %lld entries",
                    (long long)slots);
  pt->pos = pt->b;
  pt->line = pt->line0;
  pt->k = 0;
  pt->nz = 0;
  pt->limit = limit;
  memset(pt->tri_n, 0, sizeof pt->tri_n);
  gs_status_t st =
      parse_entries(P->s->path, P->h, pt, B->row, B->col, B->val, slots, 0);
  if (st == GS_SUCCESS && pt->pos != pt->end) st = GS_ERR_INTERNAL; /* cannot be: one a line */
  return st;
}

/* The next block to parse, NULL when none is queued or a fault stops all (mutex held). */
static mm_block *pipe_take(mm_pipe *P)
{
  return P->stop || P->next >= P->nblk ? NULL : P->blk[P->next++];
}

/* Block B is parsed: commits what can be, in order (mutex held). */
static void pipe_done(mm_pipe *P, mm_block *B)
{
  B->done = 1;
  if (B->pt.st != GS_SUCCESS) P->stop = 1;
  while (P->commit < P->nblk && P->blk[P->commit]->done) {
    mm_block *c = P->blk[P->commit];
    if (c->pt.st != GS_SUCCESS || c->pt.k > P->h->stored - P->k) {
      P->stop = 1;
      break;
    }
    P->k += c->pt.k;
    P->pool[P->npool++] = c->buf;
    c->buf = NULL;
    ++P->commit;
  }
  pthread_cond_broadcast(&P->freed);
  if (P->stop) pthread_cond_broadcast(&P->more);
}

/* Parses one block taken from the queue (mutex held, released meanwhile). */
static void pipe_parse_one(mm_pipe *P, mm_block *B)
{
  pthread_mutex_unlock(&P->mu);
  B->pt.st = block_parse(P, B, P->h->stored);
  pthread_mutex_lock(&P->mu);
  pipe_done(P, B);
}

static void pipe_work(mm_pipe *P)
{
  pthread_mutex_lock(&P->mu);
  for (;;) {
    mm_block *B = pipe_take(P);
    if (B) {
      pipe_parse_one(P, B);
    } else if (P->ended || P->stop) {
      break;
    } else {
      pthread_cond_wait(&P->more, &P->mu);
    }
  }
  pthread_mutex_unlock(&P->mu);
}

/* The reading, on the calling thread: blocks out, until the end of the file, a fault of the
 * reading (P->st, its message this thread's) or a block's fault. */
static void pipe_read(mm_pipe *P)
{
  mm_src *s = P->s;
  int owned = 0; /* s->buf holds a queued block's text */
  for (;;) {
    if (s->pos < s->lim) { /* the complete lines of the fill: a block */
      mm_block *B = calloc(1, sizeof *B);
      if (B) {
        B->buf = s->buf;
        B->pt.b = s->buf + s->pos;
        B->pt.end = s->buf + s->lim;
        B->pt.line0 = s->line;
        B->pt.lines = count_newlines(B->pt.b, B->pt.end);
      }
      pthread_mutex_lock(&P->mu);
      if (B && P->nblk == P->capblk) {
        const int c = P->capblk ? 2 * P->capblk : 64;
        mm_block **nb = realloc(P->blk, (size_t)c * sizeof *nb);
        if (nb) {
          P->blk = nb;
          P->capblk = c;
        }
      }
      if (!B || P->nblk == P->capblk) {
        pthread_mutex_unlock(&P->mu);
        free(B);
        P->st = MM_ERROR(GS_ERR_HOST_MEMORY, s->path, 0, "out of host memory for the reader");
        break;
      }
      P->blk[P->nblk++] = B;
      pthread_cond_signal(&P->more);
      pthread_mutex_unlock(&P->mu);
      s->line += B->pt.lines;
      s->pos = s->lim;
      owned = 1;
    }
    /* another buffer for the next fill: a free one, a new one, or parse or wait meanwhile */
    char *nb = NULL;
    pthread_mutex_lock(&P->mu);
    while (!P->stop) {
      if (P->npool > 0) {
        nb = P->pool[--P->npool];
        break;
      }
      if (P->nall < P->maxbuf) {
        nb = malloc(s->cap + MM_PAD);
        if (nb) {
          P->all[P->nall++] = nb;
          break;
        }
        P->maxbuf = P->nall; /* make do with those there are */
        if (P->nall < 2) break;
        continue;
      }
      mm_block *B = pipe_take(P);
      if (B)
        pipe_parse_one(P, B);
      else
        pthread_cond_wait(&P->freed, &P->mu);
    }
    if (!nb || P->stop) {
      if (nb) P->pool[P->npool++] = nb;
      if (!P->stop && !nb)
        P->st = MM_ERROR(GS_ERR_HOST_MEMORY, s->path, 0, "out of host memory for a read buffer");
      pthread_mutex_unlock(&P->mu);
      break;
    }
    pthread_mutex_unlock(&P->mu);
    /* the unparsed tail moves over, as the serial reader moves it down (the same buffer again
     * when its block was committed meanwhile) */
    const size_t rest = s->len - s->pos;
    if (rest > 0) memmove(nb, s->buf + s->pos, rest);
    if (!owned && nb != s->buf) {
      pthread_mutex_lock(&P->mu);
      P->pool[P->npool++] = s->buf;
      pthread_mutex_unlock(&P->mu);
    }
    s->buf = nb;
    s->len = rest;
    s->pos = 0;
    s->lim = 0;
    owned = 0;
    int got;
    gs_status_t st = src_more(s, &got);
    if (st != GS_SUCCESS) {
      P->st = st;
      break;
    }
    if (!got) break;
  }
  pthread_mutex_lock(&P->mu);
  P->ended = 1;
  pthread_cond_broadcast(&P->more);
  pthread_mutex_unlock(&P->mu);
}

static void pipe_run(void *arg, int t)
{
  mm_pipe *P = arg;
  if (t == 0) pipe_read(P);
  pipe_work(P);
}

/* Coordinate entries of the stream s (a gzip file, a pipe) on nt threads into *E, as stored
 * (the CSR build mirrors them), in the blocks' storage as it is. */
static gs_status_t read_pipeline(mm_src *s, const mm_header *h, int nt, mm_entries *E,
                                 mm_part *tri)
{
  gs_status_t st = GS_SUCCESS;
  const char *path = s->path;
  mm_pipe P;
  memset(&P, 0, sizeof P);
  P.s = s;
  P.h = h;
  P.maxbuf = 2 * nt + 2 < 64 ? 2 * nt + 2 : 64;
  P.all = malloc((size_t)P.maxbuf * sizeof *P.all);
  P.pool = malloc((size_t)P.maxbuf * sizeof *P.pool);
  int sync = 0;
  if (!P.all || !P.pool) MM_FAIL_MEM(path);
  P.all[P.nall++] = s->buf;
  if (pthread_mutex_init(&P.mu, NULL) != 0) MM_FAIL_MEM(path);
  if (pthread_cond_init(&P.more, NULL) != 0) {
    pthread_mutex_destroy(&P.mu);
    MM_FAIL_MEM(path);
  }
  if (pthread_cond_init(&P.freed, NULL) != 0) {
    pthread_cond_destroy(&P.more);
    pthread_mutex_destroy(&P.mu);
    MM_FAIL_MEM(path);
  }
  sync = 1;

  gs_parallel(nt, pipe_run, &P);

  /* the first fault in file order, as the serial reader meets it */
  int64_t k = P.k;
  for (int i = P.commit; i < P.nblk; ++i) {
    mm_block *B = P.blk[i];
    if (B->done && B->pt.st == GS_SUCCESS && B->pt.k <= h->stored - k) {
      k += B->pt.k;
      continue;
    }
    if (!B->done) {
      st = MM_ERROR(GS_ERR_INTERNAL, path, B->pt.line0, "internal error: a block left unparsed");
      goto cleanup;
    }
    const gs_status_t first = B->pt.st;
    st = block_parse(&P, B, h->stored - k);
    if (st == GS_SUCCESS && first == GS_ERR_HOST_MEMORY) /* its storage came only now */
      st = MM_ERROR(GS_ERR_HOST_MEMORY, path, 0, "out of host memory for %lld entries",
                    (long long)B->pt.lines);
    else if (st == GS_SUCCESS)
      st = MM_ERROR(GS_ERR_INTERNAL, path, B->pt.line0,
                    "internal error: a part of the file parsed differently twice");
    goto cleanup;
  }
  if (P.st != GS_SUCCESS) { /* its message is still this thread's: no block failed since */
    st = P.st;
    goto cleanup;
  }
  if (k < h->stored)
    MM_FAIL(path, 0, "expected %lld entries, found %lld at end of file", (long long)h->stored,
            (long long)k);

  /* the blocks' storage, as it is, for the CSR build */
  E->seg = malloc(((size_t)P.nblk + 1) * sizeof *E->seg);
  if (!E->seg) MM_FAIL_MEM(path);
  for (int i = 0; i < P.nblk; ++i) {
    const mm_block *B = P.blk[i];
    tri_add(tri, &B->pt);
    E->seg[E->nseg++] = (gs_coo_seg_t){B->row, B->col, B->val, B->pt.nz};
  }
  E->store = P.chunk;
  E->nstore = P.nchunk;
  P.chunk = NULL;
  P.nchunk = 0;
cleanup:
  if (sync) {
    pthread_cond_destroy(&P.freed);
    pthread_cond_destroy(&P.more);
    pthread_mutex_destroy(&P.mu);
  }
  for (int i = 0; i < P.nblk; ++i) free(P.blk[i]);
  free(P.blk);
  for (int i = 0; i < P.nchunk; ++i) free(P.chunk[i]);
  free(P.chunk);
  for (int i = 0; i < P.nall; ++i)
    if (P.all[i] != s->buf) free(P.all[i]);
  free(P.all);
  free(P.pool);
  return st;
}

/* ---- after the entries: the budget, the triangles, summed duplicates ---------------------- */

/* Where a read's bytes come from: a path, or memory named `name`. A fault found once the
 * entries are in (summed duplicates) reads them again to name its line. */
typedef struct mm_origin {
  const char *path, *name;
  const void *data;
  size_t n;
} mm_origin;

static gs_status_t origin_open(mm_src *s, const mm_origin *o)
{
  return o->path ? src_open(s, o->path) : src_open_mem(s, o->name, o->data, o->n);
}

/* Entries the rest of the file can hold at most: a line of at least "1 1 1\n" (pattern
 * "1 1\n", array "1\n") each in the bytes left of a plain file or memory, or in 1032 times a
 * gzip file's size (deflate's largest ratio); -1 when unknown (a pipe). */
static int64_t entries_bound(const mm_src *s, const mm_header *h)
{
  const int64_t min_line = h->format == MM_ARRAY ? 2 : h->field == MM_PATTERN ? 4 : 6;
  int64_t bytes = -1;
  if (s->file_bytes >= 0)
    bytes = s->file_bytes - (s->consumed - (int64_t)(s->len - s->pos));
  else if (s->gz_bytes >= 0)
    bytes = s->gz_bytes > INT64_MAX / 1032 ? INT64_MAX : s->gz_bytes * 1032;
  if (bytes < 0) return -1;
  return bytes / min_line + 1;
}

/* GS_ERR_HOST_MEMORY when `need` bytes more than the process may still take. */
static gs_status_t budget_check(const char *path, const mm_header *h, double need)
{
  const int64_t avail = gs_mm_memory_available();
  if (need <= (double)avail) return GS_SUCCESS;
  char nb[32], ab[32];
  return MM_ERROR(GS_ERR_HOST_MEMORY, path, 0,
                  "declares %lld x %lld with %lld entries: needs %s, more than the %s available",
                  (long long)h->m, (long long)h->n, (long long)h->stored,
                  gs_mm_format_bytes(need, nb, sizeof nb),
                  gs_mm_format_bytes((double)avail, ab, sizeof ab));
}

enum { WANT_COO, WANT_CSR, WANT_VECTOR };

/* Prices the header before anything is allocated: the entries the file can hold (at most the
 * declared ones; mirrored ones twice) as a COO, plus for a CSR its arrays and rows + 1 row
 * pointers and counters (core/coo_csr.c), for a vector its values and marks. *cap: the COO's
 * first capacity (a pipe or a .gz grows it as entries come). */
static gs_status_t mm_budget(const mm_src *s, const mm_header *h, int want, int64_t *cap)
{
  const int64_t bound = entries_bound(s, h), mult = h->sym == GS_SYM_GENERAL ? 1 : 2;
  const int64_t e = bound >= 0 && bound < h->stored ? bound : h->stored;
  const double ent = (double)e * (double)mult, rows = (double)h->m + 1;
  double need = ent * (double)(2 * sizeof(gs_idx_t) + sizeof(gs_val_t));
  if (want == WANT_CSR)
    need += ent * (double)(sizeof(gs_idx_t) + sizeof(gs_val_t)) +
            rows * (double)(sizeof(gs_off_t) + sizeof(int64_t));
  else if (want == WANT_VECTOR)
    need += rows * (double)(sizeof(gs_val_t) + 1);
  GS_CHECK(budget_check(s->path, h, need));
  int64_t c = e;
  if (s->file_bytes < 0 && c > ((int64_t)1 << 24)) c = (int64_t)1 << 24;
  *cap = c * mult;
  return GS_SUCCESS;
}

/* Line of the file's entry number `ordinal` (0-based), read again from the start; 0 when the
 * source cannot be read again (a pipe) or no longer holds it. */
static int64_t entry_line(const mm_origin *o, int64_t ordinal)
{
  mm_src s;
  mm_header h;
  int64_t found = 0;
  if (origin_open(&s, o) == GS_SUCCESS && read_header(&s, &h) == GS_SUCCESS) {
    char *b, *e;
    int64_t ln, k = 0;
    int got;
    while (src_line(&s, &b, &e, &ln, &got) == GS_SUCCESS && got) {
      const char *p = b;
      while (p < e && is_blank(*p)) ++p;
      if (p == e || *p == '%') continue;
      if (k++ == ordinal) {
        found = ln;
        break;
      }
    }
  }
  src_close(&s);
  return found;
}

/* The fault of the entries at (r, c) (0-based) whose sum is not finite: the entry that made it
 * so, found by summing in the COO's order (the file's, each mirror after its entry: the CSR's
 * order of summing), with its line. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static gs_status_t dup_error(const mm_origin *o, int regular, const gs_coo_t *A,
                             gs_symmetry_t sym, int64_t r, int64_t c)
{
  const char *path = o->path ? o->path : o->name;
  double sum = 0.0;
  int seen = 0;
  int64_t k = 0;
  for (; k < A->nnz; ++k)
    if (A->row[k] == r && A->col[k] == c) {
      sum = seen ? sum + A->val[k] : A->val[k];
      seen = 1;
      if (!isfinite(sum)) break;
    }
  if (k == A->nnz)
    return MM_ERROR(GS_ERR_INTERNAL, path, 0, "internal error: no sum at (%lld, %lld) to blame",
                    (long long)r + 1, (long long)c + 1);
  /* the file's entry number of COO entry k, and where that entry (not its mirror) lies */
  int64_t ordinal = k, first = k;
  if (sym != GS_SYM_GENERAL)
    for (int64_t idx = 0, e = 0;; ++e) {
      const int64_t step = A->row[idx] != A->col[idx] ? 2 : 1;
      if (k < idx + step) {
        ordinal = e;
        first = idx;
        break;
      }
      idx += step;
    }
  const int64_t line = regular ? entry_line(o, ordinal) : 0;
  const char *what = isnan(sum) ? "NaN" : sum > 0 ? "+inf" : "-inf";
  if (line > 0)
    return MM_ERROR(GS_ERR_PARSE, path, line,
                    "entry (%d, %d) and the earlier ones at its position sum to %s (duplicates "
                    "are summed: the sum must be finite)",
                    A->row[first] + 1, A->col[first] + 1, what);
  return MM_ERROR(GS_ERR_PARSE, path, 0,
                  "entry %lld, (%d, %d), and the earlier ones at its position sum to %s "
                  "(duplicates are summed: the sum must be finite)",
                  (long long)ordinal + 1, A->row[first] + 1, A->col[first] + 1, what);
}

/* A skew-symmetric file with entries on both sides of the diagonal (each already stands for
 * its negated mirror), or a symmetric one when reading strictly: the first entry on the side
 * met second, and the first on the other. */
static gs_status_t triangles_error(const char *path, const mm_header *h, const mm_part *t)
{
  const int later = t->tri_line[1] > t->tri_line[0], first = !later;
  const char *side[2] = {"below", "above"};
  if (h->sym == GS_SYM_SKEW)
    return MM_ERROR(GS_ERR_PARSE, path, t->tri_line[later],
                    "entry (%lld, %lld) lies %s the diagonal, entry (%lld, %lld) on line %lld "
                    "%s it: a skew-symmetric file stores one triangle (each entry stands for "
                    "itself and its negated mirror)",
                    (long long)t->tri_i[later], (long long)t->tri_j[later], side[later],
                    (long long)t->tri_i[first], (long long)t->tri_j[first],
                    (long long)t->tri_line[first], side[first]);
  return MM_ERROR(GS_ERR_PARSE, path, t->tri_line[later],
                  "entry (%lld, %lld) lies %s the diagonal, entry (%lld, %lld) on line %lld %s "
                  "it: a symmetric file with entries on both sides (%lld below, %lld above) is "
                  "refused by a strict read (each entry is mirrored, so pairs would be summed)",
                  (long long)t->tri_i[later], (long long)t->tri_j[later], side[later],
                  (long long)t->tri_i[first], (long long)t->tri_j[first],
                  (long long)t->tri_line[first], side[first], (long long)t->tri_n[0],
                  (long long)t->tri_n[1]);
}

/* ---- reading ------------------------------------------------------------------------------ */

/* Reads the opened source s (from o) into a COO (WANT_COO), a CSR (WANT_CSR, through the COO)
 * or a vector; what the file held into *info when not NULL. */
static gs_status_t mm_read(mm_src *s, const mm_origin *o, int want, unsigned flags,
                           gs_coo_t **out, gs_csr_t **cout, gs_val_t **xout, gs_idx_t *len,
                           gs_mm_info_t *info)
{
  gs_status_t st = GS_SUCCESS;
  const char *path = s->path;
  mm_header h;
  mm_part tri;
  memset(&tri, 0, sizeof tri);
  mm_entries E;
  memset(&E, 0, sizeof E);
  gs_coo_t *A = NULL, *X = NULL; /* A: E's packed COO; X: the one a fault is found in */
  gs_csr_t *C = NULL;
  gs_val_t *x = NULL;
  unsigned char *seen = NULL;

  GS_TRY(read_header(s, &h));
  if (want == WANT_VECTOR && h.n != 1)
    MM_FAIL(path, h.size_line, "a vector must have one column, this one has %lld",
            (long long)h.n);
  int64_t cap;
  GS_TRY(mm_budget(s, &h, want, &cap));

  /* Several threads for the entries of a large enough plain file (or memory), or, for a CSR,
   * of a stream (a gzip file, a pipe) longer than one buffer. The CSR build mirrors a stored
   * triangle itself: for it the entries are read as stored. */
  const int nt = gs_mm_threads();
  const int expand = !(want == WANT_CSR && h.format == MM_COORDINATE);
  int done = 0;
  if (h.format == MM_COORDINATE && nt > 1 && !SRC_GZ(s) && s->file_bytes >= 0) {
    const int64_t rest = s->file_bytes - (s->consumed - (int64_t)(s->len - s->pos));
    if (rest >= 2 * (int64_t)gs_mm_part_min)
      GS_TRY(read_parallel(s, &h, nt, expand, &E, &done, &tri));
  }
  if (!done && !expand && nt > 1 && !s->eof && (s->fd >= 0 || SRC_GZ(s))) {
    GS_TRY(read_pipeline(s, &h, nt, &E, &tri));
    done = 1;
  }
  if (!done) {
    if (!expand && h.sym != GS_SYM_GENERAL) cap /= 2; /* priced with the mirrors */
    GS_TRY(gs_coo_create(&E.A, (gs_idx_t)h.m, (gs_idx_t)h.n, cap));
    coo_advise(E.A);
    E.A->symmetry = h.sym;
    E.expanded = expand;
    if (h.format == MM_COORDINATE)
      GS_TRY(read_coordinate(s, &h, E.A, &tri, expand));
    else
      GS_TRY(read_array(s, &h, E.A));
  }
  A = E.A; /* the packed COO, but for the CSR build's stretches */
  if (tri.tri_n[0] > 0 && tri.tri_n[1] > 0 &&
      (h.sym == GS_SYM_SKEW || (flags & GS_MM_STRICT) != 0)) {
    st = triangles_error(path, &h, &tri);
    goto cleanup;
  }

  if (want == WANT_VECTOR) { /* allocated only now that the file has proved its length */
    GS_TRY(budget_check(path, &h, ((double)h.m + 1) * (double)(sizeof *x + 1)));
    x = calloc((size_t)(h.m > 0 ? h.m : 1), sizeof *x);
    seen = calloc((size_t)(h.m > 0 ? h.m : 1), 1);
    if (!x || !seen) {
      st = MM_ERROR(GS_ERR_HOST_MEMORY, path, 0, "out of host memory for a vector of %lld",
                    (long long)h.m);
      goto cleanup;
    }
    if (h.format == MM_ARRAY) {
      for (int64_t k = 0; k < A->nnz; ++k) x[A->row[k]] = A->val[k]; /* keeps -0.0 */
    } else { /* duplicates summed; the first of a row assigned, so that -0.0 stays -0.0 */
      for (int64_t k = 0; k < A->nnz; ++k) {
        gs_idx_t r = A->row[k];
        x[r] = seen[r] ? x[r] + A->val[k] : A->val[k];
        seen[r] = 1;
        if (!isfinite(x[r])) {
          st = dup_error(o, s->regular, A, h.sym, r, 0);
          goto cleanup;
        }
      }
    }
    *xout = x;
    *len = (gs_idx_t)h.m;
    x = NULL;
    goto cleanup;
  }
  if (want == WANT_COO && A->cap > A->nnz + A->nnz / 8 + 4096) {
    /* give back what symmetric expansion did not use */
    size_t c = (size_t)(A->nnz > 0 ? A->nnz : 1);
    gs_idx_t *r = realloc(A->row, c * sizeof *r);
    if (r) A->row = r;
    gs_idx_t *cc = realloc(A->col, c * sizeof *cc);
    if (cc) A->col = cc;
    gs_val_t *v = realloc(A->val, c * sizeof *v);
    if (v) A->val = v;
    A->cap = (int64_t)c; /* every array holds at least c, shrunk or not */
  }
  if (want == WANT_CSR) { /* the row pointers only now that the entries are in */
    gs_coo_seg_t one;
    const gs_coo_seg_t *seg = E.seg;
    int nseg = E.nseg;
    if (!seg) {
      one = (gs_coo_seg_t){A->row, A->col, A->val, A->nnz};
      seg = &one;
      nseg = 1;
    }
    const gs_symmetry_t mirror = E.expanded ? GS_SYM_GENERAL : h.sym;
    int64_t nnz = 0; /* of the expanded COO */
    for (int i = 0; i < nseg; ++i) nnz += seg[i].n;
    if (mirror != GS_SYM_GENERAL) nnz += tri.tri_n[0] + tri.tri_n[1];
    GS_TRY(budget_check(path, &h,
                        (double)nnz * (double)(sizeof(gs_idx_t) + sizeof(gs_val_t)) +
                            ((double)h.m + 1) * (double)(sizeof(gs_off_t) + sizeof(int64_t))));
    int64_t bad[2];
    GS_TRY(gs_coo_segs_to_csr(&C, (gs_idx_t)h.m, (gs_idx_t)h.n, seg, nseg, mirror, h.sym, nt,
                              bad));
    if (bad[0] >= 0) { /* named in the expanded COO, in file order */
      gs_csr_destroy(&C);
      GS_TRY(entries_expand(path, &h, seg, nseg, mirror, nnz, &X));
      st = dup_error(o, s->regular, X, h.sym, bad[0], bad[1]);
      goto cleanup;
    }
    *cout = C;
    C = NULL;
  } else {
    *out = E.A;
    E.A = NULL;
  }
  if (info) {
    memset(info, 0, sizeof *info);
    info->array = h.format == MM_ARRAY;
    info->field = h.field == MM_INTEGER   ? GS_MM_FIELD_INTEGER
                  : h.field == MM_PATTERN ? GS_MM_FIELD_PATTERN
                                          : GS_MM_FIELD_REAL;
    info->symmetry = h.sym;
    info->rows = h.m;
    info->cols = h.n;
    info->stored = h.stored;
    info->lower = tri.tri_n[0];
    info->upper = tri.tri_n[1];
  }
cleanup:
  entries_free(&E);
  gs_coo_destroy(&X);
  gs_csr_destroy(&C);
  free(x);
  free(seen);
  return st;
}

/* Opens the origin and reads it. */
static gs_status_t read_any(const mm_origin *o, int want, unsigned flags, gs_coo_t **out,
                            gs_csr_t **cout, gs_val_t **xout, gs_idx_t *len, gs_mm_info_t *info)
{
  gs_status_t st = GS_SUCCESS;
  mm_src s;
  memset(&s, 0, sizeof s);
  s.fd = -1;
  GS_TRY(origin_open(&s, o));
  GS_TRY(mm_read(&s, o, want, flags, out, cout, xout, len, info));
cleanup:
  src_close(&s);
  return st;
}

#define FILE_ORIGIN(p) {(p), NULL, NULL, 0}
#define MEM_ORIGIN(nm, d, n) {NULL, (nm), (d), (n)}

gs_status_t gs_mm_read_coo(const char *path, gs_coo_t **out)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_coo: out is NULL");
  *out = NULL;
  if (!path) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_coo: path is NULL");
  const mm_origin o = FILE_ORIGIN(path);
  return read_any(&o, WANT_COO, 0, out, NULL, NULL, NULL, NULL);
}

gs_status_t gs_mm_read_csr_ex(const char *path, unsigned flags, gs_csr_t **out,
                              gs_mm_info_t *info)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_csr_ex: out is NULL");
  *out = NULL;
  if (!path) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_csr_ex: path is NULL");
  if (flags & ~GS_MM_STRICT)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_csr_ex: unknown flags 0x%x",
                    flags & ~GS_MM_STRICT);
  const mm_origin o = FILE_ORIGIN(path);
  return read_any(&o, WANT_CSR, flags, NULL, out, NULL, NULL, info);
}

gs_status_t gs_mm_read_csr(const char *path, gs_csr_t **out)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_csr: out is NULL");
  *out = NULL;
  if (!path) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_csr: path is NULL");
  return gs_mm_read_csr_ex(path, 0, out, NULL);
}

gs_status_t gs_mm_read_vector(const char *path, gs_val_t **out, gs_idx_t *len)
{
  if (!out || !len) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_vector: out or len is NULL");
  *out = NULL;
  *len = 0;
  if (!path) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_vector: path is NULL");
  const mm_origin o = FILE_ORIGIN(path);
  return read_any(&o, WANT_VECTOR, 0, NULL, NULL, out, len, NULL);
}

gs_status_t gs_mm_read_coo_mem(const char *name, const void *data, size_t len, gs_coo_t **out)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_coo_mem: out is NULL");
  *out = NULL;
  if (!name || (!data && len > 0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_coo_mem: name or data is NULL");
  const mm_origin o = MEM_ORIGIN(name, data, len);
  return read_any(&o, WANT_COO, 0, out, NULL, NULL, NULL, NULL);
}

gs_status_t gs_mm_read_csr_mem_ex(const char *name, const void *data, size_t len, unsigned flags,
                                  gs_csr_t **out, gs_mm_info_t *info)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_csr_mem: out is NULL");
  *out = NULL;
  if (!name || (!data && len > 0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_csr_mem: name or data is NULL");
  if (flags & ~GS_MM_STRICT)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_csr_mem: unknown flags 0x%x",
                    flags & ~GS_MM_STRICT);
  const mm_origin o = MEM_ORIGIN(name, data, len);
  return read_any(&o, WANT_CSR, flags, NULL, out, NULL, NULL, info);
}

gs_status_t gs_mm_read_csr_mem(const char *name, const void *data, size_t len, gs_csr_t **out)
{
  return gs_mm_read_csr_mem_ex(name, data, len, 0, out, NULL);
}

gs_status_t gs_mm_read_vector_mem(const char *name, const void *data, size_t len,
                                  gs_val_t **out, gs_idx_t *n)
{
  if (!out || !n) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_vector_mem: out or n is NULL");
  *out = NULL;
  *n = 0;
  if (!name || (!data && len > 0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_mm_read_vector_mem: name or data is NULL");
  const mm_origin o = MEM_ORIGIN(name, data, len);
  return read_any(&o, WANT_VECTOR, 0, NULL, NULL, out, n, NULL);
}
