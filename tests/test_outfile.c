/* tests/test_outfile.c: output files written safely (issue 35), by the library's writers and by
 * the CLI: a symbolic link's target written and the link kept, a file's mode kept, a read-only
 * file refused, a FIFO and /dev/stdout written in place, "" and a missing folder refused before
 * any work, no temporary left by SIGINT or SIGTERM during a large `gen -o`. Also `gen`'s
 * symmetric storage read back as the generator's matrix, its refusals of options of another kind
 * and of a stencil on a grid of fewer dimensions, and `batch` given a matrix for its list. No
 * GPU needed. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/testutil.h"

static char out[1 << 16], err[1 << 14];

/* the CLI with printf-formatted arguments, into out and err */
#define run(...) gs_test_cli_fmt(out, sizeof out, err, sizeof err, __VA_ARGS__)

/* A fresh folder under the suite's temporary folder (path into buf). */
static const char *make_dir(char *buf, size_t n, const char *name)
{
  snprintf(buf, n, "%s", gs_test_tmpfile(name));
  CU_ASSERT_FATAL(mkdir(buf, 0700) == 0 || errno == EEXIST);
  return buf;
}

static void write_text(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  CU_ASSERT_FATAL(f != NULL);
  fputs(text, f);
  CU_ASSERT_FATAL(fclose(f) == 0);
}

/* The whole file as a string (static buffer; "" when unreadable). */
static const char *slurp(const char *path)
{
  static char buf[1 << 16];
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return buf;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* Names in dir that look like a writer's temporary ("NAME.tmp.PID.N"). */
static int temporaries(const char *dir)
{
  int n = 0;
  DIR *d = opendir(dir);
  if (!d) return -1;
  for (struct dirent *e; (e = readdir(d)) != NULL;) n += strstr(e->d_name, ".tmp.") != NULL;
  closedir(d);
  return n;
}

static int starts_with(const char *s, const char *prefix)
{
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int csr_identical(const gs_csr_t *A, const gs_csr_t *B)
{
  if (!A || !B || A->m != B->m || A->n != B->n || A->nnz != B->nnz) return 0;
  return memcmp(A->row_ptr, B->row_ptr, ((size_t)A->m + 1) * sizeof *A->row_ptr) == 0 &&
         (A->nnz == 0 || (memcmp(A->col, B->col, (size_t)A->nnz * sizeof *A->col) == 0 &&
                          memcmp(A->val, B->val, (size_t)A->nnz * sizeof *A->val) == 0));
}

static gs_csr_t *laplace(int nx, int ny, int nz, int stencil)
{
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&A, nx, ny, nz, stencil) == GS_SUCCESS);
  return A;
}

/* Reads path and says whether it holds A bit for bit. */
static int reads_back(const char *path, const gs_csr_t *A)
{
  gs_csr_t *B = NULL;
  gs_status_t st = gs_mm_read_csr(path, &B);
  if (st != GS_SUCCESS) fprintf(stderr, "\n  %s: %s\n", path, gs_last_error());
  int same = st == GS_SUCCESS && csr_identical(A, B);
  gs_csr_destroy(&B);
  return same;
}

/* ---- the library's writer ---------------------------------------------------------------- */

/* A link's target is written, the link stays; a dangling link creates its target; a chain of
 * links is followed to its end; the temporary goes to the target's folder and is gone. */
static void test_symlinks_followed(void)
{
  char dir[4200], real[4300], target[4400], link1[4400], link2[4400], dangling[4400], p[4400];
  make_dir(dir, sizeof dir, "links");
  snprintf(real, sizeof real, "%s/real", dir);
  CU_ASSERT_FATAL(mkdir(real, 0700) == 0);
  snprintf(target, sizeof target, "%s/t.mtx", real);
  snprintf(link1, sizeof link1, "%s/l.mtx", dir);
  snprintf(link2, sizeof link2, "%s/ll.mtx", dir);
  snprintf(dangling, sizeof dangling, "%s/d.mtx", dir);
  write_text(target, "old\n");
  CU_ASSERT_FATAL(symlink("real/t.mtx", link1) == 0); /* relative to the link's folder */
  CU_ASSERT_FATAL(symlink("l.mtx", link2) == 0);      /* a link to a link */
  CU_ASSERT_FATAL(symlink("real/new.mtx", dangling) == 0);

  gs_csr_t *A = laplace(5, 4, 1, 5), *B = laplace(6, 1, 1, 3);
  struct stat sb;
  CU_ASSERT_EQUAL(gs_mm_write_csr(link1, A), GS_SUCCESS);
  CU_ASSERT(lstat(link1, &sb) == 0 && S_ISLNK(sb.st_mode));
  CU_ASSERT(reads_back(target, A));
  CU_ASSERT_EQUAL(gs_mm_write_csr(link2, B), GS_SUCCESS);
  CU_ASSERT(lstat(link2, &sb) == 0 && S_ISLNK(sb.st_mode));
  CU_ASSERT(lstat(link1, &sb) == 0 && S_ISLNK(sb.st_mode));
  CU_ASSERT(reads_back(target, B));
  CU_ASSERT_EQUAL(gs_mm_write_csr(dangling, A), GS_SUCCESS);
  CU_ASSERT(lstat(dangling, &sb) == 0 && S_ISLNK(sb.st_mode));
  snprintf(p, sizeof p, "%s/new.mtx", real);
  CU_ASSERT(reads_back(p, A));
  CU_ASSERT_EQUAL(temporaries(dir), 0);
  CU_ASSERT_EQUAL(temporaries(real), 0);

  /* the CLI's -o the same way */
  CU_ASSERT_EQUAL(run("gen laplace --grid 5x4 --stencil 5 -o '%s'", link2), 0);
  CU_ASSERT(lstat(link2, &sb) == 0 && S_ISLNK(sb.st_mode));
  CU_ASSERT(reads_back(target, A));
  gs_csr_destroy(&A);
  gs_csr_destroy(&B);
}

/* A replaced file keeps its mode (0600 stays 0600); a new one gets 0666 less the umask. */
static void test_mode_kept(void)
{
  char dir[4200], p[4400];
  make_dir(dir, sizeof dir, "modes");
  gs_csr_t *A = laplace(4, 4, 1, 5);
  static const mode_t modes[] = {0600, 0640, 0604, 0660};
  for (size_t k = 0; k < sizeof modes / sizeof modes[0]; ++k) {
    snprintf(p, sizeof p, "%s/m%03o.mtx", dir, (unsigned)modes[k]);
    write_text(p, "old\n");
    CU_ASSERT_FATAL(chmod(p, modes[k]) == 0);
    CU_ASSERT_EQUAL(gs_mm_write_csr(p, A), GS_SUCCESS);
    struct stat sb;
    CU_ASSERT(stat(p, &sb) == 0 && (sb.st_mode & 07777) == modes[k]);
    if ((sb.st_mode & 07777) != modes[k])
      fprintf(stderr, "\n  mode %04o became %04o\n", (unsigned)modes[k],
              (unsigned)(sb.st_mode & 07777));
    CU_ASSERT(reads_back(p, A));
  }
  /* through the CLI too */
  snprintf(p, sizeof p, "%s/m600.mtx", dir);
  CU_ASSERT_EQUAL(run("gen laplace --grid 4x4 --stencil 5 -o '%s'", p), 0);
  struct stat sb;
  CU_ASSERT(stat(p, &sb) == 0 && (sb.st_mode & 07777) == 0600);
  /* a new file */
  const mode_t mask = umask(027);
  snprintf(p, sizeof p, "%s/new.mtx", dir);
  CU_ASSERT_EQUAL(gs_mm_write_csr(p, A), GS_SUCCESS);
  umask(mask);
  CU_ASSERT(stat(p, &sb) == 0 && (sb.st_mode & 07777) == 0640);
  CU_ASSERT_EQUAL(temporaries(dir), 0);
  gs_csr_destroy(&A);
}

/* A file without write permission is refused (by its mode bits even for root), left as it was. */
static void test_read_only_refused(void)
{
  char dir[4200], p[4400];
  make_dir(dir, sizeof dir, "readonly");
  snprintf(p, sizeof p, "%s/ro.mtx", dir);
  write_text(p, "keep\n");
  CU_ASSERT_FATAL(chmod(p, 0444) == 0);
  gs_csr_t *A = laplace(4, 4, 1, 5);
  CU_ASSERT_EQUAL(gs_mm_check_output(p), GS_ERR_IO);
  CU_ASSERT_EQUAL(gs_mm_write_csr(p, A), GS_ERR_IO);
  CU_ASSERT(strstr(gs_last_error(), p) != NULL && strstr(gs_last_error(), "read-only") != NULL);
  CU_ASSERT_STRING_EQUAL(slurp(p), "keep\n");
  CU_ASSERT_EQUAL(run("gen laplace --grid 4x4 --stencil 5 -o '%s'", p), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "read-only") != NULL && strstr(err, "0444") != NULL);
  CU_ASSERT_STRING_EQUAL(slurp(p), "keep\n");
  struct stat sb;
  CU_ASSERT(stat(p, &sb) == 0 && (sb.st_mode & 07777) == 0444);
  CU_ASSERT_EQUAL(temporaries(dir), 0);
  gs_csr_destroy(&A);
}

/* A child that copies the FIFO to copy; returns its pid. */
static pid_t fifo_reader(const char *fifo, const char *copy)
{
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    int in = open(fifo, O_RDONLY), o = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char buf[4096];
    ssize_t n;
    if (in < 0 || o < 0) _exit(1);
    while ((n = read(in, buf, sizeof buf)) > 0)
      if (write(o, buf, (size_t)n) != n) _exit(1);
    _exit(n == 0 && close(o) == 0 ? 0 : 1);
  }
  return pid;
}

static int reader_done(pid_t pid, int wrote)
{
  int status = 0;
  if (!wrote) kill(pid, SIGKILL); /* it waits for a writer that never came */
  if (waitpid(pid, &status, 0) != pid) return 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A FIFO is written in place, never replaced (a reader gets the matrix, the FIFO stays). */
static void test_fifo_in_place(void)
{
  char dir[4200], fifo[4400], copy[4400];
  make_dir(dir, sizeof dir, "fifo");
  snprintf(fifo, sizeof fifo, "%s/pipe.mtx", dir);
  snprintf(copy, sizeof copy, "%s/copy.mtx", dir);
  CU_ASSERT_FATAL(mkfifo(fifo, 0600) == 0);
  gs_csr_t *A = laplace(6, 5, 1, 9);
  CU_ASSERT_EQUAL(gs_mm_check_output(fifo), GS_SUCCESS); /* checks without opening (no wait) */
  pid_t pid = fifo_reader(fifo, copy);
  gs_status_t st = gs_mm_write_csr(fifo, A);
  CU_ASSERT_EQUAL(st, GS_SUCCESS);
  CU_ASSERT(reader_done(pid, st == GS_SUCCESS));
  struct stat sb;
  CU_ASSERT(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
  CU_ASSERT(reads_back(copy, A));
  /* the CLI, with the same reader */
  unlink(copy);
  pid = fifo_reader(fifo, copy);
  int rc = run("gen laplace --grid 6x5 --stencil 9 -o '%s'", fifo);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT(reader_done(pid, rc == 0));
  CU_ASSERT(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
  CU_ASSERT(reads_back(copy, A));
  CU_ASSERT_EQUAL(temporaries(dir), 0);
  gs_csr_destroy(&A);
}

/* /dev/stdout is the descriptor itself: what the shell printed before stays ahead of the matrix
 * (a replaced or reopened file would lose it), `>>` appends, /dev/stdout stays what it was;
 * /dev/full reports its failure. */
static void test_dev_stdout_in_place(void)
{
  char dir[4200], f[4400], cmd[16384];
  make_dir(dir, sizeof dir, "stdout");
  snprintf(f, sizeof f, "%s/captured", dir);
  struct stat before, after;
  const int had = lstat("/dev/stdout", &before) == 0;
  snprintf(cmd, sizeof cmd,
           "{ echo first; '%s' gen laplace --grid 3x3 --stencil 5 -o /dev/stdout; } >'%s' "
           "2>/dev/null", GS_CLI, f);
  int rc = system(cmd);
  CU_ASSERT(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
  const char *t = slurp(f);
  CU_ASSERT(starts_with(t, "first\n%%MatrixMarket matrix coordinate real symmetric\n"));
  write_text(f, "earlier\n");
  snprintf(cmd, sizeof cmd, "'%s' gen laplace --grid 3x3 --stencil 5 -o /dev/stdout >>'%s'",
           GS_CLI, f);
  rc = system(cmd);
  CU_ASSERT(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
  t = slurp(f);
  CU_ASSERT(starts_with(t, "earlier\n%%MatrixMarket matrix coordinate real symmetric\n"));
  if (had) {
    CU_ASSERT(lstat("/dev/stdout", &after) == 0 && (after.st_mode & S_IFMT) ==
                                                     (before.st_mode & S_IFMT));
  }
  CU_ASSERT_EQUAL(temporaries(dir), 0);
  /* a device that fails every write: an error, and the device stays a device */
  if (stat("/dev/full", &before) == 0 && S_ISCHR(before.st_mode)) {
    CU_ASSERT_EQUAL(run("gen laplace --grid 300x300 --stencil 5 -o /dev/full"), 2);
    CU_ASSERT(gs_test_one_line_error(err));
    CU_ASSERT(strstr(err, "/dev/full") != NULL);
    CU_ASSERT(stat("/dev/full", &after) == 0 && S_ISCHR(after.st_mode));
  }
}

/* "", a folder, a missing folder, a name ending in '/': refused with the cause, nothing made. */
static void test_bad_paths(void)
{
  char dir[4200], p[4400];
  make_dir(dir, sizeof dir, "bad");
  gs_csr_t *A = laplace(3, 3, 1, 5);
  CU_ASSERT_EQUAL(gs_mm_write_csr("", A), GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "empty output path") != NULL);
  CU_ASSERT_EQUAL(gs_mm_check_output(""), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_mm_write_vector("", A->val, 3), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_mm_write_csr(dir, A), GS_ERR_IO);
  CU_ASSERT(strstr(gs_last_error(), "is a folder") != NULL);
  snprintf(p, sizeof p, "%s/missing/x.mtx", dir);
  CU_ASSERT_EQUAL(gs_mm_check_output(p), GS_ERR_IO);
  CU_ASSERT_EQUAL(gs_mm_write_csr(p, A), GS_ERR_IO);
  CU_ASSERT(strstr(gs_last_error(), "does not exist") != NULL);
  snprintf(p, sizeof p, "%s/x.mtx/", dir);
  CU_ASSERT_EQUAL(gs_mm_write_csr(p, A), GS_ERR_IO);
  snprintf(p, sizeof p, "%s/file", dir); /* a file where a folder should be */
  write_text(p, "x\n");
  snprintf(p, sizeof p, "%s/file/x.mtx", dir);
  CU_ASSERT_EQUAL(gs_mm_write_csr(p, A), GS_ERR_IO);
  CU_ASSERT_EQUAL(temporaries(dir), 0);
  gs_csr_destroy(&A);

  /* the CLI: one line, before the matrix is made. This grid would need about 650 GB: a check
   * after the generator would fail on memory instead. */
  CU_ASSERT_EQUAL(run("gen laplace --grid 10x10 --stencil 5 -o ''"), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "empty output path") != NULL);
  CU_ASSERT_EQUAL(run("gen laplace --grid 2000x2000x500 --stencil 27 -o '%s/missing/x.mtx'", dir),
                  2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "does not exist") != NULL && strstr(err, "memory") == NULL);
  CU_ASSERT_EQUAL(run("gen laplace --grid 2000x2000x500 --stencil 27 -o '%s'", dir), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "is a folder") != NULL);
}

/* SIGINT or SIGTERM while `gen -o` writes a large file: the process ends by the signal, no
 * temporary is left, an existing file is untouched. The signal is sent once the temporary has
 * started to fill. */
static void signal_during_write(int sig, int existing)
{
  char dir[4200], target[4400];
  char name[64];
  snprintf(name, sizeof name, "sig%d_%d", sig, existing);
  make_dir(dir, sizeof dir, name);
  snprintf(target, sizeof target, "%s/big.mtx", dir);
  if (existing) write_text(target, "old\n");
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
    }
    signal(sig, SIG_DFL);
    execl(GS_CLI, "gpusolve", "gen", "random", "--rows", "2000000", "--per-row", "5", "-o",
          target, (char *)NULL);
    _exit(127);
  }
  /* wait for the temporary to hold data (or for the child to end, which fails below) */
  int seen = 0, status = 0, ended = 0;
  const struct timespec pause = {0, 2000000};
  for (int tries = 0; tries < 60000 && !seen && !ended; ++tries) {
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
      char p[4700];
      struct stat sb;
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      if (strstr(e->d_name, ".tmp.") && stat(p, &sb) == 0 && sb.st_size > 0) seen = 1;
    }
    if (d) closedir(d);
    if (!seen) {
      ended = waitpid(pid, &status, WNOHANG) == pid;
      nanosleep(&pause, NULL);
    }
  }
  if (!ended) {
    kill(pid, sig);
    CU_ASSERT(waitpid(pid, &status, 0) == pid);
  }
  CU_ASSERT(seen);
  CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == sig);
  if (!seen || !WIFSIGNALED(status))
    fprintf(stderr, "\n  signal %d: temporary seen %d, child status %#x\n", sig, seen, status);
  CU_ASSERT_EQUAL(temporaries(dir), 0);
  if (existing) {
    CU_ASSERT_STRING_EQUAL(slurp(target), "old\n");
  } else {
    CU_ASSERT(access(target, F_OK) != 0);
  }
}

static void test_signal_removes_temporary(void)
{
  signal_during_write(SIGINT, 0);
  signal_during_write(SIGTERM, 1);
}

/* ---- symmetric storage ------------------------------------------------------------------- */

/* The file's banner and size line. */
static int file_header(const char *path, char *banner, size_t n, long long sz[3])
{
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int ok = fgets(banner, (int)n, f) != NULL && fscanf(f, "%lld %lld %lld", &sz[0], &sz[1],
                                                          &sz[2]) == 3;
  fclose(f);
  return ok;
}

/* Random symmetric (skew: skew-symmetric, no diagonal) n x n matrix with sorted rows. */
static gs_csr_t *random_mirrored(uint64_t *s, int n, int skew)
{
  gs_csr_t *R = gs_test_random_csr(s, n, n, 0.15), *S = NULL;
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(R != NULL);
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 2 * R->nnz + n) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < n; ++i)
    for (gs_off_t q = R->row_ptr[i]; q < R->row_ptr[i + 1]; ++q) {
      const gs_idx_t j = R->col[q];
      if (j > i) continue; /* the lower triangle, mirrored */
      if (j == i) {
        if (!skew) CU_ASSERT_FATAL(gs_coo_push(C, i, i, R->val[q]) == GS_SUCCESS);
        continue;
      }
      CU_ASSERT_FATAL(gs_coo_push(C, i, j, R->val[q]) == GS_SUCCESS);
      CU_ASSERT_FATAL(gs_coo_push(C, j, i, skew ? -R->val[q] : R->val[q]) == GS_SUCCESS);
    }
  CU_ASSERT_FATAL(gs_coo_to_csr(&S, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  gs_csr_destroy(&R);
  return S;
}

/* gs_mm_write_csr_sym: the lower triangle only, the size line counting it, and the reader gives
 * the same matrix back bit for bit; a matrix that does not mirror itself is refused before any
 * file is made. */
static void test_symmetric_storage(void)
{
  char dir[4200], p[4400], banner[256];
  long long sz[3];
  make_dir(dir, sizeof dir, "sym");
  uint64_t seed = gs_test_seed() ^ 0x5e77, s = seed;
  struct {
    gs_csr_t *A;
    gs_symmetry_t storage;
    const char *banner;
  } cases[] = {
    {laplace(7, 6, 5, 27), GS_SYM_SYMMETRIC, "symmetric"},
    {laplace(9, 8, 1, 9), GS_SYM_SYMMETRIC, "symmetric"},
    {laplace(1, 1, 1, 3), GS_SYM_SYMMETRIC, "symmetric"},
    {random_mirrored(&s, 60, 0), GS_SYM_SYMMETRIC, "symmetric"},
    {random_mirrored(&s, 60, 1), GS_SYM_SKEW, "skew-symmetric"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const gs_csr_t *A = cases[k].A;
    gs_off_t lower = 0;
    for (gs_idx_t i = 0; i < A->m; ++i)
      for (gs_off_t q = A->row_ptr[i]; q < A->row_ptr[i + 1]; ++q)
        lower += cases[k].storage == GS_SYM_SKEW ? A->col[q] < i : A->col[q] <= i;
    snprintf(p, sizeof p, "%s/s%zu.mtx", dir, k);
    CU_ASSERT_EQUAL(gs_mm_write_csr_sym(p, A, cases[k].storage), GS_SUCCESS);
    CU_ASSERT(file_header(p, banner, sizeof banner, sz));
    CU_ASSERT(strstr(banner, cases[k].banner) != NULL);
    CU_ASSERT(sz[0] == A->m && sz[1] == A->n && sz[2] == lower);
    CU_ASSERT(lower < A->nnz || A->nnz <= 1);
    gs_csr_t *B = NULL;
    CU_ASSERT_EQUAL(gs_mm_read_csr(p, &B), GS_SUCCESS);
    CU_ASSERT(csr_identical(A, B));
    if (B) CU_ASSERT_EQUAL(B->symmetry, cases[k].storage);
    if (!csr_identical(A, B)) fprintf(stderr, "\n  case %zu differs (seed %llu)\n", k,
                                      (unsigned long long)seed);
    gs_csr_destroy(&B);
    /* the stream writer writes the same text */
    char q[4400];
    snprintf(q, sizeof q, "%s/stream%zu.mtx", dir, k);
    FILE *f = fopen(q, "w");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_EQUAL(gs_mm_write_csr_stream_sym(f, A, cases[k].storage), GS_SUCCESS);
    CU_ASSERT(fclose(f) == 0);
    char *a = strdup(slurp(p));
    CU_ASSERT(a && strcmp(a, slurp(q)) == 0);
    free(a);
  }
  /* not mirrored: one entry changed, a rectangular matrix, the skew case's diagonal */
  gs_csr_t *A = cases[3].A;
  A->val[A->row_ptr[A->m - 1]] += 1.0; /* the last row's first entry, below the diagonal */
  snprintf(p, sizeof p, "%s/refused.mtx", dir);
  CU_ASSERT_EQUAL(gs_mm_write_csr_sym(p, A, GS_SYM_SYMMETRIC), GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "mirror") != NULL);
  CU_ASSERT_EQUAL(gs_mm_write_csr_sym(p, cases[0].A, GS_SYM_SKEW), GS_ERR_INVALID_ARG);
  gs_csr_t *W = gs_test_random_csr(&s, 5, 8, 0.5);
  CU_ASSERT_EQUAL(gs_mm_write_csr_sym(p, W, GS_SYM_SYMMETRIC), GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "square") != NULL);
  CU_ASSERT(access(p, F_OK) != 0);
  gs_csr_destroy(&W);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) gs_csr_destroy(&cases[k].A);
  CU_ASSERT_EQUAL(temporaries(dir), 0);
}

/* gen: symmetric generators write symmetric storage, which reads back as the generator's own
 * matrix; the others write general storage. */
static void test_gen_symmetric_files(void)
{
  char dir[4200], p[4400], banner[256];
  long long sz[3];
  make_dir(dir, sizeof dir, "gen");
  snprintf(p, sizeof p, "%s/lap27.mtx", dir);
  CU_ASSERT_EQUAL(run("gen laplace --grid 10x10x10 --stencil 27 -o '%s'", p), 0);
  gs_csr_t *A = laplace(10, 10, 10, 27);
  CU_ASSERT_EQUAL(A->nnz, 28 * 28 * 28); /* prod (3 n_d - 2) */
  CU_ASSERT(file_header(p, banner, sizeof banner, sz));
  CU_ASSERT(strstr(banner, "coordinate real symmetric") != NULL);
  CU_ASSERT(sz[0] == 1000 && sz[1] == 1000 && sz[2] == (A->nnz + 1000) / 2);
  CU_ASSERT(reads_back(p, A));
  /* an interior point has all 27 neighbours, 26 on the diagonal */
  const gs_idx_t mid = 5 + 10 * (5 + 10 * 5);
  CU_ASSERT_EQUAL(A->row_ptr[mid + 1] - A->row_ptr[mid], 27);
  gs_csr_destroy(&A);

  snprintf(p, sizeof p, "%s/cd0.mtx", dir);
  CU_ASSERT_EQUAL(run("gen convdiff --grid 6x5x4 --peclet 0 -o '%s'", p), 0);
  CU_ASSERT(file_header(p, banner, sizeof banner, sz) && strstr(banner, "symmetric") != NULL);
  A = laplace(6, 5, 4, 7); /* convdiff at Peclet 0 is the 7-point Laplacian bit for bit */
  CU_ASSERT(reads_back(p, A));
  gs_csr_destroy(&A);
  snprintf(p, sizeof p, "%s/cd.mtx", dir);
  CU_ASSERT_EQUAL(run("gen convdiff --grid 6x5 --peclet 5 -o '%s'", p), 0);
  CU_ASSERT(file_header(p, banner, sizeof banner, sz) && strstr(banner, "general") != NULL);
  CU_ASSERT_EQUAL(run("gen random --rows 30 --per-row 3"), 0);
  CU_ASSERT(starts_with(out, "%%MatrixMarket matrix coordinate real general\n"));
  CU_ASSERT_EQUAL(run("gen laplace --grid 4x4 --stencil 5"), 0); /* stdout too */
  CU_ASSERT(starts_with(out, "%%MatrixMarket matrix coordinate real symmetric\n16 16 40\n"));
}

/* gen refuses an option of another kind, and a stencil on a grid of fewer dimensions. */
static void test_gen_refusals(void)
{
  static const struct {
    const char *args, *needle1, *needle2;
  } cases[] = {
    {"gen laplace --grid 10 --stencil 3 --seed 1", "--seed does not apply to laplace", "--grid"},
    {"gen laplace --grid 10x10 --stencil 5 --rows 5", "--rows does not apply to laplace", NULL},
    {"gen random --rows 10 --per-row 2 --grid 4", "--grid does not apply to random", NULL},
    {"gen random --rows 10 --per-row 2 --sigma 3", "--sigma does not apply to random", NULL},
    {"gen pareto --rows 10 --k 1 --per-row 2", "--per-row does not apply to pareto", NULL},
    {"gen normal --rows 10 --per-row 2 --sigma 1 --cols 4", "--cols", "normal"},
    {"gen powerlaw --rows 10 --mean 2 --k 1", "--k does not apply to powerlaw", NULL},
    {"gen convdiff --grid 5x5 --stencil 5", "--stencil does not apply to convdiff", NULL},
    {"gen convdiff --grid 5x5 --seed 3", "--seed", "--field random"},
    {"gen convdiff --grid 5", "1D", "convdiff"},
    {"gen laplace --grid 10 --stencil 27", "--stencil 27", "--grid 10 is 1D"},
    {"gen laplace --grid 10x10 --stencil 27", "3D stencil", "is 2D"},
    {"gen laplace --grid 10x10 --stencil 7", "--stencil 7", "is 2D"},
    {"gen laplace --grid 10 --stencil 5", "2D stencil", "is 1D"},
    {"gen laplace --grid 10 --stencil 9", "--stencil 9", "is 1D"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    int rc = run("%s", cases[k].args);
    int ok = rc == 2 && gs_test_one_line_error(err) && strstr(err, cases[k].needle1) &&
             (!cases[k].needle2 || strstr(err, cases[k].needle2)) && out[0] == '\0';
    CU_ASSERT(ok);
    if (!ok) fprintf(stderr, "\n  '%s' -> %d: %s", cases[k].args, rc, err);
  }
  /* what they take is still taken */
  CU_ASSERT_EQUAL(run("gen convdiff --grid 5x5 --field random --seed 3"), 0);
  CU_ASSERT_EQUAL(run("gen random --rows 10 --cols 20 --per-row 2 --seed 4"), 0);
  CU_ASSERT_EQUAL(run("gen laplace --grid 10x1x1 --stencil 27"), 0); /* 3D, if degenerate */
}

/* batch given a matrix where its list file goes: said so, not read as a list of paths. */
static void test_batch_matrix_as_list(void)
{
  char dir[4200], p[4400];
  make_dir(dir, sizeof dir, "batch");
  snprintf(p, sizeof p, "%s/one.mtx", dir);
  write_text(p, "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\n");
  CU_ASSERT_EQUAL(run("batch '%s'", p), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "one.mtx") && strstr(err, "is a Matrix Market file") &&
            strstr(err, "list file"));
  snprintf(p, sizeof p, "%s/one.mtx.gz", dir);
  write_text(p, "\x1f\x8b\x08 not really");
  CU_ASSERT_EQUAL(run("batch '%s'", p), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "gzip") != NULL);
  /* a list naming a missing matrix still reads as a list */
  snprintf(p, sizeof p, "%s/list.txt", dir);
  write_text(p, "# a list\nmissing.mtx\n");
  CU_ASSERT_EQUAL(run("batch '%s'", p), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "missing.mtx") != NULL && strstr(err, "list file") == NULL);
  /* a solve nothing can stop */
  CU_ASSERT_EQUAL(run("batch --gen laplace --solve cg --rtol 0"), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "cannot converge") != NULL);
}

int main(void)
{
  CU_TestInfo tests[] = {
    {"symbolic links: the target written, the link kept", test_symlinks_followed},
    {"a replaced file keeps its mode", test_mode_kept},
    {"a read-only file is refused and kept", test_read_only_refused},
    {"a FIFO is written in place", test_fifo_in_place},
    {"/dev/stdout is written in place, /dev/full fails", test_dev_stdout_in_place},
    {"empty, folder, missing folder: refused before work", test_bad_paths},
    {"SIGINT, SIGTERM during gen -o leave no temporary", test_signal_removes_temporary},
    {"symmetric storage reads back bit for bit", test_symmetric_storage},
    {"gen writes symmetric storage for symmetric kinds", test_gen_symmetric_files},
    {"gen refuses foreign options and short grids", test_gen_refusals},
    {"batch given a matrix for its list", test_batch_matrix_as_list},
    CU_TEST_INFO_NULL,
  };
  return gs_test_main("outfile", tests, 0);
}
