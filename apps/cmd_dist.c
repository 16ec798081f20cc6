/* apps/cmd_dist.c: `gpusolve solve --gpus LIST` and `gpusolve spmv --gpus LIST`: one system on
 * several GPUs of this node through gpusolve/dist.h (NCCL, one rank per GPU, all in this
 * process); and `mpirun -n G gpusolve solve|spmv ... --distributed`: one rank per process
 * (apps/cli_mpi.c), on one node or several. The matrix is read once (by rank 0) and sent to the
 * ranks. In a job of processes every rank runs the same steps; rank 0 alone prints, and after
 * every step the ranks agree on one outcome (cli_job_agree), so that all exit with the same
 * status and one error line. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/cli.h"
#include "apps/cli_mpi.h"
#include "apps/cli_out.h"
#include "apps/cli_spmv.h"
#include "apps/solve_opts.h"
#include "core/context_impl.h"
#ifdef GS_CLI_TEST_HOOKS
#include "core/testhooks.h"
#endif

static const char *solve_usage =
    "usage: gpusolve solve [A.mtx [b.mtx]] --gpus LIST [OPTIONS]\n"
    "       mpirun -n G gpusolve solve [A.mtx [b.mtx]] --distributed [OPTIONS]\n\n"
    "Solves A x = b across several GPUs: rows split in contiguous blocks balanced by nonzeros,\n"
    "one rank per GPU, halos exchanged and dot products all-reduced through peer memory\n"
    "(GPUs with peer access) or NCCL.\n"
    "Without A: the 27-point Laplacian on a 64^3 grid, or the one --grid asks for.\n"
    "b defaults to A*1 (the error against x = 1 is reported).\n\n"
    "  --gpus LIST            GPUs, one rank each: 0,1,2,3 or a count (4 = 0,1,2,3)\n"
    "  --distributed          one rank per process of an MPI job instead (mpirun -n G ...),\n"
    "                         GPU k of its node for the node's k-th process; rank 0 reads the\n"
    "                         matrix and prints (needs a build with MPI)\n"
    "  --transport T          auto (default: peer where every pair of GPUs has peer access,\n"
    "                         else nccl when built with it), nccl, peer (halos and all-reduces\n"
    "                         through peer memory by our kernels, no NCCL set-up), host (stages\n"
    "                         through host memory; lets a GPU repeat in LIST, for testing)\n"
    "  --format NAME          SpMV backend of each rank's diagonal block (default auto: each\n"
    "                         rank selects for its own block; the ranks table names the choice)\n"
    "  --off-format NAME      backend of the off-diagonal (halo) blocks (default: the same,\n"
    "                         csr-vector under auto, coo where it refuses the block)\n"
    "  --no-cache             auto: measure each block's candidates even when the cache knows\n"
    "                         the block, and write nothing\n"
    "  --spmv-opt K=V         option of the diagonal blocks' backend (repeatable)\n"
    "  --reorder none|rcm|degree|auto   the ordering before partitioning: rcm (reverse\n"
    "                         Cuthill-McKee: smaller halos), degree (hubs first), auto (rcm\n"
    "                         when it at least halves the bandwidth); default none\n"
    "  --solver NAME          @METHODS@ (default auto)\n"
    "  --precond NAME         @PRECONDS@\n"
    "                         (default none; auto means none here), on each rank's block\n"
    "  --rtol R --atol A --maxit N --restart M --check-every K|auto --graphs on|off\n"
    "                         as for solve on one GPU, with the same bounds\n"
    "  --grid NX[xNY[xNZ]]    generate the Laplacian of that grid in memory (no file; as gen)\n"
    "  --stencil 3|5|7|9|27   its stencil (default 27; 7 and 27 need NXxNYxNZ)\n"
    "  --compare              also solve on one GPU (the first of LIST) with the same backend,\n"
    "                         and report the speed-up per iteration\n"
    "  --steady               benchmark: solve twice, to --maxit / 2 and to --maxit iterations\n"
    "                         (rtol and atol 0), and report the time per iteration from the\n"
    "                         difference, which leaves out setup and CUDA Graph capture\n"
    "  -o, --output FILE      write x (Matrix Market array)\n\n"
    "Exit status: 0 converged, 1 not converged, 2 bad input, 3 device failure.\n";

static const char *spmv_usage =
    "usage: gpusolve spmv A.mtx --gpus LIST [OPTIONS]\n"
    "       mpirun -n G gpusolve spmv A.mtx --distributed [OPTIONS]\n\n"
    "Checks and times the distributed product y = A x: against the host product (the rounding\n"
    "bound of each row) and against one GPU's product with the same backend; then the median\n"
    "time of the whole product, of the local (diagonal block) product alone and of the halo\n"
    "exchange alone, and how much of the exchange the local product hid (overlap).\n\n"
    "  --gpus LIST | --distributed, --transport T --format NAME --off-format NAME\n"
    "  --no-cache --spmv-opt K=V --reorder KIND   as for solve --gpus\n"
    "  --grid NX[xNY[xNZ]] --stencil 3|5|7|9|27   a generated Laplacian instead of a file\n"
    "  --runs N               timed products (default 100)\n";

/* "0,1,3" or "4" (= 0,1,2,3) */
static int parse_gpus(const char *s, int *dev, int *n)
{
  *n = 0;
  if (!strchr(s, ',')) {
    char *end = NULL;
    long k = strtol(s, &end, 10);
    if (end != s && *end == '\0' && k >= 1 && k <= GS_DIST_MAX_RANKS) {
      for (int r = 0; r < k; ++r) dev[r] = r;
      *n = (int)k;
      return 0;
    }
    return -1;
  }
  const char *p = s;
  while (*p) {
    char *end = NULL;
    long d = strtol(p, &end, 10);
    if (end == p || d < 0 || d > 1024 || *n >= GS_DIST_MAX_RANKS) return -1;
    dev[(*n)++] = (int)d;
    p = end;
    if (*p == ',') ++p;
    else if (*p) return -1;
  }
  return *n > 0 ? 0 : -1;
}

typedef struct {
  const char *paths[2];
  int npaths;
  int dev[GS_DIST_MAX_RANKS], ndev;
  gs_dist_transport_t transport;
  gs_dist_matrix_opts_t mo;
  char spmv_opts[1024];
  const char *grid;
  long stencil, dims[3];
  int stencil_given;
  long runs;
  /* solve */
  cli_solve_opts_t so; /* method, preconditioner, tolerances (apps/solve_opts.h) */
  const char *out;
  int compare, steady;
  int distributed;  /* --distributed: one rank per process */
  cli_job_t *job;   /* that job (NULL with --gpus) */
} dargs_t;

/* The job's one outcome: rc of the lowest failing rank, its message printed once by rank 0
 * (with --gpus, where cli_fail printed already: rc itself). */
static int agree(const dargs_t *a, int rc) { return a->job ? cli_job_agree(a->job, rc) : rc; }
static int is_root(const dargs_t *a) { return !a->job || a->job->rank == 0; }
static int nranks(const dargs_t *a) { return a->job ? a->job->size : a->ndev; }

/* A failed library call on the ranks: its exit status after the message. In a job of processes
 * a failure that aborted the communicator cannot be agreed (the others may wait in a
 * collective): this rank says why and ends the job. */
static int dist_failed(const dargs_t *a, gs_dist_t *D, gs_status_t st)
{
  const int rc = cli_fail_status(st);
  if (a->job && D && !gs_dist_usable(D)) cli_job_abort(a->job, rc);
  return rc;
}

static int parse(int argc, char **argv, dargs_t *a, int solve)
{
  const char *v;
  memset(a, 0, sizeof *a);
  gs_dist_matrix_opts_default(&a->mo);
  cli_solve_opts_init(&a->so, CLI_SOLVE_DIST);
  a->runs = 100;
  a->stencil = 27;
  static char usage[16384]; /* the help, with the library's methods and preconditioners */
  cli_solve_help(usage, sizeof usage, solve ? solve_usage : spmv_usage, CLI_SOLVE_DIST);
  const cli_switch_t sw_solve[] = {{"--compare", NULL, &a->compare},
                                   {"--steady", NULL, &a->steady},
                                   {"--distributed", NULL, &a->distributed},
                                   {"--no-cache", NULL, &a->mo.no_cache},
                                   {NULL, NULL, NULL}};
  const cli_switch_t sw_spmv[] = {{"--distributed", NULL, &a->distributed},
                                  {"--no-cache", NULL, &a->mo.no_cache},
                                  {NULL, NULL, NULL}};
  for (int i = 1; i < argc; ++i) {
    int r;
    const char *arg = argv[i];
    const int s = cli_arg_switch(arg, usage, solve ? sw_solve : sw_spmv);
    if (s == 2) return -2;
    if (s == 1) continue;
    if (solve && (r = cli_solve_opt(&a->so, argc, argv, &i)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
      continue;
    }
#define OPT(name) ((r = cli_opt(argc, argv, &i, name, &v)) != 0)
    if (OPT("--gpus")) {
      if (r < 0) return CLI_BAD_INPUT;
      if (parse_gpus(v, a->dev, &a->ndev))
        return cli_fail(CLI_BAD_INPUT, "invalid value '%s' for --gpus (a list like 0,1 or a "
                        "count up to %d)", v, GS_DIST_MAX_RANKS);
    } else if (OPT("--transport")) {
      if (r < 0) return CLI_BAD_INPUT;
      const int t = gs_dist_transport_find(v);
      if (t < 0) return cli_fail(CLI_BAD_INPUT, "unknown transport '%s' (auto, peer, nccl or host)",
                              v);
      a->transport = (gs_dist_transport_t)t;
    } else if (OPT("--format")) {
      if (r < 0) return CLI_BAD_INPUT;
      a->mo.format = v;
    } else if (OPT("--off-format")) {
      if (r < 0) return CLI_BAD_INPUT;
      a->mo.off_format = v;
    } else if ((r = cli_spmv_opt(argc, argv, &i, CLI_SPMV_OPT, a->spmv_opts,
                                 sizeof a->spmv_opts)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
    } else if (OPT("--reorder")) {
      if (r < 0) return CLI_BAD_INPUT;
      if ((a->mo.reorder = gs_reorder_find(v)) < 0) /* spmv --gpus; solve's goes through so */
        return cli_fail(CLI_BAD_INPUT, "invalid value '%s' for --reorder (none, rcm, degree or "
                        "auto)", v);
    } else if (OPT("--grid")) {
      if (r < 0) return CLI_BAD_INPUT;
      a->grid = v;
    } else if (OPT("--stencil")) {
      if (r < 0 || cli_parse_int("--stencil", v, 1, 27, &a->stencil)) return CLI_BAD_INPUT;
      a->stencil_given = 1;
    } else if (!solve && OPT("--runs")) {
      if (r < 0 || cli_parse_int("--runs", v, 1, 100000, &a->runs)) return CLI_BAD_INPUT;
    } else if (solve && (OPT("--output") || OPT("-o"))) {
      if (r < 0) return CLI_BAD_INPUT;
      a->out = v;
    } else {
#undef OPT
      int rc = cli_arg_positional(solve ? "solve" : "spmv", arg, a->paths, solve ? 2 : 1,
                                  &a->npaths, "too many files ('%s')");
      if (rc != CLI_OK) return rc;
    }
  }
  if (a->ndev == 0 && !a->distributed) return cli_fail(CLI_BAD_INPUT, "--gpus is missing");
  if (a->ndev > 0 && a->distributed)
    return cli_fail(CLI_BAD_INPUT, "give --gpus LIST (ranks in this process) or --distributed "
                    "(one rank per process under mpirun), not both");
  if (a->distributed && (a->transport == GS_DIST_HOST || a->transport == GS_DIST_PEER))
    return cli_fail(CLI_BAD_INPUT, "--transport %s joins ranks of one process (--gpus); "
                    "--distributed takes nccl", gs_dist_transport_string(a->transport));
  if (a->grid && a->npaths > 0)
    return cli_fail(CLI_BAD_INPUT, "%s: give a matrix file or --grid, not both",
                    solve ? "solve" : "spmv");
  if (!solve && !a->grid && a->npaths == 0)
    return cli_fail(CLI_BAD_INPUT, "spmv: give A.mtx or --grid");
  if (a->stencil_given && !a->grid)
    return cli_fail(CLI_BAD_INPUT, "%s: --stencil goes with --grid (a generated Laplacian)",
                    solve ? "solve" : "spmv");
  int rc;
  if (a->grid && (rc = cli_grid_check(a->grid, a->stencil, a->dims)) != CLI_OK) return rc;
  if (strcmp(a->mo.format, "auto") != 0 && gs_spmv_backend_find(a->mo.format) < 0)
    return cli_fail(CLI_BAD_INPUT, "unknown SpMV format '%s' for --gpus (name a backend of "
                    "'gpusolve spmv --list', or auto)", a->mo.format);
  if (a->mo.off_format && gs_spmv_backend_find(a->mo.off_format) < 0)
    return cli_fail(CLI_BAD_INPUT, "unknown SpMV format '%s' for --off-format",
                    a->mo.off_format);
  a->mo.options = a->spmv_opts;
  if (gs_spmv_options_check(a->spmv_opts) != GS_SUCCESS)
    return cli_fail(CLI_BAD_INPUT, "%s", gs_last_error());
  if (!solve) return CLI_OK;
  if ((rc = cli_solve_opts_finish(&a->so)) != CLI_OK) return rc;
  a->mo.reorder = a->so.reorder; /* GS_REORDER_*: the partitioner's ordering */
  if (a->out && (rc = cli_out_check("solve", "-o", a->out, 1)) != CLI_OK) return rc;
  return CLI_OK;
}

static int load_here(const dargs_t *a, gs_csr_t **H, char *label, size_t len)
{
  if (a->grid) return cli_grid_laplace(a->dims, a->stencil, H, label, len);
  if (a->npaths > 0) {
    snprintf(label, len, "%s", a->paths[0]);
    return cli_load_matrix(a->paths[0], H);
  }
  const char *l = NULL;
  int rc = cli_default_matrix(H, &l);
  snprintf(label, len, "%s", l ? l : "");
  return rc;
}

/* The matrix on every rank: read (or generated) by rank 0 and sent to the others in a job of
 * processes; label is rank 0's. */
static int load(const dargs_t *a, gs_csr_t **H, char *label, size_t len)
{
  int rc = is_root(a) ? load_here(a, H, label, len) : CLI_OK;
  if ((rc = agree(a, rc)) != CLI_OK || !a->job) return rc;
  if (cli_job_bcast(a->job, label, len)) return agree(a, cli_fail(CLI_DEVICE, "MPI_Bcast failed"));
  return agree(a, cli_job_bcast_csr(a->job, H));
}

/* The one-GPU product of --compare and of the spmv check: the backend named, or under auto the
 * selection for the whole matrix on that GPU (the ranks' choices may differ from it and from
 * each other, each being made for its own block). */
static gs_status_t one_gpu_spmv(gs_spmv_t **S, gs_context_t *ctx, gs_matrix_t *M,
                                const char *format, const char *options, int no_cache)
{
  if (strcmp(format, "auto") != 0) return gs_spmv_create(S, ctx, M, format, options);
  gs_select_opts_t so;
  gs_select_opts_default(&so);
  so.use_cache = !no_cache;
  return gs_spmv_create_auto(S, ctx, M, options, &so);
}

/* What print_parts shows of a rank, gathered to rank 0 in a job of processes. */
typedef struct {
  long long rows, nnz_diag, nnz_off, off_rows, nhalo, nsend;
  int neighbours, device, ok, peer; /* peer: its halo through peer memory */
  double select_s; /* the diagonal block's selection (format auto), 0 for a named format */
  double split_s, prepare_s, warm_s; /* gs_dist_part_info_t's */
  char diag_format[32], off_format[32];
} part_line_t;

static void print_part_lines(const dargs_t *a, const gs_dist_matrix_t *A, gs_dist_t *D,
                             const part_line_t *L);

static void print_parts(const dargs_t *a, const gs_dist_matrix_t *A, gs_dist_t *D)
{
  const int n = gs_dist_ranks(D);
  part_line_t *L = calloc((size_t)n, sizeof *L);
  for (int r = 0; L && r < n; ++r) {
    gs_dist_part_info_t p;
    gs_context_t *ctx = gs_dist_context(D, r);
    if (!ctx || gs_dist_matrix_part(A, r, &p) != GS_SUCCESS) continue; /* another process's */
    L[r] = (part_line_t){p.rows, p.nnz_diag, p.nnz_off, p.off_rows, p.nhalo, p.nsend,
                         p.neighbours, gs_context_device(ctx), 1, p.peer_exchange,
                         p.diag_select_s,
                         p.split_s, p.prepare_s, p.warm_s, "", ""};
    snprintf(L[r].diag_format, sizeof L[r].diag_format, "%s", p.diag_format);
    snprintf(L[r].off_format, sizeof L[r].off_format, "%s", p.off_format);
  }
  if (a->job) {
    part_line_t mine = L ? L[a->job->rank] : (part_line_t){0};
    part_line_t *all = is_root(a) ? calloc((size_t)n, sizeof *all) : NULL;
    if (cli_job_gather(a->job, &mine, sizeof mine, all) == 0 && all) {
      free(L);
      L = all;
    } else {
      free(all);
    }
  }
  if (L && is_root(a)) print_part_lines(a, A, D, L);
  free(L);
}

static void print_part_lines(const dargs_t *a, const gs_dist_matrix_t *A, gs_dist_t *D,
                             const part_line_t *L)
{
  const int ar = gs_dist_peer_allreduce(D), halo = L[0].ok && L[0].peer;
  printf("ranks    %d (%s%s%s), bandwidth %lld\n", gs_dist_ranks(D),
         gs_dist_transport_string(gs_dist_transport(D)),
         halo && ar ? ", halos and all-reduces through peer memory"
         : ar      ? ", all-reduce through peer memory"
                   : "",
         a->job ? ", one per process" : "", (long long)gs_dist_matrix_bandwidth(A));
  printf("  rank GPU       rows   nnz(diag)    nnz(off)  off rows   halo in  halo out  nbrs  "
         "formats\n");
  for (int r = 0; r < gs_dist_ranks(D); ++r) {
    const part_line_t *p = &L[r];
    if (!p->ok) continue;
    char chose[48] = "";
    if (p->select_s > 0.0) snprintf(chose, sizeof chose, " (auto, %.1f ms)", 1e3 * p->select_s);
    printf("  %4d %3d %10lld %11lld %11lld %9lld %9lld %9lld %5d  %s%s%s%s\n", r, p->device,
           p->rows, p->nnz_diag, p->nnz_off, p->off_rows, p->nhalo, p->nsend, p->neighbours,
           p->diag_format, chose, *p->off_format ? " + " : "", p->off_format);
  }
  double sp = 0, pr = 0, wa = 0; /* the slowest rank's */
  for (int r = 0; r < gs_dist_ranks(D); ++r) {
    if (!L[r].ok) continue;
    sp = fmax(sp, L[r].split_s);
    pr = fmax(pr, L[r].prepare_s);
    wa = fmax(wa, L[r].warm_s);
  }
  printf("blocks   slowest rank: cut from the matrix %.3f s, made on its GPU %.3f s, first "
         "product and all-reduce %.3f s\n", sp, pr, wa);
}

/* With --gpus, the ranks are made on a thread of their own while rank 0 reads or generates the
 * matrix: the GPUs' contexts, NCCL's communicators and peer access, then on every rank at once
 * the lazy loading of the kernels the command will use (gs_context_preload), which would
 * otherwise fall on the first products and the first solve. The error message is thread-local:
 * the thread keeps a copy. */
typedef struct {
  pthread_t thread;
  int started;
  const dargs_t *a;
  char list[1024]; /* what each rank preloads */
  gs_dist_t *D;
  gs_status_t st;
  char error[1024];
  double seconds;  /* the thread's time, contexts to preload */
  double create_s; /* of which gs_dist_create: contexts, NCCL, peer access */
  double parts[3];  /* gs_dist_create_times */
} ranks_ahead_t;

typedef struct {
  gs_context_t *ctx;
  const char *list;
} preload_job_t;

static void *preload_one(void *arg)
{
  const preload_job_t *j = (const preload_job_t *)arg;
  (void)gs_context_preload(j->ctx, j->list, NULL); /* a failure leaves loading to first use */
  gs_clear_error();
  return NULL;
}

static void *ranks_work(void *arg)
{
  ranks_ahead_t *p = (ranks_ahead_t *)arg;
  const double t0 = cli_now();
  p->st = gs_dist_create(&p->D, p->a->ndev, p->a->dev, p->a->transport);
  p->create_s = cli_now() - t0;
  if (p->st != GS_SUCCESS) {
    snprintf(p->error, sizeof p->error, "%s", gs_last_error());
  } else {
    (void)gs_dist_create_times(p->D, &p->parts[0], &p->parts[1], &p->parts[2]);
    pthread_t th[GS_DIST_MAX_RANKS];
    preload_job_t jobs[GS_DIST_MAX_RANKS];
    int started[GS_DIST_MAX_RANKS] = {0};
    const int n = gs_dist_ranks(p->D);
    for (int r = 0; r < n; ++r) {
      jobs[r] = (preload_job_t){gs_dist_context(p->D, r), p->list};
      started[r] = pthread_create(&th[r], NULL, preload_one, &jobs[r]) == 0;
    }
    for (int r = 0; r < n; ++r)
      if (started[r]) pthread_join(th[r], NULL);
  }
  p->seconds = cli_now() - t0;
  return NULL;
}

/* Starts ranks_work (--gpus only: a job of processes makes its rank after the NCCL id has
 * gone round). */
static void ranks_ahead_start(ranks_ahead_t *p, const dargs_t *a, int solve)
{
  memset(p, 0, sizeof *p);
  if (a->job) return;
  p->a = a;
  char one[512];
  const char *fmt = a->mo.format ? a->mo.format : "auto";
  const char *off = a->mo.off_format ? a->mo.off_format : strcmp(fmt, "auto") ? fmt : "csr-vector";
  const char *pc = solve && strcmp(a->so.precond, "auto") ? a->so.precond : NULL; /* auto: none */
  cli_preload_list(one, sizeof one, fmt, pc);
  snprintf(p->list, sizeof p->list, "%s%s%s", one, *one ? "," : "", off);
  p->started = pthread_create(&p->thread, NULL, ranks_work, p) == 0;
}

/* Waits for ranks_work after the load ended with rc: *D its ranks when both succeeded (NULL
 * when it did not start); else its ranks are destroyed and the first failure is returned
 * (its message printed when the load had not failed). */
static int ranks_ahead_join(ranks_ahead_t *p, int rc, gs_dist_t **D)
{
  if (!p->started) return rc;
  pthread_join(p->thread, NULL);
  p->started = 0;
  if (rc == CLI_OK && p->st != GS_SUCCESS) rc = cli_fail(CLI_DEVICE, "%s", p->error);
  if (rc == CLI_OK) *D = p->D;
  else gs_dist_destroy(&p->D);
  p->D = NULL;
  return rc;
}

/* The ranks (with --gpus: this process's threads, made ahead by ranks_work when *D is set;
 * --distributed: this process's rank, on GPU local_rank of its node, joined to the others
 * through an NCCL id from rank 0) and the distributed matrix. */
static int setup(const dargs_t *a, const gs_csr_t *H, gs_dist_t **D, gs_dist_matrix_t **A)
{
  gs_status_t st = GS_SUCCESS;
  if (!a->job) {
    if (!*D) st = gs_dist_create(D, a->ndev, a->dev, a->transport);
  } else {
    cli_job_t *J = a->job;
    const int ndev = gs_device_count();
    int rc = CLI_OK;
    if (ndev == 0)
      rc = cli_fail(CLI_DEVICE, "%s", (gs_context_no_device(), gs_last_error()));
    else if (J->local_size > ndev)
      rc = cli_fail(CLI_DEVICE, "%d processes of the job run on this node and it has %d GPU%s "
                    "(one rank per GPU)", J->local_size, ndev, ndev == 1 ? "" : "s");
    else if (!gs_dist_have_nccl())
      rc = cli_fail(CLI_BAD_INPUT, "--distributed needs a build with NCCL");
    if ((rc = agree(a, rc)) != CLI_OK) return rc;
    gs_dist_id_t id;
    if (is_root(a)) rc = gs_dist_id_create(&id) == GS_SUCCESS ? CLI_OK : cli_fail_status(GS_ERR_CUDA);
    if ((rc = agree(a, rc)) != CLI_OK) return rc;
    if (cli_job_bcast(J, &id, sizeof id)) return agree(a, cli_fail(CLI_DEVICE, "MPI_Bcast failed"));
    st = gs_dist_create_rank(D, J->rank, J->size, J->local_rank, &id);
    if ((rc = agree(a, st == GS_SUCCESS ? CLI_OK : cli_fail_status(st))) != CLI_OK) return rc;
#ifdef GS_CLI_TEST_HOOKS
    /* the suites' build only (gpusolve-gpu-testhooks, never installed): GS_TEST_FAIL_RANK=r
     * makes rank r's GPU run out of memory from its next device allocation on, "r:k" at the
     * k-th from now only (test_cli_mpi checks that every process stops with one clear error) */
    const char *f = getenv("GS_TEST_FAIL_RANK");
    const char *k = f ? strchr(f, ':') : NULL;
    if (f && atoi(f) == J->rank)
      gs_test_dmalloc_fail_after(gs_dist_context(*D, J->rank), k ? atol(k + 1) : -1);
#endif
  }
  if (st == GS_SUCCESS) st = gs_dist_matrix_create(A, *D, H, &a->mo);
  return agree(a, st == GS_SUCCESS ? CLI_OK : cli_fail_status(st));
}

/* The command's phases, wall clock: the load (read or generation, and b) and the ranks made
 * beside it, the wait for them after the load, the partition and the blocks' preparation. */
typedef struct {
  double t0, load, wait, matrix;
} phases_t;

/* After the load (ph->t0 to now): the ranks made beside it, then setup(). */
static int ranks_then_setup(const dargs_t *a, const gs_csr_t *H, ranks_ahead_t *ahead,
                            phases_t *ph, gs_dist_t **D, gs_dist_matrix_t **A)
{
  double t = cli_now();
  ph->load = t - ph->t0;
  int rc = ranks_ahead_join(ahead, CLI_OK, D);
  ph->wait = cli_now() - t;
  if (rc != CLI_OK) return rc;
  t = cli_now();
  rc = setup(a, H, D, A);
  ph->matrix = cli_now() - t;
  return rc;
}

/* The phases up to now; `last` names the step after setup and its seconds (NULL: none). */
static void print_phases(const phases_t *ph, const ranks_ahead_t *ahead, const char *last,
                         double last_s, const char *note)
{
  printf("%s total %.3f s = load %.3f s + waiting for the ranks %.3f s + partition and "
         "blocks %.3f s", last ? "time    " : "setup   ", cli_now() - ph->t0, ph->load, ph->wait,
         ph->matrix);
  if (last) printf(" + %s %.3f s%s", last, last_s, note ? note : "");
  if (ahead->seconds > 0)
    printf("; the ranks took %.3f s beside the load (contexts %.3f s, NCCL %.3f s, peer access "
           "%.3f s, kernel preload %.3f s)", ahead->seconds, ahead->parts[0], ahead->parts[1],
           ahead->parts[2], ahead->seconds - ahead->create_s);
  printf("\n");
}

/* ---- spmv --gpus ---------------------------------------------------------------------------- */

/* Starts the job of --distributed (before parsing, so that only rank 0 reports a bad
 * argument; ranks other than 0 are quiet on stdout), parses, and agrees on the outcome.
 * CLI_OK: go on (a->job set with --distributed); else the command's exit status, the job
 * already ended (help printed: CLI_DONE). */
#define CLI_DONE (-2)
static int begin(int *argc, char ***argv, dargs_t *a, cli_job_t *J, int solve)
{
  const int on = cli_has_opt(*argc, *argv, "--distributed");
  int rc = on ? cli_job_init(argc, argv, J) : CLI_OK;
  if (rc != CLI_OK) return rc;
  if (on && J->rank != 0) (void)!freopen("/dev/null", "w", stdout);
  rc = parse(*argc, *argv, a, solve);
  if (on) a->job = J;
  if (rc != -2) rc = agree(a, rc);
  if (rc != CLI_OK && on) cli_job_end(J);
  return rc;
}

/* A library call made on every rank: CLI_OK, or the agreed exit status (dist_failed). */
static int step(const dargs_t *a, gs_dist_t *D, gs_status_t st)
{
  return agree(a, st == GS_SUCCESS ? CLI_OK : dist_failed(a, D, st));
}

/* Each process wrote its own rows of v (n entries, zero elsewhere): their sum on rank 0. */
static int rows_to_root(const dargs_t *a, double *v, gs_idx_t n)
{
  if (!a->job || cli_job_sum_to_root(a->job, v, (size_t)n) == 0) return CLI_OK;
  return agree(a, cli_fail(CLI_DEVICE, "MPI_Reduce failed"));
}

int cmd_spmv_dist(int argc, char **argv)
{
  dargs_t a;
  cli_job_t J;
  int rc = begin(&argc, &argv, &a, &J, 0);
  if (rc != CLI_OK) return rc == CLI_DONE ? CLI_OK : rc;
  gs_csr_t *H = NULL;
  gs_dist_t *D = NULL;
  gs_dist_matrix_t *A = NULL;
  gs_context_t *ctx = NULL;
  gs_matrix_t *M1 = NULL;
  gs_spmv_t *S1 = NULL;
  double *x = NULL, *y = NULL, *y1 = NULL, *d_x = NULL, *d_y = NULL;
  char label[512] = "";
  gs_status_t st = GS_SUCCESS;
  ranks_ahead_t ahead;
  phases_t ph = {0};
  ranks_ahead_start(&ahead, &a, 0);
  ph.t0 = cli_now();
  if ((rc = load(&a, &H, label, sizeof label)) != CLI_OK) goto done;
  if ((rc = ranks_then_setup(&a, H, &ahead, &ph, &D, &A)) != CLI_OK) goto done;
  const gs_idx_t n = H->m;
  printf("matrix   %s: %d x %d, %lld nonzeros\n", label, (int)n, (int)H->n, (long long)H->nnz);
  print_parts(&a, A, D);
  if (is_root(&a)) print_phases(&ph, &ahead, NULL, 0.0, NULL);
  x = malloc(((size_t)n + 1) * sizeof *x);
  y = calloc((size_t)n + 1, sizeof *y); /* zero: a process writes its own rows */
  y1 = malloc(((size_t)n + 1) * sizeof *y1);
  rc = x && y && y1 ? CLI_OK : cli_fail(CLI_DEVICE, "out of host memory");
  if ((rc = agree(&a, rc)) != CLI_OK) goto done;
  for (gs_idx_t i = 0; i < n; ++i) x[i] = 1.0 + 0.5 * sin(0.37 * (double)i);
  if ((rc = step(&a, D, gs_dist_spmv(A, 1.0, x, 0.0, y))) != CLI_OK ||
      (rc = rows_to_root(&a, y, n)) != CLI_OK)
    goto done;
  int ok = 1;
  if (is_root(&a)) {
    const double err = gs_spmv_rel_error(H, GS_OP_N, 1.0, x, 0.0, NULL, y);
    /* one GPU, the same backend, on rank 0's device */
    double diff = -1.0;
    char one_fmt[32] = "";
    ctx = gs_dist_context(D, gs_dist_process_rank(D) < 0 ? 0 : gs_dist_process_rank(D));
    if ((st = gs_matrix_create(&M1, ctx, H)) == GS_SUCCESS &&
        (st = one_gpu_spmv(&S1, ctx, M1, a.mo.format, a.spmv_opts, a.mo.no_cache)) == GS_SUCCESS &&
        (st = gs_dmalloc(ctx, (void **)&d_x, (size_t)n * 8, "x")) == GS_SUCCESS &&
        (st = gs_dmalloc(ctx, (void **)&d_y, (size_t)n * 8, "y")) == GS_SUCCESS &&
        (st = gs_copy_to_device(ctx, d_x, x, (size_t)n * 8)) == GS_SUCCESS &&
        (st = gs_spmv_apply(S1, GS_OP_N, 1.0, d_x, 0.0, d_y)) == GS_SUCCESS &&
        (st = gs_copy_to_host(ctx, y1, d_y, (size_t)n * 8)) == GS_SUCCESS) {
      double num = 0.0, den = 0.0;
      for (gs_idx_t i = 0; i < n; ++i) {
        num = fmax(num, fabs(y[i] - y1[i]));
        den = fmax(den, fabs(y1[i]));
      }
      diff = den > 0.0 ? num / den : num;
      snprintf(one_fmt, sizeof one_fmt, "%s", gs_spmv_name(S1));
    } else {
      printf("one GPU  %s could not be prepared on one GPU: %s\n", a.mo.format, gs_last_error());
    }
    gs_dfree(ctx, d_x);
    gs_dfree(ctx, d_y);
    d_x = d_y = NULL;
    gs_spmv_destroy(&S1);
    gs_matrix_destroy(&M1);
    /* each y_i is a sum of at most kmax products in another order than the host's: both lie
     * within gamma_kmax (|A||x|)_i of the exact value, so they differ by at most twice that */
    gs_off_t kmax = 0;
    for (gs_idx_t i = 0; i < n; ++i)
      if (H->row_ptr[i + 1] - H->row_ptr[i] > kmax) kmax = H->row_ptr[i + 1] - H->row_ptr[i];
    const double u = 1.1102230246251565e-16, ku = (double)(kmax + 1) * u;
    const double bound = 2.0 * ku / (1.0 - ku);
    ok = err >= 0.0 && err <= bound;
    printf("check    max |y - y_host| / max(|A||x|) = %.3g, bound %.3g (%s)", err, bound,
           ok ? "ok" : "FAILED");
    if (diff >= 0.0)
      printf(", max |y - y_1gpu| / max |y_1gpu| = %.3g (one GPU: %s)", diff, one_fmt);
    printf("\n");
  }
  gs_dist_spmv_timing_t t;
  if ((rc = step(&a, D, gs_dist_spmv_bench(A, (int)a.runs, &t))) != CLI_OK) goto done;
  printf("time     product %.2f us, local product alone %.2f us, halo exchange alone %.2f us, "
         "overlap %.0f%% (median of %d, slowest rank)\n", t.product_s * 1e6, t.local_s * 1e6,
         t.halo_s * 1e6, 100.0 * t.overlap, t.reps);
  if (t.exchange_end_s > 0.0)
    printf("timeline after the product's start: exchange ended %.2f us, local product started "
           "%.2f us and ended %.2f us (median, slowest rank)\n", t.exchange_end_s * 1e6,
           t.local_start_s * 1e6, t.local_end_s * 1e6);
  if (t.products_s > 0.0)
    printf("         both products without the exchange %.2f us\n", t.products_s * 1e6);
  printf("halo     %.3f MB received per product, all ranks\n", (double)t.halo_bytes / 1e6);
  rc = agree(&a, ok ? CLI_OK : CLI_DEVICE);
done:
  (void)ranks_ahead_join(&ahead, CLI_DEVICE, &D); /* after a failed load: waits, discards */
  free(x);
  free(y);
  free(y1);
  gs_dist_matrix_destroy(&A);
  gs_dist_destroy(&D);
  gs_csr_destroy(&H);
  if (a.job) cli_job_end(a.job);
  return rc;
}

/* ---- solve --gpus --------------------------------------------------------------------------- */

static void print_result(const char *who, const gs_solve_stats_t *s, double err)
{
  const double per_it = s->iterations > 0 ? s->seconds_total / s->iterations : 0.0;
  printf("%-8s %s after %d iterations, %.3f ms (%.2f us per iteration), ||b - Ax|| / ||b|| = "
         "%.3g", who, gs_reason_string(s->reason), s->iterations, s->seconds_total * 1e3,
         per_it * 1e6, s->bnorm > 0 ? s->true_residual_norm / s->bnorm : s->true_residual_norm);
  if (err >= 0.0) printf(", max |x - 1| = %.3g", err);
  printf("\n");
}

/* --steady: the time per iteration from two solves of maxit / 2 and maxit iterations (tolerances
 * 0, so that both run to the limit unless the method breaks down); -1 when they could not run. */
typedef gs_status_t (*solve_fn)(void *u, const gs_solve_opts_t *o, gs_solve_stats_t *s);

static double steady_per_it(solve_fn f, void *u, const gs_solve_opts_t *o0, int *its)
{
  gs_solve_opts_t o = *o0;
  gs_solve_stats_t s1, s2;
  o.rtol = 0.0;
  o.atol = 0.0;
  o.maxit = o0->maxit / 2;
  if (f(u, &o, &s1) != GS_SUCCESS) return -1.0;
  o.maxit = o0->maxit;
  if (f(u, &o, &s2) != GS_SUCCESS || s2.iterations <= s1.iterations) return -1.0;
  *its = s2.iterations;
  return (s2.seconds_total - s1.seconds_total) / (double)(s2.iterations - s1.iterations);
}

typedef struct {
  gs_dist_matrix_t *A;
  const char *pc;
  const double *b;
  double *x;
} dist_solve_t;

static gs_status_t dist_solve(void *u, const gs_solve_opts_t *o, gs_solve_stats_t *s)
{
  dist_solve_t *d = (dist_solve_t *)u;
  return gs_dist_solve(d->A, o, d->pc, d->b, d->x, s);
}

typedef struct {
  gs_context_t *ctx;
  gs_spmv_t *S;
  gs_precond_t *P;
  const double *d_b;
  double *d_x;
} one_solve_t;

static gs_status_t one_solve(void *u, const gs_solve_opts_t *o, gs_solve_stats_t *s)
{
  one_solve_t *d = (one_solve_t *)u;
  return gs_solve(d->ctx, o, d->S, d->P, d->d_b, d->d_x, s);
}

/* --compare: the same solve on one GPU (rank 0's), through the single-GPU solver. */
static void compare_one_gpu(const dargs_t *a, gs_dist_t *D, const gs_csr_t *H, const double *b,
                            const gs_solve_opts_t *od, const gs_solve_stats_t *s,
                            double tn_steady)
{
  gs_context_t *ctx = gs_dist_context(D, 0);
  gs_matrix_t *M1 = NULL;
  gs_spmv_t *S1 = NULL;
  gs_precond_t *P1 = NULL;
  double *d_b = NULL, *d_x = NULL;
  gs_solve_stats_t s1;
  gs_solve_opts_t o = *od;
  o.method = s->method;
  o.check_every = a->so.o.check_every; /* auto: the one-GPU rule, not --gpus's 8 */
  const gs_idx_t n = H->m;
  const size_t bytes = (size_t)n * sizeof(double);
  gs_status_t st;
  if ((st = gs_matrix_create(&M1, ctx, H)) == GS_SUCCESS &&
      (st = one_gpu_spmv(&S1, ctx, M1, a->mo.format, a->spmv_opts, a->mo.no_cache)) == GS_SUCCESS &&
      (!strcmp(a->so.precond, "none") ||
       (st = gs_precond_create(&P1, ctx, M1, a->so.precond)) == GS_SUCCESS) &&
      (st = gs_dmalloc(ctx, (void **)&d_b, bytes, "b")) == GS_SUCCESS &&
      (st = gs_dmalloc(ctx, (void **)&d_x, bytes, "x")) == GS_SUCCESS &&
      (st = gs_copy_to_device(ctx, d_b, b, bytes)) == GS_SUCCESS &&
      (st = gs_solve(ctx, &o, S1, P1, d_b, d_x, &s1)) == GS_SUCCESS) {
    print_result("1 GPU", &s1, -1.0);
    if (!strcmp(a->mo.format, "auto"))
      printf("1 GPU    format %s (auto for the whole matrix)\n", gs_spmv_name(S1));
    double t1 = s1.iterations ? s1.seconds_total / s1.iterations : 0.0;
    double tn = s->iterations ? s->seconds_total / s->iterations : 0.0;
    if (a->steady) {
      one_solve_t u = {ctx, S1, P1, d_b, d_x};
      int its = 0;
      const double t1s = steady_per_it(one_solve, &u, &o, &its);
      if (t1s > 0.0)
        printf("steady   1 GPU: %.2f us per iteration (from %d and %d iterations)\n",
               t1s * 1e6, a->so.o.maxit / 2, its);
      if (t1s > 0.0 && tn_steady > 0.0) t1 = t1s, tn = tn_steady;
    }
    printf("speed-up %.2fx per iteration on %d GPUs%s (iterations %d against %d)\n",
           tn > 0.0 ? t1 / tn : 0.0, nranks(a), a->steady ? ", steady state" : "",
           s->iterations, s1.iterations);
  } else {
    printf("1 GPU    not run: %s\n", gs_last_error());
  }
  gs_dfree(ctx, d_b);
  gs_dfree(ctx, d_x);
  gs_precond_destroy(&P1);
  gs_spmv_destroy(&S1);
  gs_matrix_destroy(&M1);
}

int cmd_solve_dist(int argc, char **argv)
{
  dargs_t a;
  cli_job_t J;
  int rc = begin(&argc, &argv, &a, &J, 1);
  if (rc != CLI_OK) return rc == CLI_DONE ? CLI_OK : rc;
  gs_csr_t *H = NULL;
  gs_dist_t *D = NULL;
  gs_dist_matrix_t *A = NULL;
  double *b = NULL, *x = NULL;
  char label[512] = "";
  gs_status_t st = GS_SUCCESS;
  ranks_ahead_t ahead;
  phases_t ph = {0};
  ranks_ahead_start(&ahead, &a, 1);
  ph.t0 = cli_now();
  if ((rc = load(&a, &H, label, sizeof label)) != CLI_OK) goto done;
  const gs_idx_t n = H->m;
  if (H->m != H->n) {
    rc = agree(&a, cli_fail(CLI_BAD_INPUT, "solve: %s is %d x %d: --gpus solves square systems",
                            label, (int)H->m, (int)H->n));
    goto done;
  }
  /* b: rank 0 reads it (or makes A*1) and sends it to the others */
  const int ones = a.npaths < 2;
  x = calloc((size_t)n + 1, sizeof *x); /* zero: a process writes its own rows of x */
  if (is_root(&a) && !ones) {
    gs_idx_t len = 0;
    if ((st = gs_mm_read_vector(a.paths[1], &b, &len)) != GS_SUCCESS) {
      rc = cli_fail_status(st);
    } else if (len != n) {
      rc = cli_fail(CLI_BAD_INPUT, "solve: b (%s) has %d entries, the matrix has %d rows",
                    a.paths[1], (int)len, (int)n);
    }
  } else {
    b = malloc(((size_t)n + 1) * sizeof *b);
    if (is_root(&a) && b && x) {
      for (gs_idx_t i = 0; i < n; ++i) x[i] = 1.0;
      if ((st = gs_csr_spmv_host(H, GS_OP_N, 1.0, x, 0.0, b)) != GS_SUCCESS)
        rc = cli_fail_status(st);
      memset(x, 0, (size_t)n * sizeof *x);
    }
  }
  if (rc == CLI_OK && (!b || !x)) rc = cli_fail(CLI_DEVICE, "out of host memory");
  if ((rc = agree(&a, rc)) != CLI_OK) goto done;
  if (a.job && cli_job_bcast(a.job, b, (size_t)n * sizeof *b)) {
    rc = agree(&a, cli_fail(CLI_DEVICE, "MPI_Bcast failed"));
    goto done;
  }
  if ((rc = ranks_then_setup(&a, H, &ahead, &ph, &D, &A)) != CLI_OK) goto done;
  printf("matrix   %s: %d x %d, %lld nonzeros\n", label, (int)n, (int)H->n, (long long)H->nnz);
  print_parts(&a, A, D);
  gs_solve_opts_t o = a.so.o;
  gs_solve_stats_t s;
  const double t_solve = cli_now();
  if ((rc = step(&a, D, gs_dist_solve(A, &o, a.so.precond, b, x, &s))) != CLI_OK ||
      (rc = rows_to_root(&a, x, n)) != CLI_OK)
    goto done;
  const double solve_s = cli_now() - t_solve; /* set-up, iterations, b in and x out */
  double err = -1.0;
  if (ones && is_root(&a)) {
    err = 0.0;
    for (gs_idx_t i = 0; i < n; ++i) err = fmax(err, fabs(x[i] - 1.0));
  }
  printf("solver   %s, preconditioner %s (per rank block), check every %d\n",
         gs_method_string(s.method), a.so.precond, o.check_every ? o.check_every : 8);
  char who[32];
  snprintf(who, sizeof who, "%d rank%s", nranks(&a), nranks(&a) == 1 ? "" : "s");
  print_result(who, &s, err);
  if (is_root(&a)) {
    char note[96];
    snprintf(note, sizeof note, " (set-up and b in %.1f ms, iterations %.1f ms, x out)",
             1e3 * s.seconds_setup, 1e3 * s.seconds_total);
    print_phases(&ph, &ahead, "solve", solve_s, note);
  }
  /* -o before --steady, whose solves overwrite x */
  rc = CLI_OK;
  if (a.out && is_root(&a) && (st = gs_mm_write_vector(a.out, x, n)) != GS_SUCCESS)
    rc = cli_fail_status(st);
  if ((rc = agree(&a, rc)) != CLI_OK) goto done;
  double tn_steady = -1.0;
  if (a.steady) {
    dist_solve_t u = {A, a.so.precond, b, x};
    int its = 0;
    tn_steady = steady_per_it(dist_solve, &u, &o, &its);
    if (a.job && !gs_dist_usable(D)) dist_failed(&a, D, GS_ERR_CUDA);
    if (tn_steady > 0.0)
      printf("steady   %s: %.2f us per iteration (from %d and %d iterations)\n", who,
             tn_steady * 1e6, o.maxit / 2, its);
    else
      printf("steady   %s: not measured (%s)\n", who, "the solves stopped early");
  }
  rc = gs_reason_converged(s.reason) ? CLI_OK : CLI_NOT_CONVERGED;
  if (a.compare && is_root(&a)) /* the same solve on rank 0's GPU alone */
    compare_one_gpu(&a, D, H, b, &o, &s, tn_steady);
done:
  (void)ranks_ahead_join(&ahead, CLI_DEVICE, &D); /* after a failed load: waits, discards */
  free(b);
  free(x);
  gs_dist_matrix_destroy(&A);
  gs_dist_destroy(&D);
  gs_csr_destroy(&H);
  if (a.job) cli_job_end(a.job);
  return rc;
}
