/* SPDX-License-Identifier: MIT */
/*
 * The PyTorch view: once PyTorch has initialized CUDA in this process, run
 * torch_view.py inside it, which asks PyTorch's caching allocator which
 * Python line holds each live block (see that file for why).
 *
 * The snapshot thread never takes the GIL and never runs Python itself:
 * each interval it queues a pending call (Py_AddPendingCall, which needs
 * neither), and the program's main thread runs it between two bytecodes,
 * with the GIL, as it runs a signal handler.  Python code of gpuspy's then
 * never runs beside the program's (an import in another thread can meet
 * the program's own imports half made), and nothing waits on an
 * interpreter that is shutting down.  A process without PyTorch's CUDA
 * library loaded is never asked; CPython's C API is reached through
 * dlsym, so the library links nothing of Python.
 *
 * The same calls read the frameworks' own counters (fw_view.py, run in
 * the same namespace), once one of the frameworks' native libraries is
 * loaded (fw_libs): a Python process that imported none of them is never
 * asked.  The program's sys.modules then says which one it imported.
 */
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "events.h"
#include "files.h"
#include "fw_counters.h"
#include "fw_view.h"
#include "history.h"
#include "log.h"
#include "names.h"
#include "real.h"
#include "state.h"
#include "summary.h"
#include "torch_probe.h"
#include "torch_view.h"
#include "trend.h"

#define PY_FILE_INPUT 257 /* Py_file_input */

typedef struct py_object PyObject;

static struct {
	int (*initialized)(void);
	int (*finalizing)(void);
	int (*pending)(int (*)(void *), void *);
	PyObject *(*dict_new)(void);
	int (*dict_set)(PyObject *, const char *, PyObject *);
	PyObject *(*dict_get)(PyObject *, const char *);
	PyObject *(*builtins)(void);
	PyObject *(*str)(const char *);
	PyObject *(*real)(double);
	PyObject *(*boolean)(long);
	PyObject *(*pointer)(void *);
	PyObject *(*size)(size_t);
	PyObject *(*run)(const char *, int, PyObject *, PyObject *, void *);
	const char *(*utf8)(PyObject *);
	void (*err_clear)(void);
	int (*err_matches)(PyObject *);
	PyObject **exception; /* PyExc_Exception */
	void (*decref)(PyObject *);
} py;

/* T_WAIT: start() is asked each interval; T_RUN: tick() is.  The
 * frameworks' counters (fw_state) wait for a framework's library. */
enum { T_UNBOUND, T_WAIT, T_RUN, T_DONE };
static atomic_int state; /* written by both threads */
static atomic_int fw_state;
static atomic_bool queued;  /* a call is pending: queue no other */
static atomic_ullong calls; /* pending calls run, for the process files */
static PyObject *globals;   /* torch_view.py's namespace, main thread only */
static char dir[GS_PROCESS_PATH_SIZE];

static bool bind(void)
{
#define SYM(field, name) (py.field = (__typeof__(py.field))real_dlsym(RTLD_DEFAULT, name))
	SYM(finalizing, "Py_IsFinalizing"); /* 3.13 */
	if (!py.finalizing)
		SYM(finalizing, "_Py_IsFinalizing");
	return SYM(initialized, "Py_IsInitialized") && py.finalizing &&
	       SYM(pending, "Py_AddPendingCall") && SYM(dict_new, "PyDict_New") &&
	       SYM(dict_set, "PyDict_SetItemString") && SYM(dict_get, "PyDict_GetItemString") &&
	       SYM(builtins, "PyEval_GetBuiltins") && SYM(str, "PyUnicode_FromString") &&
	       SYM(real, "PyFloat_FromDouble") && SYM(boolean, "PyBool_FromLong") &&
	       SYM(pointer, "PyLong_FromVoidPtr") && SYM(size, "PyLong_FromSize_t") &&
	       SYM(run, "PyRun_StringFlags") && SYM(utf8, "PyUnicode_AsUTF8") &&
	       SYM(err_clear, "PyErr_Clear") && SYM(err_matches, "PyErr_ExceptionMatches") &&
	       SYM(exception, "PyExc_Exception") && SYM(decref, "Py_DecRef");
#undef SYM
}

/* NAME = VALUE in DICT; a NULL VALUE (out of memory) fails. */
static bool set(PyObject *dict, const char *name, PyObject *value)
{
	bool ok = value && py.dict_set(dict, name, value) == 0;

	if (value)
		py.decref(value);
	return ok;
}

/* Run CODE in the namespace for the view whose state is *ST.  An
 * Exception is gpuspy's, and is cleared; anything else (KeyboardInterrupt:
 * a signal arrived meanwhile) is the program's, and stays raised: -1
 * tells CPython so. */
static int run(const char *code, atomic_int *st)
{
	PyObject *r = py.run(code, PY_FILE_INPUT, globals, globals, NULL);

	if (r) {
		py.decref(r);
		return 0;
	}
	if (!py.err_matches(*py.exception))
		return -1;
	py.err_clear();
	*st = T_DONE;
	if (!gs_config.quiet)
		gs_warn(st == &state ? "PyTorch view off: it failed to run" :
				       "framework counters off: they failed to run");
	return 0;
}

/* The namespace, made once with both files run in it; -1 as run(). */
static int ns_make(void)
{
	int ret, before;

	if (!globals) {
		char path[GS_FILE_PATH_SIZE], tmp[GS_FILE_PATH_SIZE];

		names_join(path, sizeof(path), dir, GS_FILE_TORCH);
		names_tmp(tmp, sizeof(tmp), dir, GS_FILE_TORCH);
		globals = py.dict_new();
		/* __builtins__ is borrowed: not through set() */
		if (!globals || py.dict_set(globals, "__builtins__", py.builtins()) != 0 ||
		    !set(globals, "GPUSPY_DIR", py.str(dir)) ||
		    !set(globals, "GPUSPY_TORCH_PATH", py.str(path)) ||
		    !set(globals, "GPUSPY_TORCH_TMP", py.str(tmp)) ||
		    !set(globals, "GPUSPY_TORCH_FORMAT", py.str(GS_FORMAT_TORCH)) ||
		    !set(globals, "GPUSPY_INTERVAL",
			 py.real((double)gs_config.interval_us / 1e6)) ||
		    !set(globals, "GPUSPY_QUIET", py.boolean(gs_config.quiet)) ||
		    !set(globals, "GPUSPY_START", py.real(gs_state.start_time)) ||
		    /* the growth rule, as the snapshot thread applies it: its
		     * functions are hidden, their addresses need no export */
		    !set(globals, "GPUSPY_TREND_INIT", py.pointer((void *)(uintptr_t)trend_init)) ||
		    !set(globals, "GPUSPY_TREND_PUSH", py.pointer((void *)(uintptr_t)trend_push)) ||
		    !set(globals, "GPUSPY_TREND_STATE",
			 py.pointer((void *)(uintptr_t)trend_state)) ||
		    !set(globals, "GPUSPY_TREND_QUERY",
			 py.pointer((void *)(uintptr_t)trend_query)) ||
		    !set(globals, "GPUSPY_TREND_SHAPE_NAME",
			 py.pointer((void *)(uintptr_t)trend_shape_name)) ||
		    !set(globals, "GPUSPY_TREND_SIZE", py.size(trend_state_size())) ||
		    /* the history's series of the view (history.h) */
		    !set(globals, "GPUSPY_HISTORY_TORCH",
			 py.pointer((void *)(uintptr_t)history_torch)) ||
		    !set(globals, "GPUSPY_HISTORY_TORCH_LINE",
			 py.pointer((void *)(uintptr_t)history_torch_line)) ||
		    /* the exit summary's first lines (summary.h) */
		    !set(globals, "GPUSPY_SUMMARY_TORCH",
			 py.pointer((void *)(uintptr_t)summary_torch_top)) ||
		    /* PyTorch's figures when it raises OutOfMemoryError (events.h) */
		    !set(globals, "GPUSPY_TORCH_OOM",
			 py.pointer((void *)(uintptr_t)events_torch_oom)) ||
		    /* the frameworks' counters (fw_counters.h) */
		    !set(globals, "GPUSPY_FW_PUT",
			 py.pointer((void *)(uintptr_t)fw_counters_put))) {
			py.err_clear();
			state = fw_state = T_DONE;
			return 0;
		}
		/* fw_view.py uses torch_view.py's helpers: first (run even
		 * with the view off, GPUSPY_TORCH=0) */
		before = state;
		ret = run(torch_view_py, &state);
		if (ret < 0)
			return ret;
		if (state == T_DONE && before != T_DONE)
			fw_state = T_DONE;
		else if ((ret = run(fw_view_py, &fw_state)) < 0)
			return ret;
	}
	return 0;
}

bool torch_view_on(void)
{
	return atomic_load(&state) == T_RUN;
}

/* In the main thread, with the GIL: what torch_view.py's start() said. */
static int start_call(void)
{
	PyObject *s;
	const char *u;
	int ret;

	if (state != T_WAIT)
		return 0;
	ret = run("status, tick = start()\n", &state);
	if (ret < 0 || state == T_DONE)
		return ret;
	s = py.dict_get(globals, "status");
	u = s ? py.utf8(s) : NULL;
	if (!u) {
		py.err_clear();
		state = T_DONE;
	} else if (strcmp(u, "ok") == 0) {
		state = T_RUN;
	} else if (strcmp(u, "wait") != 0) {
		state = T_DONE;
		if (!gs_config.quiet)
			gs_warn("PyTorch view %s", u);
	}
	return 0;
}

/* The pending call, in the main thread with the GIL: the PyTorch view
 * (when ARG is not NULL: its library is loaded), then the counters. */
static int probe_call(void *arg)
{
	int ret;

	atomic_store(&queued, false);
	atomic_fetch_add(&calls, 1);
	if ((ret = ns_make()) < 0)
		return ret;
	/* the view's start, or else its tick: a view just started has
	 * taken its first sample */
	if (arg && state == T_WAIT)
		ret = start_call();
	else if (arg && state == T_RUN)
		ret = run("tick()\n", &state);
	if (ret < 0)
		return ret;
	return fw_state == T_RUN ? run("fw_tick()\n", &fw_state) : 0;
}

/*
 * The native libraries that importing a framework loads, as the frameworks
 * lay them out: DIR (empty: anywhere) ends the path before the file name,
 * which begins with BASE (a Python extension module's name goes on with
 * its ABI tag, core.cpython-312-x86_64-linux-gnu.so).  Python extension
 * modules are loaded by path, so names and not sonames are matched.
 */
static const struct fw_lib {
	const char *dir, *base;
} fw_libs[] = {
	{ "", "libc10_cuda.so" },		    /* PyTorch's CUDA side */
	{ "/paddle/base/", "libpaddle.so" },	    /* PaddlePaddle 2.6 on */
	{ "/paddle/fluid/", "libpaddle.so" },	    /* 2.5 */
	{ "/paddle/fluid/", "core_avx." },	    /* up to 2.4 */
	{ "/paddle/fluid/", "core_noavx." },	    /* ditto, without AVX */
	{ "/jaxlib/", "xla_extension." },	    /* jaxlib up to 0.5 */
	{ "/jaxlib/", "_jax." },		    /* jaxlib 0.6 on */
	{ "", "xla_cuda_plugin.so" },		    /* jax_plugins/xla_cuda12, 13 */
	{ "/cupy/_core/", "core." },		    /* CuPy 9 on */
	{ "/cupy_backends/cuda/api/", "runtime." }, /* CuPy 8 on */
	{ "/cupy/core/", "core." },		    /* CuPy up to 8 */
};

static bool fw_lib_match(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t dir_len;

	base = base ? base + 1 : path;
	dir_len = (size_t)(base - path);
	for (size_t i = 0; i < sizeof(fw_libs) / sizeof(fw_libs[0]); i++) {
		const struct fw_lib *l = &fw_libs[i];
		size_t n = strlen(l->dir);

		if (strncmp(base, l->base, strlen(l->base)) != 0)
			continue;
		/* a path relative to the working directory may begin with
		 * DIR less its slash */
		if (n == 0 || (dir_len >= n && memcmp(base - n, l->dir, n) == 0) ||
		    (dir_len == n - 1 && memcmp(path, l->dir + 1, n - 1) == 0))
			return true;
	}
	return false;
}

struct fw_scan {
	unsigned long long adds; /* objects ever loaded, when the scan began */
	bool first, found;
};

/* Loads so far at the last scan that found nothing: snapshot thread only */
static unsigned long long fw_adds_seen;

static int fw_scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct fw_scan *s = arg;

	if (s->first) {
		s->first = false;
		/* no object loaded since the last scan: nothing new to see */
		if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds)) {
			s->adds = info->dlpi_adds;
			if (s->adds == fw_adds_seen)
				return 1;
		}
	}
	s->found = info->dlpi_name && fw_lib_match(info->dlpi_name);
	return s->found;
}

/* Whether a framework's library is loaded: sticky once it is (a
 * framework is not unloaded), and a walk of the loaded objects only when
 * one was loaded since the last. */
static bool fw_loaded(void)
{
	struct fw_scan s = { .first = true };

	dl_iterate_phdr(fw_scan_one, &s);
	if (!s.found)
		fw_adds_seen = s.adds;
	return s.found;
}

unsigned long long torch_calls(void)
{
	return atomic_load(&calls);
}

void torch_poll(void)
{
	bool torch;
	void *c10;

	if (atomic_load(&queued) || (state == T_DONE && fw_state == T_DONE))
		return;
	if (state == T_UNBOUND) {
		if ((!gs_config.torch && !gs_config.frameworks) || !bind()) {
			state = fw_state = T_DONE;
			return;
		}
		files_process_dir(dir, sizeof(dir));
		fw_state = gs_config.frameworks ? T_WAIT : T_DONE;
		state = gs_config.torch ? T_WAIT : T_DONE;
	}
	if (fw_state == T_WAIT && fw_loaded())
		fw_state = T_RUN;
	torch = state == T_RUN;
	if (state == T_WAIT) {
		/* PyTorch's CUDA library, loaded: else nothing to ask */
		c10 = dlopen("libc10_cuda.so", RTLD_LAZY | RTLD_NOLOAD);
		if (c10) {
			dlclose(c10);
			torch = true;
		}
	}
	if ((!torch && fw_state != T_RUN) || !py.initialized() || py.finalizing())
		return;
	atomic_store(&queued, true);
	if (py.pending(probe_call, torch ? (void *)1 : NULL) != 0)
		atomic_store(&queued, false); /* CPython's queue is full: next time */
}

void torch_forget(void)
{
	atomic_store(&state, T_DONE);
	atomic_store(&fw_state, T_DONE);
	atomic_store(&queued, false);
	fw_counters_reset();
}

/*
 * While the view waits to start (PyTorch not initialized yet, or the
 * program importing), it is asked every TORCH_WAIT_POLL_MS rather than
 * every interval, during the first TORCH_WAIT_S seconds: blocks PyTorch
 * allocates before the view starts have no stack.
 */
#define TORCH_WAIT_POLL_MS 50
#define TORCH_WAIT_S	   60

bool torch_waiting(struct timespec *soon)
{
	int st = atomic_load(&state);

	if (!gs_config.torch || (st != T_UNBOUND && st != T_WAIT) ||
	    gs_now() - gs_state.start_time > TORCH_WAIT_S)
		return false;
	clock_gettime(CLOCK_MONOTONIC, soon);
	soon->tv_nsec += TORCH_WAIT_POLL_MS * 1000000L;
	if (soon->tv_nsec >= 1000000000L) {
		soon->tv_sec++;
		soon->tv_nsec -= 1000000000L;
	}
	return true;
}
