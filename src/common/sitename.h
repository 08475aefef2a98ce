/* SPDX-License-Identifier: MIT */
/*
 * A call site's one name (docs/format.md, "name"): every surface of gpuspy
 * -- the live stderr line, the exit summary and report.txt, `gpuspy report`
 * in every format, merge, diff, top, /metrics and the exporter, TensorBoard
 * -- prints a site by the string sitename_names() makes of it:
 *
 *   function (file:line)                  one line
 *   function (file:line +N lines)         calls from N more lines of the
 *                                         function; LINE is the one that
 *                                         leads (sitename_lead_line)
 *   function (module)                     native code without line tables
 *   module+0xOFFSET                       no symbol at all
 *   NAME from caller (file:line)          two sites whose names coincide:
 *                                         the first caller frame that tells
 *                                         them apart
 *
 * Both sides compile this: the reader names a site from its symbolized
 * frames, libgpuspy from the frames it names in the process (the snapshot
 * thread), one rule, so that the two name one site alike wherever both
 * know the same of it.  sitename_short() and sitename_name() write into
 * the caller's buffer only; sitename_names() allocates the names it
 * returns.  No state, no lock.
 */
#ifndef GPUSPY_SITENAME_H
#define GPUSPY_SITENAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A frame as the rule sees it; NULL or 0 for what is unknown. */
struct sitename_frame {
	const char *function;
	const char *file;     /* a path: its basename is shown */
	int64_t line;	      /* > 0 when known */
	const int64_t *lines; /* a merged frame's lines, when LINE is not known */
	size_t nlines;
	const char *module; /* the module's basename */
	uint64_t offset;    /* in MODULE, or absolute without one */
	bool python;	    /* a Python frame */
	bool user;	    /* Python: a file of the user's own code (sitename_user_file) */
	bool noise;	    /* native machinery: CUDA, the interpreter, an allocator */
};

/* One source line of a site merged from calls at several lines of its
 * headline's function, with what decides which of them leads. */
struct sitename_line {
	int64_t line; /* > 0 */
	bool growing;
	int64_t live_bytes, peak_bytes;
};

/* What a site's name is made of. */
struct sitename_site {
	const struct sitename_frame *frames; /* innermost first */
	size_t nframes;
	/* the headline's lines when the site merges several (else none) */
	const struct sitename_line *lines;
	size_t nlines;
	const char *api; /* the last resort between two sites alike: " by API" */
};

/* The part of PATH after its last '/'. */
const char *sitename_basename(const char *path);

/*
 * F's short form into BUF of SIZE: "function (file-basename:line)", else
 * "function (module)", else "module+0xOFFSET", else "0xADDRESS"; a merged
 * frame's lines as ":12,14".  Control characters (C0, DEL and UTF-8's C1)
 * and bytes that are not UTF-8 become '?', so the name stays one line of
 * text.  Returns the length the whole name needs, as snprintf does: BUF
 * holds all of it when that is < SIZE.
 */
size_t sitename_short(char *buf, size_t size, const struct sitename_frame *f);

/*
 * The index of the frame a person should look at first, or -1 for no
 * frames: the user's innermost Python frame; else the innermost native
 * frame that is not noise, in a module if there is one (an address outside
 * any module names nothing to open); else the innermost frame.
 */
ssize_t sitename_headline(const struct sitename_frame *frames, size_t n);

/* Which of LINES[0..N-1] leads a merged site's name: a growing line
 * first, then the one holding the most live bytes, then the highest peak,
 * then the first (the lowest line).  0 when N is 0. */
size_t sitename_lead_line(const struct sitename_line *lines, size_t n);

/*
 * S's name without its neighbours (no caller added) into BUF of SIZE, as
 * sitename_short; "(no stack)" for a site without frames.
 */
size_t sitename_name(char *buf, size_t size, const struct sitename_site *s);

/*
 * The names of SITES[0..N-1] as one set: each sitename_name(), and where
 * two or more coincide, " from CALLER" with the first caller frame (outward
 * from the headline, noise left out) whose short form differs among them,
 * again until they differ or no caller is left; then " via FRAME" with the
 * innermost native frame under the headline that differs; then " by API";
 * then " #K" (K from 2, in the order given).  NAMES[i] gets a malloc()ed
 * string; 0, or -ENOMEM with nothing allocated.
 */
int sitename_names(const struct sitename_site *sites, size_t n, char **names);

/*
 * Where a site's Python frames go among its native ones (innermost first):
 * the index of NATIVE[0..N-1] before which they are placed.  Just before
 * the innermost frame of CPython's evaluation loop
 * (_PyEval_EvalFrameDefault), where the interpreter ran them; failing
 * that, before the innermost frame in the interpreter's module (libpython,
 * python3); failing that (a stack cut short by the depth limit), after
 * the native frames.
 */
size_t sitename_python_at(const struct sitename_frame *native, size_t n);

/*
 * The key of a site (docs/format.md, "key"): API, '|', then per frame that
 * is not noise, ';' between them, "file-basename!function" (Python) or
 * "module!function", "module+0xOFFSET" without a function, "?" without a
 * module (native).  Sites with one key are one site: calls from other
 * lines of the same functions, in any process, any build.  Into BUF of
 * SIZE as snprintf; the length the whole key needs.
 */
size_t sitename_key(char *buf, size_t size, const char *api, const struct sitename_frame *frames,
		    size_t n);

/* The 16 lower-case hex digits of KEY's 64-bit FNV-1a hash, what reports
 * and labels print for a key: into BUF of at least SITENAME_DIGEST_SIZE. */
#define SITENAME_DIGEST_SIZE 17
const char *sitename_digest(const char *key, char *buf, size_t size);

/* Whether a Python frame of FILE is the user's own code: not the standard
 * library, not an installed package, not frozen, and named ("?" is what
 * the process writes for a frame without a file). */
bool sitename_user_file(const char *file);

#endif
