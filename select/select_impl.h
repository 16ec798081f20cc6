/* select/select_impl.h: the internals of the "auto" selection (select/auto.c, select/rule.c), for
 * the library, the solvers and the host test suites (not installed): the cache of measured
 * times, and the pure host arithmetic of the decisions. Everything here runs without a GPU: the
 * GPU's name is a field of the key, so a test can ask for "another GPU". */
#ifndef GS_SPMV_AUTO_CACHE_H
#define GS_SPMV_AUTO_CACHE_H
#include <stdint.h>
#include "gpusolve/select.h"
#include "gpusolve/spmv.h"
#ifdef __cplusplus
extern "C" {
#endif

/* ---- the cache ------------------------------------------------------------------------------
 * One file per (matrix, GPU, package version, option string) holds the times of every format
 * measured on it, op N and op T, by whichever command measured them (spmv, select, solve):
 * a later run of any of them reuses what is known and measures only the rest. */

/** What a cached time depends on besides the format and the op. */
typedef struct gs_select_key {
  uint64_t matrix_hash; /* gs_select_matrix_hash: sizes, pattern and values */
  char gpu[256];        /* gs_context_device_name */
  char options[512];    /* the backend option string ("" for none) */
} gs_select_key_t;

/** The cache folder: $XDG_CACHE_HOME/gpusolve when XDG_CACHE_HOME is set to an absolute path,
 *  else $HOME/.cache/gpusolve. GS_ERR_INVALID_ARG when neither is set or buf is too small. */
gs_status_t gs_select_cache_dir(char *buf, size_t len);
/** 64-bit hash of A's sizes, row pointers, columns and values (select/hash.h). */
uint64_t gs_select_matrix_hash(const gs_csr_t *A);
struct gs_dcsr;
/** The same hash from the matrix's shared device CSR, on the GPU: *out equals
 *  gs_select_matrix_hash of the host CSR it was uploaded from. */
gs_status_t gs_select_matrix_hash_dev(gs_context_t *ctx, const struct gs_dcsr *D, uint64_t *out);
/** Fills in, for each of sel->times[0..sel->ntimes) still GS_SELECT_DEFERRED, what the key's
 *  file knows of that format (its status, prepare and op N time; its op T time too, which must
 *  be known when need_t). Returns how many it filled; sel->cache_file names the file when it
 *  was read. 0 for no file or a file of another key (a plain miss); a file that does not parse
 *  appends "ignoring the corrupt selection cache file ..." to sel->warning. */
int gs_select_cache_load(const char *dir, const gs_select_key_t *key, int need_t,
                         gs_selection_t *sel);
/** Merges the measured entries of sel->times (status GS_SUCCESS or a prepare's error; not the
 *  deferred or skipped ones) into the key's file, keeping the formats it knew that sel did not
 *  measure, creating `dir` as needed, through a temporary file renamed into place. Failures
 *  append to sel->warning only. */
void gs_select_cache_store(const char *dir, const gs_select_key_t *key, gs_selection_t *sel);

/* ---- the measured stage's arithmetic -------------------------------------------------------- */

/** A lower bound of the bytes one op N product of backend `name` moves on a matrix of features
 *  f (its stored entries at the fewest bytes its layout can give them, x read once, y written
 *  once): with the best bandwidth measured so far, the fastest the format could run. 0 for a
 *  backend the model does not know (never skipped for its speed). */
double gs_select_bytes_bound(const char *name, const gs_select_features_t *f);
/** Whether a candidate of predicted prepare prep_est, at best t_bound seconds a product, could
 *  beat the incumbent's cost over `products` products (its measuring included). */
int gs_select_worth_measuring(double prep_est, double t_bound, double products,
                              double incumbent_cost);

/** The next candidate to measure among n: pred[k] is its predicted cost (prepare plus products
 *  at its byte bound), eligible[k] whether it is still to be measured. The least prediction
 *  wins, but predictions within GS_SELECT_PRED_TIE of the least count as equal and the earliest
 *  in pool order (the rule's candidates first) is taken among them: byte bounds a few percent
 *  apart cannot rank kernels, the rule can. -1 when none is eligible. */
int gs_select_next_candidate(const double *pred, const int *eligible, int n);
#define GS_SELECT_PRED_TIE 0.05

/* ---- the staged selection of a solve -------------------------------------------------------- */

/** The products a solve has left at iteration `it` of residual norm r, from its rate over the
 *  recent window since iteration it_prev (norm r_prev): log(r_prev / r) / (it - it_prev)
 *  extrapolated to tol, capped at maxit; the cap alone when the norm has not decreased over
 *  the window, 0 at or below tol or with no window (it <= it_prev). Times products a step. */
double gs_select_remaining_products(long it_prev, double r_prev, long it, double r, double tol,
                                    long maxit, double products_per_iteration);
/** The predicted prepare seconds of a backend with `flags` (GS_SPMV_FLAG_*) on a matrix of nnz
 *  entries: a fixed cost and a cost per entry by kind (light, built on the GPU, built on the GPU
 *  with a host stage, built on the host), the cost per entry replaced by learned_per_nnz when
 *  it is > 0 (seconds an entry this machine measured for the format, gs_select_model_load). */
double gs_select_prepare_estimate(unsigned flags, double nnz, double learned_per_nnz);
/** The formats that need no layout of their own (GS_SPMV_FLAG_LIGHT), appended to list in the
 *  order of their whole-solve record (cusparse-csr first), skipping those already there or
 *  without A^T x when need_t. */
gs_status_t gs_select_light(const char *options, int need_t, gs_select_rule_t *list);

/* ---- the prepare model, refreshed from measured builds ---------------------------------------
 * One file in the cache folder, prepare.model, keyed by the GPU and the package version: per
 * format, the largest prepare seconds an entry measured on matrices of GS_SELECT_MODEL_MIN_NNZ
 * entries or more (small ones are dominated by fixed costs). */
#define GS_SELECT_MODEL_MIN_NNZ 1e6
/** The learned seconds an entry of backend `name` (0 when none), from dir's model for gpu. */
double gs_select_model_load(const char *dir, const char *gpu, const char *name);
/** Records a measured prepare (seconds) of `name` on nnz entries; failures are silent (the
 *  model is a hint). Keeps the larger of the old and the new rate, unless the old one is more
 *  than 4x the new one (a build that became faster: the new one replaces it). */
void gs_select_model_store(const char *dir, const char *gpu, const char *name, double prepare_s,
                           double nnz);

/** The spent-time trigger: whether to build and time a candidate of predicted prepare prep_est
 *  now, with spent_s seconds spent so far (the staged start and the products run) and tried_s
 *  seconds already spent trying others: when the time spent reaches what the tries would then
 *  have cost, and the forecast of `remaining` products at t_cur, against the candidate's bound
 *  t_bound, could still pay the prepare back (near convergence it cannot: the trying stops). */
int gs_select_should_try(double spent_s, double tried_s, double prep_est, double remaining,
                         double t_cur, double t_bound);
/** Which deferred candidate a solve's revision tries now, in the measured stage's order
 *  (gs_select_next_candidate over pred[k] = prepare plus the products left at its byte bound,
 *  so that the most promising goes first and a slower one whose bound cannot beat it is never
 *  built): the most promising waits for the spent-time trigger of gs_select_should_try (-1:
 *  not yet); one that could not pay its prepare back over what is left gives way to the next.
 *  eligible[k]: deferred (not measured, not skipped); prep[k], bound[k]: its predicted prepare
 *  and byte-bound time. -1 when none is to be tried now. */
int gs_select_staged_pick(int n, const int *eligible, const double *prep, const double *bound,
                          double spent_s, double tried_s, double remaining, double t_cur);
/** The staged "auto" selection's revision, called by a solver at a host check with the stream
 *  idle, the iterations done, the products run so far and its forecast of the products left
 *  (gs_select_remaining_products): may prepare and time one candidate of the pool (the spent-time
 *  trigger of gs_select_should_try), and switches S to it (gs_spmv_take_backend) when
 *  gs_select_worth_switching says so. *switched = 1 when S changed backend. A product that is
 *  not a staged "auto" one is left alone (GS_SUCCESS). A failure to prepare or time a candidate
 *  is recorded in the selection and is not an error of the solve. */
gs_status_t gs_spmv_auto_revise(gs_spmv_t *S, long iterations, double products_done,
                                double remaining_products, int *switched);
/** Whether to switch to a candidate of known times (prepare_s: 0 when it is prepared already)
 *  from one taking t_cur: it must save more than its prepare over the remaining products, and
 *  be at least GS_SELECT_SWITCH_MARGIN faster (timing noise). */
int gs_select_worth_switching(double prepare_s, double t_new, double t_cur, double remaining);
#define GS_SELECT_SWITCH_MARGIN 0.03
/** The staged selection's estimates: the features pass on the GPU from the shared CSR (one
 *  kernel over the entries, a fixed cost for its launch and read-back), and, when the cache is
 *  used, the key's hash on the GPU (a pass over the CSR's 12 bytes an entry, its launches and
 *  read-back). */
#define GS_SELECT_FEATURE_DEV_S 0.2e-3
#define GS_SELECT_FEATURE_DEV_S_PER_NNZ 0.08e-9
#define GS_SELECT_HASH_DEV_S 0.1e-3
#define GS_SELECT_HASH_DEV_S_PER_NNZ 0.01e-9
/** The staged start on a cache hit: the known light format of least prepare plus this many
 *  products (or the expected products, when fewer) runs first. A repeated solve of a matrix
 *  whose earlier revisions found a faster format starts on it instead of finding it again. */
#define GS_SELECT_START_PRODUCTS 100.0
/** A candidate is skipped for its bytes when they take longer than the running format's time at
 *  this much more than the best bandwidth of the known times (measured or cached): the byte
 *  model bounds the layout's traffic, not the kernel's efficiency, and a compressed layout's
 *  kernel can reach a higher fraction of the peak. */
#define GS_SELECT_BW_SLACK 1.3
/** The confident start of a solve: a format built on the GPU whose modelled bytes are at most
 *  this share of the light start's, on a matrix of at least GS_SELECT_CONFIDENT_NNZ entries, is
 *  prepared at the start instead of reached after the light format's timing and the tries
 *  (gs_select_confident_start). 0.35 is below what the byte model gives any layout of 4 bytes
 *  an entry or more against CSR's 12 (at least 0.41 for bccoo's float values), so only a value
 *  table of repeating values passes: the 27-point Laplacian's bccoo 0.20, the 5-point one's
 *  0.33. */
#define GS_SELECT_CONFIDENT_BYTES 0.35
/** ... on matrices of at least this many entries, where a build of a few tenths of a
 *  millisecond to a millisecond is a few products (2^22). */
#define GS_SELECT_CONFIDENT_NNZ 4194304.0

/** The pool's index of the confident start (GS_SELECT_CONFIDENT_BYTES), -1 for none: among the
 *  formats of `pool` built on the GPU (GS_SPMV_FLAG_DEVICE_BUILD, not light), the one of fewest
 *  modelled bytes (gs_select_bytes_bound), when those are at most GS_SELECT_CONFIDENT_BYTES of
 *  light format `light`'s and f has at least GS_SELECT_CONFIDENT_NNZ entries. */
int gs_select_confident_start(const gs_select_features_t *f, const gs_select_rule_t *pool,
                              const char *light);

/** Products of the measuring itself: warm-up and timed runs of one candidate's op. */
#define GS_SELECT_MEASURE_PRODUCTS 12.0
/** Extra warm-up products before the first timing of a selection (the GPU's clock ramp), op N
 *  only: op T is timed right after it, on a GPU already busy. */
#define GS_SELECT_FIRST_WARMUP 20
/** A candidate's op is timed over its runs, or half as many once they took this long: the
 *  median of 5 products of 0.3 ms and more is as steady as of 10, at half the cost. */
#define GS_SELECT_MEASURE_MIN_S 1.5e-3
/** The measured stage stops preparing new candidates once its measuring (their prepares and
 *  timed products) has cost this share of the incumbent's expected products. 0.35: on `spmv`'s
 *  100 products of lap27_100, bccoo (2.9x cusparse-csr, 1.4 ms of build) must fit. */
#define GS_SELECT_MEASURE_SHARE 0.35

#ifdef __cplusplus
}
#endif
#endif
