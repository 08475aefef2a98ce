/* SPDX-License-Identifier: MIT */
/*
 * GPUSPY_* environment variables, read once (see libgpuspy(7)), each
 * strictly (src/common/env.c): a value refused is the default, with one
 * warning.  The warnings wait for the first allocation (config_warnings):
 * shells and tools that inherit a bad setting and never allocate print
 * nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "conf.h"
#include "core.h"
#include "env.h"
#include "oom_rule.h"
#include "prom.h"
#include "rundir.h"

/* Spelled once; a macro, since C initializes a global only with constants. */
#define CONFIG_DEFAULTS                                                                            \
	{                                                                                          \
		.output_dir = GS_OUTPUT_DIR_DEFAULT, .depth = 16, .py_depth = 32,                  \
		.interval_us = GS_INTERVAL_DEFAULT_US, .signal = GS_SIGNAL_DEFAULT, .nvml = true,  \
		.torch = true, .frameworks = true, .max_sites = GS_MAX_SITES_DEFAULT,              \
		.max_distinct_sites = GS_MAX_DISTINCT_SITES_DEFAULT,                               \
		.prometheus_top = PROM_TOP_DEFAULT, .symbols = true,                               \
	}

static const struct gs_config config_defaults = CONFIG_DEFAULTS;
struct gs_config gs_config = CONFIG_DEFAULTS;

/* One per variable at most, so there is room for every one. */
#define CONFIG_WARNINGS 16
static char warnings[CONFIG_WARNINGS][256];
static unsigned n_warnings;

static __attribute__((format(printf, 1, 2))) void config_warn(const char *fmt, ...)
{
	va_list ap;

	if (n_warnings == CONFIG_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(warnings[n_warnings++], sizeof(warnings[0]), fmt, ap);
	va_end(ap);
}

void config_warnings(void (*say)(const char *line))
{
	for (unsigned i = 0; i < n_warnings; i++)
		say(warnings[i]);
	n_warnings = 0;
	/* the one setting that changes what the program sees: said once */
	if (gs_config.limit && !gs_config.quiet) {
		char b[32], line[128];

		snprintf(line, sizeof(line),
			 "GPUSPY_LIMIT: each device capped at %s: allocations past it fail as on "
			 "a full device",
			 oom_size((long long)gs_config.limit, b, sizeof(b)));
		say(line);
	}
}

/* A value as the warning shows it: a line of its own, not a screenful. */
static const char *shown(const char *v, char *buf, size_t size)
{
	size_t i = 0;

	for (; v[i] && i + 4 < size; i++)
		buf[i] = (unsigned char)v[i] < 0x20 || v[i] == 0x7f ? '?' : v[i];
	if (v[i])
		memcpy(buf + i - 3, "...", 3);
	buf[i] = '\0';
	return buf;
}

/*
 * Before the C library's own initialization, environ is still NULL:
 * a program's .preinit_array runs then, and an allocation there starts
 * gpuspy.  The environment the kernel gave the process is in
 * /proc/self/environ; only GPUSPY_* entries are kept, in a static buffer,
 * since nothing may be allocated this early.
 */
static char early_env[16384];
static size_t early_len;
static bool early_read, early_cut;

static void early_env_read(void)
{
	static const char prefix[] = "GPUSPY_";
	const size_t plen = sizeof(prefix) - 1;
	size_t cur = 0; /* where the entry being read starts */
	bool skip = false;
	char chunk[4096];
	ssize_t n;
	int fd, saved = errno;

	early_read = true;
	early_len = 0;
	fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		config_warn("the environment could not be read before the C library started "
			    "(/proc/self/environ: %s); every GPUSPY_* setting has its default",
			    strerror(errno));
		errno = saved;
		return;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 || (n < 0 && errno == EINTR)) {
		for (ssize_t i = 0; i < n; i++) {
			char c = chunk[i];

			if (skip) {
				skip = c != '\0';
				continue;
			}
			if (early_len == sizeof(early_env)) {
				early_cut = true;
				early_len = cur;
				skip = c != '\0';
				continue;
			}
			early_env[early_len++] = c;
			if (early_len - cur <= plen && c != prefix[early_len - cur - 1]) {
				/* not ours: dropped */
				early_len = cur;
				skip = c != '\0';
			} else if (c == '\0') {
				cur = early_len;
			}
		}
	}
	/* an entry cut short by the end of the file is not taken */
	early_len = cur;
	close(fd);
	errno = saved;
}

static const char *early_getenv(const char *name)
{
	size_t nlen = strlen(name);

	if (!early_read)
		early_env_read();
	for (size_t i = 0; i < early_len; i += strlen(early_env + i) + 1)
		if (strncmp(early_env + i, name, nlen) == 0 && early_env[i + nlen] == '=')
			return early_env + i + nlen + 1;
	return NULL;
}

static const char *config_getenv(const char *name)
{
	extern char **environ;

	if (environ)
		return secure_getenv(name);
	/* secure_getenv's rule: nothing from the environment in a setuid
	 * or otherwise privileged program */
	if (getauxval(AT_SECURE))
		return NULL;
	return early_getenv(name);
}

static void load_uint(const char *name, unsigned max, unsigned *out)
{
	const char *v = config_getenv(name);
	char buf[80];

	if (v && *v && env_uint(v, max, out) < 0)
		config_warn("%s=%s is not a number from 0 to %u; using %u", name,
			    shown(v, buf, sizeof(buf)), max, *out);
}

static void load_bool(const char *name, bool *out)
{
	const char *v = config_getenv(name);
	char buf[80];

	if (v && *v && env_bool(v, out) < 0)
		config_warn("%s=%s is not 1, 0, yes, no, true, false, on or off; using %s", name,
			    shown(v, buf, sizeof(buf)), *out ? "1" : "0");
}

static void load_interval(void)
{
	const char *v = config_getenv("GPUSPY_INTERVAL");
	char buf[80];
	int r = env_interval(v, &gs_config.interval_us);

	if (r == -ERANGE)
		config_warn("GPUSPY_INTERVAL=%s is out of range (100us to 1h, or 0 for off); "
			    "using 1s",
			    shown(v, buf, sizeof(buf)));
	else if (r < 0)
		config_warn("GPUSPY_INTERVAL=%s is not a duration such as 1s, 100ms or 0; using 1s",
			    shown(v, buf, sizeof(buf)));
}

static void load_signal(void)
{
	const char *v = config_getenv("GPUSPY_SIGNAL");
	char buf[80];
	int sig = env_signal(v);

	if (sig == -EPERM) {
		unsigned n = 0;
		const char *name = env_uint(v, NSIG - 1, &n) == 0 ? env_signal_name((int)n) : NULL;

		/* a handler of ours on it would keep the program from ending,
		 * stopping or crashing as it should */
		config_warn("GPUSPY_SIGNAL=%s%s%s%s is refused: only SIGUSR1, SIGUSR2 and the "
			    "real-time signals can be taken; using SIGUSR2",
			    v, name ? " (" : "", name ? name : "", name ? ")" : "");
	} else if (sig < 0) {
		config_warn("GPUSPY_SIGNAL=%s is not SIGUSR1, SIGUSR2, a number or off; using "
			    "SIGUSR2",
			    shown(v, buf, sizeof(buf)));
	}
	gs_config.signal = sig < 0 ? GS_SIGNAL_DEFAULT : sig;
}

static void load_unwind(void)
{
	const char *v = config_getenv("GPUSPY_UNWIND");
	char buf[80];

	gs_config.unwind = NULL;
	if (!v || !*v)
		return;
	if (strcmp(v, "backtrace") == 0 || strcmp(v, "libunwind") == 0 || strcmp(v, "fp") == 0)
		gs_config.unwind = v;
	else
		config_warn("GPUSPY_UNWIND=%s is not backtrace, libunwind or fp; using the "
			    "default (libunwind when it can be loaded, else backtrace)",
			    shown(v, buf, sizeof(buf)));
}

static void load_limit(void)
{
	const char *v = config_getenv("GPUSPY_LIMIT");
	char buf[80];
	int r = env_size(v, &gs_config.limit);

	if (r == -ERANGE)
		config_warn("GPUSPY_LIMIT=%s is too large; no limit", shown(v, buf, sizeof(buf)));
	else if (r < 0)
		config_warn("GPUSPY_LIMIT=%s is not a size such as 8G, 512M or 24GiB; no limit",
			    shown(v, buf, sizeof(buf)));
}

void config_load(void)
{
	gs_config = config_defaults;
	n_warnings = 0;

	gs_config.output_given = config_getenv("GPUSPY_OUTPUT_DIR");
	if (gs_config.output_given && !*gs_config.output_given)
		gs_config.output_given = NULL;
	gs_config.output_dir = env_output_dir(gs_config.output_given);
	/* the run this process's parent started, if any (rundir_choose) */
	gs_config.run_id = config_getenv(GS_ENV_RUN_ID);
	gs_config.run_dir = config_getenv(GS_ENV_RUN_DIR);
	load_uint("GPUSPY_DEPTH", GS_MAX_DEPTH, &gs_config.depth);
	load_uint("GPUSPY_PYTHON_DEPTH", GS_MAX_PY_DEPTH, &gs_config.py_depth);
	load_uint("GPUSPY_MAX_SITES", GS_MAX_SITES_MAX, &gs_config.max_sites);
	load_uint("GPUSPY_MAX_DISTINCT_SITES", GS_MAX_DISTINCT_SITES_MAX,
		  &gs_config.max_distinct_sites);
	load_interval();
	load_signal();
	load_unwind();
	gs_config.libunwind = config_getenv("GPUSPY_LIBUNWIND");
	if (gs_config.libunwind && !*gs_config.libunwind)
		gs_config.libunwind = NULL;
	gs_config.prometheus = config_getenv("GPUSPY_PROMETHEUS");
	if (gs_config.prometheus && !*gs_config.prometheus)
		gs_config.prometheus = NULL;
	load_uint("GPUSPY_PROMETHEUS_TOP", PROM_TOP_MAX, &gs_config.prometheus_top);
	gs_config.libmicrohttpd = config_getenv("GPUSPY_LIBMICROHTTPD");
	if (gs_config.libmicrohttpd && !*gs_config.libmicrohttpd)
		gs_config.libmicrohttpd = NULL;
	load_bool("GPUSPY_SYMBOLS", &gs_config.symbols);
	gs_config.libdw = config_getenv("GPUSPY_LIBDW");
	if (gs_config.libdw && !*gs_config.libdw)
		gs_config.libdw = NULL;
	load_bool("GPUSPY_NVML", &gs_config.nvml);
	load_bool("GPUSPY_TORCH", &gs_config.torch);
	load_bool("GPUSPY_FRAMEWORKS", &gs_config.frameworks);
	load_bool("GPUSPY_QUIET", &gs_config.quiet);
	load_limit();
	load_uint("GPUSPY_TRACE", GS_TRACE_MAX, &gs_config.trace);
	load_bool("GPUSPY_DISABLE", &gs_config.disabled);
	/* A set-user-ID or set-group-ID program (or one given capabilities)
	 * runs as another user than the one who started it, whose files and
	 * working directory these are not: gpuspy records nothing there,
	 * writes nothing and says nothing (GPUSPY_* is not read there
	 * either), as if it were not loaded. */
	if (getauxval(AT_SECURE))
		gs_config.disabled = true;
	if (early_cut)
		config_warn("the environment's GPUSPY_* settings were too long to read before "
			    "the C library started; some have their defaults");
}
