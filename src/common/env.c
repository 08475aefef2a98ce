/* SPDX-License-Identifier: MIT */
/*
 * Parsers of the GPUSPY_* values both sides read (env.h).  The library
 * calls them from its constructor, before anything else of gpuspy runs:
 * no allocation, no state, no getenv here, and no strtod, whose locale,
 * hexadecimal, infinities and NaN are what a strict parser must refuse.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "env.h"

const char *env_output_dir(const char *v)
{
	return v && *v ? v : GS_OUTPUT_DIR_DEFAULT;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int env_interval(const char *v, unsigned long long *us)
{
	/* above the largest interval in any unit: no product below overflows */
	const unsigned long long cap = GS_INTERVAL_MAX_US + 1;
	unsigned long long whole = 0, frac = 0, scale = 1, unit, x;
	bool digits = false, nonzero = false;
	const char *p = v;

	*us = GS_INTERVAL_DEFAULT_US;
	if (!v || !*v)
		return 0;
	for (; is_digit(*p); p++) {
		digits = true;
		nonzero |= *p != '0';
		if (whole < cap)
			whole = whole * 10 + (unsigned long long)(*p - '0');
	}
	if (*p == '.') {
		if (!is_digit(p[1]))
			return -EINVAL;
		/* nanoseconds of a second are as fine as any unit needs;
		 * the digits beyond are truncated as the microseconds are */
		for (p++; is_digit(*p); p++) {
			digits = true;
			nonzero |= *p != '0';
			if (scale < 1000000000ULL) {
				frac = frac * 10 + (unsigned long long)(*p - '0');
				scale *= 10;
			}
		}
	}
	if (!digits)
		return -EINVAL;
	if (strcmp(p, "") == 0 || strcmp(p, "s") == 0)
		unit = 1000000;
	else if (strcmp(p, "ms") == 0)
		unit = 1000;
	else if (strcmp(p, "us") == 0)
		unit = 1;
	else
		return -EINVAL;
	if (!nonzero) {
		*us = 0;
		return 0;
	}
	if (whole >= cap)
		return -ERANGE;
	x = whole * unit + frac * unit / scale;
	if (x < GS_INTERVAL_MIN_US || x > GS_INTERVAL_MAX_US)
		return -ERANGE;
	*us = x;
	return 0;
}

int env_uint(const char *v, unsigned max, unsigned *out)
{
	unsigned long long n = 0;
	const char *p;

	if (!v || !is_digit(*v) || (v[0] == '0' && v[1]))
		return -EINVAL;
	for (p = v; is_digit(*p); p++)
		if (n <= max)
			n = n * 10 + (unsigned long long)(*p - '0');
	if (*p)
		return -EINVAL;
	if (n > max)
		return -ERANGE;
	*out = (unsigned)n;
	return 0;
}

/* above it, a size is refused: no product below overflows 64 bits */
#define SIZE_MAX_BYTES (1ULL << 62)

int env_size(const char *v, unsigned long long *bytes)
{
	static const char units[] = "KMGT";
	unsigned long long whole = 0, frac = 0, scale = 1, unit = 1, x;
	bool digits = false;
	const char *p = v, *u;

	*bytes = 0;
	if (!v || !*v)
		return 0;
	for (; is_digit(*p); p++) {
		digits = true;
		if (whole < SIZE_MAX_BYTES)
			whole = whole * 10 + (unsigned long long)(*p - '0');
	}
	if (*p == '.') {
		if (!is_digit(p[1]))
			return -EINVAL;
		/* nine digits are finer than a byte of any unit here */
		for (p++; is_digit(*p); p++) {
			digits = true;
			if (scale < 1000000000ULL) {
				frac = frac * 10 + (unsigned long long)(*p - '0');
				scale *= 10;
			}
		}
	}
	if (!digits)
		return -EINVAL;
	/* a blank folds to NUL, which strchr finds at the end of UNITS */
	if (*p && *p != ' ' && (u = strchr(units, *p & ~0x20)) != NULL) {
		for (const char *k = units; k <= u; k++)
			unit *= 1024;
		p++;
		if (*p == 'i')
			p++;
	}
	if (*p == 'B' || *p == 'b')
		p++;
	if (*p)
		return -EINVAL;
	if (whole >= SIZE_MAX_BYTES / unit)
		return -ERANGE;
	/* frac < 10^9 and unit <= 2^40: the product needs 70 bits */
	x = whole * unit + (unsigned long long)((unsigned __int128)frac * unit / scale);
	if (x >= SIZE_MAX_BYTES)
		return -ERANGE;
	*bytes = x;
	return 0;
}

int env_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };

	if (!v)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* The signals GPUSPY_SIGNAL refuses by name, for the warning. */
static const struct {
	int sig;
	const char *name;
} signal_names[] = {
	{ SIGHUP, "SIGHUP" },	    { SIGINT, "SIGINT" },   { SIGQUIT, "SIGQUIT" },
	{ SIGILL, "SIGILL" },	    { SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
	{ SIGBUS, "SIGBUS" },	    { SIGFPE, "SIGFPE" },   { SIGKILL, "SIGKILL" },
	{ SIGUSR1, "SIGUSR1" },	    { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
	{ SIGPIPE, "SIGPIPE" },	    { SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" },
	{ SIGCHLD, "SIGCHLD" },	    { SIGCONT, "SIGCONT" }, { SIGSTOP, "SIGSTOP" },
	{ SIGTSTP, "SIGTSTP" },	    { SIGTTIN, "SIGTTIN" }, { SIGTTOU, "SIGTTOU" },
	{ SIGURG, "SIGURG" },	    { SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
	{ SIGVTALRM, "SIGVTALRM" }, { SIGPROF, "SIGPROF" }, { SIGWINCH, "SIGWINCH" },
	{ SIGIO, "SIGIO" },	    { SIGSYS, "SIGSYS" },
#ifdef SIGSTKFLT
	{ SIGSTKFLT, "SIGSTKFLT" },
#endif
#ifdef SIGPWR
	{ SIGPWR, "SIGPWR" },
#endif
};

const char *env_signal_name(int sig)
{
	for (size_t i = 0; i < sizeof(signal_names) / sizeof(signal_names[0]); i++)
		if (signal_names[i].sig == sig)
			return signal_names[i].name;
	return NULL;
}

/* "N" after a real-time base: digits only, no leading zero; -1 if not. */
static int rt_offset(const char *p)
{
	unsigned n;

	return env_uint(p, (unsigned)NSIG, &n) == 0 ? (int)n : -1;
}

/* SIGRTMIN and SIGRTMAX are the C library's run-time values: glibc keeps
 * the first real-time signals for its own threads. */
static int rt_signal(const char *v)
{
	int n;

	if (strncmp(v, "SIG", 3) == 0)
		v += 3;
	if (strncmp(v, "RTMIN", 5) == 0) {
		if (!v[5])
			return SIGRTMIN;
		if (v[5] != '+' || (n = rt_offset(v + 6)) < 0 || n > SIGRTMAX - SIGRTMIN)
			return -EINVAL;
		return SIGRTMIN + n;
	}
	if (strncmp(v, "RTMAX", 5) == 0) {
		if (!v[5])
			return SIGRTMAX;
		if (v[5] != '-' || (n = rt_offset(v + 6)) < 0 || n > SIGRTMAX - SIGRTMIN)
			return -EINVAL;
		return SIGRTMAX - n;
	}
	return -EINVAL;
}

int env_signal(const char *v)
{
	unsigned n;

	if (!v || !*v)
		return GS_SIGNAL_DEFAULT;
	if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0)
		return 0;
	if (strcmp(v, "SIGUSR1") == 0 || strcmp(v, "USR1") == 0)
		return SIGUSR1;
	if (strcmp(v, "SIGUSR2") == 0 || strcmp(v, "USR2") == 0)
		return SIGUSR2;
	if (!is_digit(*v))
		return rt_signal(v);
	if (env_uint(v, NSIG - 1, &n) < 0)
		return -EINVAL;
	if (n == SIGUSR1 || n == SIGUSR2 || ((int)n >= SIGRTMIN && (int)n <= SIGRTMAX))
		return (int)n;
	return -EPERM;
}
