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

/* floor(q * log2(10)) + 63 for |q| < 400 (as in the Eisel-Lemire paper), with a floor
 * division that does not rely on right shifts of negative numbers. */
static inline int64_t pow2_of_pow10(int64_t q)
{
  int64_t v = 217706 * q; /* (152170 + 65536) * q */
  int64_t f = v >= 0 ? v / 65536 : -((-v + 65535) / 65536);
  return f + 63;
}

/* The slow half of the fast path (declared in io/mm_internal.h): Eisel-Lemire. */
int gs_mm_eisel_lemire(uint64_t w, int64_t q, double *out)
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

const char *gs_mm_fast_double(const char *p, double *out) { return mm_fast_double(p, out); }

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
