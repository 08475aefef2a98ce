/* SPDX-License-Identifier: MIT */
/*
 * One-line messages on stderr.  Each is formatted into a stack buffer and
 * written with a single write(2), so lines from several threads or
 * processes do not interleave and nothing here allocates.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"
#include "state.h"

/* The format is checked at gs_warn's and gs_fail's callers (log.h). */
static __attribute__((format(printf, 1, 0))) void vlog(const char *fmt, va_list ap,
						       const char *suffix)
{
	char buf[1024];
	int saved = errno;
	int n = snprintf(buf, sizeof(buf), "gpuspy: ");
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);

	if (m < 0)
		m = 0;
	n += m;
	if (n > (int)sizeof(buf) - 64)
		n = (int)sizeof(buf) - 64;
	n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s\n", suffix);
	if (write(STDERR_FILENO, buf, (size_t)n) < 0) {
		/* Nowhere left to complain to. */
	}
	errno = saved;
}

void gs_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap, "");
	va_end(ap);
}

void gs_fail(const char *fmt, ...)
{
	static atomic_bool failed;
	char suffix[96];
	va_list ap;

	/* Figures from here on would be wrong, so nothing is written at exit. */
	atomic_store(&gs_state.tracking, false);
	atomic_store(&gs_state.silent, true);
	if (atomic_exchange(&failed, true))
		return;
	snprintf(suffix, sizeof(suffix), "; gpuspy is off for this process (pid %d)",
		 (int)getpid());
	va_start(ap, fmt);
	vlog(fmt, ap, suffix);
	va_end(ap);
}
