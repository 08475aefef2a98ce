/* SPDX-License-Identifier: MIT */
/*
 * The PyTorch view: once PyTorch has initialized CUDA in this process, run
 * torch_view.py inside it, which asks PyTorch's caching allocator which
 * Python line holds each live block (see that file for why).
 *
 * Polled by the snapshot thread each interval until the view has started
 * or said why it cannot.  Each poll that gets as far as taking the GIL
 * costs the program one switch of the interpreter lock; a process without
 * PyTorch's CUDA library loaded is never asked.  The thread holds none of
 * gpuspy's locks while it waits for the GIL, so no allocating thread can
 * be waiting on it in turn.  CPython's C API is reached through dlsym: the
 * library links nothing of Python, and a process without it costs nothing.
 */
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include "gpuspy_int.h"
#include "torch_view.h"

#define PY_FILE_INPUT 257	/* Py_file_input */

typedef struct py_object PyObject;

static struct {
	int (*initialized)(void);
	int (*finalizing)(void);
	int (*gil_ensure)(void);
	void (*gil_release)(int);
	PyObject *(*dict_new)(void);
	int (*dict_set)(PyObject *, const char *, PyObject *);
	PyObject *(*dict_get)(PyObject *, const char *);
	PyObject *(*builtins)(void);
	PyObject *(*str)(const char *);
	PyObject *(*real)(double);
	PyObject *(*boolean)(long);
	PyObject *(*run)(const char *, int, PyObject *, PyObject *, void *);
	const char *(*utf8)(PyObject *);
	void (*err_clear)(void);
	void (*decref)(PyObject *);
} py;

static enum { T_UNBOUND, T_WAIT, T_DONE } state;

static bool bind(void)
{
#define SYM(field, name) (py.field = (__typeof__(py.field))real_dlsym(RTLD_DEFAULT, name))
	SYM(finalizing, "Py_IsFinalizing"); /* 3.13 */
	if (!py.finalizing)
		SYM(finalizing, "_Py_IsFinalizing");
	return SYM(initialized, "Py_IsInitialized") && py.finalizing &&
	       SYM(gil_ensure, "PyGILState_Ensure") && SYM(gil_release, "PyGILState_Release") &&
	       SYM(dict_new, "PyDict_New") && SYM(dict_set, "PyDict_SetItemString") &&
	       SYM(dict_get, "PyDict_GetItemString") && SYM(builtins, "PyEval_GetBuiltins") &&
	       SYM(str, "PyUnicode_FromString") && SYM(real, "PyFloat_FromDouble") &&
	       SYM(boolean, "PyBool_FromLong") && SYM(run, "PyRun_StringFlags") &&
	       SYM(utf8, "PyUnicode_AsUTF8") && SYM(err_clear, "PyErr_Clear") &&
	       SYM(decref, "Py_DecRef");
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

/* With the GIL: run the view in a fresh namespace; what it says, copied
 * into STATUS ("wait", "ok", "off: why"). */
static void run_view(const char *dir, char *status, size_t size)
{
	PyObject *g = py.dict_new(), *r, *s;
	const char *u;

	snprintf(status, size, "off: out of memory");
	if (!g)
		return;
	/* borrowed: not through set() */
	if (py.dict_set(g, "__builtins__", py.builtins()) != 0 ||
	    !set(g, "GPUSPY_DIR", py.str(dir)) ||
	    !set(g, "GPUSPY_INTERVAL", py.real((double)gs_config.interval_us / 1e6)) ||
	    !set(g, "GPUSPY_QUIET", py.boolean(gs_config.quiet))) {
		py.err_clear();
		py.decref(g);
		return;
	}
	r = py.run(torch_view_py, PY_FILE_INPUT, g, g, NULL);
	if (!r) {
		py.err_clear(); /* the file catches its own; this is a bug in it */
		snprintf(status, size, "off: the view did not run");
	} else {
		py.decref(r);
		s = py.dict_get(g, "status");
		u = s ? py.utf8(s) : NULL;
		if (u)
			snprintf(status, size, "%s", u);
		else
			py.err_clear();
	}
	py.decref(g);
}

void torch_poll(void)
{
	char dir[4608], host[200], status[256];
	void *c10;
	int gil;

	if (state == T_DONE || !gs_config.torch)
		return;
	if (state == T_UNBOUND) {
		if (!bind()) {
			state = T_DONE;
			return;
		}
		state = T_WAIT;
	}
	/* PyTorch's CUDA library, loaded: else nothing to ask, and no GIL */
	c10 = dlopen("libc10_cuda.so", RTLD_LAZY | RTLD_NOLOAD);
	if (!c10)
		return;
	dlclose(c10);
	if (!py.initialized() || py.finalizing())
		return;

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	snprintf(dir, sizeof(dir), "%s/%s-%d", gs_state.run_dir, host, (int)getpid());

	gil = py.gil_ensure();
	run_view(dir, status, sizeof(status));
	py.gil_release(gil);

	if (strcmp(status, "wait") == 0)
		return;
	state = T_DONE;
	if (strncmp(status, "off", 3) == 0 && !gs_config.quiet)
		gs_warn("PyTorch view %s", status);
}
