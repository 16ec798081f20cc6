/* precond/amg_impl.h: smoothed-aggregation algebraic multigrid (not installed).
 *
 * Setup of one level, as PyAMG's smoothed_aggregation_solver (Vanek, Mandel and Brezina 1996;
 * the parallel aggregation of Bell, Dalton and Olson, "Exposing fine-grained parallelism in
 * algebraic multigrid methods", SISC 2012, Section 4):
 *   1. d = diag(A)                                      gs_amg_diag_*
 *   2. strength: entry (i, j), j != i, is strong when   gs_amg_strength_*
 *        a_ij != 0 and |a_ij| >= theta * sqrt(|d_i| * |d_j|)
 *      (PyAMG's symmetric_strength_of_connection). A row with no strong off-diagonal entry is
 *      ISOLATED: it joins no aggregate (agg = -1: its row of T is zero).
 *   3. aggregation from a distance-2 maximal independent set (MIS(2)) of the strength graph,
 *      exactly as below, so that the host reference and the GPU give the same aggregates.
 *   4. tentative prolongator T (one entry a row): T(i, agg[i]) = B_i / ||B restricted to the
 *      aggregate||_2 (B = ones by default: 1 / sqrt(aggregate size)).
 *   5. smoothed prolongator P = (I - omega D^-1 A) T, omega = (4/3) / rho(D^-1 A).
 *   6. R = P^T, A_c = R (A P).
 *
 * MIS(2) (Bell et al. 2012, Algorithm 2 with the tuple of their Section 4.1). Ns(i) = the
 * columns j != i of row i's strong entries. Node i's key is the 64-bit
 *     key(i) = (rank << 62) | ((uint64)(gs_amg_hash(i) >> 1) << 31) | i
 * with rank 2 for IN, 1 for UNDECIDED, 0 for OUT (i < 2^31). Isolated nodes take no part.
 * Every node starts UNDECIDED; a round is
 *     t1[i] = max of key(j) over j in {i} u Ns(i), j not isolated
 *     t2[i] = max of t1[j]  over j in {i} u Ns(i), j not isolated
 *     for each UNDECIDED i: IN when t2[i] == key(i); else OUT when t2[i] >> 62 == 2 (IN)
 * (t1 and t2 are read from the previous step's arrays, never updated in place) and rounds
 * repeat until no node is UNDECIDED.
 * Aggregates:
 *   a. the IN nodes are the roots, numbered 0, 1, ... in increasing node order;
 *   b. every other non-isolated node i takes the aggregate of the root j in Ns(i) of largest
 *      key(j) (the IN key), if it has one;
 *   c. every node still without one takes the aggregate (as of the end of b) of the neighbour
 *      j in Ns(i) that has one and the largest (gs_amg_hash(j) >> 1, j) (as key(j) with rank 0);
 *      reads come from the array b wrote, writes go to a new one;
 *   d. every non-isolated node still without one (possible only when the strength graph is not
 *      symmetric) becomes an aggregate of its own, numbered after the roots in node order.
 *
 * Smoothed P, row i, for bit-identical host and GPU values: with w_i = -omega / d_i,
 * the aggregates J met in row i of A (entries in column order, skipping columns j with
 * agg[j] < 0) give the columns of row i in increasing J; for each J,
 *     v_J = sum over row i's entries k with agg[col[k]] == J, in column order, of a_ik * t_col[k]
 *     P(i, J) = w_i * v_J, plus t_i when J == agg[i] (t_i + w_i * v_J)
 * each product and sum rounded on its own (no fused multiply-add: the kernels use __dmul_rn,
 * __dadd_rn). Entries that are exactly 0 are kept.
 *
 * Near-null space of k vectors and nodes of several unknowns (PyAMG's B and BSR matrices;
 * Vanek, Mandel and Brezina 1996, Section 3; PyAMG's fit_candidates):
 *   NODES. A level's unknowns may come in nodes, contiguous ranges node_ptr[I] ..
 *     node_ptr[I+1]-1 of at most GS_AMG_BLOCK_MAX unknowns: on the finest level the option
 *     block=K (node I = unknowns K I .. K I + K - 1, interleaved), on a level made from k
 *     vectors the k_J unknowns of each aggregate J of the finer level (possibly none). Strength
 *     and aggregation (rules 2 and 3) then run on the amalgamated matrix Aa, nodes x nodes:
 *     Aa(I, J) = ||A_IJ||_F over the rows of I and the columns of J, its squares summed from
 *     0.0 over I's rows in order and each row's entries of J in column order, then sqrt (an
 *     all-zero block gives an explicit 0: never strong); its columns are the nodes met in any
 *     row of I, increasing. Every unknown takes its node's aggregate (PyAMG's strength of a
 *     BSR matrix, by the Frobenius norms of its blocks).
 *   FIT. Per aggregate J, with S_J its unknowns in increasing order, the |S_J| x k block
 *     B_J = B(S_J, :) is factored B_J = Q_J R_J by modified Gram-Schmidt, c = 0 .. k-1:
 *        v = B_J(:, c); nrm0 = ||v||; for p < c: r_pc = <v, q_p>, v = v - r_pc q_p;
 *        nrm = ||v||; kept when nrm > GS_AMG_FIT_TOL nrm0: q_c = v / nrm, r_cc = nrm;
 *        else dropped: q_c = 0, r_cc = 0 (a dependent column: an aggregate of fewer unknowns
 *        than k, or vectors alike there)
 *     (every norm and dot summed from 0.0 over S_J in order, v_i q_ip with v first, each
 *     product, sum, difference, quotient and sqrt rounded on its own). The k_J kept columns are
 *     T's columns cptr[J] .. cptr[J] + k_J - 1 (cptr = exclusive sums of k_J over J), in order
 *     of c: T(i, cptr[J] + c') = q_c(i) for i in S_J, c' the rank of c among the kept. Rows of
 *     isolated unknowns are empty. The coarse near-null space (ncoarse x k, column-major) is
 *     Bc(cptr[J] + c', :) = row c of R_J, so T Bc = B up to rounding plus the dropped parts
 *     (each at most GS_AMG_FIT_TOL of its column's norm there): a dropped column's row of R_J
 *     is zero, so leaving it out keeps T Bc and T's columns orthonormal (PyAMG keeps it as a
 *     zero column of T, a zero row and column of A_c, which our smoother cannot invert).
 *     With k = 1 and B = ones, T is rule 4's t bit for bit; the coarse vector is then
 *     sqrt(|aggregate|) (PyAMG's), where the default (no B given) uses ones on every level.
 *   SMOOTHED P of a general T: P = T + W (A T), W = diag(-omega / d_i): A T by the SpGEMM of
 *     the Galerkin product (gs_amg_spgemm_host / gs_amg_spgemm_own_dev, the same bits), then
 *     P(i, c) = w_i * (AT)(i, c), plus t_ic when T has (i, c) (t_ic + w_i (AT)(i, c)); T's
 *     pattern lies in A T's because every a_ii is stored. With T = rule 4's t this is the
 *     smoothed-P rule above, bit for bit. */
#ifndef GS_AMG_IMPL_H
#define GS_AMG_IMPL_H

#include <stdint.h>

#include "core/context_impl.h"
#include "gpusolve/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MIS(2) states (key bits 63..62). */
enum { GS_AMG_OUT = 0, GS_AMG_UNDECIDED = 1, GS_AMG_IN = 2 };

/** The node priority of the MIS(2) (a 32-bit mix of i: the finalizer of MurmurHash3). Host and
 *  device share this definition. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline uint32_t gs_amg_hash(uint32_t i)
{
  uint32_t h = i * 0x9E3779B1u;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

#ifdef __CUDACC__
__host__ __device__
#endif
static inline uint64_t gs_amg_key(int rank, int32_t i)
{
  return ((uint64_t)rank << 62) | ((uint64_t)(gs_amg_hash((uint32_t)i) >> 1) << 31) |
         (uint64_t)(uint32_t)i;
}

/* ---- host reference (precond/amg_host.c, pure C) ---------------------------------------------
 * A: a square host CSR with sorted rows (gs_matrix_host's). Arrays are caller-allocated unless
 * the function returns a gs_csr_t. */

/** d[i] = a_ii (0 where row i stores none). */
void gs_amg_diag_host(const gs_csr_t *A, double *d);
/** strong[k] = 1 when entry k is strong (rule 2 above), else 0 (diagonal entries 0). */
void gs_amg_strength_host(const gs_csr_t *A, const double *d, double theta, uint8_t *strong);
/** agg[i] = the aggregate of node i (rules 3a-d), -1 for an isolated node; *naggs the number
 *  of aggregates, *rounds the MIS(2) rounds. GS_ERR_HOST_MEMORY on allocation failure. */
gs_status_t gs_amg_aggregate_host(const gs_csr_t *A, const uint8_t *strong, int32_t *agg,
                                  int32_t *naggs, int *rounds);
/** t[i] = T(i, agg[i]) (rule 4; B NULL: ones), 0 for agg[i] < 0. An aggregate whose B is zero
 *  gets zeros. GS_ERR_HOST_MEMORY on allocation failure. */
gs_status_t gs_amg_tentative_host(gs_idx_t n, const int32_t *agg, int32_t naggs,
                                  const double *B, double *t);
/** P = (I - omega D^-1 A) T (n x naggs, rows sorted, the rule above). Needs d_i != 0 for every
 *  row (GS_ERR_INVALID_ARG naming the 1-based row otherwise). */
gs_status_t gs_amg_smooth_p_host(const gs_csr_t *A, const double *d, const int32_t *agg,
                                 const double *t, int32_t naggs, double omega, gs_csr_t **P);
/** C = A B (host, rows sorted, no entries dropped; each sum in increasing k of A's row). */
gs_status_t gs_amg_spgemm_host(const gs_csr_t *A, const gs_csr_t *B, gs_csr_t **C);
/** A_c = P^T (A P). */
gs_status_t gs_amg_rap_host(const gs_csr_t *A, const gs_csr_t *P, gs_csr_t **Ac);

/* ---- near-null space and nodes (host reference; the rules NODES, FIT, SMOOTHED P above) ---- */
#define GS_AMG_NNS_MAX 8     /* most near-null-space vectors (k) */
#define GS_AMG_BLOCK_MAX 8   /* most unknowns of a node (the option block=K, and k_J <= k) */
#define GS_AMG_FIT_TOL 1e-10 /* FIT drops a column left with at most this part of its norm
                                (PyAMG's fit_candidates tolerance) */

/** Aa, the amalgamated matrix of the square A over the nodes node_ptr (nnodes + 1 entries from 0
 *  to A->m, nondecreasing, each node at most GS_AMG_BLOCK_MAX unknowns): nnodes x nnodes, rows
 *  sorted. GS_ERR_INVALID_ARG for bad nodes, GS_ERR_HOST_MEMORY. */
gs_status_t gs_amg_amalgamate_host(const gs_csr_t *A, gs_idx_t nnodes, const int32_t *node_ptr,
                                   gs_csr_t **Aa);
/** FIT of the n x k near-null space B (column-major, leading dimension ldb >= n) over the
 *  aggregates agg (-1: isolated): T (n x ncoarse, rows sorted), *Bc (ncoarse x k column-major,
 *  malloc'd; NULL when ncoarse = 0) and cptr (naggs + 1 entries, caller-allocated: aggregate J's
 *  coarse unknowns are cptr[J] .. cptr[J+1]-1). 1 <= k <= GS_AMG_NNS_MAX. */
gs_status_t gs_amg_fit_host(gs_idx_t n, int k, const double *B, int64_t ldb, const int32_t *agg,
                            int32_t naggs, gs_csr_t **T, double **Bc, int32_t *cptr);
/** P = T + W (A T) (SMOOTHED P of a general T), A square with every d_i != 0
 *  (GS_ERR_INVALID_ARG naming the 1-based row otherwise). */
gs_status_t gs_amg_smooth_tp_host(const gs_csr_t *A, const double *d, const gs_csr_t *T,
                                  double omega, gs_csr_t **P);
/** Checks a near-null space given by the caller (n x k, column-major, leading dimension ldb):
 *  1 <= k (GS_ERR_INVALID_ARG) <= GS_AMG_NNS_MAX (GS_ERR_UNSUPPORTED), ldb >= n, every value
 *  finite, no zero column, full column rank (modified Gram-Schmidt with a second pass: a column
 *  left with at most GS_AMG_FIT_TOL of its norm is a combination of the previous ones):
 *  GS_ERR_INVALID_ARG naming the vector (1-based) and, for a value, its row. `what` starts the
 *  message ("near_null=B.mtx"). */
gs_status_t gs_amg_near_null_check(gs_idx_t n, int k, const double *B, int64_t ldb,
                                   const char *what);
/** Reads the near-null space of the option near_null=PATH: a Matrix Market file of n rows and
 *  k columns (`array`, or coordinate with the missing entries 0) through the library's reader,
 *  checked by gs_amg_near_null_check; *B column-major n x k (malloc'd). GS_ERR_DIMENSION when
 *  its rows are not n; the reader's errors (GS_ERR_IO, GS_ERR_PARSE) name the file. */
gs_status_t gs_amg_near_null_read(const char *path, gs_idx_t n, int *k, double **B);

/* ---- device setup phases (precond/amg_setup_kernels.cu) --------------------------------------
 * A level's matrix on the device: 32-bit row pointers (a level of more than 2^31-1 entries is
 * refused before). Arrays come from the counted allocator (gs_dmalloc) of the context and are
 * freed with gs_amg_dcsr_free. Every function runs on ctx->stream; those that return a size to
 * the host synchronize it. */
typedef struct gs_amg_dcsr {
  gs_idx_t m, n;
  int64_t nnz;
  int32_t *rp;   /* m + 1 */
  gs_idx_t *col; /* nnz, sorted within each row */
  double *val;   /* nnz */
} gs_amg_dcsr_t;

/** Frees A's arrays (NULL-safe) and zeroes A. */
void gs_amg_dcsr_free(gs_context_t *ctx, gs_amg_dcsr_t *A);
/** d_diag[i] = a_ii (0 where absent); async. */
gs_status_t gs_amg_diag_dev(gs_context_t *ctx, gs_idx_t n, const int32_t *rp, const gs_idx_t *col,
                            const double *val, double *d_diag);
/** d_strong[k] per rule 2 (bit-identical to the host's); async. */
gs_status_t gs_amg_strength_dev(gs_context_t *ctx, gs_idx_t n, const int32_t *rp,
                                const gs_idx_t *col, const double *val, const double *d_diag,
                                double theta, uint8_t *d_strong);
/** d_agg per rules 3a-d (identical to the host's); *naggs, *rounds as there. Synchronizes. */
gs_status_t gs_amg_aggregate_dev(gs_context_t *ctx, gs_idx_t n, const int32_t *rp,
                                 const gs_idx_t *col, const uint8_t *d_strong, int32_t *d_agg,
                                 int32_t *naggs, int *rounds);
/** d_t per rule 4 (d_B NULL: ones; bit-identical for ones, within rounding for a given B). */
gs_status_t gs_amg_tentative_dev(gs_context_t *ctx, gs_idx_t n, const int32_t *d_agg,
                                 int32_t naggs, const double *d_B, double *d_t);
/** P per the smoothed-P rule (bit-identical to the host's), a fresh device CSR. Synchronizes. */
gs_status_t gs_amg_smooth_p_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A, const double *d_diag,
                                const int32_t *d_agg, const double *d_t, int32_t naggs,
                                double omega, gs_amg_dcsr_t *P);
/** R = P^T (a radix sort of the entries by (column, row): values moved, not computed), a fresh
 *  device CSR with sorted rows. */
gs_status_t gs_amg_transpose_dev(gs_context_t *ctx, const gs_amg_dcsr_t *P, gs_amg_dcsr_t *R);
/** C = A B (cuSPARSE SpGEMM), a fresh device CSR with sorted rows. Synchronizes. */
gs_status_t gs_amg_spgemm_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A, const gs_amg_dcsr_t *B,
                              gs_amg_dcsr_t *C);
/** C = A B with our own kernels (precond/amg_spgemm_kernels.cu; no cuSPARSE), a fresh device
 *  CSR with sorted rows, bit-identical to gs_amg_spgemm_host: each C(i, j) summed from 0.0 over
 *  A's row i in its stored order, every product and sum rounded on its own; entries that cancel
 *  to 0 are kept. GS_ERR_UNSUPPORTED when C would hold more than 2^31-1 entries or one row more
 *  than 2^31-1 products a_ik b_kj. Synchronizes. */
gs_status_t gs_amg_spgemm_own_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                  const gs_amg_dcsr_t *B, gs_amg_dcsr_t *C);
/** The same with `bound` the bytes of intermediate buffers (12 a product, 36 in rows of more
 *  than 4096 products) taken at once: the rows go in consecutive ranges of at most the bound
 *  plus one row each. 0: 1 GiB. For the suites, which cover the ranges on small products. */
gs_status_t gs_amg_spgemm_own_dev_bounded(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                          const gs_amg_dcsr_t *B, gs_amg_dcsr_t *C,
                                          size_t bound);
/** d_l1[i] = sum_j |a_ij| (the l1-Jacobi smoother's diagonal, Baker, Falgout, Kolev and Yang
 *  2011, on one process); async. */
gs_status_t gs_amg_l1_diag_dev(gs_context_t *ctx, gs_idx_t n, const int32_t *rp,
                               const double *val, double *d_l1);

/** The coarsest level's direct solve: the dense inverse of A (n <= GS_AMG_DENSE_MAX) by
 *  Gauss-Jordan elimination with partial pivoting on the GPU (one block for small n, a kernel a
 *  pivot step otherwise), column-major n x n in *d_inv (counted). When A is singular or nearly
 *  (a zero or NaN pivot, or min |pivot| <= n * eps * max |pivot|), *d_inv is NULL and
 *  *singular = 1 (the caller smooths instead). Synchronizes. */
#define GS_AMG_DENSE_MAX 8192
gs_status_t gs_amg_dense_inverse_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A, double **d_inv,
                                     int *singular);

/* ---- near-null space and nodes on the device (precond/amg_nns_kernels.cu) --------------------
 * Bit for bit the host reference's (gs_amg_amalgamate_host, gs_amg_fit_host,
 * gs_amg_smooth_tp_host). */

/** Nodes of K unknowns each (the option block=K): d_node_ptr[I] = K I (nnodes + 1 entries),
 *  d_node_of[i] = i / K (K nnodes entries); async. */
gs_status_t gs_amg_nodes_uniform_dev(gs_context_t *ctx, gs_idx_t nnodes, int K,
                                     int32_t *d_node_ptr, int32_t *d_node_of);
/** d_node_of[i] = the node I with d_node_ptr[I] <= i < d_node_ptr[I+1] (d_node_ptr[nnodes]
 *  entries); async. */
gs_status_t gs_amg_nodes_of_dev(gs_context_t *ctx, gs_idx_t nnodes, const int32_t *d_node_ptr,
                                int32_t *d_node_of);
/** Aa per NODES (nodes of at most GS_AMG_BLOCK_MAX unknowns), a fresh device CSR.
 *  Synchronizes. */
gs_status_t gs_amg_amalgamate_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A, gs_idx_t nnodes,
                                  const int32_t *d_node_ptr, const int32_t *d_node_of,
                                  gs_amg_dcsr_t *Aa);
/** d_agg[i] = d_agg_node[d_node_of[i]] for the n unknowns; async. */
gs_status_t gs_amg_expand_agg_dev(gs_context_t *ctx, gs_idx_t n, const int32_t *d_node_of,
                                  const int32_t *d_agg_node, int32_t *d_agg);
/** FIT of d_B (n x k column-major, leading dimension n) over d_agg: T (a fresh device CSR, n x
 *  ncoarse), *d_Bc (ncoarse x k column-major, counted; NULL when ncoarse = 0), d_cptr (naggs + 1
 *  entries, caller-allocated), *kmax = the most unknowns of a coarse node (max k_J).
 *  GS_ERR_UNSUPPORTED when T would hold more than 2^31-1 entries. Synchronizes. */
gs_status_t gs_amg_fit_dev(gs_context_t *ctx, gs_idx_t n, int k, const double *d_B,
                           const int32_t *d_agg, int32_t naggs, gs_amg_dcsr_t *T, double **d_Bc,
                           int32_t *d_cptr, int *kmax);
/** P = T + W (A T) (SMOOTHED P of a general T) with our SpGEMM, a fresh device CSR; a zero
 *  diagonal is GS_ERR_INVALID_ARG naming its row. Synchronizes. */
gs_status_t gs_amg_smooth_tp_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A, const double *d_diag,
                                 const gs_amg_dcsr_t *T, double omega, gs_amg_dcsr_t *P);

/* ---- cycle kernels (precond/amg_cycle_kernels.cu); async on stream ------------------------- */

/** x = w * dinv .* b (x_zero) or x += w * dinv .* r. */
gs_status_t gs_amg_jacobi_kernel(cudaStream_t stream, gs_idx_t n, double w, const double *dinv,
                                 const double *r, double *x, int x_zero);
/** One step of the Chebyshev smoother (Saad, Iterative Methods, Algorithm 12.1, on D^-1 A):
 *  d = c1 * d + c2 * dinv .* r; x += d (first = 1: d = c2 * dinv .* r; first = 2: the same
 *  with x = d, x write-only: the first step from x = 0). */
gs_status_t gs_amg_cheb_kernel(cudaStream_t stream, gs_idx_t n, double c1, double c2,
                               const double *dinv, const double *r, double *d, double *x,
                               int first);

/* ---- level kernels of precond/amg.c (precond/amg_level_kernels.cu); async on stream -------- */

/** dinv[i] = 1 / d[i]; *d_bad (device, preset to INT32_MAX by the caller) gets the least row
 *  whose d[i] is zero or not finite. */
gs_status_t gs_amg_invert_kernel(cudaStream_t stream, gs_idx_t n, const double *d, double *dinv,
                                 int32_t *d_bad);
/** v[i] = 0.5 + gs_amg_hash(i) / 2^32: the start of the spectral-radius estimate. */
gs_status_t gs_amg_start_vector_kernel(cudaStream_t stream, gs_idx_t n, double *v);
/** u = dinv .* z. */
gs_status_t gs_amg_scale_kernel(cudaStream_t stream, gs_idx_t n, const double *dinv,
                                const double *z, double *u);
/** v = u / sqrt(*s2) (s2 on the device; v = 0 when *s2 <= 0 or is not finite). */
gs_status_t gs_amg_normalize_kernel(cudaStream_t stream, gs_idx_t n, const double *u,
                                    const double *s2, double *v);

#ifdef __cplusplus
}
#endif
#endif
