/* gpusolve/select.h: automatic SpMV format selection (the "auto" format): a rule stage that maps
 * a matrix's features to a short ranked list of candidate backends (Sedaghati et al., PPAA 2015,
 * re-derived for our backends: select/rule.c holds the table), then a measured stage that
 * prepares each candidate, times a few products and keeps the one that minimises
 *   prepare + expected_products * t_spmv,
 * remembered in a small cache ($XDG_CACHE_HOME/gpusolve/, else ~/.cache/gpusolve/). */
#ifndef GPUSOLVE_SELECT_H
#define GPUSOLVE_SELECT_H

#include "gpusolve/context.h"
#include "gpusolve/matrix.h"
#include "gpusolve/spmv.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

/** Most candidates the rule keeps, and the room for one backend name. */
#define GS_SELECT_MAX 32
#define GS_SELECT_NAME 32
/** Distinct values are counted up to this many; more reads as GS_SELECT_DISTINCT_CAP + 1. */
#define GS_SELECT_DISTINCT_CAP 65536

/** The feature vector of the rule (one O(nnz) pass over the CSR besides gs_csr_features). */
typedef struct gs_select_features {
  gs_idx_t rows, cols;
  gs_off_t nnz;
  double pct_nnz;            /* 100 * nnz / (rows * cols): the paper's %nnz */
  double row_mean, row_std;  /* mu and sigma of the row lengths */
  gs_off_t row_max;
  gs_idx_t diagonals;        /* occupied diagonals */
  double ell_fill;           /* rows * row_max / nnz: ELL's stored slots per nonzero */
  double dia_fill;           /* rows * diagonals / nnz: DIA's */
  double sell_fill;          /* slots of SELL-32 (rows padded to their slice's longest) / nnz */
  /* the slot counts each builder's guard compares with max_fill * nnz, computed with the same
   * expressions (so that the rule excludes exactly what prepare would refuse) */
  double ell_slots, dia_slots, sell_slots, sell_total;
  gs_off_t distinct_values;  /* up to GS_SELECT_DISTINCT_CAP, then CAP + 1 */
  int symmetric;             /* numerically symmetric (gs_features_t) */
} gs_select_features_t;

/** Computes the features of A. */
gs_status_t gs_select_features(const gs_csr_t *A, gs_select_features_t *f);
/** The same, taking gs_csr_features(A) from `known` when not NULL (no second pass for them). */
gs_status_t gs_select_features_with(const gs_csr_t *A, const gs_features_t *known,
                                    gs_select_features_t *f);

/** The rule stage's answer: candidates best first, all registered in this build, none that
 *  would refuse the matrix (fill over its max_fill, 64-bit offsets, no transpose when needed). */
typedef struct gs_select_rule {
  int n;
  char names[GS_SELECT_MAX][GS_SELECT_NAME];
  const char *row;     /* the table row that fired (a static string) */
  char excluded[512];  /* what the filters removed and why ("dia: fill 5.2 > 3"), or "" */
} gs_select_rule_t;

/** Runs the rule table on f. `options` is the backend option string gs_spmv_create takes (its
 *  max_fill values decide the fill exclusions); need_transpose drops backends without A^T x.
 *  Needs no GPU. GS_ERR_INVALID_ARG for NULL arguments or a bad option string. */
gs_status_t gs_select_rule(const gs_select_features_t *f, const char *options, int need_transpose,
                           gs_select_rule_t *out);

/** The rule's thresholds, k = 0, 1, ... until it returns 0 (for docs and `select --rule -v`). */
int gs_select_threshold(int k, const char **name, double *value, const char **help);

/** Status of a candidate the staged selection has not measured (yet): see gs_select_opts_t. */
#define GS_SELECT_DEFERRED ((gs_status_t)1)

/** One candidate of the measured stage. */
typedef struct gs_select_time {
  char name[GS_SELECT_NAME];
  gs_status_t status;  /* GS_SUCCESS when measured; the prepare's error otherwise;
                          GS_SELECT_DEFERRED when a staged selection has not measured it */
  double prepare_s;    /* gs_spmv_create_timed: layout build + upload (the shared device CSR
                          excluded, see gs_selection_t.shared_csr_s) */
  double spmv_s;       /* median of the timed products, op N */
  double spmv_t_s;     /* the same for op T, when the caller runs A^T x products (0 otherwise) */
  double cost_s;       /* prepare_s + expected_products * spmv_s + expected_products_t *
                          spmv_t_s (INFINITY when not measured) */
  double bound_s;      /* a skipped candidate's byte-model bound of one product (op N): what it
                          could at best reach, which with its predicted prepare could not beat
                          the incumbent; 0 otherwise */
} gs_select_time_t;
/** Status of a candidate the measured stage did not prepare because its predicted prepare plus
 *  the products at its byte-model bound could not beat the best measured so far. */
#define GS_SELECT_SKIPPED ((gs_status_t)2)

/** Where the measured stage's times came from. */
typedef enum gs_select_cache_state {
  GS_SELECT_CACHE_OFF = 0,  /* not used (no_cache, or the rule alone) */
  GS_SELECT_CACHE_MISS = 1, /* measured now (and stored when the cache could be written) */
  GS_SELECT_CACHE_HIT = 2   /* the times of an earlier run of the same matrix on this GPU */
} gs_select_cache_state_t;

/** The record of one selection: what the rule said, what was measured, what was chosen. */
typedef struct gs_selection {
  gs_select_features_t features;
  gs_select_rule_t rule;           /* the rule's answer */
  gs_select_rule_t pool;           /* the candidates measured or tried (gs_select_pool); times
                                      and chosen index it */
  double expected_products;        /* op N products the choice was made for */
  double expected_products_t;      /* op T products besides */
  int measured;                   /* the measured stage ran (or came from the cache) */
  gs_select_cache_state_t cache;
  char cache_file[1024];          /* the cache file read or written, or "" */
  double shared_csr_s;            /* the upload of the matrix's shared device CSR, done once
                                     before the candidates were timed when one of them reads it
                                     (GS_SPMV_FLAG_SHARED_CSR) and charged to none of them: the
                                     CSR backends share it; 0 when none reads it or it was there */
  int ntimes;                     /* = pool.n */
  gs_select_time_t times[GS_SELECT_MAX];
  int chosen;                     /* index into pool.names (and times) */
  char chosen_name[GS_SELECT_NAME];
  double seconds;                 /* wall time of the whole selection, chosen prepare included */
  double features_s;              /* of which the features pass and the rule (host, O(nnz)) */
  double measuring_s;             /* of which the candidates' prepares and timed products */
  char warning[1024];             /* non-fatal trouble (corrupt cache file, unwritable cache
                                     folder), "" when none: the library never prints */
  /* ---- the staged selection of a solve (gs_select_opts_t.staged) ---- */
  int staged;                     /* 1: chosen at creation without measuring the formats that
                                     need a layout of their own; revised during the solve */
  char first_name[GS_SELECT_NAME];/* the backend the solve started with */
  int tried;                      /* candidates prepared and timed during the solve */
  int switches;                   /* times the product changed backend during the solve */
  long switch_iteration;          /* iterations done at the last switch (0: none) */
  double remaining_products;      /* the solver's estimate of the products left, at the last
                                     revision (<= 0: never revised) */
  double progress_s;              /* wall time the revisions took (preparing, timing) */
} gs_selection_t;

/** How gs_spmv_create_auto selects; start from gs_select_opts_default(). */
typedef struct gs_select_opts {
  double expected_products; /* op N products the caller will run (a solve: maxit * products
                               per iteration); > 0, default 1000 */
  double expected_products_t; /* op T products the caller will run besides (default 0; > 0
                               times op T too and needs a transpose) */
  int rule_only;            /* 1: take the rule's first candidate, measure nothing */
  int use_cache;            /* 1 (default): read and write the cache */
  const char *cache_dir;    /* NULL: gs_select_cache_dir() */
  int need_transpose;       /* 1: only backends with A^T x */
  int warmup, runs;         /* products per candidate and op: untimed (default 2; 20 more
                               before the first candidate's op N), timed (default 10; half as
                               many once they took 1.5 ms) */
  int staged;               /* 0 (default): measure every candidate now for expected_products.
                               1 (a solve, where the number of products is not known before
                               the first iterations): prepare only the rule's best candidate
                               that needs no layout of its own (one reading the matrix's
                               shared device CSR: no build), defer the others and let the
                               solver revise the choice at its checks from its estimate of
                               the products left (gs_spmv_auto_revise): a candidate is
                               prepared and timed only when its predicted prepare time is a
                               small share of the remaining SpMV time, and taken when it is
                               faster. Known cached times are used without measuring. */
} gs_select_opts_t;

void gs_select_opts_default(gs_select_opts_t *o);

/**
 * Prepares the "auto" format: selects a backend for A as `o` says (NULL: defaults) and returns
 * that backend's prepared product: gs_spmv_name(*S) is the chosen backend and every apply is
 * its apply, bit for bit. gs_spmv_selection(*S) tells what was chosen and why.
 * gs_spmv_create(S, ctx, A, "auto", options) is this call with the defaults. `options` go to
 * every candidate. Errors: those of gs_spmv_create, or the last candidate's when all fail.
 */
gs_status_t gs_spmv_create_auto(gs_spmv_t **S, gs_context_t *ctx, gs_matrix_t *A,
                                const char *options, const gs_select_opts_t *o);

/** The selection record of a product made by "auto" (owned by S), NULL for any other. */
const gs_selection_t *gs_spmv_selection(const gs_spmv_t *S);

/** Index of the candidate of least cost_s = prepare_s + expected_n * spmv_s + expected_t *
 *  spmv_t_s among those with status GS_SUCCESS (cost_s is filled in for every entry); a tie goes
 *  to the earlier (better-ranked) one. -1 when none succeeded. Pure host code. */
int gs_select_decide(gs_select_time_t *t, int n, double expected_n, double expected_t);
/** The candidate pool of the measured stage and of a solve: the formats that need no layout of
 *  their own (GS_SPMV_FLAG_LIGHT) first, then the rule's candidates in its order, then every
 *  format that builds its layout on the GPU (GS_SPMV_FLAG_DEVICE_BUILD), least byte-model
 *  bound first; none that would refuse the matrix (the rule's filters). pool->row is the rule's
 *  row. No cap: a candidate's prepare is predicted and skipped when it cannot pay. */
gs_status_t gs_select_pool(const gs_select_features_t *f, const char *options, int need_transpose,
                           const gs_select_rule_t *rule, gs_select_rule_t *pool);

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
