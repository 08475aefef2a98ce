/* SPDX-License-Identifier: MIT */
/*
 * A libmicrohttpd whose MHD_stop_daemon takes SLOW_MHD_STOP_S seconds
 * before it stops (prometheus_exit.py): what a libmicrohttpd that does not
 * wake its thread, or a stop stuck on a client, would cost.  Every other
 * function, and then the stop, is the real library's (libmicrohttpd.so.12,
 * dlopen()ed), as libgpuspy.so reaches them through GPUSPY_LIBMICROHTTPD.
 * With SLOW_MHD_MARK it also says whether the report was there before.
 */
#include <dlfcn.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <microhttpd.h>

static void *real(const char *name)
{
	static void *h;

	if (!h)
		h = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		abort();
	return dlsym(h, name);
}

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
				    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	struct MHD_Daemon *(*f)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
				MHD_AccessHandlerCallback, void *, va_list);
	struct MHD_Daemon *d;
	va_list ap;

	*(void **)&f = real("MHD_start_daemon_va");
	va_start(ap, dh_cls);
	d = f(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

/* With SLOW_MHD_MARK: whether a report.json of GPUSPY_OUTPUT_DIR's
 * processes is there as the stop begins, "1" or "0" into that file. */
static void mark(void)
{
	const char *m = getenv("SLOW_MHD_MARK"), *dir = getenv("GPUSPY_OUTPUT_DIR");
	char pattern[4096];
	glob_t g;
	FILE *f;
	int n;

	if (!m || !dir)
		return;
	snprintf(pattern, sizeof(pattern), "%s/*/report.json", dir);
	n = glob(pattern, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
	if (n)
		globfree(&g);
	f = fopen(m, "w");
	if (f) {
		fprintf(f, "%d\n", n > 0);
		fclose(f);
	}
}

void MHD_stop_daemon(struct MHD_Daemon *d)
{
	void (*f)(struct MHD_Daemon *);
	const char *s = getenv("SLOW_MHD_STOP_S");

	mark();
	if (s)
		sleep((unsigned)atoi(s));
	*(void **)&f = real("MHD_stop_daemon");
	f(d);
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
						     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *(*f)(size_t, void *, enum MHD_ResponseMemoryMode);

	*(void **)&f = real("MHD_create_response_from_buffer");
	return f(size, buffer, mode);
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *r, const char *header,
					const char *content)
{
	enum MHD_Result (*f)(struct MHD_Response *, const char *, const char *);

	*(void **)&f = real("MHD_add_response_header");
	return f(r, header, content);
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *c, unsigned int status,
				   struct MHD_Response *r)
{
	enum MHD_Result (*f)(struct MHD_Connection *, unsigned int, struct MHD_Response *);

	*(void **)&f = real("MHD_queue_response");
	return f(c, status, r);
}

void MHD_destroy_response(struct MHD_Response *r)
{
	void (*f)(struct MHD_Response *);

	*(void **)&f = real("MHD_destroy_response");
	f(r);
}
