/* spmv/pkt.h: the pkt backend, the packet format of Bell & Garland ("Efficient Sparse
 * Matrix-Vector Multiplication on CUDA", NVIDIA Technical Report NVR-2008-004, 2008, the packet
 * (PKT) format). What the host builder and emulation (spmv/pkt_build.c) and the kernels
 * (spmv/pkt_kernels.cu) share. Pure C.
 *
 * Layout. The rows (and, for a square matrix, the columns with them) are renumbered by reverse
 * Cuthill-McKee (gs_csr_rcm, core/order.h) when that moves fewer bytes, else kept; perm[k]
 * is the caller's index of new index k (NULL: the identity). The new rows are cut into packets
 * of R consecutive rows (the last may hold fewer): packet p holds new rows [p R, p R + rows_p).
 * Each packet has a column window of at most W new columns, [col0[p], col0[p] + ncols[p]):
 * the packet's entries whose new column lies in it are stored in the packet, the others go to
 * the remainder. A packet is run by one block of B threads; thread t owns a run of whole rows of
 * the packet (consecutive, assigned greedily so that no thread holds more than L_p entries) and
 * its entries sit at slots slot_ptr[p] + j*B + t, j = 0 .. L_p - 1 (L_p = (slot_ptr[p+1] -
 * slot_ptr[p]) / B): per-thread lists of equal length, interleaved so that the block reads B
 * consecutive slots at each step (an ELL inside the packet, but over entries rather than rows).
 * A slot holds idx = (local row << 16) | local column (both 16 bits) and its value; a list ends
 * early with GS_PKT_PAD (value 0). Rows longer than the packet's long-row limit (they would
 * stretch every thread's list) are left out of the packet: their entries go to the remainder.
 * The remainder is a COO layout (spmv/formats.h) in the caller's numbering, rows sorted, run by
 * the coo backend's own kernels after the packet kernel (y += alpha * remainder * x). */
#ifndef GS_SPMV_PKT_H
#define GS_SPMV_PKT_H

#include <stdint.h>

#include "spmv/formats.h"
#include "spmv/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The backend's options, in table order (cfg->v[]; the table is in pkt_kernels.cu). */
enum { PKT_OPT_WINDOW, PKT_OPT_ROWS, PKT_OPT_PACKETS, PKT_OPT_REORDER };

enum { GS_PKT_REORDER_AUTO = 0, GS_PKT_REORDER_RCM = 1, GS_PKT_REORDER_NONE = 2 };

#define GS_PKT_PAD 0xffffffffu   /* the slot after a thread's last entry (local row 0xffff) */
#define GS_PKT_WINDOW_AUTO 4096  /* x entries staged a packet by default (32 KB) */
#define GS_PKT_WINDOW_MAX 16384  /* at most (128 KB): local columns fit 16 bits */
#define GS_PKT_ROWS_MAX 16384    /* rows a packet at most: local rows fit 16 bits (< 0xffff) */
#define GS_PKT_BLOCK 256         /* threads a packet at most (fewer for packets of fewer rows) */
#define GS_PKT_ROWS_A_THREAD 4   /* rows a thread aimed at (B = R / 4, whole warps) */
#define GS_PKT_ROWS_AUTO_MIN 64  /* the automatic R: a power of two in [64, 4096] */
#define GS_PKT_ROWS_AUTO_MAX 4096
#define GS_PKT_MIN_PACKETS 264   /* ... giving at least this many packets (2 blocks an H100 SM) */
#define GS_PKT_GAIN 12.0        /* bytes an entry moves less in a packet than in the remainder */
#define GS_PKT_LONG_MIN 32       /* a row is long past max(2 ceil(E_p / B), this) entries */

/** The packet layout (see the banner). */
typedef struct gs_pkt {
  gs_idx_t m, n;
  int64_t nnz;
  gs_idx_t R, W;          /* rows a packet, window budget (columns) */
  int B;                  /* threads a packet: R / GS_PKT_ROWS_A_THREAD rounded up to a multiple
                             of 32, in [32, GS_PKT_BLOCK] */
  gs_idx_t npackets;      /* ceil(m / R) */
  int reordered;          /* 1 when perm is the RCM order */
  gs_idx_t *perm;         /* m (= n) entries, or NULL (the identity) */
  int64_t *slot_ptr;      /* npackets + 1, multiples of B */
  gs_idx_t *col0, *ncols; /* npackets each: the window, new column numbering */
  uint32_t *idx;          /* slots: (local row << 16) | local column, GS_PKT_PAD after a list */
  double *val;            /* slots, 0 after a list */
  int64_t slots;          /* slot_ptr[npackets] */
  int64_t in_packets;     /* entries stored in packets (nnz - remainder) */
  int64_t long_moved;     /* of the remainder: entries of long rows left out of their packet */
  int64_t window_cols;    /* sum of ncols (x entries staged per product) */
  gs_idx_t max_cols;      /* widest window */
  gs_coo_layout_t *rem;   /* the remainder, caller's numbering */
} gs_pkt_t;

/** Builds the layout of A under the resolved options cfg (see the option table): W = window
 *  (0: GS_PKT_WINDOW_AUTO), R = rows, or ceil(m / packets), or (both 0) the candidate among
 *  64 .. 4096 rows with the fewest modelled bytes that still gives GS_PKT_MIN_PACKETS packets
 *  (or ceil(m / 64)); reorder 0 picks RCM or the given order by
 *  the same model (square matrices only; a rectangular one keeps its order), 1 forces RCM (a
 *  rectangular matrix: GS_ERR_DIMENSION), 2 keeps the order. GS_ERR_INVALID_ARG for rows and
 *  packets both set or more than GS_PKT_ROWS_MAX rows a packet, GS_ERR_UNSUPPORTED past 2^31 - 1
 *  entries, GS_ERR_HOST_MEMORY. */
gs_status_t gs_pkt_build(gs_pkt_t **out, const gs_csr_t *A, const gs_spmv_cfg_t *cfg);

void gs_pkt_destroy(gs_pkt_t **P);

/* ---- what the host builder and the device builder (spmv/pkt_devbuild.cu) share -------------- */

#define GS_PKT_MAX_CANDIDATES 16 /* rows-a-packet candidates at most (64 .. 4096: 7) */

/** The options resolved against a matrix of m x n with nnz entries: the checks and messages
 *  of gs_pkt_build (GS_ERR_UNSUPPORTED, GS_ERR_INVALID_ARG, GS_ERR_DIMENSION). */
typedef struct gs_pkt_plan {
  gs_idx_t W, R_fixed; /* window; rows a packet fixed by rows or packets (0: chosen) */
  int try_given, try_rcm; /* orders to model */
} gs_pkt_plan_t;
gs_status_t gs_pkt_plan(gs_idx_t m, gs_idx_t n, int64_t nnz, const gs_spmv_cfg_t *cfg,
                        gs_pkt_plan_t *pl);
/** Threads a packet of R rows (B, see gs_pkt_t). */
int gs_pkt_threads(gs_idx_t R);
/** The rows-a-packet candidates modelled, in order, into Rs (GS_PKT_MAX_CANDIDATES); returns
 *  their count (>= 1). */
int gs_pkt_candidates(gs_idx_t m, gs_idx_t R_fixed, gs_idx_t *Rs);
/** The modelled bytes of one op N product (the kernels' banner) from a pass's totals. */
double gs_pkt_cost(int64_t slots, int64_t window_cols, int64_t rem, int64_t rem_rows,
                   gs_idx_t m, int64_t npk, int reordered);
/** The candidate with the fewest modelled bytes among those giving at least
 *  min(GS_PKT_MIN_PACKETS, ceil(m / 64)) packets (ties: the first), else the first; and its
 *  cost (the first's when none qualifies). */
void gs_pkt_choose(gs_idx_t m, const gs_idx_t *Rs, const double *costs, int count,
                   gs_idx_t *R_out, double *cost_out);

/** Bytes one product moves under the layout's model (the kernels' banner): op N and op T. */
void gs_pkt_bytes(const gs_pkt_t *P, size_t *bytes_n, size_t *bytes_t);

/** y = alpha*op(A)*x + beta*y as the kernels compute it: op N, each packet's threads in turn
 *  (fused multiply-adds along a thread's list, one sum a row), y written as alpha*sum + beta*y
 *  (y not read when beta == 0), then the remainder's COO emulation (gs_coo_layout_accumulate_
 *  host, GS_COO_HOST_WARPS); op T: y = beta*y, each packet's column sums (the kernel's shared
 *  atomics, here in slot order) added as alpha*sum, then the remainder's scatter. alpha == 0:
 *  y = beta*y, x unread. GS_ERR_HOST_MEMORY. */
gs_status_t gs_pkt_layout_apply_host(const gs_pkt_t *P, gs_op_t op, double alpha,
                                     const double *x, double beta, double *y);

/** The registry's host_apply slot: builds the layout (a refusal reads as prepare's, whatever
 *  alpha is), applies it, frees it. */
gs_status_t gs_pkt_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                              double alpha, const double *x, double beta, double *y);

#ifdef __cplusplus
}
#endif
#endif
