/* SPDX-License-Identifier: MIT */
/*
 * The GPUSPY_* values that both sides read, with their defaults: the
 * library reads its own environment once at start (preload/1-ground/config.c);
 * the command reads a running process's (`gpuspy snapshot` its
 * GPUSPY_SIGNAL, `gpuspy top` and `gpuspy snapshot` its
 * GPUSPY_OUTPUT_DIR) and sets GPUSPY_OUTPUT_DIR for `gpuspy run`.  One
 * parser each, so that the command agrees with what the library did.
 *
 * Pure functions: the caller passes the value (NULL when unset) and
 * words any warning itself.  Every parser is strict: plain decimal digits
 * (no sign, no space, no hexadecimal, no exponent), in range, nothing
 * after; a value refused is the default, and the caller says so.
 */
#ifndef GPUSPY_COMMON_ENV_H
#define GPUSPY_COMMON_ENV_H

#include <signal.h>
#include <stdbool.h>

#define GS_OUTPUT_DIR_DEFAULT  "gpuspy-out"
#define GS_INTERVAL_DEFAULT_US 1000000ULL
/* below 100 us the snapshot thread would do nothing else */
#define GS_INTERVAL_MIN_US 100ULL
/* an hour: beyond, a run would see no periodic snapshot at all */
#define GS_INTERVAL_MAX_US 3600000000ULL
#define GS_SIGNAL_DEFAULT  SIGUSR2

/* GPUSPY_OUTPUT_DIR: V, or GS_OUTPUT_DIR_DEFAULT when V is NULL or empty. */
const char *env_output_dir(const char *v);

/*
 * GPUSPY_INTERVAL in *US: a decimal number ("2", "2.5", ".5") with an
 * optional unit, "s" (the default), "ms" or "us", from 100us to 1h,
 * truncated to whole microseconds; or zero in any unit ("0", "0ms"):
 * off.  0; -EINVAL when V is not such a number, -ERANGE when it is out of
 * range, both with *US set to GS_INTERVAL_DEFAULT_US, which NULL and ""
 * also give (with 0).
 */
int env_interval(const char *v, unsigned long long *us);

/*
 * GPUSPY_SIGNAL: "SIGUSR1" or "USR1", "SIGUSR2" or "USR2", "SIGRTMIN",
 * "SIGRTMIN+N", "SIGRTMAX", "SIGRTMAX-N" (or without "SIG"), a decimal
 * number, or "off" or "0" (returns 0: no signal).  NULL and "" give
 * GS_SIGNAL_DEFAULT.  Only SIGUSR1, SIGUSR2 and the real-time signals are
 * taken: every other signal ends, stops or crashes a program, or is one
 * that programs (and the C library) rely on, so a handler that only asks
 * for a snapshot would change what the program does.  -EPERM for such a
 * signal (env_signal_name() names it), -EINVAL for anything else; the
 * library then uses GS_SIGNAL_DEFAULT, and so does the command.
 */
int env_signal(const char *v);

/* "SIGTERM" for SIGTERM, ... ; NULL for a number with no name here. */
const char *env_signal_name(int sig);

/*
 * An unsigned decimal number from 0 to MAX in *OUT: digits only, no
 * leading zero.  0, -EINVAL (not such a number) or -ERANGE (above MAX);
 * *OUT is left alone unless 0 is returned.
 */
int env_uint(const char *v, unsigned max, unsigned *out);

/*
 * GPUSPY_LIMIT: a size in bytes per device, into *BYTES: decimal digits,
 * an optional fraction (".5"), an optional unit K, M, G or T (powers of
 * 1024, either case, "i" and "B" allowed after it: "8G", "8GiB", "512m",
 * "1.5T"), no sign, no space; whole bytes (the fraction of one dropped).
 * NULL, "" and any form of zero give 0: no limit.  0; -EINVAL when V is
 * no such size, -ERANGE when it is 2^62 bytes or more; *BYTES is 0 then.
 */
int env_size(const char *v, unsigned long long *bytes);

/*
 * A boolean in *OUT: "1", "yes", "true", "on" or "0", "no", "false",
 * "off", in any case.  0, or -EINVAL with *OUT left alone.
 */
int env_bool(const char *v, bool *out);

#endif /* GPUSPY_COMMON_ENV_H */
