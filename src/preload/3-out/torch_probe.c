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
 * The view starts before PyTorch's first block where it can: while it
 * waits, once PyTorch's CUDA library is loaded, the snapshot thread asks
 * every TORCH_ARM_POLL_MS until torch.cuda is there, and torch_view.py
 * then puts the start of PyTorch's memory history into torch.cuda's own
 * queue of calls made when CUDA initializes (the view is "armed"), so
 * that each block has its stack from CUDA's first; and the first
 * allocation gpuspy records while the view (or the frameworks' counters)
 * wait wakes the snapshot thread at once (gs_torch_wake), which asks for
 * the start without waiting for the interval.  What still comes before
 * it is named from gpuspy's record of the segment holding the block
 * (torch_segment_site).
 *
 * The same calls read the frameworks' own counters (fw_view.py, run in
 * the same namespace), once one of the frameworks' native libraries is
 * loaded (fw_libs): a Python process that imported none of them is never
 * asked.  The program's sys.modules then says which one it imported.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
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
#include "json_out.h"
#include "log.h"
#include "names.h"
#include "real.h"
#include "state.h"
#include "sites.h"
#include "summary.h"
#include "table.h"
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
static atomic_bool queued; /* a call is pending: queue no other */
static PyObject *globals;  /* torch_view.py's namespace, main thread only */
static atomic_bool armed;  /* history starts with CUDA (torch_view.py said "armed") */
static bool c10_seen;	   /* PyTorch's CUDA library is loaded: snapshot thread only */
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

/*
 * The gpuspy site of the live device allocation at ADDR (a segment of
 * PyTorch's pool): its number, the id of the reports' sites[], or -1 when
 * gpuspy holds none there.  With a BUF of SIZE bytes, the Python frames
 * gpuspy recorded at that allocation, innermost first, as torch.json's
 * frames (JSON, NUL-terminated), and -2 when they do not fit.  Called by
 * torch_view.py, in the main thread with the GIL: the table's lock is
 * never held across anything that could wait for the GIL.
 */
static long long torch_segment_site(unsigned long long addr, char *buf, size_t size)
{
	const struct gs_site *site = table_site(GS_SPACE_DEVPTR, addr);
	FILE *f;
	long end;
	int ok;

	if (!site)
		return -1;
	if (!buf)
		return site->id;
	if (size < 3 || !(f = fmemopen(buf, size, "w")))
		return -2;
	fputc('[', f);
	for (unsigned i = 0; i < site->pydepth; i++) {
		const struct gs_pyframe *p = &site->py[i];

		fputs(i ? ", {\"file\": " : "{\"file\": ", f);
		json_str(f, p->file ? p->file : "?");
		fputs(", \"function\": ", f);
		json_str(f, p->function ? p->function : "?");
		fprintf(f, ", \"line\": %d}", p->line > 0 ? p->line : 0);
	}
	fputc(']', f);
	fflush(f);
	end = ftell(f);
	ok = !ferror(f) && end >= 0 && (size_t)end < size - 1;
	fclose(f);
	return ok ? (long long)site->id : -2;
}

/* The process's directory and torch.json's paths in the namespace: the
 * directory is named once the process allocates (lifecycle.c), which a
 * call queued as CUDA starts may come before: set again at the start. */
static bool paths_set(void)
{
	char path[GS_FILE_PATH_SIZE], tmp[GS_FILE_PATH_SIZE];

	files_process_dir(dir, sizeof(dir));
	names_join(path, sizeof(path), dir, GS_FILE_TORCH);
	names_tmp(tmp, sizeof(tmp), dir, GS_FILE_TORCH);
	return set(globals, "GPUSPY_DIR", py.str(dir)) &&
	       set(globals, "GPUSPY_TORCH_PATH", py.str(path)) &&
	       set(globals, "GPUSPY_TORCH_TMP", py.str(tmp));
}

static int torch_exit_start(void);

/* The namespace, made once with both files run in it; -1 as run(). */
static int ns_make(void)
{
	int ret, before;

	if (!globals) {
		globals = py.dict_new();
		/* __builtins__ is borrowed: not through set() */
		if (!globals || py.dict_set(globals, "__builtins__", py.builtins()) != 0 ||
		    !paths_set() || !set(globals, "GPUSPY_TORCH_FORMAT", py.str(GS_FORMAT_TORCH)) ||
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
			 py.pointer((void *)(uintptr_t)fw_counters_put)) ||
		    /* gpuspy's record of a segment (above) */
		    !set(globals, "GPUSPY_SEGMENT_SITE",
			 py.pointer((void *)(uintptr_t)torch_segment_site)) ||
		    /* the start at exit (above) */
		    !set(globals, "GPUSPY_EXIT_START",
			 py.pointer((void *)(uintptr_t)torch_exit_start))) {
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

/* What start_call() asks of torch_view.py */
enum start_how { S_ARM, S_START, S_EXIT };

/* In the main thread, with the GIL: what torch_view.py's arm() or start()
 * said.  The first time the view is left waiting, its start at the
 * program's exit is registered (exit_hook(); torch_exit_start below). */
static int start_call(enum start_how how)
{
	static bool exit_hooked; /* main thread only */
	static const char *const code[] = {
		[S_ARM] = "status = arm()\n",
		[S_START] = "status, tick = start()\n",
		[S_EXIT] = "status, tick = start(True)\n",
	};
	PyObject *s;
	const char *u;
	int ret;

	if (state != T_WAIT)
		return 0;
	/* only the snapshot thread, which the first allocation starts, or
	 * the program's exit asks for the start */
	if (how != S_ARM && !paths_set()) {
		py.err_clear();
		state = T_DONE;
		return 0;
	}
	ret = run(code[how], &state);
	if (ret < 0 || state == T_DONE)
		return ret;
	s = py.dict_get(globals, "status");
	u = s ? py.utf8(s) : NULL;
	if (!u) {
		py.err_clear();
		state = T_DONE;
	} else if (strcmp(u, "ok") == 0) {
		state = T_RUN;
	} else if (strcmp(u, "armed") == 0 || strcmp(u, "wait") == 0) {
		if (strcmp(u, "armed") == 0)
			atomic_store(&armed, true);
		if (how != S_EXIT && !exit_hooked) {
			exit_hooked = true;
			return run("exit_hook()\n", &state);
		}
	} else {
		state = T_DONE;
		if (!gs_config.quiet)
			gs_warn("PyTorch view %s", u);
	}
	return 0;
}

/*
 * At the program's exit, from torch_view.py's atexit handler (main
 * thread, with the GIL, before the interpreter finalizes): a view still
 * waiting to start (a short program, which ends before the snapshot
 * thread's next call) starts now, and its first sample is the last; PyTorch
 * armed with CUDA has every block's stack.  0, or -1 with the program's
 * exception raised (as run()).
 */
static int torch_exit_start(void)
{
	if (ns_make() < 0)
		return -1;
	return start_call(S_EXIT);
}

/* ARG of a pending call queued as CUDA starts (torch_cuda_starting):
 * the view is armed, never started, the process's directory may not be
 * made yet */
#define ARM_ONLY ((void *)2)

/* The pending call, in the main thread with the GIL: the PyTorch view
 * (when ARG is not NULL: its library is loaded), then the counters. */
static int probe_call(void *arg)
{
	int ret;

	atomic_store(&queued, false);
	atomic_fetch_add(&gs_totals.torch_calls, 1);
	if ((ret = ns_make()) < 0)
		return ret;
	/* the view's start, or else its tick: a view just started has
	 * taken its first sample */
	if (arg == ARM_ONLY)
		return start_call(S_ARM);
	if (arg && state == T_WAIT)
		ret = start_call(S_START);
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

static int adds_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
		*(unsigned long long *)arg = info->dlpi_adds;
	return 1;
}

/* Loads so far at the last arming of gs_torch_wake, and the spare armings
 * left since (below): snapshot thread only */
static unsigned long long wake_adds;
static unsigned wake_spares;
#define WAKE_SPARES 4

/*
 * Arm gs_torch_wake, so that the next allocation brings the snapshot
 * thread here at once: while the view waits with PyTorch's CUDA library
 * loaded (its first block comes soon, the view must start before it),
 * or while the frameworks' counters wait and an object was loaded since
 * the last arming (a framework's library comes before its first
 * allocation).  At most one wake for each time it is armed, and it is
 * armed here only: never more often than the snapshot thread comes.  A
 * wake that came with no object loaded since its arming was taken by an
 * allocation ahead of the framework's library (a runtime call's own
 * driver call, the program's allocations before its import): armed
 * again, up to WAKE_SPARES times for each new load, so that a program
 * that never imports a framework is not woken for each allocation.
 */
static void wake_arm(void)
{
	unsigned long long adds = 0;

	if (state == T_WAIT && c10_seen) {
		atomic_store(&gs_torch_wake, true);
		return;
	}
	if (fw_state != T_WAIT)
		return;
	dl_iterate_phdr(adds_one, &adds);
	if (adds != wake_adds) {
		wake_adds = adds;
		wake_spares = WAKE_SPARES;
		atomic_store(&gs_torch_wake, true);
	} else if (wake_spares > 0 && !atomic_load(&gs_torch_wake)) {
		wake_spares--;
		atomic_store(&gs_torch_wake, true);
	}
}

/* CPython's symbols and the process's directory, once: by the snapshot
 * thread's first poll, or by the thread that starts CUDA before it. */
static pthread_once_t bind_ctl = PTHREAD_ONCE_INIT;

static void bind_once(void)
{
	if ((!gs_config.torch && !gs_config.frameworks) || !bind()) {
		state = fw_state = T_DONE;
		return;
	}
	fw_state = gs_config.frameworks ? T_WAIT : T_DONE;
	state = gs_config.torch ? T_WAIT : T_DONE;
}

/* Queue probe_call(ARG), unless one is queued already. */
static void queue_call(void *arg)
{
	bool no = false;

	if (!atomic_compare_exchange_strong(&queued, &no, true))
		return;
	if (py.pending(probe_call, arg) != 0)
		atomic_store(&queued, false); /* CPython's queue is full: next time */
}

/*
 * CUDA starts in a Python process, before the snapshot thread (which the
 * first allocation starts) can see it: in PyTorch, torch.cuda's lazy
 * initialization is binding the driver, and the first tensor follows.
 * Queue the view's arming (ARM_ONLY), which the main thread runs at its
 * next bytecode, inside that initialization and before its queue of
 * calls: the history then starts before the first block.  On the
 * program's thread, in its call that bound the driver: no Python runs
 * here, the GIL is not asked for (Py_AddPendingCall needs neither).
 */
void torch_cuda_starting(void)
{
	static atomic_bool once;
	void *c10;

	if (atomic_exchange(&once, true) || !gs_config.torch)
		return;
	pthread_once(&bind_ctl, bind_once);
	if (atomic_load(&state) != T_WAIT || atomic_load(&armed))
		return;
	c10 = dlopen("libc10_cuda.so", RTLD_LAZY | RTLD_NOLOAD);
	if (!c10)
		return;
	dlclose(c10);
	if (py.initialized() && !py.finalizing())
		queue_call(ARM_ONLY);
}

void torch_poll(void)
{
	bool torch;
	void *c10;

	if (atomic_load(&queued) || (state == T_DONE && fw_state == T_DONE))
		return;
	if (state == T_UNBOUND) {
		pthread_once(&bind_ctl, bind_once);
		if (state == T_DONE && fw_state == T_DONE)
			return;
	}
	if (fw_state == T_WAIT && fw_loaded())
		fw_state = T_RUN;
	torch = state == T_RUN;
	if (state == T_WAIT) {
		/* PyTorch's CUDA library, loaded: else nothing to ask */
		c10 = c10_seen ? NULL : dlopen("libc10_cuda.so", RTLD_LAZY | RTLD_NOLOAD);
		if (c10) {
			dlclose(c10);
			c10_seen = true;
		}
		torch = c10_seen;
	}
	wake_arm();
	if ((!torch && fw_state != T_RUN) || !py.initialized() || py.finalizing())
		return;
	queue_call(torch ? (void *)1 : NULL);
}

void torch_forget(void)
{
	atomic_store(&state, T_DONE);
	atomic_store(&fw_state, T_DONE);
	atomic_store(&queued, false);
	atomic_store(&gs_torch_wake, false);
	fw_counters_reset();
}

/*
 * While the view waits to start (PyTorch not initialized yet, or the
 * program importing), it is asked every TORCH_WAIT_POLL_MS rather than
 * every interval, during the first TORCH_WAIT_S seconds: blocks PyTorch
 * allocates before the view starts have no stack of PyTorch's.  Once
 * PyTorch's CUDA library is loaded and until the view is armed (above),
 * every TORCH_ARM_POLL_MS: PyTorch's import goes on after it, and the
 * view arms as soon as torch.cuda is there.  A call that finds nothing
 * to do costs a few microseconds of the main thread.
 */
#define TORCH_WAIT_POLL_MS 50
#define TORCH_ARM_POLL_MS  5
#define TORCH_WAIT_S	   60

bool torch_waiting(struct timespec *soon)
{
	int st = atomic_load(&state);

	if (!gs_config.torch || (st != T_UNBOUND && st != T_WAIT) ||
	    gs_now() - gs_state.start_time > TORCH_WAIT_S)
		return false;
	clock_gettime(CLOCK_MONOTONIC, soon);
	soon->tv_nsec +=
		(c10_seen && !atomic_load(&armed) ? TORCH_ARM_POLL_MS : TORCH_WAIT_POLL_MS) *
		1000000L;
	if (soon->tv_nsec >= 1000000000L) {
		soon->tv_sec++;
		soon->tv_nsec -= 1000000000L;
	}
	return true;
}
