/* apps/front/front.h: the split of the CLI between the host-only front `gpusolve` and
 * gpusolve-gpu (apps/CMakeLists.txt, docs/cli.md "Start-up"). */
#ifndef GS_APPS_FRONT_H
#define GS_APPS_FRONT_H

/** A front command's answer when the command line needs the GPU: the front then runs
 *  gpusolve-gpu with the whole command line. Never an exit status. */
#define CLI_RUN_ON_GPU (-1)

/** `select` in the front: the same arguments and messages as cmd_select; runs --rule (and
 *  --help, and reports bad usage) on the host, otherwise returns CLI_RUN_ON_GPU having printed
 *  nothing. */
int cmd_select_front(int argc, char **argv);

/** Replaces the process by gpusolve-gpu with argv (the front's own, argv[0] included): found
 *  beside the front's executable (a build tree), else at GS_FRONT_LIBEXEC from its folder (an
 *  installed tree). Returns only on failure, with exit status 3 after one line naming where it
 *  looked. */
int cli_exec_gpu(char **argv);

#endif
