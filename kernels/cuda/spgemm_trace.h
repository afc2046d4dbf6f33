/* Phase hook of the row-wise SpGEMM's symbolic passes, for bench/spgemm_probe.c only. Plain C.
 *
 * The library never calls it. kernels/cuda/spgemm_rows.cu and spgemm_ptap.cu call it at each
 * phase boundary only when compiled with COAL_SPGEMM_TRACE defined, which happens only in the
 * probe's own copy of those two files (bench/meson.build, built with -Dprobes=true); the probe
 * defines the function (it waits for the stream and reads a clock). The library's objects carry
 * no hook, no branch and no context field for it. */
#ifndef COAL_CUDA_SPGEMM_TRACE_H
#define COAL_CUDA_SPGEMM_TRACE_H

#include "../../src/coalesce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called with a phase name after the phase's work has been queued on ctx's stream. */
void coal_spgemm_trace_phase(coal_ctx ctx, const char *phase);

#ifdef __cplusplus
}
#endif
#endif
