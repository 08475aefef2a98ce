/* SPDX-License-Identifier: MIT */
/*
 * symbols.c: the names of native frames, found inside the process and
 * never on an allocating thread.
 *
 * The snapshot thread names each new call site's frames after its
 * sample (and the exit, once that thread is joined, names what is left):
 * the function from the module's ELF symbol tables (.symtab, else
 * .dynsym, as `gpuspy report` picks it), the source file and line from a
 * dlopen()ed libdw where one is installed.  A module whose file on disk
 * is not the image mapped (rebuilt, replaced or deleted since it was
 * loaded) is named only from what the loader holds in memory, its
 * dynamic symbols; an address nothing names stays module+0xoffset.
 *
 * A frame's name, once set, is read by any thread without a lock
 * (gs_frame.name, published with release); the rest of the state here is
 * the naming thread's alone: the snapshot thread, then the exit path,
 * never both at once (writer_stop joins the one before the other runs).
 */
#ifndef GPUSPY_SYMBOLS_H
#define GPUSPY_SYMBOLS_H

#include <stdbool.h>

#include "sitename.h"
#include "site_walk.h"
#include "unwind.h"

/* What names one return address; shared by every frame at it. */
struct gs_name {
	const char *symbol; /* the function as its symbol table spells it, NULL: none */
	const char *file;   /* its source file as the line table spells it, NULL: unknown */
	int line;	    /* > 0 when known */
	/* named on a program's thread from the dynamic symbols, for a file
	 * written there before the snapshot thread came to it (symbols_catch_up);
	 * the snapshot thread names the frame again */
	bool provisional;
	char *pretty; /* SYMBOL demangled, made when first shown (naming thread only) */
	/* site_names.c's judgement of the frame (frame_rules.c), made once:
	 * 0 not yet, 1 not noise, 2 noise (naming thread only) */
	unsigned char noise;
};

/*
 * Names the frames of every site of W not named yet: the snapshot
 * thread, after each refresh of its walk, and the exit path.  Reads each
 * module's tables once, when a frame first falls in it.
 */
void symbols_name(const struct site_walk *w);

/*
 * On a program's thread about to write a file (an out-of-memory
 * post-mortem, gpuspy_snapshot()), with no gpuspy lock held: the frames
 * of the sites the snapshot thread has not come to yet named from the
 * loader's dynamic symbols (dladdr), as the hook named every frame
 * before, so that the file says no less.
 */
void symbols_catch_up(void);

/* The name FR has so far, or NULL: none (yet). */
static inline const struct gs_name *symbols_of(const struct gs_frame *fr)
{
	const struct gs_name *n = atomic_load_explicit(&fr->name, memory_order_acquire);

	return n && n->symbol ? n : NULL;
}

/* Whether every frame of S has its name for good (not provisional): what
 * is made of it once and kept (the metrics' labels) waits until then. */
bool symbols_site_named(const struct gs_site *s);

/* N's function for people: demangled where it is C++ and the process has
 * a demangler (its own libstdc++), else as spelled.  Naming thread only. */
const char *symbols_function(const struct gs_name *n);

/*
 * FR as sitename_short() shows it: function (demangled), file and line
 * where they are known, module base name, offset.  The strings stay valid
 * for the life of the process.  Naming thread only.
 */
void symbols_sitename(const struct gs_frame *fr, struct sitename_frame *out);

#endif /* GPUSPY_SYMBOLS_H */
