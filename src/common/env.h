/* SPDX-License-Identifier: MIT */
/*
 * The GPUSPY_* values that both sides read, with their defaults: the
 * library reads its own environment once at start (preload/config.c);
 * the command reads a running process's (`gpuspy snapshot` its
 * GPUSPY_SIGNAL, `gpuspy top` and `gpuspy snapshot` its
 * GPUSPY_OUTPUT_DIR) and sets GPUSPY_OUTPUT_DIR for `gpuspy run`.  One
 * parser each, so that the command agrees with what the library did.
 *
 * Pure functions: the caller passes the value (NULL when unset) and
 * words any warning itself.
 */
#ifndef GPUSPY_COMMON_ENV_H
#define GPUSPY_COMMON_ENV_H

#include <signal.h>

#define GS_OUTPUT_DIR_DEFAULT  "gpuspy-out"
#define GS_INTERVAL_DEFAULT_US 1000000ULL
/* below 100 us the snapshot thread would do nothing else */
#define GS_INTERVAL_MIN_US 100
#define GS_SIGNAL_DEFAULT  SIGUSR2

/* GPUSPY_OUTPUT_DIR: V, or GS_OUTPUT_DIR_DEFAULT when V is NULL or empty. */
const char *env_output_dir(const char *v);

/*
 * GPUSPY_INTERVAL in *US: "1s", "100ms", "500us", a bare number of
 * seconds (strtod's syntax, fractions included), "0" for off; a positive
 * interval under GS_INTERVAL_MIN_US becomes that.  0; or, V being none of
 * these, -EINVAL with *US set to GS_INTERVAL_DEFAULT_US, which NULL and ""
 * also give (with 0).
 */
int env_interval(const char *v, unsigned long long *us);

/*
 * GPUSPY_SIGNAL: "SIGUSR1" or "USR1", "SIGUSR2" or "USR2", a decimal
 * number from 1 to NSIG - 1, or "off" or "0" (returns 0: no signal).
 * NULL and "" give GS_SIGNAL_DEFAULT.  Anything else: -EINVAL, and the
 * library then uses GS_SIGNAL_DEFAULT.
 */
int env_signal(const char *v);

#endif /* GPUSPY_COMMON_ENV_H */
