/* apps/cli_mpi.c: the job of processes behind `--distributed` (see cli_mpi.h). */
#include "apps/cli_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/cli.h"

#ifdef GS_HAVE_MPI
#include <mpi.h>

int cli_mpi_built(void) { return 1; }

int cli_job_init(int *argc, char ***argv, cli_job_t *J)
{
  memset(J, 0, sizeof *J);
  int up = 0;
  MPI_Initialized(&up);
  if (!up) {
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
      return cli_fail(CLI_DEVICE, "--distributed: MPI_Init failed");
    J->inited = 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &J->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &J->size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, J->rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &J->local_rank);
  MPI_Comm_size(node, &J->local_size);
  MPI_Comm_free(&node);
  cli_hold_errors = 1;
  cli_held_error[0] = '\0';
  return CLI_OK;
}

void cli_job_end(cli_job_t *J)
{
  cli_hold_errors = 0;
  if (J->inited) MPI_Finalize();
  J->inited = 0;
}

typedef struct {
  int rc;
  char msg[508];
} vote_t;

int cli_job_agree(cli_job_t *J, int rc)
{
  vote_t mine, *all = malloc((size_t)J->size * sizeof *all);
  memset(&mine, 0, sizeof mine);
  mine.rc = rc;
  if (rc != CLI_OK) snprintf(mine.msg, sizeof mine.msg, "%.500s", cli_held_error);
  if (!all) cli_job_abort(J, CLI_DEVICE);
  if (MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE,
                    MPI_COMM_WORLD) != MPI_SUCCESS) {
    free(all);
    cli_job_abort(J, CLI_DEVICE);
  }
  int bad = -1;
  for (int r = 0; r < J->size && bad < 0; ++r)
    if (all[r].rc != CLI_OK) bad = r;
  int out = CLI_OK;
  if (bad >= 0) {
    out = all[bad].rc;
    if (J->rank == 0 && all[bad].msg[0]) { /* no message: the output said why */
      /* the library's messages name their rank already; the CLI's own do not */
      if (bad == 0 || !strncmp(all[bad].msg, "rank ", 5))
        fprintf(stderr, "gpusolve: %s\n", all[bad].msg);
      else
        fprintf(stderr, "gpusolve: rank %d: %s\n", bad, all[bad].msg);
    }
  }
  free(all);
  cli_held_error[0] = '\0';
  return out;
}

void cli_job_abort(cli_job_t *J, int rc)
{
  fflush(stdout);
  fprintf(stderr, "gpusolve: rank %d of %d: %s (ending the job)\n", J->rank, J->size,
          cli_held_error[0] ? cli_held_error : "failed");
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, rc);
  exit(rc); /* not reached */
}

int cli_job_bcast(cli_job_t *J, void *buf, size_t bytes)
{
  (void)J;
  char *p = (char *)buf;
  while (bytes > 0) { /* MPI counts are int: chunks of 1 GiB */
    const size_t k = bytes < ((size_t)1 << 30) ? bytes : ((size_t)1 << 30);
    if (MPI_Bcast(p, (int)k, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
    p += k;
    bytes -= k;
  }
  return 0;
}

int cli_job_bcast_csr(cli_job_t *J, gs_csr_t **H)
{
  long long head[4] = {0, 0, 0, 0};
  if (J->rank == 0)
    head[0] = (*H)->m, head[1] = (*H)->n, head[2] = (*H)->nnz, head[3] = (*H)->symmetry;
  if (cli_job_bcast(J, head, sizeof head)) return cli_fail(CLI_DEVICE, "MPI_Bcast failed");
  int rc = CLI_OK;
  if (J->rank != 0 &&
      gs_csr_create(H, (gs_idx_t)head[0], (gs_idx_t)head[1], (gs_off_t)head[2]) != GS_SUCCESS)
    rc = cli_fail_status(GS_ERR_HOST_MEMORY);
  rc = cli_job_agree(J, rc);
  if (rc != CLI_OK) return rc;
  gs_csr_t *A = *H;
  A->nnz = (gs_off_t)head[2];
  A->symmetry = (gs_symmetry_t)head[3];
  if (cli_job_bcast(J, A->row_ptr, ((size_t)A->m + 1) * sizeof *A->row_ptr) ||
      cli_job_bcast(J, A->col, (size_t)A->nnz * sizeof *A->col) ||
      cli_job_bcast(J, A->val, (size_t)A->nnz * sizeof *A->val))
    return cli_fail(CLI_DEVICE, "MPI_Bcast failed");
  return CLI_OK;
}

int cli_job_sum_to_root(cli_job_t *J, double *v, size_t n)
{
  while (n > 0) {
    const size_t k = n < ((size_t)1 << 27) ? n : ((size_t)1 << 27);
    const int e = J->rank == 0 ? MPI_Reduce(MPI_IN_PLACE, v, (int)k, MPI_DOUBLE, MPI_SUM, 0,
                                            MPI_COMM_WORLD)
                               : MPI_Reduce(v, NULL, (int)k, MPI_DOUBLE, MPI_SUM, 0,
                                            MPI_COMM_WORLD);
    if (e != MPI_SUCCESS) return -1;
    v += k;
    n -= k;
  }
  return 0;
}

int cli_job_gather(cli_job_t *J, const void *mine, size_t bytes, void *all)
{
  (void)J;
  return MPI_Gather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD) ==
                 MPI_SUCCESS
             ? 0
             : -1;
}

#else /* no MPI: --distributed is refused; the rest is never reached */

int cli_mpi_built(void) { return 0; }

int cli_job_init(int *argc, char ***argv, cli_job_t *J)
{
  (void)argc, (void)argv;
  memset(J, 0, sizeof *J);
  return cli_fail(CLI_BAD_INPUT, "--distributed needs a gpusolve built with MPI (install one, "
                  "e.g. libmpich-dev, and configure again); --gpus LIST runs several GPUs from "
                  "one process without it");
}
void cli_job_end(cli_job_t *J) { (void)J; }
int cli_job_agree(cli_job_t *J, int rc)
{
  (void)J;
  return rc;
}
void cli_job_abort(cli_job_t *J, int rc)
{
  (void)J;
  exit(rc);
}
int cli_job_bcast(cli_job_t *J, void *buf, size_t bytes)
{
  (void)J, (void)buf, (void)bytes;
  return -1;
}
int cli_job_bcast_csr(cli_job_t *J, gs_csr_t **H)
{
  (void)J, (void)H;
  return CLI_DEVICE;
}
int cli_job_sum_to_root(cli_job_t *J, double *v, size_t n)
{
  (void)J, (void)v, (void)n;
  return -1;
}
int cli_job_gather(cli_job_t *J, const void *mine, size_t bytes, void *all)
{
  (void)J, (void)mine, (void)bytes, (void)all;
  return -1;
}
#endif
