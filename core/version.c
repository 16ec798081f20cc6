/* core/version.c: the library's version, from the generated gpusolve/version.h. */
#include "gpusolve/version.h"

const char *gs_version(void) { return GS_VERSION_STRING; }
