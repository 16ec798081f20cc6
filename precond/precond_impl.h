/* precond/precond_impl.h: the preconditioner vtable, for backend authors (not installed).
 *
 * Adding a preconditioner: write precond/NAME.c (and NAME_kernels.cu if it has kernels) with
 * one `const gs_precond_ops_t gs_precond_NAME_ops`, and list it in precond/precond.c's table.
 * Only precond/precond.c calls through the table, after validating, so slots may assume:
 *   - setup: ctx and A non-NULL, A square (n >= 0). All device memory is allocated here, through
 *            gs_dmalloc. Faults of the matrix (zero diagonal, zero pivot) are GS_ERR_INVALID_ARG
 *            with the row, 1-based, in the message.
 *   - apply: d_r, d_z of length n > 0, possibly the same vector; asynchronous on ctx->stream,
 *            never allocates, never synchronizes.
 *   - destroy: accepts NULL.
 *   - setup_cfg (version 3, replaces setup when set): the same, with the options resolved from
 *            the table `options` (gs_precond_create_opts); re-setup for new values of A is
 *            destroy + setup_cfg with the same cfg (gs_precond_setup).
 *   - smooth (optional): x <- x + sweeps of the preconditioner's smoother on A x = b, from x = 0
 *            when x_nonzero is 0 (x is then write-only); asynchronous, never allocates.
 *   - caps (optional): the instance's GS_PRECOND_FLAG_* (what this setup can do: a multilevel
 *            hierarchy is capturable only when every level's product is); NULL: `flags`.
 *   - info (optional): the hierarchy and the setup phases for gs_precond_info.
 * Slots are only appended after version 1. Version 2 added `flags`, version 3 the options
 * table, setup_cfg, smooth, caps and info. */
#ifndef GS_PRECOND_IMPL_H
#define GS_PRECOND_IMPL_H

#include "core/context_impl.h"
#include "gpusolve/precond.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_PRECOND_OPS_VERSION 3

/* gs_precond_ops_t.flags */
enum {
  GS_PRECOND_FLAG_SYMMETRIC = 1u << 0, /* M^T = M, so M^-T r = M^-1 r: the preconditioner serves
                                         methods that apply M^-T (BiCG) */
  GS_PRECOND_FLAG_CAPTURABLE = 1u << 1 /* apply may be captured into a CUDA Graph: it never
                                          allocates, synchronizes or reads back */
};

/* ---- preconditioner-owned options (as the SpMV backends' spmv/options.h) ----------------------
 * A preconditioner declares its options in a table; precond.c parses "key=value,..." (keys plain
 * or qualified by the preconditioner's name: "amg.theta=0.08"), checks each value against the
 * table and hands setup_cfg the resolved values in table order. */
#define GS_PRECOND_MAX_OPTIONS 24
#define GS_PRECOND_OPT_LEN 32
#define GS_PRECOND_PATH_LEN 1024 /* a GS_PCOPT_PATH value, its terminating NUL included */

typedef enum gs_precond_optkind {
  GS_PCOPT_REAL = 0,   /* a finite value in [min, max] */
  GS_PCOPT_INT = 1,    /* an integer in [min, max] */
  GS_PCOPT_CHOICE = 2, /* one of the '|'-separated words of `choices` (v = its index; the
                          default is word number def) */
  GS_PCOPT_FORMAT = 3, /* an SpMV format name of the registry, or "auto" (s = the name; the
                          default is `choices`) */
  GS_PCOPT_PATH = 4    /* a file name (no ','; at most GS_PRECOND_PATH_LEN - 1 bytes), in
                          cfg.path: one such option a table; default "" (none) */
} gs_precond_optkind_t;

typedef struct gs_precond_option {
  const char *key; /* NULL ends the table */
  const char *help;
  gs_precond_optkind_t kind;
  double def, min, max;
  const char *choices;
} gs_precond_option_t;

typedef struct gs_precond_cfg {
  double v[GS_PRECOND_MAX_OPTIONS];
  char s[GS_PRECOND_MAX_OPTIONS][GS_PRECOND_OPT_LEN]; /* GS_PCOPT_FORMAT and GS_PCOPT_CHOICE
                                                         values as words */
  const char *options; /* the string they came from (borrowed for the setup call only) */
  char path[GS_PRECOND_PATH_LEN]; /* the table's GS_PCOPT_PATH value ("" when not given) */
  /* near-null-space vectors given through gs_precond_set_near_null_space (amg): n x nns_k,
     column-major, leading dimension n, checked when given; borrowed for the setup call only
     (nns_k = 0: none) */
  int nns_k;
  const double *nns;
} gs_precond_cfg_t;

typedef struct gs_precond_ops {
  int version;
  const char *name;    /* registry and CLI key */
  const char *summary; /* one line for `gpusolve solve --help` */
  gs_status_t (*setup)(gs_context_t *ctx, gs_matrix_t *A, void **data);
  gs_status_t (*apply)(gs_context_t *ctx, void *data, const double *d_r, double *d_z);
  size_t (*device_bytes)(const void *data);
  void (*destroy)(void *data);
  /* ---- version 2 ---- */
  unsigned flags; /* GS_PRECOND_FLAG_* */
  /* ---- version 3 ---- */
  const gs_precond_option_t *options;
  gs_status_t (*setup_cfg)(gs_context_t *ctx, gs_matrix_t *A, const gs_precond_cfg_t *cfg,
                           void **data);
  gs_status_t (*smooth)(gs_context_t *ctx, void *data, const double *d_b, double *d_x,
                        int x_nonzero, int sweeps);
  unsigned (*caps)(const void *data);
  void (*info)(const void *data, gs_precond_info_t *out);
} gs_precond_ops_t;

extern const gs_precond_ops_t gs_precond_jacobi_ops;
extern const gs_precond_ops_t gs_precond_ilu0_ops;
extern const gs_precond_ops_t gs_precond_ic0_ops;
extern const gs_precond_ops_t gs_precond_amg_ops;

/** Jacobi's kernel (precond/jacobi_kernels.cu): z = dinv .* r, asynchronous on stream. */
gs_status_t gs_jacobi_apply_kernel(cudaStream_t stream, gs_idx_t n, const double *d_dinv,
                                   const double *d_r, double *d_z);

/** Jacobi's inverse diagonal on the device (n doubles, owned by M) when M is a Jacobi
 *  preconditioner, else NULL: the persistent solver kernels fold z = D^-1 r into their updates. */
const double *gs_precond_jacobi_dinv(const gs_precond_t *M);
/** The same from Jacobi's own data (precond/jacobi.c). */
const double *gs_jacobi_dinv(const void *data);

#ifdef __cplusplus
}
#endif
#endif
