/* io/outfile.h: output files written safely (internal: the Matrix Market writer and the CLI's
 * charts). What a path names decides how it is written:
 *  - a regular file (new, or existing and writable): a temporary file in the same folder, renamed
 *    over it at the end, so a failure or a signal leaves the old file whole; an existing file
 *    keeps its mode (and, best effort, its owner);
 *  - a symbolic link: followed; its final target is what is written (the link stays a link);
 *  - anything else (a device, a FIFO, a socket) and /dev/stdout, /dev/stderr, /dev/fd/N,
 *    /proc/self/fd/N: written in place, never replaced (the /dev/fd names write to the open
 *    descriptor itself, so `>> log` appends);
 *  - refused: "", a folder, a read-only file (by its mode bits when running as root, since
 *    root's access() says yes to everything), a folder that does not exist or is not writable.
 * Temporaries in progress are listed where a signal handler can find them
 * (gs_outfile_remove_temps). */
#ifndef GS_IO_OUTFILE_H
#define GS_IO_OUTFILE_H

#include "gpusolve/status.h"

typedef struct gs_outfile {
  int fd;         /* open for writing; the caller may take it over (set -1 once a stream owns it) */
  char *tmp;      /* the temporary renamed over target at commit; NULL when written in place */
  char *target;   /* the file replaced: path with its symbolic links followed */
  char *path;     /* as given, for messages */
  int slot;       /* where tmp is listed for the signal handler, -1 when not */
} gs_outfile_t;

/** Checks that path can be written (the rules above) without creating or opening anything:
 *  GS_ERR_INVALID_ARG for "" or NULL, GS_ERR_IO otherwise, with "PATH: cause". */
gs_status_t gs_outfile_check(const char *path);

/** Opens path for writing by the rules above; on success o->fd is open (a temporary, or the
 *  file itself), on failure o holds nothing and the cause is recorded. */
gs_status_t gs_outfile_open(gs_outfile_t *o, const char *path);

/** Ends a successful write: closes o->fd if still open, renames the temporary over the target
 *  (a failure there removes it: GS_ERR_IO), releases o. */
gs_status_t gs_outfile_commit(gs_outfile_t *o);

/** Ends a failed write: closes o->fd if still open, removes the temporary, releases o. Records
 *  nothing (the caller has its own message). Safe on a released o. */
void gs_outfile_abort(gs_outfile_t *o);

/** Removes every temporary in progress, of every thread. Async-signal-safe (unlink only): for
 *  a SIGINT/SIGTERM handler, which then re-raises the signal. */
void gs_outfile_remove_temps(void);

#endif
