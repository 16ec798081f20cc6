/* tests/test_block_jacobi_gpu.c: the "block-jacobi" preconditioner on the GPU. The device
 * inverses are read back through the apply itself (a vector with a 1 at local row j of every
 * block gives column j of every block's inverse at once) and compared with the host reference
 * (precond/block_jacobi.c: extraction, LU with partial pivoting, solves for the unit vectors)
 * within the norm form of the forward error bound of Gauss-Jordan elimination (Higham, Accuracy
 * and Stability, section 14.4: |X - X^| <= c_n u |X| |L||U| |X^|, c_n = 8n, which LU solves
 * also meet), per block of s rows:
 *   |X_dev - X_host|_ij <= 2 C gamma_8s max(|| |X_h| W |X_h| ||_inf, || |X_h| W |X_dev| ||_inf),
 *   W = P^T (|L||U| + |Delta|)   (Delta: the noise the reference took as zero),
 * twice for the two computations, C = GS_TEST_SPMV_C (the norm form: Gauss-Jordan leaves
 * rounding noise where the inverse has exact zeros, which a componentwise bound forbids); the
 * apply against X_dev r in long double within the sum's bound gamma_s (|X_dev| |r|)_i. On random block-structured matrices for every block size 1 ..
 * 32 (every group width of the kernels), fixed and agglomerated blocks, 32- and 64-bit row
 * pointers, and on the real matrices (where the setup refuses a block, the host reference must
 * refuse the same block at the same step). Also: in place, block=1 against jacobi bit for bit,
 * the symmetric flag and symmetry of the inverses, CG / BiCGSTAB / BiCG solves, singular blocks
 * (refused naming the rows, the fallback to Jacobi, a zero diagonal), re-setup, the bytes held,
 * allocation failure at every step. GS_TEST_QUICK=1 (sanitizer runs) skips the real matrices of
 * more than 30,000 entries. Exits 77 without a device. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhooks.h"
#include "precond/block_jacobi.h"
#include "tests/testutil.h"
#include "tests/block_jacobi_test.h"

static gs_context_t *ctx;

/* Natural blocks of the given sizes (as the host suite's): block I couples to itself and to
 * random blocks J, |I - J| >= 2; every row of a natural block holds the same columns; the
 * diagonal raised by `shift`; symmetric values when sym. */
static gs_csr_t *natural(const int *size, int nnat, double coupling, double shift, int sym)
{
  int *start = xmalloc(((size_t)nnat + 1) * sizeof *start);
  start[0] = 0;
  for (int I = 0; I < nnat; ++I) start[I + 1] = start[I] + size[I];
  const gs_idx_t n = start[nnat];
  char *edge = xmalloc((size_t)nnat * nnat);
  for (int I = 0; I < nnat; ++I)
    for (int J = 0; J <= I; ++J)
      edge[I * nnat + J] = edge[J * nnat + I] =
          I == J || (abs(I - J) >= 2 && gs_test_uniform(rng()) < coupling);
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 16) == GS_SUCCESS);
  for (int I = 0; I < nnat; ++I)
    for (int J = 0; J <= I; ++J)
      if (edge[I * nnat + J])
        for (gs_idx_t i = start[I]; i < start[I + 1]; ++i)
          for (gs_idx_t j = start[J]; j < start[J + 1] && (I != J || j <= i); ++j) {
            const double v = 0.5 * rnd() + (i == j ? shift : 0.0);
            CU_ASSERT_FATAL(gs_coo_push(C, i, j, v) == GS_SUCCESS);
            if (i != j)
              CU_ASSERT_FATAL(gs_coo_push(C, j, i, sym ? v : 0.5 * rnd()) == GS_SUCCESS);
          }
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  free(edge);
  free(start);
  return A;
}

static double *dvec(gs_idx_t n)
{
  double *d = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d, (size_t)(n ? n : 1) * sizeof *d, "v") ==
                  GS_SUCCESS);
  return d;
}

/* The block partition the preconditioner built for `opts` (the same host function). */
typedef struct part {
  gs_idx_t *bp, nb;
  int64_t *off;
  int maxs;
} part_t;

static void part_make(part_t *P, const gs_csr_t *H, int K, int agg)
{
  CU_ASSERT_FATAL(gs_bj_partition(H, K, agg, &P->bp, &P->nb) == GS_SUCCESS);
  P->off = xmalloc(((size_t)P->nb + 1) * sizeof *P->off);
  gs_bj_offsets(P->bp, P->nb, P->off);
  P->maxs = gs_bj_max_size(P->bp, P->nb);
}

static void part_free(part_t *P)
{
  free(P->bp);
  free(P->off);
}

/* Every block's inverse read back from the device (column-major at off[b]): max_size applies. */
static double *device_inverses(gs_precond_t *M, const part_t *P, gs_idx_t n)
{
  double *X = xmalloc((size_t)P->off[P->nb] * sizeof *X);
  double *r = xmalloc((size_t)n * sizeof *r), *z = xmalloc((size_t)n * sizeof *z);
  double *d_r = dvec(n), *d_z = dvec(n);
  for (int j = 0; j < P->maxs; ++j) {
    memset(r, 0, (size_t)n * sizeof *r);
    for (gs_idx_t b = 0; b < P->nb; ++b)
      if (P->bp[b + 1] - P->bp[b] > j) r[P->bp[b] + j] = 1.0;
    CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_r, r, (size_t)n * sizeof *r) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_precond_apply(M, d_r, d_z) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_copy_to_host(ctx, z, d_z, (size_t)n * sizeof *z) == GS_SUCCESS);
    for (gs_idx_t b = 0; b < P->nb; ++b) {
      const int s = (int)(P->bp[b + 1] - P->bp[b]);
      if (s > j)
        for (int i = 0; i < s; ++i) X[P->off[b] + (int64_t)j * s + i] = z[P->bp[b] + i];
    }
  }
  gs_dfree(ctx, d_r);
  gs_dfree(ctx, d_z);
  free(r);
  free(z);
  return X;
}

/* max over the blocks of |X_dev - X_host| / bound (see the header); X_host from the host
 * reference's LU. Blocks the reference refuses are skipped (counted in *refused). sym_worst
 * (NULL: not wanted): for a symmetric A, whose true inverses are symmetric, the worst
 * |X_ij - X_ji| / (2 bound) of the device's inverses. */
static double compare_inverses(const gs_csr_t *H, const part_t *P, const double *X, int *refused,
                               double *sym_worst)
{
  enum { S = GS_BJ_MAX_BLOCK };
  double B[S * S], LU[S * S], Xh[S * S], W[S * S], XW[S * S], D[S * S], e[S];
  int piv[S], idx[S];
  double worst = 0.0;
  *refused = 0;
  for (gs_idx_t b = 0; b < P->nb; ++b) {
    const int s = (int)(P->bp[b + 1] - P->bp[b]);
    gs_bj_extract(H, P->bp[b], s, B);
    memcpy(LU, B, (size_t)s * s * sizeof *B);
    if (gs_bj_lu(LU, s, piv, D) >= 0) {
      ++*refused;
      continue;
    }
    for (int j = 0; j < s; ++j) { /* Xh(:, j) = B^-1 e_j, row-major Xh[i * s + j] */
      for (int i = 0; i < s; ++i) e[i] = i == j;
      gs_bj_lu_solve(LU, piv, s, e);
      for (int i = 0; i < s; ++i) Xh[i * s + j] = e[i];
    }
    for (int i = 0; i < s; ++i) idx[i] = i;
    for (int k = 0; k < s; ++k) {
      const int t = idx[k];
      idx[k] = idx[piv[k]];
      idx[piv[k]] = t;
    }
    for (int k = 0; k < s; ++k) /* W = P^T (|L| |U| + |Delta|): row k of L U is row idx[k] */
      for (int j = 0; j < s; ++j) {
        double w = D[k * s + j];
        for (int q = 0; q <= k && q <= j; ++q)
          w += (q == k ? 1.0 : fabs(LU[k * s + q])) * fabs(LU[q * s + j]);
        W[idx[k] * s + j] = w;
      }
    for (int i = 0; i < s; ++i) /* XW = |X| W */
      for (int j = 0; j < s; ++j) {
        double t = 0.0;
        for (int q = 0; q < s; ++q) t += fabs(Xh[i * s + q]) * W[q * s + j];
        XW[i * s + j] = t;
      }
    /* N = max(|| |X_h| W |X_h| ||_inf, || |X_h| W |X_dev| ||_inf) */
    double N = 0.0;
    for (int i = 0; i < s; ++i) {
      double r1 = 0.0, r2 = 0.0;
      for (int j = 0; j < s; ++j)
        for (int q = 0; q < s; ++q) {
          r1 += XW[i * s + q] * fabs(Xh[q * s + j]);
          r2 += XW[i * s + q] * fabs(X[P->off[b] + (int64_t)j * s + q]);
        }
      N = fmax(N, fmax(r1, r2));
    }
    const double bound = 2.0 * GS_TEST_SPMV_C * gam(8.0 * s) * N + 1e3 * DBL_MIN;
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j) {
        const double got = X[P->off[b] + (int64_t)j * s + i];
        const double q = !isfinite(got) ? INFINITY : fabs(got - Xh[i * s + j]) / bound;
        if (!(q <= worst)) worst = q;
        if (sym_worst && j < i) {
          const double t = fabs(got - X[P->off[b] + (int64_t)i * s + j]) / (2.0 * bound);
          if (!(t <= *sym_worst)) *sym_worst = t;
        }
      }
  }
  return worst;
}

/* The apply against X_dev r in long double: max_i |z_i - ref_i| / (C gamma_s (|X||r|)_i). */
static double compare_apply(const part_t *P, const double *X, const double *r, const double *z)
{
  double worst = 0.0;
  for (gs_idx_t b = 0; b < P->nb; ++b) {
    const int s = (int)(P->bp[b + 1] - P->bp[b]);
    const gs_idx_t r0 = P->bp[b];
    for (int i = 0; i < s; ++i) {
      long double ref = 0.0L;
      double mag = 0.0;
      for (int j = 0; j < s; ++j) {
        const double x = X[P->off[b] + (int64_t)j * s + i];
        ref += (long double)x * r[r0 + j];
        mag += fabs(x * r[r0 + j]);
      }
      const double bound = GS_TEST_SPMV_C * gam(s + 1.0) * mag + 1e3 * DBL_MIN;
      const double q = fabs(z[r0 + i] - (double)ref) / bound;
      if (!(q <= worst)) worst = q;
    }
  }
  return worst;
}

/* Sets up block-jacobi with opts on H and checks the inverses and the apply (also in place);
 * returns the worst ratios through *wi, *wa. */
static void check_matrix(const gs_csr_t *H, int K, int agg, const char *label, double *wi,
                         double *wa)
{
  char opts[96];
  snprintf(opts, sizeof opts, "block=%d,agglomerate=%d", K, agg);
  gs_matrix_t *A = NULL;
  gs_precond_t *M = NULL;
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  gs_status_t st = gs_precond_create_opts(&M, ctx, A, "block-jacobi", opts);
  if (st != GS_SUCCESS) fprintf(stderr, "  %s (%s): %s\n", label, opts, gs_last_error());
  CU_ASSERT_FATAL(st == GS_SUCCESS);
  CU_ASSERT(gs_precond_is_capturable(M));
  part_t P;
  part_make(&P, H, K, agg);
  CU_ASSERT(gs_precond_device_bytes(M) ==
            ((size_t)P.nb + 1) * (sizeof(gs_idx_t) + sizeof(int64_t)) +
                (size_t)P.off[P.nb] * sizeof(double));
  const gs_idx_t n = H->m;
  double *X = device_inverses(M, &P, n);
  int refused = 0;
  const double qi = compare_inverses(H, &P, X, &refused, NULL);
  CU_ASSERT(refused == 0);
  if (!(qi <= 1.0)) fprintf(stderr, "  %s (%s): inverse off by %.3g of its bound\n", label, opts, qi);
  CU_ASSERT(qi <= 1.0);
  /* a random r, out of place and in place */
  double *r = xmalloc((size_t)n * sizeof *r), *z = xmalloc((size_t)n * sizeof *z);
  double *z2 = xmalloc((size_t)n * sizeof *z2);
  for (gs_idx_t i = 0; i < n; ++i) r[i] = rnd();
  double *d_r = dvec(n), *d_z = dvec(n);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_r, r, (size_t)n * sizeof *r) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_apply(M, d_r, d_z) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_apply(M, d_r, d_r) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, z, d_z, (size_t)n * sizeof *z) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, z2, d_r, (size_t)n * sizeof *z2) == GS_SUCCESS);
  CU_ASSERT(memcmp(z, z2, (size_t)n * sizeof *z) == 0);
  const double qa = compare_apply(&P, X, r, z);
  if (!(qa <= 1.0)) fprintf(stderr, "  %s (%s): apply off by %.3g of its bound\n", label, opts, qa);
  CU_ASSERT(qa <= 1.0);
  if (qi > *wi) *wi = qi;
  if (qa > *wa) *wa = qa;
  gs_dfree(ctx, d_r);
  gs_dfree(ctx, d_z);
  free(r);
  free(z);
  free(z2);
  free(X);
  part_free(&P);
  gs_precond_destroy(&M);
  gs_matrix_destroy(&A);
}

static void test_random(void)
{
  double wi = 0.0, wa = 0.0;
  for (int K = 1; K <= GS_BJ_MAX_BLOCK; ++K) {
    int size[80];
    const int nnat = 10 + rndint(70);
    for (int I = 0; I < nnat; ++I) size[I] = 1 + rndint(K % 5 == 0 ? 40 : 6);
    gs_csr_t *H = natural(size, nnat, 0.1, K % 3 == 0 ? 0.0 : 4.0, K % 2);
    char label[64];
    snprintf(label, sizeof label, "random n=%d", (int)H->m);
    check_matrix(H, K, K % 4 != 1, label, &wi, &wa);
    gs_csr_destroy(&H);
  }
  fprintf(stderr, "  random: inverses at most %.3g, applies %.3g of their bounds\n", wi, wa);
}

/* 64-bit row pointers: the same inverses bit for bit. */
static void test_wide(void)
{
  int size[30];
  for (int I = 0; I < 30; ++I) size[I] = 1 + rndint(9);
  gs_csr_t *H = natural(size, 30, 0.2, 3.0, 0);
  part_t P;
  part_make(&P, H, 12, 1);
  double *X[2];
  for (int wide = 0; wide <= 1; ++wide) {
    gs_test_wide_offsets(ctx, wide);
    gs_matrix_t *A = NULL;
    gs_precond_t *M = NULL;
    CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
    gs_test_wide_offsets(ctx, 0);
    CU_ASSERT(gs_matrix_wide(A) == wide);
    CU_ASSERT_FATAL(gs_precond_create_opts(&M, ctx, A, "block-jacobi", "block=12") == GS_SUCCESS);
    X[wide] = device_inverses(M, &P, H->m);
    gs_precond_destroy(&M);
    gs_matrix_destroy(&A);
  }
  CU_ASSERT(memcmp(X[0], X[1], (size_t)P.off[P.nb] * sizeof(double)) == 0);
  free(X[0]);
  free(X[1]);
  part_free(&P);
  gs_csr_destroy(&H);
}

/* block=1 is Jacobi: z_i = (1 / a_ii) r_i, the same rounding, bit for bit. */
static void test_block1_is_jacobi(void)
{
  gs_csr_t *H = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&H, 30, 20, 7, 7) == GS_SUCCESS);
  for (gs_off_t k = 0; k < H->nnz; ++k) H->val[k] *= 1.0 + 0.5 * gs_test_uniform(rng());
  const gs_idx_t n = H->m;
  gs_matrix_t *A = NULL;
  gs_precond_t *J = NULL, *B = NULL;
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_create(&J, ctx, A, "jacobi") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_create_opts(&B, ctx, A, "block-jacobi", "block=1") == GS_SUCCESS);
  double *r = xmalloc((size_t)n * sizeof *r), *zj = xmalloc((size_t)n * sizeof *zj);
  double *zb = xmalloc((size_t)n * sizeof *zb);
  for (gs_idx_t i = 0; i < n; ++i) r[i] = rnd();
  double *d_r = dvec(n), *d_z = dvec(n);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_r, r, (size_t)n * sizeof *r) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_apply(J, d_r, d_z) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, zj, d_z, (size_t)n * sizeof *zj) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_apply(B, d_r, d_z) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, zb, d_z, (size_t)n * sizeof *zb) == GS_SUCCESS);
  CU_ASSERT(memcmp(zj, zb, (size_t)n * sizeof *zj) == 0);
  gs_dfree(ctx, d_r);
  gs_dfree(ctx, d_z);
  free(r);
  free(zj);
  free(zb);
  gs_precond_destroy(&J);
  gs_precond_destroy(&B);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
}

/* The real square matrices: where the setup succeeds, its inverses against the host reference;
 * where it refuses, the reference refuses the same block at the same step. */
static void test_real(void)
{
  if (!gs_test_have_matrices()) return;
  double wi = 0.0, wa = 0.0;
  for (int k = 0; gs_test_matrix_names[k]; ++k) {
    const char *name = gs_test_matrix_names[k];
    if (!gs_test_have_matrix(name)) continue;
    gs_csr_t *H = NULL;
    CU_ASSERT_FATAL(gs_mm_read_csr(gs_test_matrix(name), &H) == GS_SUCCESS);
    if (H->m != H->n || (gs_test_quick() && H->nnz > 30000)) { /* quick: sanitizer runs */
      gs_csr_destroy(&H);
      continue;
    }
    static const int Ks[] = {4, 8, 32};
    for (size_t q = 0; q < sizeof Ks / sizeof Ks[0]; ++q) {
      part_t P;
      part_make(&P, H, Ks[q], 1);
      double *r = xmalloc((size_t)H->m * sizeof *r), *z = xmalloc((size_t)H->m * sizeof *z);
      for (gs_idx_t i = 0; i < H->m; ++i) r[i] = 1.0;
      int code = -1;
      const int64_t bad = gs_bj_host_apply(H, P.bp, P.nb, 0, r, z, &code, NULL);
      gs_matrix_t *A = NULL;
      gs_precond_t *M = NULL;
      CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
      char opts[32];
      snprintf(opts, sizeof opts, "block=%d", Ks[q]);
      const gs_status_t st = gs_precond_create_opts(&M, ctx, A, "block-jacobi", opts);
      if (bad >= 0) {
        char want[64];
        snprintf(want, sizeof want, "rows %lld-%lld", (long long)P.bp[bad] + 1,
                 (long long)P.bp[bad + 1]);
        fprintf(stderr, "  %-18s block %2d: refused (%s)\n", name, Ks[q], gs_last_error());
        CU_ASSERT(st == GS_ERR_INVALID_ARG);
        CU_ASSERT(strstr(gs_last_error(), want) != NULL);
        snprintf(want, sizeof want, "no pivot for row %lld", (long long)P.bp[bad] + 1 + code);
        CU_ASSERT(strstr(gs_last_error(), want) != NULL);
        CU_ASSERT(M == NULL);
      } else {
        if (st != GS_SUCCESS) fprintf(stderr, "  %s: %s\n", name, gs_last_error());
        CU_ASSERT(st == GS_SUCCESS);
        gs_precond_destroy(&M);
        if (st == GS_SUCCESS) check_matrix(H, Ks[q], 1, name, &wi, &wa);
      }
      gs_matrix_destroy(&A);
      free(r);
      free(z);
      part_free(&P);
    }
    gs_csr_destroy(&H);
  }
  fprintf(stderr, "  real: inverses at most %.3g, applies %.3g of their bounds\n", wi, wa);
}

/* A symmetric A: the flag, X_dev symmetric within twice the inverse's bound, x^T M^-1 x > 0 for
 * an SPD A; BiCG accepts it. A nonsymmetric one: no flag, BiCG refuses it. */
static void test_symmetry(void)
{
  gs_csr_t *H = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&H, 12, 12, 12, 27) == GS_SUCCESS);
  const gs_idx_t n = H->m;
  gs_matrix_t *A = NULL;
  gs_precond_t *M = NULL;
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_create_opts(&M, ctx, A, "block-jacobi", "block=16") == GS_SUCCESS);
  CU_ASSERT(gs_precond_is_symmetric(M));
  part_t P;
  part_make(&P, H, 16, 1);
  double *X = device_inverses(M, &P, n);
  int refused = 0;
  double sym = 0.0; /* X_true symmetric: |X_ij - X_ji| within the two elements' bounds */
  CU_ASSERT(compare_inverses(H, &P, X, &refused, &sym) <= 1.0);
  fprintf(stderr, "  symmetry: |X_ij - X_ji| at most %.3g of its bound\n", sym);
  CU_ASSERT(sym <= 1.0);
  double *x = xmalloc((size_t)n * sizeof *x), *mx = xmalloc((size_t)n * sizeof *mx);
  for (gs_idx_t i = 0; i < n; ++i) x[i] = rnd();
  double *d_x = dvec(n), *d_m = dvec(n);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, x, (size_t)n * sizeof *x) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_apply(M, d_x, d_m) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, mx, d_m, (size_t)n * sizeof *mx) == GS_SUCCESS);
  double xmx = 0.0;
  for (gs_idx_t i = 0; i < n; ++i) xmx += x[i] * mx[i];
  CU_ASSERT(xmx > 0.0);
  /* BiCG takes it */
  gs_spmv_t *S = NULL;
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "cusparse-csr", NULL) == GS_SUCCESS);
  gs_solve_opts_t o;
  gs_solve_opts_default(&o);
  o.method = GS_SOLVER_BICG;
  o.maxit = 500;
  gs_solve_stats_t stats;
  CU_ASSERT(gs_solve(ctx, &o, S, M, d_x, d_m, &stats) == GS_SUCCESS);
  CU_ASSERT(gs_reason_converged(stats.reason));
  gs_spmv_destroy(&S);
  gs_precond_destroy(&M);
  gs_matrix_destroy(&A);
  free(X);
  part_free(&P);
  gs_csr_destroy(&H);
  /* nonsymmetric */
  int size[20];
  for (int I = 0; I < 20; ++I) size[I] = 3;
  H = natural(size, 20, 0.3, 4.0, 0);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_create_opts(&M, ctx, A, "block-jacobi", NULL) == GS_SUCCESS);
  CU_ASSERT(!gs_precond_is_symmetric(M));
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "cusparse-csr", NULL) == GS_SUCCESS);
  double *d_b = dvec(H->m), *d_y = dvec(H->m);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_b, x, (size_t)H->m * sizeof *x) == GS_SUCCESS);
  CU_ASSERT(gs_solve(ctx, &o, S, M, d_b, d_y, &stats) == GS_ERR_UNSUPPORTED);
  gs_dfree(ctx, d_b);
  gs_dfree(ctx, d_y);
  gs_spmv_destroy(&S);
  gs_precond_destroy(&M);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_m);
  free(x);
  free(mx);
}

/* Solves: CG on the SPD matrices, BiCGSTAB on the nonsymmetric ones, against jacobi's count
 * (printed: block-Jacobi is not guaranteed fewer iterations). */
static int solve_with(const gs_csr_t *H, gs_method_t m, const char *pc, const char *opts)
{
  gs_matrix_t *A = NULL;
  gs_spmv_t *S = NULL;
  gs_precond_t *M = NULL;
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "cusparse-csr", NULL) == GS_SUCCESS);
  gs_status_t st = gs_precond_create_opts(&M, ctx, A, pc, opts);
  int it = -2;
  if (st == GS_SUCCESS) {
    const gs_idx_t n = H->m;
    double *b = xmalloc((size_t)n * sizeof *b);
    for (gs_idx_t i = 0; i < n; ++i) b[i] = (double)(i % 7) - 3.0;
    double *d_b = dvec(n), *d_x = dvec(n);
    CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_b, b, (size_t)n * sizeof *b) == GS_SUCCESS);
    gs_solve_opts_t o;
    gs_solve_opts_default(&o);
    o.method = m;
    o.rtol = 1e-8;
    o.maxit = 20000;
    gs_solve_stats_t stats;
    st = gs_solve(ctx, &o, S, M, d_b, d_x, &stats);
    CU_ASSERT(st == GS_SUCCESS);
    it = st == GS_SUCCESS && gs_reason_converged(stats.reason) ? stats.iterations : -1;
    gs_dfree(ctx, d_b);
    gs_dfree(ctx, d_x);
    free(b);
  }
  gs_precond_destroy(&M);
  gs_spmv_destroy(&S);
  gs_matrix_destroy(&A);
  return it;
}

static void test_solves(void)
{
  if (!gs_test_have_matrices()) return;
  static const struct { const char *name; gs_method_t m; } cases[] = {
    {"nos7", GS_SOLVER_CG},         {"494_bus", GS_SOLVER_CG},   {"bcsstk13", GS_SOLVER_CG},
    {"msc04515", GS_SOLVER_CG},     {"crystm01", GS_SOLVER_CG},  {"Dubcova1", GS_SOLVER_CG},
    {"orsreg_1", GS_SOLVER_BICGSTAB}, {"sherman5", GS_SOLVER_BICGSTAB},
    {"2dcyl1", GS_SOLVER_BICGSTAB}, {"fidapex6", GS_SOLVER_GMRES}, {"cage10", GS_SOLVER_BICGSTAB}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    if (!gs_test_have_matrix(cases[c].name)) continue;
    gs_csr_t *H = NULL;
    CU_ASSERT_FATAL(gs_mm_read_csr(gs_test_matrix(cases[c].name), &H) == GS_SUCCESS);
    if (gs_test_quick() && H->nnz > 30000) {
      gs_csr_destroy(&H);
      continue;
    }
    const int ij = solve_with(H, cases[c].m, "jacobi", NULL);
    const int i4 = solve_with(H, cases[c].m, "block-jacobi", "block=4");
    const int i8 = solve_with(H, cases[c].m, "block-jacobi", NULL);
    const int i32 = solve_with(H, cases[c].m, "block-jacobi", "block=32");
    fprintf(stderr, "  %-10s %-8s jacobi %5d, block-jacobi 4: %5d, 8: %5d, 32: %5d iterations\n",
            cases[c].name, gs_method_string(cases[c].m), ij, i4, i8, i32);
    /* CG with an SPD preconditioner (block-Jacobi of an SPD A is SPD) converges where CG with
     * Jacobi did; the nonsymmetric methods only report */
    if (cases[c].m == GS_SOLVER_CG && ij > 0) CU_ASSERT(i8 > 0);
    gs_csr_destroy(&H);
  }
}

/* Singular blocks: refused naming the rows; singular=jacobi applies the block as its diagonal;
 * a zero diagonal there is refused naming the row. */
static void test_singular(void)
{
  double a[144] = {0};
  for (int i = 0; i < 12; ++i) a[i * 12 + i] = 4.0 + i;
  a[4 * 12 + 4] = 1.0; /* rows 5-6 (1-based): [1 2; 2 4] */
  a[4 * 12 + 5] = a[5 * 12 + 4] = 2.0;
  a[5 * 12 + 5] = 4.0;
  gs_csr_t *H = gs_test_csr_from_dense(12, 12, a);
  gs_matrix_t *A = NULL;
  gs_precond_t *M = NULL;
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT(gs_precond_create_opts(&M, ctx, A, "block-jacobi", "block=4") == GS_ERR_INVALID_ARG);
  fprintf(stderr, "  %s\n", gs_last_error());
  CU_ASSERT(strstr(gs_last_error(), "rows 5-8") != NULL);
  CU_ASSERT(strstr(gs_last_error(), "no pivot for row 6") != NULL);
  CU_ASSERT(M == NULL);
  CU_ASSERT_FATAL(gs_precond_create_opts(&M, ctx, A, "block-jacobi", "block=4,singular=jacobi") ==
                  GS_SUCCESS);
  part_t P;
  part_make(&P, H, 4, 1);
  double *X = device_inverses(M, &P, 12);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      CU_ASSERT(X[P.off[1] + j * 4 + i] == (i == j ? 1.0 / a[(4 + i) * 12 + 4 + i] : 0.0));
  int refused = 0; /* the other blocks against the reference, which refuses block 1 */
  CU_ASSERT(compare_inverses(H, &P, X, &refused, NULL) <= 1.0);
  CU_ASSERT(refused == 1);
  free(X);
  gs_precond_destroy(&M);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
  /* a zero row and column: refused either way, the fallback naming the zero diagonal (row 7) */
  a[4 * 12 + 5] = a[5 * 12 + 4] = 0.0;
  a[6 * 12 + 6] = 0.0;
  H = gs_test_csr_from_dense(12, 12, a);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT(gs_precond_create_opts(&M, ctx, A, "block-jacobi", "block=4") == GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "no pivot for row 7") != NULL);
  CU_ASSERT(gs_precond_create_opts(&M, ctx, A, "block-jacobi", "block=4,singular=jacobi") ==
            GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "row 7 has a zero diagonal") != NULL);
  CU_ASSERT(M == NULL);
  part_free(&P);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
  /* 1 x 1 and 0 x 0 */
  const double one[1] = {4.0};
  H = gs_test_csr_from_dense(1, 1, one);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_create(&M, ctx, A, "block-jacobi") == GS_SUCCESS);
  double *d = dvec(2), hr = 2.0, hz = 0.0;
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d, &hr, sizeof hr) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_apply(M, d, d + 1) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, &hz, d + 1, sizeof hz) == GS_SUCCESS);
  CU_ASSERT(hz == 0.5);
  gs_dfree(ctx, d);
  gs_precond_destroy(&M);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
  gs_csr_t *E = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&E, 0, 0, 0) == GS_SUCCESS);
  if (gs_matrix_create(&A, ctx, E) == GS_SUCCESS) {
    CU_ASSERT(gs_precond_create(&M, ctx, A, "block-jacobi") == GS_SUCCESS);
    CU_ASSERT(gs_precond_device_bytes(M) == sizeof(gs_idx_t) + sizeof(int64_t));
    gs_precond_destroy(&M);
    gs_matrix_destroy(&A);
  }
  gs_csr_destroy(&E);
}

/* gs_precond_setup with new values on the same pattern: the new inverses. */
static void test_resetup(void)
{
  int size[25];
  for (int I = 0; I < 25; ++I) size[I] = 1 + rndint(5);
  gs_csr_t *H = natural(size, 25, 0.2, 4.0, 0);
  gs_csr_t *H2 = NULL;
  CU_ASSERT_FATAL(gs_csr_copy(&H2, H) == GS_SUCCESS);
  for (gs_off_t k = 0; k < H2->nnz; ++k) H2->val[k] = 2.0 * H2->val[k] + 0.25;
  gs_matrix_t *A = NULL, *A2 = NULL;
  gs_precond_t *M = NULL;
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_matrix_create(&A2, ctx, H2) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_create_opts(&M, ctx, A, "block-jacobi", "block=6") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_setup(M, A2) == GS_SUCCESS);
  part_t P;
  part_make(&P, H2, 6, 1);
  double *X = device_inverses(M, &P, H2->m);
  int refused = 0;
  CU_ASSERT(compare_inverses(H2, &P, X, &refused, NULL) <= 1.0);
  CU_ASSERT(refused == 0);
  free(X);
  part_free(&P);
  gs_precond_destroy(&M);
  gs_matrix_destroy(&A);
  gs_matrix_destroy(&A2);
  gs_csr_destroy(&H);
  gs_csr_destroy(&H2);
}

/* Allocation k of the setup fails, for every k: a clean error, nothing left allocated. */
static void test_alloc_failures(void)
{
  int size[40];
  for (int I = 0; I < 40; ++I) size[I] = 1 + rndint(4);
  gs_csr_t *H = natural(size, 40, 0.2, 4.0, 0);
  gs_matrix_t *A = NULL;
  gs_precond_t *M = NULL;
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  /* upload the shared CSR first: it belongs to A */
  CU_ASSERT_FATAL(gs_precond_create(&M, ctx, A, "block-jacobi") == GS_SUCCESS);
  gs_precond_destroy(&M);
  const size_t base = gs_device_bytes_in_use(ctx);
  int failed = 0;
  for (long k = 1; k < 50; ++k) {
    gs_test_dmalloc_fail_after(ctx, k);
    const gs_status_t st = gs_precond_create(&M, ctx, A, "block-jacobi");
    gs_test_dmalloc_fail_after(ctx, 0);
    if (st == GS_SUCCESS) {
      gs_precond_destroy(&M);
      break;
    }
    ++failed;
    CU_ASSERT(st == GS_ERR_DEVICE_MEMORY);
    CU_ASSERT(M == NULL);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  }
  fprintf(stderr, "  %d allocation failures tried\n", failed);
  CU_ASSERT(failed == 4); /* block starts, offsets, inverses, status */
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
}

int main(void)
{
  CU_TestInfo tests[] = {{"random", test_random},
                         {"wide", test_wide},
                         {"block1_is_jacobi", test_block1_is_jacobi},
                         {"real", test_real},
                         {"symmetry", test_symmetry},
                         {"solves", test_solves},
                         {"singular", test_singular},
                         {"resetup", test_resetup},
                         {"alloc_failures", test_alloc_failures},
                         CU_TEST_INFO_NULL};
  if (gs_device_count() > 0 && gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "block_jacobi_gpu: no context: %s\n", gs_last_error());
    return 1;
  }
  const int rc = gs_test_main("block_jacobi_gpu", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
