/* gpusolve/io.h: Matrix Market reading and writing, synthetic matrix generators. */
#ifndef GPUSOLVE_IO_H
#define GPUSOLVE_IO_H

#include <stdio.h>
#include "gpusolve/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

/**
 * Reads a `matrix coordinate` file (real, integer or pattern; general, symmetric or
 * skew-symmetric) into a COO with the stored triangle mirrored (pattern entries read as 1.0).
 * Files ending in ".gz" are decompressed on the fly (a build without zlib refuses gzip files
 * with GS_ERR_UNSUPPORTED: see gs_mm_has_gzip). Complex and hermitian files are refused.
 * `matrix array` files (dense, general/symmetric/skew) are read too, every value kept. gzip
 * data is recognised by its first bytes. Any fault returns GS_ERR_PARSE (or GS_ERR_IO) with
 * "FILE:LINE: cause" (or "FILE: cause" when no line is at fault) in gs_last_error().
 */
gs_status_t gs_mm_read_coo(const char *path, gs_coo_t **out);

/** As gs_mm_read_coo, then converted to CSR (duplicates summed, explicit zeros kept). */
gs_status_t gs_mm_read_csr(const char *path, gs_csr_t **out);

/*
 * What every read refuses besides malformed text (GS_ERR_PARSE unless said otherwise, with
 * "FILE:LINE: cause" or "FILE: cause"):
 *  - a line longer than GS_MM_LINE_MAX bytes (binary data and classic Mac OS line ends, a CR
 *    alone, are named as such), a UTF-8 or UTF-16 byte-order mark before the banner;
 *  - integer-field values beyond 2^53 in magnitude ("integer out of range": not exact as
 *    doubles);
 *  - duplicates whose sum is not finite (CSR and vector reads; the line of the entry that made
 *    it so);
 *  - a skew-symmetric coordinate file with entries on both sides of the diagonal;
 *  - a file that declares more than memory can hold: before any array is allocated, the
 *    entries the file can hold (its size bounds them: a line per entry for a plain file,
 *    gzip's 1032:1 ratio for a .gz; the declared count for a pipe) and the declared rows are
 *    priced (COO, CSR with its rows + 1 row pointers) against the memory the process may still
 *    take (MemAvailable, a cgroup limit, ulimit -v): GS_ERR_HOST_MEMORY with "FILE: declares
 *    R x C with N entries: needs X GiB, more than the Y GiB available". Arrays then grow with
 *    the entries actually read.
 */
/** Longest line the reader takes, in bytes before its '\n': 1 MiB. */
#define GS_MM_LINE_MAX ((size_t)1 << 20)

/** Value field of a Matrix Market file. */
typedef enum gs_mm_field {
  GS_MM_FIELD_REAL = 0,
  GS_MM_FIELD_INTEGER = 1,
  GS_MM_FIELD_PATTERN = 2
} gs_mm_field_t;

/** "real", "integer", "pattern"; "unknown" for any other value. */
const char *gs_mm_field_string(gs_mm_field_t field);

/** What a file held, as gs_mm_read_csr_ex reports it. */
typedef struct gs_mm_info {
  int array;              /* 1: `matrix array` (dense), 0: `matrix coordinate` */
  gs_mm_field_t field;
  gs_symmetry_t symmetry; /* as stored */
  int64_t rows, cols;
  int64_t stored;         /* entries (array: values) in the file: before symmetric expansion,
                             duplicates counted */
  int64_t lower, upper;   /* symmetric or skew coordinate files: stored entries below / above
                             the diagonal. Both nonzero in a symmetric file: each entry is still
                             mirrored, so a pair (i, j), (j, i) adds up (as SciPy reads it);
                             callers should warn, GS_MM_STRICT refuses. 0 otherwise. */
} gs_mm_info_t;

/** Flags of gs_mm_read_csr_ex. */
#define GS_MM_STRICT 1u /* refuse a symmetric file with entries on both sides of the diagonal */

/** gs_mm_read_csr with flags (GS_MM_STRICT, or 0) and, when info is not NULL, what the file
 *  held (filled on success). */
gs_status_t gs_mm_read_csr_ex(const char *path, unsigned flags, gs_csr_t **out,
                              gs_mm_info_t *info);

/**
 * Threads of the Matrix Market reader. A plain (not gzip) regular file in coordinate format is
 * split at line boundaries into parts parsed on several threads, and the CSR of gs_mm_read_csr
 * is built on as many; the result, and the message of a fault (the first in file order, with
 * its line number), are those of the one-thread reader. gzip files and pipes of more than 1 MiB
 * are inflated (read) on the calling thread and parsed on the others; array files and small
 * files (entries under 2 MiB) are read on one thread.
 *
 * n >= 1 fixes the count for the whole process (1: the serial reader, which streams the file in
 * 1 MiB blocks); n <= 0 restores the default: the environment variable GS_THREADS when it holds
 * a positive integer, else the number of online cores. Safe to call from any thread; a read in
 * progress keeps the count it started with. The parallel reader maps the file (mmap): the file
 * must not shrink while it is read.
 */
void gs_mm_set_threads(int n);
/** Threads the next read will use (at least 1, at most 1024). */
int gs_mm_threads(void);

/** Reads a vector: an n x 1 `matrix array` file (real/integer, general), or an n x 1
 *  `matrix coordinate` file (missing entries 0, duplicates summed). *out is allocated with
 *  malloc (free() it), its length in *len. */
gs_status_t gs_mm_read_vector(const char *path, gs_val_t **out, gs_idx_t *len);

/** Whether this build reads and writes gzip-compressed files (it was built with zlib). Without,
 *  a gzip file (by its ".gz" name or, for a regular file, its first bytes) is refused with
 *  GS_ERR_UNSUPPORTED and "FILE: gzip-compressed, but this gpusolve was built without zlib
 *  (...)", and writing to a ".gz" name likewise, before any file is created. */
int gs_mm_has_gzip(void);

/** Writes A as `matrix coordinate real general` (1-based, %.17g, reads back bit for bit),
 *  gzip-compressed when path ends in ".gz". Non-finite values are refused (GS_ERR_INVALID_ARG).
 *  A regular file is written to a temporary in its folder renamed into place (a failure leaves
 *  no partial file, the old one whole) and keeps its mode; a symbolic link's target is written
 *  (the link stays); a device, a FIFO and /dev/stdout (/dev/fd/N) are written in place; a
 *  folder, a read-only file and a folder that does not exist or is not writable are refused
 *  (GS_ERR_IO, "PATH: cause"); "" is GS_ERR_INVALID_ARG. */
gs_status_t gs_mm_write_csr(const char *path, const gs_csr_t *A);
/** Same to an open stream (no cleanup of partial output possible). */
gs_status_t gs_mm_write_csr_stream(FILE *f, const gs_csr_t *A);
/** gs_mm_write_csr with the storage named: GS_SYM_GENERAL (every entry), GS_SYM_SYMMETRIC (the
 *  lower triangle and the diagonal: about half the file) or GS_SYM_SKEW (the strict lower
 *  triangle). Symmetric storage needs A == A^T (skew: A == -A^T, no diagonal entry) bit for bit
 *  and rows with increasing columns, as the generators and the reader make them; otherwise
 *  GS_ERR_INVALID_ARG, naming the first entry without its mirror, before any file is made.
 *  Reading the file back gives A again. */
gs_status_t gs_mm_write_csr_sym(const char *path, const gs_csr_t *A, gs_symmetry_t storage);
gs_status_t gs_mm_write_csr_stream_sym(FILE *f, const gs_csr_t *A, gs_symmetry_t storage);

/** Writes a vector as `matrix array real general` with one column (files as gs_mm_write_csr). */
gs_status_t gs_mm_write_vector(const char *path, const gs_val_t *x, gs_idx_t len);

/** Checks, before any work, that the writers above could write path (the rules of
 *  gs_mm_write_csr, and a ".gz" name in a build without zlib: GS_ERR_UNSUPPORTED); creates and
 *  opens nothing. */
gs_status_t gs_mm_check_output(const char *path);
/** Removes the temporary files of the writes in progress (every thread). Async-signal-safe: for
 *  a program's SIGINT/SIGTERM handler, which then restores the default action and re-raises. */
void gs_mm_remove_temporaries(void);

/* ---- generators: the papers' synthetic matrices ---------------------------------------- */

/** Laplacian stencil on an nx x ny x nz grid (ny = nz = 1 for 1D, nz = 1 for 2D) with Dirichlet
 *  boundaries: stencil 3 (1D), 5 or 9 (2D), 7 or 27 (3D). Symmetric positive definite: the
 *  diagonal is the number of neighbours in the full stencil, off-diagonals -1.
 *  Nonzero counts match Table 2 of Bell & Garland, SC09. */
gs_status_t gs_gen_laplace(gs_csr_t **out, gs_idx_t nx, gs_idx_t ny, gs_idx_t nz, int stencil);

/** N x N, K entries per row with columns drawn from a normal distribution of standard deviation
 *  sigma centred on the diagonal (draws outside the matrix or already in the row are redrawn:
 *  the normal truncated to [0, N)): HOLA's Figure 7 test (Steinberger et al., ICS 2017). Values
 *  uniform in [-1, 1). */
gs_status_t gs_gen_normal(gs_csr_t **out, gs_idx_t n, gs_idx_t per_row, double sigma,
                          uint64_t seed);

/** N x N with row lengths min(N, 32 + floor(X - 1)), X Pareto with shape k and scale 1
 *  (X = U^(-1/k), U uniform in (0, 1]), so P(len >= 32 + j) = (j + 1)^(-k); columns uniform
 *  random without duplicates: Figure 9 of Bell & Garland, SC09. */
gs_status_t gs_gen_pareto(gs_csr_t **out, gs_idx_t n, double k, uint64_t seed);

/** M x N with K entries per row (min(K, N)), columns uniform random without duplicates. */
gs_status_t gs_gen_random(gs_csr_t **out, gs_idx_t m, gs_idx_t n, gs_idx_t per_row,
                          uint64_t seed);

/** N x N adjacency matrix of a scale-free directed graph (Chung-Lu model with Zipf weights):
 *  vertex ranks k = 1..N weigh w_k = min(N, C k^(-1/(exponent-1))), C such that the weights sum
 *  to N * mean, ranks given to rows by a random permutation. Row i has floor(w) or
 *  floor(w) + 1 entries (expected length w, its vertex's weight: P(length = d) falls as
 *  d^-exponent, mean `mean`); its columns are distinct, drawn without replacement with
 *  probability proportional to the weights (popular vertices are popular columns), sorted.
 *  Values uniform in [-1, 1). Requires 0 < mean <= N and a finite exponent > 2 (2 < exponent
 *  < 3 is the range of real scale-free graphs; 2.5 is the CLI's default). */
gs_status_t gs_gen_powerlaw(gs_csr_t **out, gs_idx_t n, double mean, double exponent,
                            uint64_t seed);

/** Velocity fields of gs_gen_convdiff. */
typedef enum gs_flow {
  GS_FLOW_PIPE = 0,   /* a quarter-circle bend around the corner (0, 0), the BentPipe2D kind */
  GS_FLOW_ROTATE = 1, /* rigid rotation about the centre of the square */
  GS_FLOW_RANDOM = 2  /* divergence-free, from a stream function of random Fourier modes (seed) */
} gs_flow_t;

/** "pipe", "rotate", "random"; NULL for a value outside the enum. */
const char *gs_flow_name(gs_flow_t flow);

/** Upwind convection-diffusion -lap(u) + P v . grad(u) on an nx x ny (x nz) grid of the unit
 *  square (cube, when nz > 1) with Dirichlet boundaries: five-point (seven-point) diffusion
 *  scaled to diagonal 2d and off-diagonals -1 (gs_gen_laplace's axis stencil), and first-order
 *  upwind convection with the velocity field `flow` (components at most 1; in 3D plus an axial
 *  v_z = 1/2), so that `peclet` >= 0 is the largest cell Peclet number: a component c = P v_k
 *  adds |c| to the diagonal and -|c| to the upstream neighbour. Nonsymmetric for P > 0 (where
 *  the field is not zero), the Laplacian bit for bit for P = 0; always a nonsingular M-matrix
 *  (off-diagonals <= -1, row sums >= 0 and > 0 on the boundary). `seed` is used by
 *  GS_FLOW_RANDOM only. Nonzeros as the axis Laplacian: N + 2 sum_d (n_d - 1) N / n_d. */
gs_status_t gs_gen_convdiff(gs_csr_t **out, gs_idx_t nx, gs_idx_t ny, gs_idx_t nz, double peclet,
                            gs_flow_t flow, uint64_t seed);

/** 2D linear elasticity, plane strain: bilinear (Q1) square elements of side 1 on an nx x ny
 *  grid of free nodes inside a fixed border (Dirichlet), Young's modulus E > 0 and Poisson's
 *  ratio -1 < nu < 0.5 (PyAMG's defaults: 1e5, 0.3). n = 2 nx ny unknowns, interleaved: node
 *  (i, j) (0-based, x fastest) is node j nx + i, its x and y displacements unknowns 2 node and
 *  2 node + 1 (AMG's block=2). Symmetric positive definite, bit for bit symmetric (symmetry
 *  GS_SYM_SYMMETRIC), up to 18 entries a row; couplings that cancel exactly in exact arithmetic
 *  are not stored. For nx = ny, PyAMG's gallery.linear_elasticity((nx, nx)) to rounding.
 *  When rbm is not NULL, *rbm gets the three rigid-body modes, n x 3 column-major (malloc'd:
 *  free() it): x translation, y translation, rotation (-y, x) with (x, y) = (i + 1 - (nx + 1) / 2,
 *  j + 1 - (ny + 1) / 2) the node's position from the grid's centre. The fixed border makes them
 *  near-null vectors: A times them is zero on the rows of nodes with no border neighbour.
 *  GS_ERR_INVALID_ARG for sizes < 1, more than 2^31-1 unknowns or E, nu out of range;
 *  *out (and *rbm) NULL on failure. */
gs_status_t gs_gen_elasticity(gs_csr_t **out, gs_idx_t nx, gs_idx_t ny, double E, double nu,
                              gs_val_t **rbm);

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
