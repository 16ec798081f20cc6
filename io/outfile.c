/* io/outfile.c: output files written safely (see io/outfile.h for the rules). */
#define _XOPEN_SOURCE 700 /* realpath */

#include "io/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/error.h"

enum {
  OUT_SLOTS = 16, /* temporaries listed for the signal handler at once (more: not listed) */
  LINK_HOPS = 40  /* symbolic links followed before ELOOP, as the kernel does */
};

/* The temporaries in progress. A slot holds the malloc'd name while its file may exist; the
 * signal handler takes names out with an atomic exchange, so a name is unlinked once and never
 * freed under the handler's feet. */
static _Atomic(char *) temps[OUT_SLOTS];

static const char *errstr(int e, char *buf, size_t n)
{
  if (strerror_r(e, buf, n) != 0) snprintf(buf, n, "error %d", e);
  return buf;
}

static int temp_register(char *name)
{
  for (int s = 0; s < OUT_SLOTS; ++s) {
    char *expect = NULL;
    if (atomic_compare_exchange_strong(&temps[s], &expect, name)) return s;
  }
  return -1;
}

/* Takes name out of its slot; 0 when the signal handler took it first (then it is not ours to
 * free any more). */
static int temp_unregister(int slot, char *name)
{
  if (slot < 0) return 1;
  char *expect = name;
  return atomic_compare_exchange_strong(&temps[slot], &expect, NULL);
}

void gs_outfile_remove_temps(void)
{
  for (int s = 0; s < OUT_SLOTS; ++s) {
    char *name = atomic_exchange(&temps[s], NULL);
    if (name) unlink(name);
  }
}

/* ---- what a path names ---------------------------------------------------------------------- */

enum plan_kind {
  PLAN_FD,      /* /dev/stdout and kin: a descriptor already open */
  PLAN_DIRECT,  /* an existing file that is not a regular file: written in place */
  PLAN_REPLACE, /* an existing regular file: replaced through a temporary */
  PLAN_CREATE   /* a new file: created through a temporary */
};

typedef struct plan {
  enum plan_kind kind;
  int fd;          /* PLAN_FD */
  char *target;    /* PLAN_REPLACE, PLAN_CREATE: the file, links followed (malloc'd) */
  struct stat st;  /* PLAN_REPLACE: the file's status */
} plan_t;

/* The descriptor a name such as /dev/stdout stands for, or -1. */
static int fd_name(const char *p)
{
  if (!strcmp(p, "/dev/stdin")) return 0;
  if (!strcmp(p, "/dev/stdout")) return 1;
  if (!strcmp(p, "/dev/stderr")) return 2;
  const char *rest = !strncmp(p, "/dev/fd/", 8)         ? p + 8
                     : !strncmp(p, "/proc/self/fd/", 14) ? p + 14
                                                         : NULL;
  if (!rest || !*rest) return -1;
  long v = 0;
  for (; *rest; ++rest) {
    if (*rest < '0' || *rest > '9' || v > 100000000) return -1;
    v = 10 * v + (*rest - '0');
  }
  return (int)v;
}

/* The folder part of a path ("." when there is none), malloc'd. */
static char *folder_of(const char *path)
{
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  size_t n = slash == path ? 1 : (size_t)(slash - path);
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, path, n);
    d[n] = '\0';
  }
  return d;
}

/* Whether this process may write a file of status st at path: by the mode bits for root (for
 * whom access() answers yes whatever the mode), by access() with the effective ids otherwise. */
static int may_write(const char *path, const struct stat *st)
{
  if (geteuid() == 0) {
    if ((st->st_mode & 0222) == 0) {
      errno = EACCES;
      return 0;
    }
    return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0 || errno != EROFS;
  }
  return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0;
}

/* The folder of target exists and new files can be made in it. */
static gs_status_t check_folder(const char *path, const char *target)
{
  char eb[128];
  struct stat ds;
  char *dir = folder_of(target);
  gs_status_t st = GS_SUCCESS;
  if (!dir) return GS_ERROR(GS_ERR_HOST_MEMORY, "%s: out of host memory", path);
  if (stat(dir, &ds) != 0) {
    st = errno == ENOENT ? GS_ERROR(GS_ERR_IO, "%s: folder %s does not exist", path, dir)
                         : GS_ERROR(GS_ERR_IO, "%s: folder %s: %s", path, dir,
                                    errstr(errno, eb, sizeof eb));
  } else if (!S_ISDIR(ds.st_mode)) {
    st = GS_ERROR(GS_ERR_IO, "%s: %s is not a folder", path, dir);
  } else if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0) {
    st = GS_ERROR(GS_ERR_IO, "%s: cannot create files in folder %s: %s", path, dir,
                  errstr(errno, eb, sizeof eb));
  }
  free(dir);
  return st;
}

/* A symbolic link whose target does not exist: the name at the end of its chain (malloc'd), or
 * NULL with *err set. */
static char *follow_dangling(const char *path, int *err)
{
  char *cur = strdup(path);
  for (int hop = 0; cur && hop <= LINK_HOPS; ++hop) {
    struct stat ls;
    if (lstat(cur, &ls) != 0) {
      if (errno == ENOENT) return cur;
      *err = errno;
      free(cur);
      return NULL;
    }
    if (!S_ISLNK(ls.st_mode)) return cur; /* appeared meanwhile: the caller's checks decide */
    size_t cap = ls.st_size > 0 ? (size_t)ls.st_size + 1 : PATH_MAX;
    char *link = malloc(cap);
    ssize_t n = link ? readlink(cur, link, cap) : -1;
    if (n < 0 || (size_t)n >= cap) {
      *err = !link ? ENOMEM : n < 0 ? errno : ENAMETOOLONG;
      free(link);
      free(cur);
      return NULL;
    }
    link[n] = '\0';
    char *next = link;
    if (link[0] != '/') { /* relative to the link's folder */
      char *dir = folder_of(cur);
      next = dir ? malloc(strlen(dir) + (size_t)n + 2) : NULL;
      if (next) sprintf(next, "%s/%s", dir, link);
      free(dir);
      free(link);
    }
    free(cur);
    cur = next;
  }
  *err = cur ? ELOOP : ENOMEM;
  free(cur);
  return NULL;
}

/* Decides how path is written, checking everything that can be checked without opening it. */
static gs_status_t plan_path(const char *path, plan_t *p)
{
  char eb[128];
  struct stat st;
  memset(p, 0, sizeof *p);
  p->fd = -1;
  if (!path) return GS_ERROR(GS_ERR_INVALID_ARG, "output path is NULL");
  if (!*path) return GS_ERROR(GS_ERR_INVALID_ARG, "empty output path");

  const int fd = fd_name(path);
  if (fd >= 0) {
    const int fl = fcntl(fd, F_GETFL);
    if (fl < 0) return GS_ERROR(GS_ERR_IO, "%s: descriptor %d is not open", path, fd);
    if ((fl & O_ACCMODE) == O_RDONLY)
      return GS_ERROR(GS_ERR_IO, "%s: descriptor %d is open for reading only", path, fd);
    p->kind = PLAN_FD;
    p->fd = fd;
    return GS_SUCCESS;
  }
  if (path[strlen(path) - 1] == '/')
    return GS_ERROR(GS_ERR_IO, "%s: names a folder, not a file", path);

  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return GS_ERROR(GS_ERR_IO, "%s: is a folder", path);
    if (!S_ISREG(st.st_mode)) { /* device, FIFO, socket */
      if (geteuid() != 0 && faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0)
        return GS_ERROR(GS_ERR_IO, "%s: cannot write: %s", path, errstr(errno, eb, sizeof eb));
      p->kind = PLAN_DIRECT;
      return GS_SUCCESS;
    }
    if (!may_write(path, &st))
      return errno == EACCES
                 ? GS_ERROR(GS_ERR_IO, "%s: read-only file (mode %04o): not overwritten", path,
                            (unsigned)(st.st_mode & 07777))
                 : GS_ERROR(GS_ERR_IO, "%s: cannot write: %s", path,
                            errstr(errno, eb, sizeof eb));
    p->target = realpath(path, NULL);
    if (!p->target)
      return GS_ERROR(GS_ERR_IO, "%s: cannot resolve the name: %s", path,
                      errstr(errno, eb, sizeof eb));
    p->kind = PLAN_REPLACE;
    p->st = st;
  } else if (errno == ENOENT) {
    struct stat ls;
    int err = 0;
    if (lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode)) { /* a link to a file still to come */
      p->target = follow_dangling(path, &err);
      if (!p->target)
        return GS_ERROR(GS_ERR_IO, "%s: cannot follow the link: %s", path,
                        errstr(err, eb, sizeof eb));
    } else {
      p->target = strdup(path);
      if (!p->target) return GS_ERROR(GS_ERR_HOST_MEMORY, "%s: out of host memory", path);
    }
    p->kind = PLAN_CREATE;
  } else {
    return GS_ERROR(GS_ERR_IO, "%s: %s", path, errstr(errno, eb, sizeof eb));
  }
  gs_status_t s = check_folder(path, p->target);
  if (s != GS_SUCCESS) {
    free(p->target);
    p->target = NULL;
  }
  return s;
}

gs_status_t gs_outfile_check(const char *path)
{
  plan_t p;
  gs_status_t st = plan_path(path, &p);
  free(p.target);
  return st;
}

/* ---- writing -------------------------------------------------------------------------------- */

static void release(gs_outfile_t *o)
{
  if (o->tmp && temp_unregister(o->slot, o->tmp)) free(o->tmp);
  free(o->target);
  free(o->path);
  o->tmp = o->target = o->path = NULL;
  o->slot = -1;
}

gs_status_t gs_outfile_open(gs_outfile_t *o, const char *path)
{
  char eb[128];
  plan_t p;
  gs_status_t st = GS_SUCCESS;
  if (!o) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_outfile_open: o is NULL");
  memset(o, 0, sizeof *o);
  o->fd = -1;
  o->slot = -1;
  GS_CHECK(plan_path(path, &p));
  o->target = p.target;
  o->path = strdup(path);
  if (!o->path) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", path);

  if (p.kind == PLAN_FD) {
    if (p.fd == 1) fflush(stdout); /* what was printed comes first */
    if (p.fd == 2) fflush(stderr);
    o->fd = fcntl(p.fd, F_DUPFD_CLOEXEC, 3);
    if (o->fd < 0)
      GS_FAIL(GS_ERR_IO, "%s: cannot write: %s", path, errstr(errno, eb, sizeof eb));
    return GS_SUCCESS;
  }
  if (p.kind == PLAN_DIRECT) { /* a FIFO waits here for its reader, as a shell's > does */
    o->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (o->fd < 0)
      GS_FAIL(GS_ERR_IO, "%s: cannot open for writing: %s", path, errstr(errno, eb, sizeof eb));
    return GS_SUCCESS;
  }

  const size_t n = strlen(o->target) + 64;
  static _Atomic unsigned counter;
  for (int tries = 0; o->fd < 0; ++tries) {
    if (!o->tmp && !(o->tmp = malloc(n)))
      GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", path);
    snprintf(o->tmp, n, "%s.tmp.%ld.%u", o->target, (long)getpid(), counter++);
    /* listed before it exists: a signal from now on finds it */
    o->slot = temp_register(o->tmp);
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC,
                 p.kind == PLAN_REPLACE ? 0600 : 0666);
    if (o->fd >= 0) break;
    const int e = errno;
    if (!temp_unregister(o->slot, o->tmp)) o->tmp = NULL; /* the handler has it */
    o->slot = -1;
    if (e != EEXIST || tries >= 100) {
      st = GS_ERROR(GS_ERR_IO, "%s: cannot create the temporary %s: %s", path,
                    o->tmp ? o->tmp : "file", errstr(e, eb, sizeof eb));
      goto cleanup;
    }
  }
  if (p.kind == PLAN_REPLACE) { /* the new file gets the old one's owner (best effort) and mode */
    if ((p.st.st_uid != geteuid() || p.st.st_gid != getegid()) &&
        fchown(o->fd, p.st.st_uid, p.st.st_gid) != 0) {
      /* not ours to give away: the file becomes ours, as with any editor's save */
    }
    if (fchmod(o->fd, p.st.st_mode & 07777) != 0)
      GS_FAIL(GS_ERR_IO, "%s: cannot give the temporary %s the file's mode %04o: %s", path,
              o->tmp, (unsigned)(p.st.st_mode & 07777), errstr(errno, eb, sizeof eb));
  }
  return GS_SUCCESS;
cleanup:
  gs_outfile_abort(o);
  return st;
}

gs_status_t gs_outfile_commit(gs_outfile_t *o)
{
  char eb[128];
  gs_status_t st = GS_SUCCESS;
  if (!o) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_outfile_commit: o is NULL");
  const char *path = o->path ? o->path : "output";
  if (o->fd >= 0) {
    if (close(o->fd) != 0)
      st = GS_ERROR(GS_ERR_IO, "%s: write failed: %s", path, errstr(errno, eb, sizeof eb));
    o->fd = -1;
  }
  if (st == GS_SUCCESS && o->tmp && rename(o->tmp, o->target) != 0)
    st = GS_ERROR(GS_ERR_IO, "%s: cannot rename the temporary %s over %s: %s", path, o->tmp,
                  o->target, errstr(errno, eb, sizeof eb));
  if (st != GS_SUCCESS) {
    gs_outfile_abort(o);
    return st;
  }
  release(o);
  return GS_SUCCESS;
}

void gs_outfile_abort(gs_outfile_t *o)
{
  if (!o) return;
  if (o->fd >= 0) close(o->fd);
  o->fd = -1;
  if (o->tmp) unlink(o->tmp); /* before it leaves the list: a signal meanwhile finds it */
  release(o);
}
