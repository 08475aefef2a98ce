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

#include "conf.h"
#include "files.h"
#include "log.h"
#include "state.h"

/* The format is checked at gs_warn's and gs_fail's callers (log.h). */
static __attribute__((format(printf, 1, 0))) void vlog(const char *fmt, va_list ap,
						       const char *suffix)
{
	char buf[1024];
	struct files_guard g;
	int saved = errno;
	int n = snprintf(buf, sizeof(buf), "gpuspy: ");
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);

	if (m < 0)
		m = 0;
	n += m;
	if (n > (int)sizeof(buf) - 64)
		n = (int)sizeof(buf) - 64;
	/* a path, a host or a symbol in the message is data: a newline or a
	 * terminal's escape in it would make a second line, or a command */
	for (unsigned char *p = (unsigned char *)buf; p < (unsigned char *)buf + n; p++) {
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
		else if (p[0] == 0xc2 && p + 1 < (unsigned char *)buf + n && p[1] >= 0x80 &&
			 p[1] <= 0x9f)
			p[0] = p[1] = '?';
	}
	n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s\n", suffix);
	/* stderr may be a file under a size limit too */
	files_guard_begin(&g);
	if (write(STDERR_FILENO, buf, (size_t)n) < 0) {
		/* Nowhere left to complain to. */
	}
	files_guard_end(&g);
	errno = saved;
}

void gs_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap, "");
	va_end(ap);
}

/*
 * Problems already said, keyed by problem and errno: a full disk is one
 * line, not one per interval.  Lock-free (a slot is claimed by
 * compare-and-swap), since writers on several threads may report.
 */
#define SAID_MAX 64
static atomic_uint said[SAID_MAX];

bool gs_problem_new(enum gs_problem id, int err)
{
	unsigned key = ((unsigned)id << 16 | ((unsigned)(err < 0 ? -err : err) & 0xffff)) + 1;

	for (unsigned i = 0; i < SAID_MAX; i++) {
		unsigned cur = atomic_load(&said[i]);

		if (cur == 0 && atomic_compare_exchange_strong(&said[i], &cur, key))
			return true;
		if (cur == key)
			return false;
	}
	return false; /* SAID_MAX problems said already: enough */
}

void gs_problem(enum gs_problem id, int err, const char *fmt, ...)
{
	va_list ap;

	if (!gs_problem_new(id, err))
		return;
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
	/* the limit counts what gpuspy tracks: it goes with it */
	snprintf(suffix, sizeof(suffix), "; gpuspy is off for this process (pid %d)%s",
		 (int)getpid(), gs_config.limit ? ", and GPUSPY_LIMIT with it" : "");
	va_start(ap, fmt);
	vlog(fmt, ap, suffix);
	va_end(ap);
}
