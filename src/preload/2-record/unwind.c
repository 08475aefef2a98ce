/* SPDX-License-Identifier: MIT */
/*
 * Native call stacks, raw.  On the hot path only return addresses are
 * taken; a site's addresses are tied to their module (path, build-id,
 * load base) once, when the site is new, so the report needs no access to
 * the process and can be symbolized later, elsewhere.  Nothing here names
 * a function: the snapshot thread does (symbols.c), off the allocating
 * threads.
 */
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "core.h"
#include "locks.h"
#include "log.h"
#include "real.h"
#include "unwind.h"

/*
 * Three unwinders, chosen by GPUSPY_UNWIND (libgpuspy(7) gives the
 * measurements behind the default):
 *  - "backtrace": glibc's, DWARF-based: complete, ~1.4 us a stack;
 *  - "libunwind": libunwind.so.8 when it can be dlopen()ed (never linked:
 *    linking it would export a backtrace() that replaces the program's),
 *    with its per-thread cache; falls back to glibc's when absent;
 *  - "fp": frame pointers with the thread's stack bounds cached; tens of
 *    nanoseconds, but stops at the first function built without them.
 */
enum unwinder { UNWIND_BACKTRACE, UNWIND_LIBUNWIND, UNWIND_FP };
static enum unwinder unwinder = UNWIND_BACKTRACE;
static int (*unw_backtrace_fn)(void **, int);

struct gs_unwinder gs_unwinder;

static struct gs_module modules[GS_MAX_MODULES];
static atomic_uint n_modules;

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t probe = (uintptr_t)data;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && probe >= lo && probe < lo + ph->p_memsz) {
			gs_unwinder.self_start = (uintptr_t)-1;
			gs_unwinder.self_end = 0;
			for (int j = 0; j < info->dlpi_phnum; j++) {
				const ElfW(Phdr) *q = &info->dlpi_phdr[j];

				if (q->p_type != PT_LOAD)
					continue;
				if (info->dlpi_addr + q->p_vaddr < gs_unwinder.self_start)
					gs_unwinder.self_start = info->dlpi_addr + q->p_vaddr;
				if (info->dlpi_addr + q->p_vaddr + q->p_memsz >
				    gs_unwinder.self_end)
					gs_unwinder.self_end =
						info->dlpi_addr + q->p_vaddr + q->p_memsz;
			}
			return 1;
		}
	}
	return 0;
}

void unwind_init(void)
{
	dl_iterate_phdr(find_self, (void *)(uintptr_t)&unwind_init);
}

void unwind_warm(void)
{
	void *raw[GS_UNWIND_RAW], **pcs;

	unwind_select(gs_config.unwind);
	/* The chosen unwinder's first stack loads and indexes what it needs
	 * (glibc's backtrace() loads libgcc_s, ~170 us; libunwind reads the
	 * modules' unwind tables): a whole one, so that the first recorded
	 * allocation does not pay it.  Only the chosen one: the other is
	 * never called. */
	if (gs_config.depth)
		unwind_here(raw, gs_config.depth, &pcs);
}

static GS_TLS uintptr_t stack_lo, stack_hi;

static bool stack_bounds(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (stack_hi)
		return true;
	/* ~28 us, so once per thread. */
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return false;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
		stack_lo = (uintptr_t)addr;
		stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
	return stack_hi != 0;
}

__attribute__((noinline)) static int fp_walk(void **out, int max)
{
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	int n = 0;

	if (!stack_bounds())
		return 0;
	while (n < max && fp >= stack_lo && fp + 16 <= stack_hi && !(fp & 7)) {
		uintptr_t next = ((uintptr_t *)fp)[0];
		uintptr_t ret = ((uintptr_t *)fp)[1];

		if (!ret)
			break;
		out[n++] = (void *)ret;
		if (next <= fp) /* frames grow up the stack: anything else is not a frame */
			break;
		fp = next;
	}
	return n;
}

const char *unwind_name(void)
{
	static const char *const names[] = { "backtrace", "libunwind", "fp" };

	return names[unwinder];
}

static bool load_libunwind(void)
{
	const char *path = gs_config.libunwind ? gs_config.libunwind : "libunwind.so.8";
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*policy)(void *, int);
	void **space;

	unw_backtrace_fn = h ? (int (*)(void **, int))real_dlsym(h, "unw_backtrace") : NULL;
	if (!unw_backtrace_fn)
		return false;
	policy = (int (*)(void *, int))real_dlsym(h, "_ULx86_64_set_caching_policy");
	space = real_dlsym(h, "_ULx86_64_local_addr_space");
	if (policy && space)
		policy(*space, 2 /* UNW_CACHE_PER_THREAD */);
	return true;
}

/* Default: libunwind where it is installed (5x cheaper than glibc's
 * backtrace for the same frames, see docs/performance.md), else glibc's. */
void unwind_select(const char *want)
{
	if (!want || !*want) {
		unwinder = load_libunwind() ? UNWIND_LIBUNWIND : UNWIND_BACKTRACE;
	} else if (strcmp(want, "backtrace") == 0) {
		unwinder = UNWIND_BACKTRACE;
	} else if (strcmp(want, "fp") == 0) {
		unwinder = UNWIND_FP;
	} else if (strcmp(want, "libunwind") == 0) {
		if (!load_libunwind()) {
			gs_warn("GPUSPY_UNWIND=libunwind: libunwind.so.8 not found; using backtrace");
			return;
		}
		unwinder = UNWIND_LIBUNWIND;
	} else {
		gs_warn("GPUSPY_UNWIND=%s is not backtrace, libunwind or fp; using backtrace",
			want);
	}
	gs_unwinder.libunwind = unwinder == UNWIND_LIBUNWIND ? unw_backtrace_fn : NULL;
}

int unwind_other(void **raw, int want)
{
	return unwinder == UNWIND_FP ? fp_walk(raw, want) : backtrace(raw, want);
}

static void hex_build_id(struct dl_phdr_info *info, char *out, size_t outlen)
{
	out[0] = '\0';
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const unsigned char *name = p + sizeof(*nh);
			const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0) {
				size_t k = 0;

				for (unsigned j = 0; j < nh->n_descsz && k + 3 <= outlen; j++)
					k += (size_t)snprintf(out + k, outlen - k, "%02x", desc[j]);
				return;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

static char *exe_path(void)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return strdup("");
	buf[n] = '\0';
	return strdup(buf);
}

/* Called with gs_unwind_lock held: add the module holding pc, if any. */
static int add_module(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t pc = (uintptr_t)data;
	uintptr_t lo = (uintptr_t)-1, hi = 0;
	unsigned n = atomic_load(&n_modules);
	struct gs_module *m;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (pc < lo || pc >= hi)
		return 0;
	if (n >= GS_MAX_MODULES)
		return 1;
	m = &modules[n];
	m->program = !info->dlpi_name || !info->dlpi_name[0];
	m->path = m->program ? exe_path() : strdup(info->dlpi_name);
	if (!m->path)
		return 1;
	m->base = info->dlpi_addr;
	m->start = lo;
	m->end = hi;
	hex_build_id(info, m->build_id, sizeof(m->build_id));
	/* Readers index modules[] without the lock: publish after filling. */
	atomic_store_explicit(&n_modules, n + 1, memory_order_release);
	return 1;
}

static int module_of(uintptr_t pc)
{
	unsigned n = atomic_load_explicit(&n_modules, memory_order_acquire);

	/* Newest first: a library loaded again at the same place after a
	 * dlclose shadows its old entry. */
	for (unsigned i = n; i-- > 0;)
		if (pc >= modules[i].start && pc < modules[i].end)
			return (int)i;
	return -1;
}

void unwind_resolve(uintptr_t pc, struct gs_frame *out)
{
	int m;

	gs_lock(&gs_unwind_lock);
	m = module_of(pc);
	if (m < 0) {
		dl_iterate_phdr(add_module, (void *)pc);
		m = module_of(pc);
	}
	gs_unlock(&gs_unwind_lock);

	out->module = m;
	out->offset = m >= 0 ? pc - modules[m].base : pc;
	atomic_init(&out->name, NULL);
}

unsigned unwind_module_count(void)
{
	return atomic_load_explicit(&n_modules, memory_order_acquire);
}

const struct gs_module *unwind_module(unsigned i)
{
	return &modules[i];
}
