/* apps/cli_mpi.h: the job of processes behind `--distributed` (one rank per process, started by
 * mpirun / mpiexec). The library needs no MPI (gpusolve/dist.h: gs_dist_create_rank); the CLI
 * uses it to start, to pass the NCCL id and the matrix from rank 0 to the others, to agree on
 * one outcome, and to end the job after a failure the others cannot see. In a build without
 * MPI (GS_HAVE_MPI unset) cli_job_init refuses with a message and everything else is a no-op. */
#ifndef GS_APPS_CLI_MPI_H
#define GS_APPS_CLI_MPI_H

#include <stddef.h>

#include "gpusolve.h"

typedef struct cli_job {
  int rank, size;             /* in the job */
  int local_rank, local_size; /* among the processes of this node */
  int inited;                 /* MPI_Init ran here (cli_job_end finalizes) */
} cli_job_t;

/** 1 when this CLI was built with MPI. */
int cli_mpi_built(void);
/** Starts MPI (or joins it) and fills J; holds the CLI's error messages (cli_hold_errors) so
 *  that cli_job_agree prints one line for the job. Returns CLI_OK, or an exit status after
 *  printing why (a build without MPI). */
int cli_job_init(int *argc, char ***argv, cli_job_t *J);
/** Finalizes MPI if cli_job_init started it; releases the held errors. */
void cli_job_end(cli_job_t *J);
/** Every rank brings its exit status rc (CLI_OK or a failure whose message cli_fail held);
 *  returns the status of the lowest failing rank on every rank (CLI_OK when none failed), and
 *  rank 0 prints that rank's message as the job's one line. */
int cli_job_agree(cli_job_t *J, int rc);
/** Prints this rank's held message (naming the rank) and ends the whole job with status rc: for
 *  a failure after the ranks started communicating, which the others may be waiting on. */
void cli_job_abort(cli_job_t *J, int rc);
/** Rank 0's bytes to every rank (any size). 0 on success. */
int cli_job_bcast(cli_job_t *J, void *buf, size_t bytes);
/** Rank 0's host matrix to every rank: on the others *H is made here (same sizes, arrays and
 *  flags). Returns CLI_OK or CLI_DEVICE (out of host memory; held message). Collective. */
int cli_job_bcast_csr(cli_job_t *J, gs_csr_t **H);
/** v[0..n) = the sum over the ranks, on rank 0 only (a reduction to rank 0). 0 on success. */
int cli_job_sum_to_root(cli_job_t *J, double *v, size_t n);
/** Rank r's `bytes` bytes of `mine` into all + r * bytes on rank 0. 0 on success. */
int cli_job_gather(cli_job_t *J, const void *mine, size_t bytes, void *all);

#endif
