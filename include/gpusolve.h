/* gpusolve.h: umbrella header of the gpusolve library. */
#ifndef GPUSOLVE_H
#define GPUSOLVE_H

#define GPUSOLVE_VERSION_MAJOR 0
#define GPUSOLVE_VERSION_MINOR 1
#define GPUSOLVE_VERSION_PATCH 0
#define GPUSOLVE_VERSION_STRING "0.1.0"

#include "gpusolve/status.h"
#include "gpusolve/matrix.h"
#include "gpusolve/io.h"
#include "gpusolve/context.h"
#include "gpusolve/spmv.h"
#include "gpusolve/operator.h"
#include "gpusolve/precond.h"
#include "gpusolve/solver.h"
#include "gpusolve/timer.h"
#include "gpusolve/bench.h"

#endif
