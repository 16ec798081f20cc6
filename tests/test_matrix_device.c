/* tests/test_matrix_device.c: matrices made from device arrays (gs_matrix_create_device) and
 * contexts on the caller's stream (gs_context_create_on_stream), on the GPU (exit 77 without
 * one; the host-side refusals are tests/test_matrix_device_host.c):
 *  - the same matrix from host and from device arrays (32- and 64-bit row pointers, copied and
 *    borrowed, with and without the wide-offset hook): the same host copy and features
 *    (downloaded on first use), every backend's product bit for bit equal where the backend
 *    says it is deterministic (within the rounding bound otherwise), and CG with the same
 *    iteration count and x bit for bit;
 *  - ownership: a copy holds (m+1) 4 + nnz 12 bytes of its own and ignores later changes of
 *    the caller's arrays; a borrowed matrix holds none and frees none;
 *  - bad arrays refused with the message naming the first fault (row pointers before entries),
 *    host memory and an array shorter than its sizes refused, nothing leaked, the context
 *    still usable after;
 *  - a context on a user stream: the matrix's checks, a csr-vector and a cuSPARSE product and
 *    the caller's copies ordered on that stream behind a host-gated callback with no
 *    synchronization; a solve equal to one on an own-stream context; the stream alive after
 *    the context; a stream being captured refused. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/testhooks.h"
#include "spmv/spmv_impl.h"
#include "tests/testutil.h"

/* ---- device copies of a host CSR, as a caller would hold them ------------------------------ */

typedef struct dev_csr {
  void *rp; /* int32_t or int64_t offsets */
  int bits;
  gs_idx_t *col;
  gs_val_t *val;
  gs_context_t *counted; /* allocated with gs_dmalloc on it, or NULL: plain cudaMalloc */
} dev_csr_t;

static void *dev_alloc(gs_context_t *counted, size_t bytes)
{
  void *p = NULL;
  if (!bytes) bytes = 8;
  if (counted) {
    CU_ASSERT_FATAL(gs_dmalloc(counted, &p, bytes, "test array") == GS_SUCCESS);
  } else {
    CU_ASSERT_FATAL(cudaMalloc(&p, bytes) == cudaSuccess);
  }
  return p;
}

static void dev_release(gs_context_t *counted, void *p)
{
  if (counted)
    gs_dfree(counted, p);
  else
    cudaFree(p);
}

/* H's arrays on the device, row pointers of `bits` bits (values as given: the tests below break
 * them on purpose). */
static void dev_upload_raw(gs_idx_t m, gs_off_t nnz, const int64_t *rp, const gs_idx_t *col,
                           const gs_val_t *val, int bits, gs_context_t *counted, dev_csr_t *D)
{
  const size_t rows1 = (size_t)m + 1;
  D->bits = bits;
  D->counted = counted;
  D->rp = dev_alloc(counted, rows1 * (size_t)(bits / 8));
  D->col = dev_alloc(counted, (size_t)nnz * sizeof *col);
  D->val = dev_alloc(counted, (size_t)nnz * sizeof *val);
  if (bits == 32) {
    int32_t *t = malloc(rows1 * sizeof *t);
    CU_ASSERT_FATAL(t != NULL);
    for (size_t i = 0; i < rows1; ++i) t[i] = (int32_t)rp[i];
    CU_ASSERT_FATAL(cudaMemcpy(D->rp, t, rows1 * sizeof *t, cudaMemcpyHostToDevice) ==
                    cudaSuccess);
    free(t);
  } else {
    CU_ASSERT_FATAL(cudaMemcpy(D->rp, rp, rows1 * sizeof *rp, cudaMemcpyHostToDevice) ==
                    cudaSuccess);
  }
  if (nnz) {
    CU_ASSERT_FATAL(cudaMemcpy(D->col, col, (size_t)nnz * sizeof *col, cudaMemcpyHostToDevice) ==
                    cudaSuccess);
    CU_ASSERT_FATAL(cudaMemcpy(D->val, val, (size_t)nnz * sizeof *val, cudaMemcpyHostToDevice) ==
                    cudaSuccess);
  }
  /* a pageable cudaMemcpy may return before its DMA lands, on the legacy stream, which the
     library's non-blocking streams do not wait for */
  CU_ASSERT_FATAL(cudaDeviceSynchronize() == cudaSuccess);
}

static void dev_upload(const gs_csr_t *H, int bits, gs_context_t *counted, dev_csr_t *D)
{
  dev_upload_raw(H->m, H->nnz, H->row_ptr, H->col, H->val, bits, counted, D);
}

static void dev_free(dev_csr_t *D)
{
  dev_release(D->counted, D->rp);
  dev_release(D->counted, D->col);
  dev_release(D->counted, D->val);
  memset(D, 0, sizeof *D);
}

static gs_status_t create_from(gs_matrix_t **A, gs_context_t *ctx, const gs_csr_t *H,
                               const dev_csr_t *D, unsigned flags)
{
  return gs_matrix_create_device(A, ctx, H->m, H->n, H->nnz, D->rp, D->bits, D->col, D->val,
                                 flags);
}

static double *random_vector(uint64_t *rng, size_t n)
{
  double *v = malloc((n ? n : 1) * sizeof *v);
  CU_ASSERT_FATAL(v != NULL);
  for (size_t i = 0; i < n; ++i) v[i] = 2.0 * gs_test_uniform(rng) - 1.0;
  return v;
}

/* y = op(S) x on the device, back on the host. */
static gs_status_t product(gs_spmv_t *S, gs_context_t *ctx, gs_op_t op, const double *x,
                           size_t nx, double *y, size_t ny)
{
  double *d_x = NULL, *d_y = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, (nx ? nx : 1) * 8, "x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_y, (ny ? ny : 1) * 8, "y") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, x, nx * 8) == GS_SUCCESS);
  gs_status_t st = gs_spmv_apply(S, op, 1.0, d_x, 0.0, d_y);
  if (st == GS_SUCCESS) st = gs_copy_to_host(ctx, y, d_y, ny * 8);
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  return st;
}

/* ---- the same matrix from host and from device arrays -------------------------------------- */

/* Every backend on Ah (made from H on the host) and Ad (from device arrays): the same status,
 * and the same products. */
static void compare_backends(gs_context_t *ctx, gs_matrix_t *Ah, gs_matrix_t *Ad,
                             const gs_csr_t *H, uint64_t *rng, const char *label)
{
  double *xn = random_vector(rng, (size_t)H->n), *xt = random_vector(rng, (size_t)H->m);
  double *yh = malloc(((size_t)H->m + H->n + 1) * 8), *yd = malloc(((size_t)H->m + H->n + 1) * 8);
  CU_ASSERT_FATAL(yh && yd);
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    const char *name = gs_spmv_backend_name(b);
    gs_spmv_t *Sh = NULL, *Sd = NULL;
    const gs_status_t sth = gs_spmv_create(&Sh, ctx, Ah, name, NULL);
    const gs_status_t std = gs_spmv_create(&Sd, ctx, Ad, name, NULL);
    if (sth != std) {
      fprintf(stderr, "%s: %s: host-made %s, device-made %s (%s)\n", label, name,
              gs_status_string(sth), gs_status_string(std), gs_last_error());
      CU_FAIL("prepare status differs");
    }
    if (sth == GS_SUCCESS && std == GS_SUCCESS) {
      for (int o = 0; o < 2; ++o) {
        const gs_op_t op = o ? GS_OP_T : GS_OP_N;
        if (!gs_spmv_supports(Sh, op)) continue;
        CU_ASSERT_EQUAL_FATAL(gs_spmv_supports(Sd, op), 1);
        const double *x = o ? xt : xn;
        const size_t nx = o ? (size_t)H->m : (size_t)H->n, ny = o ? (size_t)H->n : (size_t)H->m;
        CU_ASSERT_EQUAL_FATAL(product(Sh, ctx, op, x, nx, yh, ny), GS_SUCCESS);
        CU_ASSERT_EQUAL_FATAL(product(Sd, ctx, op, x, nx, yd, ny), GS_SUCCESS);
        const unsigned det = o ? GS_SPMV_CAP_DETERMINISTIC_T : GS_SPMV_CAP_DETERMINISTIC;
        if ((gs_spmv_caps(Sh) & det) && (gs_spmv_caps(Sd) & det)) {
          if (memcmp(yh, yd, ny * 8) != 0) {
            fprintf(stderr, "%s: %s op %c: products differ\n", label, name, o ? 'T' : 'N');
            CU_FAIL("deterministic products differ");
          }
        } else {
          CU_ASSERT(gs_test_spmv_ok(H, op, 1.0, x, 0.0, NULL, yd, "%s: %s", label, name));
        }
      }
    }
    gs_spmv_destroy(&Sh);
    gs_spmv_destroy(&Sd);
  }
  free(xn);
  free(xt);
  free(yh);
  free(yd);
}

static void same_host_copy(gs_matrix_t *Ah, gs_matrix_t *Ad, const gs_csr_t *H)
{
  const gs_csr_t *G = gs_matrix_host(Ad); /* downloaded now (or by a backend before) */
  CU_ASSERT_PTR_NOT_NULL_FATAL(G);
  CU_ASSERT(G->m == H->m && G->n == H->n && G->nnz == H->nnz);
  CU_ASSERT(memcmp(G->row_ptr, H->row_ptr, ((size_t)H->m + 1) * sizeof *H->row_ptr) == 0);
  CU_ASSERT(memcmp(G->col, H->col, (size_t)H->nnz * sizeof *H->col) == 0);
  CU_ASSERT(memcmp(G->val, H->val, (size_t)H->nnz * sizeof *H->val) == 0);
  const gs_features_t *fh = gs_matrix_features(Ah), *fd = gs_matrix_features(Ad);
  CU_ASSERT(fd->rows == fh->rows && fd->cols == fh->cols && fd->nnz == fh->nnz);
  CU_ASSERT(fd->row_max == fh->row_max && fd->row_min == fh->row_min);
  CU_ASSERT(fd->empty_rows == fh->empty_rows && fd->diagonals == fh->diagonals);
  CU_ASSERT(fd->row_mean == fh->row_mean && fd->row_std == fh->row_std);
  CU_ASSERT(fd->numerically_symmetric == fh->numerically_symmetric);
  CU_ASSERT(fd->diagonal_positive == fh->diagonal_positive);
}

static void test_same_matrix(void)
{
  uint64_t rng = gs_test_seed();
  gs_context_t *ctx = NULL;
  CU_ASSERT_FATAL(gs_context_create(&ctx, 0) == GS_SUCCESS);
  gs_csr_t *H = gs_test_random_csr(&rng, 301, 257, 0.03);
  CU_ASSERT_PTR_NOT_NULL_FATAL(H);
  CU_ASSERT_FATAL(gs_csr_is_sorted(H));
  static const struct {
    int bits;
    unsigned flags;
    int wide;
  } v[] = {{32, 0, 0}, {64, 0, 0}, {32, GS_MATRIX_DEVICE_BORROW, 0},
           {64, GS_MATRIX_DEVICE_BORROW, 0}, {32, 0, 1}, {64, GS_MATRIX_DEVICE_BORROW, 1}};
  for (size_t k = 0; k < sizeof v / sizeof v[0]; ++k) {
    char label[96];
    snprintf(label, sizeof label, "%d-bit row pointers, %s%s", v[k].bits,
             v[k].flags ? "borrowed" : "copied", v[k].wide ? ", wide" : "");
    gs_matrix_t *Ah = NULL, *Ad = NULL;
    dev_csr_t D;
    dev_upload(H, v[k].bits, NULL, &D);
    gs_test_wide_offsets(ctx, v[k].wide);
    CU_ASSERT_FATAL(gs_matrix_create(&Ah, ctx, H) == GS_SUCCESS);
    const gs_status_t st = create_from(&Ad, ctx, H, &D, v[k].flags);
    gs_test_wide_offsets(ctx, 0);
    if (st != GS_SUCCESS) fprintf(stderr, "%s: %s\n", label, gs_last_error());
    CU_ASSERT_EQUAL_FATAL(st, GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_matrix_wide(Ad), v[k].wide);
    CU_ASSERT(gs_matrix_context(Ad) == ctx);
    compare_backends(ctx, Ah, Ad, H, &rng, label);
    same_host_copy(Ah, Ad, H);
    gs_matrix_destroy(&Ad);
    gs_matrix_destroy(&Ah);
    dev_free(&D);
  }
  gs_csr_destroy(&H);
  gs_context_destroy(&ctx);
}

/* CG with csr-vector (deterministic) on a matrix made either way: x bit for bit. */
static void cg_solve(gs_context_t *ctx, gs_matrix_t *A, gs_idx_t n, double *x,
                     gs_solve_stats_t *stats)
{
  gs_spmv_t *S = NULL;
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "csr-vector", NULL) == GS_SUCCESS);
  double *b = malloc((size_t)n * 8), *d_b = NULL, *d_x = NULL;
  CU_ASSERT_FATAL(b != NULL);
  for (gs_idx_t i = 0; i < n; ++i) b[i] = 1.0 + (double)(i % 5);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_b, (size_t)n * 8, "b") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, (size_t)n * 8, "x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_b, b, (size_t)n * 8) == GS_SUCCESS);
  gs_solve_opts_t o;
  gs_solve_opts_default(&o);
  o.method = GS_SOLVER_CG;
  o.rtol = 1e-10;
  CU_ASSERT_EQUAL(gs_solve(ctx, &o, S, NULL, d_b, d_x, stats), GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, x, d_x, (size_t)n * 8) == GS_SUCCESS);
  gs_dfree(ctx, d_b);
  gs_dfree(ctx, d_x);
  gs_spmv_destroy(&S);
  free(b);
}

static void test_cg_bitwise(void)
{
  gs_context_t *ctx = NULL;
  gs_csr_t *L = NULL;
  CU_ASSERT_FATAL(gs_context_create(&ctx, 0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_gen_laplace(&L, 20, 20, 20, 7) == GS_SUCCESS);
  gs_matrix_t *Ah = NULL, *Ad = NULL;
  dev_csr_t D;
  dev_upload(L, 32, NULL, &D);
  CU_ASSERT_FATAL(gs_matrix_create(&Ah, ctx, L) == GS_SUCCESS);
  CU_ASSERT_FATAL(create_from(&Ad, ctx, L, &D, 0) == GS_SUCCESS);
  dev_free(&D); /* a copy: the caller's arrays may go */
  CU_ASSERT_EQUAL(gs_solve_auto_method(Ad), gs_solve_auto_method(Ah)); /* features, on demand */
  CU_ASSERT_EQUAL(gs_solve_auto_method(Ad), GS_SOLVER_CG);
  double *xh = malloc((size_t)L->m * 8), *xd = malloc((size_t)L->m * 8);
  CU_ASSERT_FATAL(xh && xd);
  gs_solve_stats_t sh, sd;
  cg_solve(ctx, Ah, L->m, xh, &sh);
  cg_solve(ctx, Ad, L->m, xd, &sd);
  CU_ASSERT(gs_reason_converged(sh.reason));
  CU_ASSERT_EQUAL(sd.reason, sh.reason);
  CU_ASSERT_EQUAL(sd.iterations, sh.iterations);
  CU_ASSERT(sh.iterations > 10);
  CU_ASSERT(memcmp(xh, xd, (size_t)L->m * 8) == 0);
  free(xh);
  free(xd);
  gs_matrix_destroy(&Ad);
  gs_matrix_destroy(&Ah);
  gs_csr_destroy(&L);
  gs_context_destroy(&ctx);
}

/* ---- ownership ------------------------------------------------------------------------------ */

/* gs_matrix_create_take (the distributed matrix's blocks): a CSR with sorted rows becomes the
 * matrix's host copy (the caller's pointer cleared, the same arrays, freed with the matrix),
 * one with an unsorted row is copied and sorted and stays the caller's; both multiply as H. */
static void test_take(void)
{
  uint64_t rng = gs_test_seed() ^ 0x7a4e11u;
  gs_context_t *ctx = NULL;
  CU_ASSERT_FATAL(gs_context_create(&ctx, 0) == GS_SUCCESS);
  gs_csr_t *H = gs_test_random_csr(&rng, 150, 170, 0.06), *T = NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(H);
  CU_ASSERT_FATAL(gs_csr_is_sorted(H));
  double *x = random_vector(&rng, (size_t)H->n), *y = malloc((size_t)H->m * 8);
  CU_ASSERT_FATAL(y != NULL);
  for (int sorted = 1; sorted >= 0; --sorted) {
    CU_ASSERT_FATAL(gs_csr_copy(&T, H) == GS_SUCCESS);
    if (!sorted) { /* swap the first two entries of the first row holding two */
      gs_idx_t i = 0;
      while (i < T->m && T->row_ptr[i + 1] - T->row_ptr[i] < 2) ++i;
      CU_ASSERT_FATAL(i < T->m);
      const gs_off_t p = T->row_ptr[i];
      const gs_idx_t c = T->col[p];
      const gs_val_t v = T->val[p];
      T->col[p] = T->col[p + 1], T->val[p] = T->val[p + 1];
      T->col[p + 1] = c, T->val[p + 1] = v;
      CU_ASSERT_FATAL(!gs_csr_is_sorted(T));
    }
    const gs_idx_t *cols = T->col;
    gs_matrix_t *A = NULL;
    gs_spmv_t *S = NULL;
    CU_ASSERT_FATAL(gs_matrix_create_take(&A, ctx, &T) == GS_SUCCESS);
    if (sorted) {
      CU_ASSERT_PTR_NULL(T);
      CU_ASSERT_PTR_EQUAL(gs_matrix_host(A)->col, cols);
    } else {
      CU_ASSERT_PTR_NOT_NULL(T);
      CU_ASSERT(gs_csr_is_sorted(gs_matrix_host(A)));
    }
    CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "csr-vector", NULL) == GS_SUCCESS);
    CU_ASSERT_FATAL(product(S, ctx, GS_OP_N, x, (size_t)H->n, y, (size_t)H->m) == GS_SUCCESS);
    CU_ASSERT(gs_test_spmv_ok(H, GS_OP_N, 1.0, x, 0.0, NULL, y, "take, sorted %d", sorted));
    gs_spmv_destroy(&S);
    gs_matrix_destroy(&A);
    gs_csr_destroy(&T);
  }
  gs_matrix_t *A = NULL;
  CU_ASSERT_EQUAL(gs_matrix_create_take(&A, ctx, NULL), GS_ERR_INVALID_ARG);
  free(x);
  free(y);
  gs_csr_destroy(&H);
  gs_context_destroy(&ctx);
}

static void test_ownership(void)
{
  uint64_t rng = gs_test_seed() ^ 0x5bd1e995u;
  gs_context_t *ctx = NULL;
  CU_ASSERT_FATAL(gs_context_create(&ctx, 0) == GS_SUCCESS);
  gs_csr_t *H = gs_test_random_csr(&rng, 200, 180, 0.05);
  CU_ASSERT_PTR_NOT_NULL_FATAL(H);
  double *x = random_vector(&rng, (size_t)H->n), *y = malloc((size_t)H->m * 8);
  CU_ASSERT_FATAL(y != NULL);
  const size_t own = ((size_t)H->m + 1) * 4 + (size_t)H->nnz * (4 + 8);

  /* copied: A's own arrays, the caller's overwritten afterwards */
  dev_csr_t D;
  dev_upload(H, 32, NULL, &D);
  size_t before = gs_device_bytes_in_use(ctx);
  gs_matrix_t *A = NULL;
  gs_spmv_t *S = NULL;
  CU_ASSERT_FATAL(create_from(&A, ctx, H, &D, 0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx) - before, own);
  CU_ASSERT_FATAL(cudaMemset(D.col, 0xff, (size_t)H->nnz * 4) == cudaSuccess); /* column -1 */
  CU_ASSERT_FATAL(cudaMemset(D.val, 0xff, (size_t)H->nnz * 8) == cudaSuccess); /* NaN */
  CU_ASSERT_FATAL(cudaDeviceSynchronize() == cudaSuccess);
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "csr-vector", NULL) == GS_SUCCESS);
  CU_ASSERT_FATAL(product(S, ctx, GS_OP_N, x, (size_t)H->n, y, (size_t)H->m) == GS_SUCCESS);
  CU_ASSERT(gs_test_spmv_ok(H, GS_OP_N, 1.0, x, 0.0, NULL, y, "copied, caller's arrays gone"));
  gs_spmv_destroy(&S);
  gs_matrix_destroy(&A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), before);
  dev_free(&D);

  /* borrowed: the caller's arrays (counted on ctx, so that a wrong free would show) */
  for (int bits = 32; bits <= 64; bits += 32) {
    dev_upload(H, bits, ctx, &D);
    before = gs_device_bytes_in_use(ctx);
    CU_ASSERT_FATAL(create_from(&A, ctx, H, &D, GS_MATRIX_DEVICE_BORROW) == GS_SUCCESS);
    /* 64-bit row pointers are narrowed into A's own 32-bit ones; nothing else is held */
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx) - before,
                    bits == 32 ? 0 : ((size_t)H->m + 1) * 4);
    CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "csr-vector", NULL) == GS_SUCCESS);
    CU_ASSERT_FATAL(product(S, ctx, GS_OP_N, x, (size_t)H->n, y, (size_t)H->m) == GS_SUCCESS);
    CU_ASSERT(gs_test_spmv_ok(H, GS_OP_N, 1.0, x, 0.0, NULL, y, "borrowed, %d bits", bits));
    gs_spmv_destroy(&S);
    gs_matrix_destroy(&A);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), before); /* the caller's arrays stay */
    dev_free(&D);
  }
  free(x);
  free(y);
  gs_csr_destroy(&H);
  gs_context_destroy(&ctx);
}

/* ---- bad arrays ----------------------------------------------------------------------------- */

/* A 4 x 5 CSR: row 0 {0, 2}, row 1 empty, row 2 {1, 3, 4}, row 3 {0}. */
#define BM 4
#define BN 5
#define BNNZ 6
static const int64_t base_rp[BM + 1] = {0, 2, 2, 5, 6};
static const gs_idx_t base_col[BNNZ] = {0, 2, 1, 3, 4, 0};
static const gs_val_t base_val[BNNZ] = {1, 2, 3, 4, 5, 6};

static void expect_refusal(gs_context_t *ctx, const int64_t *rp, const gs_idx_t *col,
                           const gs_val_t *val, int bits, const char *want)
{
  dev_csr_t D;
  dev_upload_raw(BM, BNNZ, rp, col, val, bits, NULL, &D);
  const size_t before = gs_device_bytes_in_use(ctx);
  gs_matrix_t *A = (gs_matrix_t *)(uintptr_t)0x1;
  const gs_status_t st = gs_matrix_create_device(&A, ctx, BM, BN, BNNZ, D.rp, bits, D.col, D.val,
                                                 0);
  CU_ASSERT_EQUAL(st, GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(A);
  if (!strstr(gs_last_error(), want)) {
    fprintf(stderr, "expected '%s' in: %s\n", want, gs_last_error());
    CU_FAIL("message");
  }
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), before); /* nothing kept */
  if (st == GS_SUCCESS) gs_matrix_destroy(&A);
  dev_free(&D);
}

static void test_bad_arrays(void)
{
  gs_context_t *ctx = NULL;
  CU_ASSERT_FATAL(gs_context_create(&ctx, 0) == GS_SUCCESS);
  int64_t rp[BM + 1];
  gs_idx_t col[BNNZ];
  gs_val_t val[BNNZ];
#define RESET()                                                                               \
  do {                                                                                        \
    memcpy(rp, base_rp, sizeof rp);                                                           \
    memcpy(col, base_col, sizeof col);                                                        \
    memcpy(val, base_val, sizeof val);                                                        \
  } while (0)
  for (int bits = 32; bits <= 64; bits += 32) {
    RESET();
    rp[0] = 1;
    expect_refusal(ctx, rp, col, val, bits, "d_row_ptr[0] = 1, not 0");
    RESET();
    rp[2] = 1;
    expect_refusal(ctx, rp, col, val, bits,
                   "row pointers decrease at row 1: d_row_ptr[1] = 2, d_row_ptr[2] = 1");
    RESET();
    rp[4] = 5;
    expect_refusal(ctx, rp, col, val, bits, "d_row_ptr[4] (the last) = 5, but nnz = 6");
    RESET(); /* an offset far out of bounds: refused before any entry is read through it */
    rp[1] = 1 << 30;
    col[0] = 99;
    expect_refusal(ctx, rp, col, val, bits, "row pointers decrease at row 1");
  }
  RESET();
  col[3] = 5;
  expect_refusal(ctx, rp, col, val, 32, "row 2: column 5 outside 0..4 (entry 3)");
  RESET();
  col[5] = -1;
  expect_refusal(ctx, rp, col, val, 64, "row 3: column -1 outside 0..4 (entry 5)");
  RESET();
  col[2] = 3;
  col[3] = 1; /* row 2: 3, 1, 4 */
  expect_refusal(ctx, rp, col, val, 32, "row 2: column 1 after column 3 (entry 3)");
  RESET();
  col[1] = 0; /* row 0: 0, 0 */
  expect_refusal(ctx, rp, col, val, 32, "row 0: column 0 after column 0 (entry 1)");
  RESET();
  val[4] = NAN;
  expect_refusal(ctx, rp, col, val, 32, "row 2, column 4: value");
  expect_refusal(ctx, rp, col, val, 32, "is not finite (entry 4)");
  RESET();
  val[0] = -INFINITY;
  expect_refusal(ctx, rp, col, val, 64, "row 0, column 0: value -inf is not finite (entry 0)");
  RESET(); /* several faults: the first entry's */
  col[5] = 9;
  val[1] = NAN;
  col[4] = 2;
  expect_refusal(ctx, rp, col, val, 32, "(entry 1)");

  /* host memory where device memory belongs */
  dev_csr_t D;
  gs_matrix_t *A = NULL;
  dev_upload_raw(BM, BNNZ, base_rp, base_col, base_val, 32, NULL, &D);
  CU_ASSERT_EQUAL(gs_matrix_create_device(&A, ctx, BM, BN, BNNZ, D.rp, 32, base_col, D.val, 0),
                  GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "d_col") && strstr(gs_last_error(), "host memory"));
  CU_ASSERT_PTR_NULL(A);
  /* nnz = 7 over 6-entry arrays: refused by the allocation's bounds or, where those are rounded
     up, by the row pointers (7 != 6) before anything is copied: never read past the end */
  CU_ASSERT_EQUAL(gs_matrix_create_device(&A, ctx, BM, BN, BNNZ + 1, D.rp, 32, D.col, D.val, 0),
                  GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "but nnz = 7") || strstr(gs_last_error(), "allocation ends"));
  dev_free(&D);

  /* an array shorter than nnz says, caught by its allocation's bounds (where the driver tells) */
  int have_range = 0;
#if CUDART_VERSION >= 12050
  {
    void *f = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    have_range = cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000,
                                                  cudaEnableDefault, &q) == cudaSuccess &&
                 q == cudaDriverEntryPointSuccess && f;
    (void)cudaGetLastError();
  }
#endif
  if (have_range) {
    const gs_off_t big = (gs_off_t)1 << 21; /* 16 MB of values claimed, 8 KB allocated */
    int32_t h_rp[2] = {0, (int32_t)big};
    void *d_rp = NULL, *d_col = NULL, *d_val = NULL;
    CU_ASSERT_FATAL(cudaMalloc(&d_rp, sizeof h_rp) == cudaSuccess);
    CU_ASSERT_FATAL(cudaMalloc(&d_col, (size_t)big * 4) == cudaSuccess);
    CU_ASSERT_FATAL(cudaMalloc(&d_val, 8192) == cudaSuccess);
    CU_ASSERT_FATAL(cudaMemcpy(d_rp, h_rp, sizeof h_rp, cudaMemcpyHostToDevice) == cudaSuccess);
    const gs_status_t st = gs_matrix_create_device(&A, ctx, 1, (gs_idx_t)(2 * big), big, d_rp,
                                                   32, d_col, d_val, 0);
    CU_ASSERT_EQUAL(st, GS_ERR_INVALID_ARG);
    CU_ASSERT(strstr(gs_last_error(), "d_val") && strstr(gs_last_error(), "allocation ends"));
    if (st == GS_SUCCESS) gs_matrix_destroy(&A);
    cudaFree(d_rp);
    cudaFree(d_col);
    cudaFree(d_val);
  } else {
    printf("skipped: no cuMemGetAddressRange entry point: the short-array case\n");
  }

  /* the context is not poisoned: a good matrix works after every refusal */
  dev_upload_raw(BM, BNNZ, base_rp, base_col, base_val, 32, NULL, &D);
  CU_ASSERT_FATAL(gs_matrix_create_device(&A, ctx, BM, BN, BNNZ, D.rp, 32, D.col, D.val, 0) ==
                  GS_SUCCESS);
  gs_spmv_t *S = NULL;
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "csr-scalar", NULL) == GS_SUCCESS);
  const double x[BN] = {1, 2, 3, 4, 5};
  double y[BM];
  CU_ASSERT_FATAL(product(S, ctx, GS_OP_N, x, BN, y, BM) == GS_SUCCESS);
  CU_ASSERT(y[0] == 1 * 1 + 2 * 3 && y[1] == 0 && y[2] == 3 * 2 + 4 * 4 + 5 * 5 && y[3] == 6);
  gs_spmv_destroy(&S);
  gs_matrix_destroy(&A);
  dev_free(&D);
  /* the empty cases: no rows, no entries */
  int64_t z[1] = {0};
  dev_upload_raw(0, 0, z, NULL, NULL, 64, NULL, &D);
  CU_ASSERT_EQUAL(gs_matrix_create_device(&A, ctx, 0, 3, 0, D.rp, 64, NULL, NULL, 0),
                  GS_SUCCESS);
  gs_matrix_destroy(&A);
  dev_free(&D);
#undef RESET
  gs_context_destroy(&ctx);
}

/* ---- a context on the caller's stream ------------------------------------------------------- */

/* A host callback that holds the stream until another thread opens the gate (after a short
 * while: if the library waited on the stream in between, the test would still end). */
typedef struct gate {
  atomic_int open;
  pthread_t opener;
} gate_t;

static void sleep_ms(long ms)
{
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static void CUDART_CB gate_wait(void *p)
{
  gate_t *g = p;
  while (!atomic_load(&g->open)) sleep_ms(1);
}

static void *gate_open_later(void *p)
{
  sleep_ms(200);
  atomic_store(&((gate_t *)p)->open, 1);
  return NULL;
}

static void gate_close(gate_t *g, cudaStream_t s)
{
  atomic_init(&g->open, 0);
  CU_ASSERT_FATAL(cudaLaunchHostFunc(s, gate_wait, g) == cudaSuccess);
  CU_ASSERT_FATAL(pthread_create(&g->opener, NULL, gate_open_later, g) == 0);
}

/* Rank-beside-rank on one GPU: a block that context a frees while its stream still has work
 * queued on it (a host function that sleeps, then a fill of the block) must not reach context
 * b's stream before that work ends. b takes blocks of the same size and zeroes them; after a's
 * stream ends, every block b holds must still read zero. */
static void CUDART_CB sleep_host(void *arg)
{
  (void)arg;
  const struct timespec ts = {0, 150 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

static void test_free_order(void)
{
  gs_context_t *a = NULL, *b = NULL;
  CU_ASSERT_FATAL(gs_context_create(&a, 0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_context_create(&b, 0) == GS_SUCCESS);
  cudaStream_t sa = (cudaStream_t)gs_context_stream(a), sb = (cudaStream_t)gs_context_stream(b);
  enum { NB = 4 };
  const size_t bytes = (size_t)8 << 20;
  void *p = NULL, *q[NB] = {NULL};
  int reused = 0;
  CU_ASSERT_FATAL(gs_dmalloc(a, &p, bytes, "freed block") == GS_SUCCESS);
  CU_ASSERT_FATAL(cudaLaunchHostFunc(sa, sleep_host, NULL) == cudaSuccess);
  CU_ASSERT_FATAL(cudaMemsetAsync(p, 0xab, bytes, sa) == cudaSuccess);
  gs_dfree(a, p); /* the fill is still queued behind the sleep */
  for (int k = 0; k < NB; ++k) {
    CU_ASSERT_FATAL(gs_dmalloc(b, &q[k], bytes, "block of b") == GS_SUCCESS);
    reused += q[k] == p;
    CU_ASSERT_FATAL(cudaMemsetAsync(q[k], 0, bytes, sb) == cudaSuccess);
  }
  CU_ASSERT_FATAL(cudaStreamSynchronize(sb) == cudaSuccess);
  CU_ASSERT_FATAL(cudaStreamSynchronize(sa) == cudaSuccess);
  unsigned char *h = malloc(bytes);
  CU_ASSERT_FATAL(h != NULL);
  for (int k = 0; k < NB; ++k) {
    CU_ASSERT_FATAL(gs_copy_to_host(b, h, q[k], bytes) == GS_SUCCESS);
    size_t bad = 0;
    for (size_t i = 0; i < bytes; ++i) bad += h[i] != 0;
    if (bad) fprintf(stderr, "\n  block %d of b (%s a's freed block): %zu bytes overwritten\n",
                     k, q[k] == p ? "is" : "is not", bad);
    CU_ASSERT_EQUAL(bad, 0);
  }
  printf("(a's freed block lent to b: %s) ", reused ? "yes" : "no");
  free(h);
  for (int k = 0; k < NB; ++k) gs_dfree(b, q[k]);
  gs_context_destroy(&b);
  gs_context_destroy(&a);
}

static void test_user_stream(void)
{
  uint64_t rng = gs_test_seed() ^ 0x9e3779b9u;
  cudaStream_t s = NULL;
  CU_ASSERT_FATAL(cudaSetDevice(0) == cudaSuccess);
  CU_ASSERT_FATAL(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  gs_context_t *uc = NULL, *ctx = NULL;
  CU_ASSERT_FATAL(gs_context_create_on_stream(&uc, 0, s) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_context_create(&ctx, 0) == GS_SUCCESS);
  CU_ASSERT(gs_context_stream(uc) == (void *)s);
  CU_ASSERT(gs_context_stream(ctx) != (void *)s);
  CU_ASSERT_EQUAL(gs_context_device(uc), 0);

  gs_csr_t *H = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&H, 16, 16, 16, 7) == GS_SUCCESS);
  const size_t m = (size_t)H->m, nnz = (size_t)H->nnz;

  /* the matrix's checks read arrays the caller uploads on s just before, behind the gate */
  int32_t *h_rp = NULL;
  gs_idx_t *h_col = NULL;
  double *h_val = NULL, *h_x = NULL, *h_y = NULL;
  CU_ASSERT_FATAL(cudaMallocHost((void **)&h_rp, (m + 1) * 4) == cudaSuccess);
  CU_ASSERT_FATAL(cudaMallocHost((void **)&h_col, nnz * 4) == cudaSuccess);
  CU_ASSERT_FATAL(cudaMallocHost((void **)&h_val, nnz * 8) == cudaSuccess);
  CU_ASSERT_FATAL(cudaMallocHost((void **)&h_x, m * 8) == cudaSuccess);
  CU_ASSERT_FATAL(cudaMallocHost((void **)&h_y, m * 8) == cudaSuccess);
  for (size_t i = 0; i <= m; ++i) h_rp[i] = (int32_t)H->row_ptr[i];
  memcpy(h_col, H->col, nnz * 4);
  memcpy(h_val, H->val, nnz * 8);
  void *d_rp = NULL, *d_col = NULL, *d_val = NULL;
  CU_ASSERT_FATAL(cudaMalloc(&d_rp, (m + 1) * 4) == cudaSuccess);
  CU_ASSERT_FATAL(cudaMalloc(&d_col, nnz * 4) == cudaSuccess);
  CU_ASSERT_FATAL(cudaMalloc(&d_val, nnz * 8) == cudaSuccess);
  CU_ASSERT_FATAL(cudaMemset(d_rp, 0xff, (m + 1) * 4) == cudaSuccess); /* row_ptr[0] = -1 */
  CU_ASSERT_FATAL(cudaDeviceSynchronize() == cudaSuccess); /* a memset may return early */
  gate_t g;
  gate_close(&g, s);
  CU_ASSERT_FATAL(cudaMemcpyAsync(d_rp, h_rp, (m + 1) * 4, cudaMemcpyHostToDevice, s) ==
                  cudaSuccess);
  CU_ASSERT_FATAL(cudaMemcpyAsync(d_col, h_col, nnz * 4, cudaMemcpyHostToDevice, s) ==
                  cudaSuccess);
  CU_ASSERT_FATAL(cudaMemcpyAsync(d_val, h_val, nnz * 8, cudaMemcpyHostToDevice, s) ==
                  cudaSuccess);
  gs_matrix_t *A = NULL;
  const gs_status_t st = gs_matrix_create_device(&A, uc, H->m, H->n, H->nnz, d_rp, 32, d_col,
                                                 d_val, 0);
  if (st != GS_SUCCESS) fprintf(stderr, "matrix on the user stream: %s\n", gs_last_error());
  CU_ASSERT_EQUAL_FATAL(st, GS_SUCCESS);
  pthread_join(g.opener, NULL);

  /* products (csr-vector: our kernels; cusparse-csr: the cuSPARSE handle) queued behind the
     gate between the caller's upload of x and download of y, with no synchronization */
  double *d_x = NULL, *d_y = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(uc, (void **)&d_x, m * 8, "x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(uc, (void **)&d_y, m * 8, "y") == GS_SUCCESS);
  const char *names[] = {"csr-vector", "cusparse-csr"};
  for (int k = 0; k < 2; ++k) {
    gs_spmv_t *S = NULL;
    CU_ASSERT_FATAL(gs_spmv_create(&S, uc, A, names[k], NULL) == GS_SUCCESS);
    for (size_t i = 0; i < m; ++i) h_x[i] = 2.0 * gs_test_uniform(&rng) - 1.0;
    CU_ASSERT_FATAL(gs_context_sync(uc) == GS_SUCCESS);
    CU_ASSERT_FATAL(cudaMemset(d_x, 0xff, m * 8) == cudaSuccess); /* NaN until the upload */
    CU_ASSERT_FATAL(cudaMemset(d_y, 0xff, m * 8) == cudaSuccess);
    memset(h_y, 0xff, m * 8);
    CU_ASSERT_FATAL(cudaDeviceSynchronize() == cudaSuccess);
    gate_close(&g, s);
    CU_ASSERT_FATAL(cudaMemcpyAsync(d_x, h_x, m * 8, cudaMemcpyHostToDevice, s) == cudaSuccess);
    CU_ASSERT_EQUAL(gs_spmv_apply(S, GS_OP_N, 1.0, d_x, 0.0, d_y), GS_SUCCESS);
    CU_ASSERT_FATAL(cudaMemcpyAsync(h_y, d_y, m * 8, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    CU_ASSERT_FATAL(cudaStreamSynchronize(s) == cudaSuccess);
    pthread_join(g.opener, NULL);
    CU_ASSERT(gs_test_spmv_ok(H, GS_OP_N, 1.0, h_x, 0.0, NULL, h_y, "user stream: %s",
                              names[k]));
    gs_spmv_destroy(&S);
  }
  gs_dfree(uc, d_x);
  gs_dfree(uc, d_y);

  /* a solve on the user stream's context against one on an own-stream context */
  gs_matrix_t *Ah = NULL;
  CU_ASSERT_FATAL(gs_matrix_create(&Ah, ctx, H) == GS_SUCCESS);
  double *xu = malloc(m * 8), *xo = malloc(m * 8);
  CU_ASSERT_FATAL(xu && xo);
  gs_solve_stats_t su, so;
  cg_solve(uc, A, H->m, xu, &su);
  cg_solve(ctx, Ah, H->m, xo, &so);
  CU_ASSERT(gs_reason_converged(su.reason));
  CU_ASSERT_EQUAL(su.iterations, so.iterations);
  CU_ASSERT(memcmp(xu, xo, m * 8) == 0);
  free(xu);
  free(xo);
  gs_matrix_destroy(&Ah);
  gs_matrix_destroy(&A);

  /* the stream outlives the context */
  gs_context_destroy(&uc);
  CU_ASSERT_PTR_NULL(uc);
  CU_ASSERT_EQUAL(cudaStreamQuery(s), cudaSuccess);
  CU_ASSERT_EQUAL(cudaMemsetAsync(d_val, 0, 8, s), cudaSuccess);
  CU_ASSERT_EQUAL(cudaStreamSynchronize(s), cudaSuccess);
  CU_ASSERT_EQUAL(cudaStreamDestroy(s), cudaSuccess);

  /* a stream being captured is refused */
  cudaStream_t c = NULL;
  CU_ASSERT_FATAL(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking) == cudaSuccess);
  CU_ASSERT_FATAL(cudaStreamBeginCapture(c, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  uc = (gs_context_t *)(uintptr_t)0x1;
  CU_ASSERT_EQUAL(gs_context_create_on_stream(&uc, 0, c), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(uc);
  CU_ASSERT(strstr(gs_last_error(), "being captured") != NULL);
  cudaGraph_t graph = NULL;
  CU_ASSERT_EQUAL(cudaStreamEndCapture(c, &graph), cudaSuccess);
  if (graph) cudaGraphDestroy(graph);
  CU_ASSERT_EQUAL(cudaStreamDestroy(c), cudaSuccess);
  /* a stream of another device (with two devices) */
  if (gs_device_count() > 1) {
    CU_ASSERT_FATAL(cudaSetDevice(1) == cudaSuccess);
    CU_ASSERT_FATAL(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking) == cudaSuccess);
    CU_ASSERT_EQUAL(gs_context_create_on_stream(&uc, 0, c), GS_ERR_INVALID_ARG);
    CU_ASSERT(strstr(gs_last_error(), "belongs to device 1") != NULL);
    CU_ASSERT_FATAL(cudaSetDevice(1) == cudaSuccess);
    cudaStreamDestroy(c);
    cudaSetDevice(0);
  }

  cudaFree(d_rp);
  cudaFree(d_col);
  cudaFree(d_val);
  cudaFreeHost(h_rp);
  cudaFreeHost(h_col);
  cudaFreeHost(h_val);
  cudaFreeHost(h_x);
  cudaFreeHost(h_y);
  gs_csr_destroy(&H);
  gs_context_destroy(&ctx);
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"gs_matrix_create_take: a sorted CSR kept, an unsorted one copied", test_take},
      {"the same matrix from host and device arrays: every backend", test_same_matrix},
      {"CG on a device-made matrix: x bit for bit", test_cg_bitwise},
      {"copied and borrowed arrays: device memory held and freed", test_ownership},
      {"bad device arrays refused with the first fault", test_bad_arrays},
      {"a context on the caller's stream", test_user_stream},
      {"a block freed in stream order: not lent to another context's stream early",
       test_free_order},
      CU_TEST_INFO_NULL};
  return gs_test_main("matrix_device", tests, 1);
}
