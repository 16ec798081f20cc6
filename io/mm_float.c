/* io/mm_float.c: decimal floating-point parsing for the Matrix Market reader, bit for bit strtod().
 *
 * Numbers of up to 19 significant digits are converted by Clinger's exact fast path or by the
 * Eisel-Lemire algorithm (D. Lemire, "Number Parsing at a Gigabyte per Second", Software:
 * Practice and Experience 51(8), 2021), which give the correctly rounded double; anything else
 * goes to strtod(), so the result is bit for bit strtod()'s in every case. The table of powers of
 * five is generated (io/mm_float_table.inc, by scripts/gen_mm_float_table.py). */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/mm_internal.h"

/* 128-bit powers of five, 5^-342 .. 5^308: static const uint64_t mm_pow5[651 * 2]. */
#include "io/mm_float_table.inc"

static const double mm_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                    1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* floor(q * log2(10)) + 63 for |q| < 400 (as in the Eisel-Lemire paper), with a floor
 * division that does not rely on right shifts of negative numbers. */
static inline int64_t pow2_of_pow10(int64_t q)
{
  int64_t v = 217706 * q; /* (152170 + 65536) * q */
  int64_t f = v >= 0 ? v / 65536 : -((-v + 65535) / 65536);
  return f + 63;
}

/* w * 10^q correctly rounded (w != 0, at most 19 digits, so w is exact). Returns 0 where it
 * cannot decide cheaply (out of range, subnormal, overflow, an ambiguous product): the caller
 * then uses strtod(). */
static inline int eisel_lemire(uint64_t w, int64_t q, double *out)
{
#if defined(__SIZEOF_INT128__)
  __extension__ typedef unsigned __int128 u128;
  if (q < -342 || q > 308) return 0;
  int lz = __builtin_clzll(w);
  w <<= lz;
  const uint64_t *t = &mm_pow5[2 * (q + 342)];
  u128 p1 = (u128)w * t[0];
  uint64_t hi = (uint64_t)(p1 >> 64), lo = (uint64_t)p1;
  if ((hi & 0x1FF) == 0x1FF) { /* the 55 leading bits may not be settled: refine */
    u128 p2 = (u128)w * t[1];
    uint64_t mid = (uint64_t)(p2 >> 64), low = (uint64_t)p2;
    uint64_t nlo = lo + mid;
    if (nlo < lo) ++hi;
    lo = nlo;
    /* The 192-bit product is short of the exact one by less than w in its lowest word: only
     * when adding w there could carry all the way into the 55 bits is the answer open (the
     * paper's prudent exit; Mushtak and Lemire later proved it never happens). */
    if (lo == UINT64_MAX && (hi & 0x1FF) == 0x1FF && low + w < low) return 0;
  }
  int upper = (int)(hi >> 63);
  int shift = upper + 9;
  uint64_t mant = hi >> shift;
  int64_t e2 = pow2_of_pow10(q) + upper - lz + 1023;
  if (e2 <= 0) return 0; /* subnormal or zero */
  /* Exactly half-way between two doubles: round to even (only possible for small |q|). */
  if (lo <= 1 && q >= -4 && q <= 23 && (mant & 3) == 1 && (mant << shift) == hi) mant &= ~1ull;
  mant += mant & 1;
  mant >>= 1;
  if (mant >= (2ull << 52)) {
    mant = 1ull << 52;
    ++e2;
  }
  mant &= ~(1ull << 52);
  if (e2 >= 0x7FF) return 0; /* overflow */
  uint64_t bits = mant | ((uint64_t)e2 << 52);
  memcpy(out, &bits, sizeof bits);
  return 1;
#else
  (void)w;
  (void)q;
  (void)out;
  return 0;
#endif
}

static const uint64_t mm_pow10u[9] = {1u,      10u,      100u,      1000u,     10000u,
                                      100000u, 1000000u, 10000000u, 100000000u};

/* Appends the digits at *pp to w (w*10^k + digits, wrapping past 19 digits: callers count them);
 * returns how many there were. */
static inline int64_t take_digits(const char **pp, uint64_t *w)
{
  const char *p = *pp;
  uint64_t x = *w;
  for (;;) {
    uint64_t v = load8(p);
    int n = digits8(v);
    if (n == 0) break;
    x = x * mm_pow10u[n] + value8(v, n);
    p += n;
    if (n < 8) break;
  }
  int64_t k = p - *pp;
  *pp = p;
  *w = x;
  return k;
}

/* The fast path: a plain decimal number ([+-]digits[.digits][(e|E)[+-]digits]) of at most 19
 * significant digits. Returns its end, or NULL when strtod() must decide. */
const char *gs_mm_fast_double(const char *p, double *out)
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
    d = e10 < 0 ? d / mm_pow10[-e10] : d * mm_pow10[e10];
  } else if (!eisel_lemire(w, e10, &d)) {
    return NULL;
  }
  *out = neg ? -d : d;
  return p;
}

const char *gs_mm_parse_double(const char *s, double *out)
{
  double v = 0.0;
  if (!s || is_blank(*s) || *s == '\n') {
    if (out) *out = 0.0;
    return s;
  }
  /* The fast path reads 8 bytes at a time: run it on a padded copy of a short token. */
  char tmp[96];
  size_t n = 0;
  while (n < 64 && s[n] != '\0' && !is_end(s[n])) {
    tmp[n] = s[n];
    ++n;
  }
  const char *e = NULL;
  if (n < 64) {
    memset(tmp + n, 0, sizeof tmp - n);
    const char *te = gs_mm_fast_double(tmp, &v);
    if (te && (is_end(*te) || *te == '\0')) e = s + (te - tmp);
  }
  if (!e) {
    char *end;
    v = strtod(s, &end);
    e = end;
  }
  if (out) *out = v;
  return e;
}
