/* gpusolve/timer.h: the wall clock the library and its tools time themselves with. */
#ifndef GPUSOLVE_TIMER_H
#define GPUSOLVE_TIMER_H

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

/**
 * Seconds on a monotonic clock (CLOCK_MONOTONIC): unaffected by changes of the system time, with
 * an arbitrary origin, so only differences of two readings mean anything. Thread-safe.
 */
double gs_wall_seconds(void);

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
