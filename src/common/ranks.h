/* SPDX-License-Identifier: MIT */
/*
 * The ranks of a data-parallel job (torchrun, mpirun): the device each
 * rank owns, and what it holds on the others (gpuspy-report(1), "WRONG
 * DEVICE"; libgpuspy(7), gpuspy_wrong_device_bytes).  Both sides compile
 * it: the library judges its own environment for its endpoint, the reader
 * the environment a report recorded, one rule.  No state, no allocation.
 *
 * The rule: a rank owns device LOCAL_RANK when LOCAL_RANK is below the
 * number of devices it sees, else device RANK mod that number (a job that
 * sets no LOCAL_RANK, or more ranks per node than devices).  A process
 * that sees one device owns it whatever its rank (CUDA_VISIBLE_DEVICES
 * set per rank, as Slurm does), and one that sees none, or has no rank,
 * owns none: no verdict either way.
 */
#ifndef GPUSPY_COMMON_RANKS_H
#define GPUSPY_COMMON_RANKS_H

#include <stdint.h>

/* The variables torchrun (and most launchers) set. */
#define RANKS_ENV_RANK	     "RANK"
#define RANKS_ENV_LOCAL_RANK "LOCAL_RANK"

/* A rank as a launcher writes it: decimal digits, at most 9; else -1. */
int64_t ranks_parse(const char *s);

/* The device a process of RANK and LOCAL_RANK (-1: not set) owns among
 * NDEVICES; -1 when the rule gives no verdict (fewer than 2 devices, no
 * rank). */
int ranks_own_device(int64_t rank, int64_t local_rank, int64_t ndevices);

/* Of what a process holds on one device, the part beyond the allocations
 * gpuspy tracked there: NVML's figure for the process (NVML, -1: unknown)
 * less TRACKED, the CUDA context and the libraries' kernels; 0 when NVML
 * is unknown or says less. */
int64_t ranks_context_bytes(int64_t tracked, int64_t nvml);

#endif
