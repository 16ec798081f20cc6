/* apps/cli_out.h: the CLI's output paths (-o, --plot): checked before any work, and their
 * temporary files removed when SIGINT or SIGTERM stops the write (io/outfile.h has the rules). */
#ifndef GS_APPS_CLI_OUT_H
#define GS_APPS_CLI_OUT_H

/** Checks the path given to option `opt` of command `cmd` before any work starts: empty, a
 *  folder, a read-only file, a missing or unwritable folder (and for a Matrix Market output,
 *  matrix != 0, a ".gz" name in a build without zlib) are refused with one line. Also installs
 *  the signal handlers below. Returns CLI_OK or the exit code after the message. */
int cli_out_check(const char *cmd, const char *opt, const char *path, int matrix);

/** SIGINT and SIGTERM (unless ignored when the program started, as in a background job of a
 *  shell without job control) remove the temporaries of writes in progress, then end the
 *  process by the same signal. Idempotent. */
void cli_out_signals(void);

#endif
