/* gpusolve/timer.h: the wall clock the library and its tools time themselves with. */
#ifndef GPUSOLVE_TIMER_H
#define GPUSOLVE_TIMER_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Seconds on a monotonic clock (CLOCK_MONOTONIC): unaffected by changes of the system time, with
 * an arbitrary origin, so only differences of two readings mean anything. Thread-safe.
 */
double gs_wall_seconds(void);

#ifdef __cplusplus
}
#endif
#endif
