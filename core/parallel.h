/* core/parallel.h: the one place the library starts host threads (core/parallel.c). Internal
 * tier; the thread count is gs_mm_threads() (gpusolve/io.h). */
#ifndef GS_CORE_PARALLEL_H
#define GS_CORE_PARALLEL_H

#include "gpusolve/io.h" /* gs_mm_threads: how many */

#ifdef __cplusplus
extern "C" {
#endif

/** Runs fn(arg, t) for t = 0 .. nt-1, t = 0 on the calling thread, the others on new threads,
 *  and returns when all are done. Where a thread cannot be started, its t runs on the calling
 *  thread afterwards, so that the work is done all the same (never fails). */
void gs_parallel(int nt, void (*fn)(void *arg, int t), void *arg);

/** When nonzero, gs_parallel runs the nt shares one after the other on the calling thread: the
 *  same shares, no threads (the fuzzer sets it, to run faster). */
extern int gs_parallel_inline;

#ifdef __cplusplus
}
#endif
#endif
