/* SPDX-License-Identifier: MIT */
/*
 * A call site's name for people, in one line: the headline frame as the
 * reports list it ("leak_buffers (train.py:17)", "step (libfoo.so)",
 * "libfoo.so+0x1234"), and which Python files are the user's own.
 *
 * Both sides compile this: `gpuspy report` and `gpuspy exporter` name a
 * site from its symbolized frames, libgpuspy's /metrics from the frames
 * it has in the process; one rule, so that the two name one site alike
 * wherever both know the same of it.  snprintf into the caller's buffer
 * only: no allocation, no state, no lock.
 */
#ifndef GPUSPY_SITENAME_H
#define GPUSPY_SITENAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a frame's short form shows; NULL or 0 for what is unknown. */
struct sitename_frame {
	const char *function;
	const char *file;     /* a path: its basename is shown */
	int64_t line;	      /* > 0 when known */
	const int64_t *lines; /* a merged site's lines, when LINE is not known */
	size_t nlines;
	const char *module; /* the module's basename */
	uint64_t offset;    /* in MODULE, or absolute without one */
};

/* The part of PATH after its last '/'. */
const char *sitename_basename(const char *path);

/*
 * F's short form into BUF of SIZE: "function (file-basename:line)", else
 * "function (module)", else "module+0xOFFSET", else "0xADDRESS"; a merged
 * frame's lines as ":12,14".  Control characters (C0, DEL and UTF-8's C1)
 * become '?', so the name stays one line.  Returns the length the whole
 * name needs, as snprintf does: BUF holds all of it when that is < SIZE.
 */
size_t sitename_short(char *buf, size_t size, const struct sitename_frame *f);

/* Whether a Python frame of FILE is the user's own code: not the standard
 * library, not an installed package, not frozen, and named ("?" is what
 * the process writes for a frame without a file). */
bool sitename_user_file(const char *file);

#endif
