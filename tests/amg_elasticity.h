/* tests/amg_elasticity.h: 2D linear elasticity for the AMG suites (header only): the system of
 * PyAMG's gallery.linear_elasticity((nx, nx)) (pyamg.gallery.elasticity.q12d: plane strain, Q1
 * elements of side 1 on a square of nx + 1 elements a side, E = 1e5, nu = 0.3, the boundary nodes
 * fixed) with its three rigid-body modes, built here independently: the element stiffness by
 * 2 x 2 Gauss quadrature of B^T D B (exact for Q1 on a square), assembled over the elements.
 * Unknowns: node (ix, iy), 1 <= ix, iy <= nx, is node (iy - 1) nx + (ix - 1), its x and y
 * displacements unknowns 2 node and 2 node + 1 (interleaved: block=2); coordinates centred as
 * PyAMG's, (ix - (nx + 1) / 2, iy - (nx + 1) / 2). Entries that cancel (to rounding, below
 * 1e-12 of the largest) are left out, as PyAMG's sums leave them 0. tests/pyamg_iterations.py
 * --check-elasticity compares a matrix written from this one with PyAMG's. */
#ifndef GS_TESTS_AMG_ELASTICITY_H
#define GS_TESTS_AMG_ELASTICITY_H

#include <math.h>
#include <stdlib.h>

#include "gpusolve.h"

/* The 8 x 8 element stiffness of the unit square, unknowns (x, y) of the corners (0,0), (1,0),
 * (1,1), (0,1) in that order: sum over the Gauss points of w B^T D B, D of plane strain. */
static void gs_test_q1_element(double E, double nu, double K[8][8])
{
  const double lam = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), mu = E / (2.0 + 2.0 * nu);
  const double D[3][3] = {{lam + 2.0 * mu, lam, 0.0}, {lam, lam + 2.0 * mu, 0.0}, {0.0, 0.0, mu}};
  const double g[2] = {0.5 - 0.5 / sqrt(3.0), 0.5 + 0.5 / sqrt(3.0)};
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) K[a][b] = 0.0;
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 2; ++q) {
      const double x = g[p], y = g[q];
      const double dx[4] = {-(1.0 - y), 1.0 - y, y, -y}, dy[4] = {-(1.0 - x), -x, x, 1.0 - x};
      double Bm[3][8] = {{0}};
      for (int c = 0; c < 4; ++c) {
        Bm[0][2 * c] = dx[c];     /* eps_xx = du/dx */
        Bm[1][2 * c + 1] = dy[c]; /* eps_yy = dv/dy */
        Bm[2][2 * c] = dy[c];     /* gamma_xy = du/dy + dv/dx */
        Bm[2][2 * c + 1] = dx[c];
      }
      for (int a = 0; a < 8; ++a)
        for (int b = 0; b < 8; ++b) {
          double s = 0.0;
          for (int r = 0; r < 3; ++r)
            for (int t = 0; t < 3; ++t) s += Bm[r][a] * D[r][t] * Bm[t][b];
          K[a][b] += 0.25 * s; /* weight 1/4 a point on the unit square */
        }
    }
}

/* A (2 nx^2 unknowns) and, when B is not NULL, its rigid-body modes (malloc'd, column-major
 * n x 3: x translation, y translation, rotation (-y, x)). GS_ERR_* from the containers. */
static gs_status_t gs_test_elasticity(gs_idx_t nx, gs_csr_t **A, double **B)
{
  gs_status_t st = GS_SUCCESS;
  gs_coo_t *C = NULL;
  gs_csr_t *S = NULL;
  double K[8][8];
  const gs_idx_t X = nx + 1, n = 2 * nx * nx; /* elements a side, unknowns */
  *A = NULL;
  if (B) *B = NULL;
  if (nx < 1) return GS_ERR_INVALID_ARG;
  gs_test_q1_element(1e5, 0.3, K);
  st = gs_coo_create(&C, n, n, (gs_off_t)64 * X * X);
  if (st != GS_SUCCESS) return st;
  for (gs_idx_t ey = 0; ey < X; ++ey)
    for (gs_idx_t ex = 0; ex < X; ++ex) {
      const gs_idx_t cx[4] = {ex, ex + 1, ex + 1, ex}, cy[4] = {ey, ey, ey + 1, ey + 1};
      gs_idx_t dof[8];
      for (int c = 0; c < 4; ++c) { /* the boundary's unknowns are fixed: -1 */
        const int in = cx[c] >= 1 && cx[c] <= nx && cy[c] >= 1 && cy[c] <= nx;
        const gs_idx_t node = (cy[c] - 1) * nx + (cx[c] - 1);
        dof[2 * c] = in ? 2 * node : -1;
        dof[2 * c + 1] = in ? 2 * node + 1 : -1;
      }
      for (int a = 0; a < 8; ++a)
        for (int b = 0; b < 8; ++b)
          if (dof[a] >= 0 && dof[b] >= 0 && (st = gs_coo_push(C, dof[a], dof[b], K[a][b])))
            goto done;
    }
  if ((st = gs_coo_to_csr(&S, C))) goto done;
  { /* drop the entries that cancel: at most a few roundings of the four elements' sum left,
     * where PyAMG's summation order happens to leave exact zeros */
    double kmax = 0.0;
    for (int a = 0; a < 8; ++a) kmax = fmax(kmax, fabs(K[a][a]));
    const double tiny = 1e-12 * kmax;
    gs_off_t w = 0, k0 = 0;
    for (gs_idx_t i = 0; i < n; ++i) {
      const gs_off_t end = S->row_ptr[i + 1];
      for (gs_off_t k = k0; k < end; ++k)
        if (fabs(S->val[k]) > tiny) {
          S->col[w] = S->col[k];
          S->val[w++] = S->val[k];
        }
      k0 = end;
      S->row_ptr[i + 1] = w;
    }
    S->nnz = w;
  }
  if (B) {
    double *b = malloc((size_t)n * 3 * sizeof *b);
    if (!b) {
      st = GS_ERR_HOST_MEMORY;
      goto done;
    }
    const double c = 0.5 * (double)X;
    for (gs_idx_t iy = 1; iy <= nx; ++iy)
      for (gs_idx_t ix = 1; ix <= nx; ++ix) {
        const gs_idx_t u = 2 * ((iy - 1) * nx + (ix - 1));
        const double x = (double)ix - c, y = (double)iy - c;
        b[u] = 1.0, b[u + 1] = 0.0;                   /* x translation */
        b[n + u] = 0.0, b[n + u + 1] = 1.0;           /* y translation */
        b[2 * n + u] = -y, b[2 * n + u + 1] = x;      /* rotation */
      }
    *B = b;
  }
  *A = S;
  S = NULL;
done:
  gs_coo_destroy(&C);
  gs_csr_destroy(&S);
  return st;
}

#endif
