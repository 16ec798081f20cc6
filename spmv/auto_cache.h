/* spmv/auto_cache.h: the selection cache of the "auto" format (spmv/auto.c), for the library and
 * the host test suites (not installed). Everything here runs without a GPU: the GPU's name is a
 * field of the key, so a test can ask for "another GPU". */
#ifndef GS_SPMV_AUTO_CACHE_H
#define GS_SPMV_AUTO_CACHE_H

#include <stdint.h>

#include "gpusolve/select.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a cached answer depends on besides the package version and the candidate list. */
typedef struct gs_select_key {
  uint64_t matrix_hash; /* gs_select_matrix_hash: sizes, pattern and values */
  char gpu[256];        /* gs_context_device_name */
  char options[512];    /* the backend option string ("" for none) */
  int need_transpose;
} gs_select_key_t;

/** 64-bit hash of A's sizes, row pointers, columns and values. */
uint64_t gs_select_matrix_hash(const gs_csr_t *A);

/** Looks the key and the rule's candidate list up in `dir`. 1 on a hit: sel->times[0..n) and
 *  sel->ntimes hold the cached times (cost_s not yet computed) and sel->cache_file the file.
 *  0 on a miss: no file, a file of another key (a plain miss), or a file that does not parse,
 *  which appends "ignoring the corrupt selection cache file ..." to sel->warning. */
int gs_select_cache_load(const char *dir, const gs_select_key_t *key,
                         const gs_select_rule_t *rule, gs_selection_t *sel);

/** Writes sel->times (sel->ntimes must equal rule->n) under the key, creating `dir` as needed,
 *  through a temporary file renamed into place. Failures append to sel->warning only. */
void gs_select_cache_store(const char *dir, const gs_select_key_t *key,
                           const gs_select_rule_t *rule, gs_selection_t *sel);

#ifdef __cplusplus
}
#endif
#endif
