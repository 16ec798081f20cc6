/* spmv/options.h: the backend option tables and resolved values (pure C: the host layout
 * builders take them too). Not installed. */
#ifndef GS_SPMV_OPTIONS_H
#define GS_SPMV_OPTIONS_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- backend-owned options ------------------------------------------------------------------
 * A backend declares its options in a table (key, help, default, range, kind). spmv.c parses the
 * user's option string ("max_fill=4,hyb.k=27", gs_spmv_create), validates every value against the
 * table and hands prepare and host_apply the resolved values, in table order, in a gs_spmv_cfg_t.
 * A new format adds its options here, in its own file: no public struct and no line of spmv.c
 * changes. An unqualified key ("max_fill") goes to every backend that declares it. */
#define GS_SPMV_MAX_OPTIONS 8

typedef enum gs_spmv_optkind {
  GS_OPTK_REAL = 0, /* any finite value in [min, max] */
  GS_OPTK_INT = 1,  /* an integer in [min, max] */
  GS_OPTK_POW2 = 2  /* 0 (automatic) or a power of two in [1, max] */
} gs_spmv_optkind_t;

typedef struct gs_spmv_option {
  const char *key;  /* NULL ends the table */
  const char *help; /* one line for `gpusolve spmv --list --verbose` */
  gs_spmv_optkind_t kind;
  double def, min, max;
} gs_spmv_option_t;

/** Resolved option values of one prepared backend, indexed like its option table, and the
 *  generic options every backend receives (zero: the defaults). */
typedef struct gs_spmv_cfg {
  double v[GS_SPMV_MAX_OPTIONS];
  int precision; /* gs_precision_t: "precision=mixed" reaches only backends flagged
                    GS_SPMV_FLAG_MIXED, "precision=float" only those flagged
                    GS_SPMV_FLAG_FLOAT (spmv.c refuses it for the others) */
  int build;     /* GS_SPMV_BUILD_DEVICE (default): the layout is built on the GPU from the
                    matrix's shared device CSR where the backend can; GS_SPMV_BUILD_HOST: the
                    host builder (the reference the conformance suite compares against) */
} gs_spmv_cfg_t;

#define GS_SPMV_BUILD_DEVICE 0
#define GS_SPMV_BUILD_HOST 1
/** Whether cfg asks for the host builder ("build=host"). */
static inline int gs_cfg_host_build(const gs_spmv_cfg_t *cfg) { return cfg->build == GS_SPMV_BUILD_HOST; }

/** Whether cfg's precision stores float values (mixed and float: the values rounded once at
 *  prepare, the same layout; float also takes float vectors). 0 is GS_PRECISION_DOUBLE. */
static inline int gs_cfg_float_values(const gs_spmv_cfg_t *cfg) { return cfg->precision != 0; }

/** The generic option keys spmv.c resolves itself (no backend may declare them). */
#define GS_SPMV_PRECISION_KEY "precision"
#define GS_SPMV_BUILD_KEY "build"

/** The padding guard every padded format declares in the same words (ell, dia, cusparse-sell). */
#define GS_SPMV_OPTION_MAX_FILL                                                                 \
  {"max_fill", "refuse the matrix when stored slots exceed max_fill * nnz", GS_OPTK_REAL, 3.0,   \
   1.0, 1e9}
#define GS_SPMV_OPTION_END {NULL, NULL, GS_OPTK_REAL, 0, 0, 0}

#ifdef __cplusplus
}
#endif
#endif
