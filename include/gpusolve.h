/* gpusolve.h: umbrella header of the gpusolve library. */
#ifndef GPUSOLVE_H
#define GPUSOLVE_H

#include "gpusolve/version.h"
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
#include "gpusolve/select.h"
#include "gpusolve/batch.h"
#include "gpusolve/dist.h"

#endif
