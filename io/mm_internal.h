/* io/mm_internal.h: internals of the Matrix Market reader, exposed for its tests. */
#ifndef GS_IO_MM_INTERNAL_H
#define GS_IO_MM_INTERNAL_H

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

#ifdef __cplusplus
}
#endif
#endif
