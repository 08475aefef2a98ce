/* SPDX-License-Identifier: MIT */
/*
 * Names of native frames, inside the process, off the allocating threads
 * (see symbols.h).
 *
 * Per module, once, at the first frame that falls in it: its file is
 * opened and checked to be the image mapped - the GNU build-id of the
 * file equal to the one the loaded image carries in memory, or, where
 * neither has one, the file's device and inode those of the mapping
 * (/proc/self/maps) - and its functions are read into a sorted table
 * (elfsym.c): the file's .symtab, else the .symtab of its separate debug
 * file (/usr/lib/debug/.build-id/, the same build-id), else its .dynsym.
 * With libdw loaded, the module gets a Dwfl of its own for source lines,
 * reading the same file (its own DWARF only: see find_debuginfo).  A file that fails the check (rebuilt, replaced,
 * deleted, or not an ELF file any more), or whose table is over the
 * budget, is named from the loader's view of the image in memory, its
 * dynamic symbols (dladdr), which are the image's whatever became of the
 * file: never a wrong name, at worst none.
 *
 * Per return address, once: the name is made and kept in a table by
 * (module, offset) that every frame at that address points into.
 *
 * The bounds (libgpuspy(7), CALL SITES): symbol tables hold at most
 * TABLE_BUDGET bytes together; at most MAX_ADDRESSES return addresses
 * are named (about 80 bytes each), later ones stay module+0xoffset; at
 * most MAX_DWARF modules have libdw's line tables open, none whose
 * compressed debug sections would inflate past MAX_INFLATED.  Each module's
 * file is read once, each address looked up once; a pass costs the sites
 * that are new since the last one.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "conf.h"
#include "elfsym.h"
#include "log.h"
#include "real.h"
#include "sites.h"
#include "symbols.h"

#ifdef GPUSPY_HAVE_LIBDWFL_H
#include <elfutils/libdwfl.h>
#endif

#define TABLE_BUDGET  ((size_t)512 << 20)
#define MAX_ADDRESSES (1u << 20)
#define MAX_DWARF     256
#define MAX_INFLATED  ((uint64_t)16 << 20)
#define LIBDW_DEFAULT "libdw.so.1"
#define DEBUG_DIR     "/usr/lib/debug/.build-id/"

enum mod_how {
	MOD_TABLE,  /* its file's symbol table */
	MOD_MEMORY, /* the loader's dynamic symbols */
};

struct mod_state {
	enum mod_how how;
	struct elfsym_table tab;
#ifdef GPUSPY_HAVE_LIBDWFL_H
	Dwfl *dwfl;
	Dwfl_Module *dwmod;
#endif
};

/* Naming thread only, as everything below but the frames' pointers and
 * named_below. */
static struct mod_state *mods[GS_MAX_MODULES];
static size_t table_bytes;

/* What names nothing: frames that point here are module+0xoffset. */
static const struct gs_name none;

/* Every site below this id has its frames named by the naming thread;
 * symbols_catch_up looks above it only. */
static atomic_uint named_below;

/* ---- source lines, through a dlopen()ed libdw ---- */

#ifdef GPUSPY_HAVE_LIBDWFL_H
static struct {
	__typeof__(dwfl_begin) *begin;
	__typeof__(dwfl_end) *end;
	__typeof__(dwfl_report_begin) *report_begin;
	__typeof__(dwfl_report_elf) *report_elf;
	__typeof__(dwfl_report_end) *report_end;
	__typeof__(dwfl_module_getsrc) *getsrc;
	__typeof__(dwfl_lineinfo) *lineinfo;
	__typeof__(dwfl_offline_section_address) *section_address;
} dw;
static int dw_state; /* 0: not tried, 1: loaded, -1: not to be had */
static unsigned n_dwarf;
static Dwfl_Callbacks dw_callbacks;
static char *dw_debuginfo_path;
#endif

#ifdef GPUSPY_HAVE_LIBDWFL_H
/* The module's own file is given to libdw, never looked for. */
static int find_elf_none(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
			 char **file_name, Elf **elfp)
{
	return -1;
}

/*
 * Lines come from the module's own file only, never from a separate debug
 * file: those of the system's libraries are compressed, and libdw would
 * inflate their DWARF into memory (16 MiB for the C library's, for frames
 * that are never a site's headline).  libdw's own search would also ask a
 * debuginfod server when DEBUGINFOD_URLS is set: a download from inside
 * the job.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
			  const char *file_name, const char *debuglink, GElf_Word crc,
			  char **debuginfo_file_name)
{
	return -1;
}

static void lines_load(void)
{
	const char *path = gs_config.libdw ? gs_config.libdw : LIBDW_DEFAULT;
	void *h;

	if (dw_state)
		return;
	dw_state = -1;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		/* asked for by name: one line; the default missing says nothing */
		if (gs_config.libdw)
			gs_warn("GPUSPY_LIBDW=%.200s cannot be loaded: native frames are named "
				"without source lines",
				path);
		return;
	}
	/* through void *, as POSIX allows for dlsym's result */
	*(void **)&dw.begin = real_dlsym(h, "dwfl_begin");
	*(void **)&dw.end = real_dlsym(h, "dwfl_end");
	*(void **)&dw.report_begin = real_dlsym(h, "dwfl_report_begin");
	*(void **)&dw.report_elf = real_dlsym(h, "dwfl_report_elf");
	*(void **)&dw.report_end = real_dlsym(h, "dwfl_report_end");
	*(void **)&dw.getsrc = real_dlsym(h, "dwfl_module_getsrc");
	*(void **)&dw.lineinfo = real_dlsym(h, "dwfl_lineinfo");
	*(void **)&dw.section_address = real_dlsym(h, "dwfl_offline_section_address");
	if (!dw.begin || !dw.end || !dw.report_begin || !dw.report_elf || !dw.report_end ||
	    !dw.getsrc || !dw.lineinfo || !dw.section_address) {
		/* the handle stays: what it loaded may already have run */
		gs_warn("%.200s lacks the functions gpuspy needs: native frames are named without "
			"source lines",
			path);
		return;
	}
	dw_callbacks = (Dwfl_Callbacks){
		.find_elf = find_elf_none,
		.find_debuginfo = find_debuginfo,
		.section_address = dw.section_address,
		.debuginfo_path = &dw_debuginfo_path,
	};
	dw_state = 1;
}

/* M's lines, from the verified F (a copy of its descriptor goes to
 * libdw), unless its compressed debug sections would take more than
 * MAX_INFLATED once inflated. */
static void lines_open(struct mod_state *ms, const struct gs_module *m, const struct elfsym_file *f)
{
	Dwfl_Module *mod;
	Dwfl *d;
	int dfd;

	if (elfsym_inflated_size(f) > MAX_INFLATED)
		return;
	lines_load();
	if (dw_state <= 0 || n_dwarf >= MAX_DWARF)
		return;
	dfd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return;
	d = dw.begin(&dw_callbacks);
	if (!d) {
		close(dfd);
		return;
	}
	dw.report_begin(d);
	/* base 0, p_vaddr added: module addresses are link-time addresses,
	 * as the frames' offsets are (symbolize.c does the same) */
	mod = dw.report_elf(d, sitename_basename(m->path), m->path, dfd, 0, true);
	if (!mod) /* on success the Dwfl owns the descriptor */
		close(dfd);
	dw.report_end(d, NULL, NULL);
	if (!mod) {
		dw.end(d);
		return;
	}
	ms->dwfl = d;
	ms->dwmod = mod;
	n_dwarf++;
}

static void lines_of(struct mod_state *ms, const struct gs_module *m, uint64_t addr,
		     struct gs_name *out)
{
	Dwfl_Line *l;
	const char *src;
	int line = 0;

	if (!ms->dwmod)
		return;
	l = dw.getsrc(ms->dwmod, addr);
	if (!l)
		return;
	src = dw.lineinfo(l, NULL, &line, NULL, NULL, NULL);
	/* libdw's own string, kept as long as the Dwfl, which is never ended */
	if (src && src[0] && line > 0) {
		out->file = src;
		out->line = line;
	}
}
#else
static void lines_open(struct mod_state *ms, const struct gs_module *m, const struct elfsym_file *f)
{
}

static void lines_of(struct mod_state *ms, const struct gs_module *m, uint64_t addr,
		     struct gs_name *out)
{
}
#endif

/* ---- a module's table ---- */

/* Whether the mapping at ADDR is of the file ST describes (device and
 * inode, as /proc/self/maps shows them). */
static bool mapped_from(uintptr_t addr, const struct stat *st)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t cap = 0;
	bool same = false;

	if (!f)
		return false;
	/* "lo-hi perms offset major:minor inode path" */
	while (getline(&line, &cap, f) > 0) {
		char *p = line;
		unsigned long lo = strtoul(p, &p, 16), hi, maj, min, ino;

		if (*p++ != '-')
			continue;
		hi = strtoul(p, &p, 16);
		if (addr < lo || addr >= hi)
			continue;
		p = strchr(p + 1, ' '); /* past the permissions */
		if (p)
			p = strchr(p + 1, ' '); /* past the offset */
		if (!p)
			break;
		maj = strtoul(p + 1, &p, 16);
		if (*p++ != ':')
			break;
		min = strtoul(p, &p, 16);
		ino = strtoul(p, &p, 10);
		same = ino != 0 && ino == st->st_ino &&
		       makedev((unsigned)maj, (unsigned)min) == st->st_dev;
		break;
	}
	free(line);
	fclose(f);
	return same;
}

/* A regular file at PATH, opened without following it into a FIFO or a
 * device's open(); -1 when there is none. */
static int open_regular(const char *path)
{
	struct stat st;

	if (!path || !path[0] || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
}

/* M's file, read into F, if it is the image mapped; its descriptor, or -1. */
static int open_verified(const struct gs_module *m, struct elfsym_file *f)
{
	struct stat st;
	int fd = open_regular(m->path);

	if (fd < 0)
		return -1;
	if (elfsym_open(fd, f) < 0) {
		close(fd);
		return -1;
	}
	if (m->build_id[0] || f->build_id[0] ? strcmp(m->build_id, f->build_id) == 0 :
					       fstat(fd, &st) == 0 && mapped_from(m->start, &st))
		return fd;
	elfsym_close(f);
	close(fd);
	return -1;
}

/* The separate debug file of BUILD_ID, its path into PATH, read into F
 * if it carries that build-id; its descriptor, or -1. */
static int debug_file_open(const char *build_id, char *path, size_t len, struct elfsym_file *f)
{
	int fd;

	if (strlen(build_id) < 3 ||
	    (size_t)snprintf(path, len, DEBUG_DIR "%.2s/%s.debug", build_id, build_id + 2) >= len)
		return -1;
	fd = open_regular(path);
	if (fd < 0)
		return -1;
	if (elfsym_open(fd, f) == 0 && strcmp(f->build_id, build_id) == 0)
		return fd;
	elfsym_close(f);
	close(fd);
	return -1;
}

/* F's symbol table SECTION into MS, within what the budget has left. */
static bool table_read(struct mod_state *ms, const struct elfsym_file *f, int section)
{
	if (section < 0 || elfsym_read(f, section, TABLE_BUDGET - table_bytes, &ms->tab) < 0)
		return false;
	table_bytes += ms->tab.bytes;
	return true;
}

/* Module IDX's state, read when it is first asked for; NULL without
 * memory (asked again next time). */
static struct mod_state *mod_load(int idx)
{
	struct mod_state *ms = mods[idx];
	const struct gs_module *m = unwind_module((unsigned)idx);
	struct elfsym_file f, dbg;
	bool read = false;
	int fd;

	if (ms)
		return ms;
	ms = calloc(1, sizeof(*ms));
	if (!ms)
		return NULL;
	mods[idx] = ms;
	ms->how = MOD_MEMORY;
	if (!gs_config.symbols)
		return ms;
	fd = open_verified(m, &f);
	if (fd < 0)
		return ms;
	read = table_read(ms, &f, f.symtab);
	if (!read && f.build_id[0]) {
		char path[sizeof(DEBUG_DIR) + ELFSYM_BUILD_ID_HEX + 8];
		int dfd = debug_file_open(f.build_id, path, sizeof(path), &dbg);

		if (dfd >= 0) {
			read = table_read(ms, &dbg, dbg.symtab);
			elfsym_close(&dbg);
			close(dfd);
		}
	}
	if (!read)
		read = table_read(ms, &f, f.dynsym);
	if (read) {
		ms->how = MOD_TABLE;
		lines_open(ms, m, &f);
	}
	elfsym_close(&f);
	close(fd);
	return ms;
}

/*
 * The dynamic symbol at PC in M as the loader holds it, or NULL.  Only
 * when the loader places PC in M (same load address; same file name but
 * for the program, whose name the loader gives as argv[0]): a module
 * unloaded since, with another loaded where it was, names nothing.
 */
static const char *loader_symbol(const struct gs_module *m, uintptr_t pc)
{
	/* each time: program threads call this too (symbols_catch_up) */
	long page = sysconf(_SC_PAGESIZE);
	Dl_info info;

	/* pc - 1: a return address may be the first byte of the next function */
	if (!dladdr((void *)(pc - 1), &info) || !info.dli_sname || !info.dli_sname[0])
		return NULL;
	if ((uintptr_t)info.dli_fbase != (m->start & ~((uintptr_t)page - 1)))
		return NULL;
	if (!m->program && (!info.dli_fname || strcmp(sitename_basename(info.dli_fname),
						      sitename_basename(m->path)) != 0))
		return NULL;
	return info.dli_sname;
}

/* ---- names by return address ---- */

/* (module + 1) << 48 | offset: offsets stay below 2^48 (the user part
 * of an address space); 0 is an empty slot. */
#define KEY_OFFSET_BITS 48

static struct slot {
	uint64_t key;
	const struct gs_name *name;
} * slots;
static size_t n_slots, n_names;
static bool full_told;

static uint64_t key_of(int idx, uint64_t off)
{
	return ((uint64_t)(unsigned)(idx + 1) << KEY_OFFSET_BITS) | off;
}

static size_t slot_of(uint64_t key, size_t n)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (n - 1);
}

static const struct gs_name *map_find(uint64_t key)
{
	if (!n_slots)
		return NULL;
	for (size_t i = slot_of(key, n_slots);; i = (i + 1) & (n_slots - 1)) {
		if (slots[i].key == key)
			return slots[i].name;
		if (!slots[i].key)
			return NULL;
	}
}

/* Whether there is room for one more name (the table is grown to twice
 * its names, at most 2 * MAX_ADDRESSES slots). */
static bool map_room(void)
{
	struct slot *s;
	size_t n;

	if (n_names >= MAX_ADDRESSES)
		return false;
	if (2 * (n_names + 1) <= n_slots)
		return true;
	n = n_slots ? 2 * n_slots : 1024;
	s = calloc(n, sizeof(*s));
	if (!s)
		return false;
	for (size_t i = 0; i < n_slots; i++) {
		size_t j;

		if (!slots[i].key)
			continue;
		for (j = slot_of(slots[i].key, n); s[j].key; j = (j + 1) & (n - 1))
			;
		s[j] = slots[i];
	}
	free(slots);
	slots = s;
	n_slots = n;
	return true;
}

static void map_put(uint64_t key, const struct gs_name *name)
{
	size_t i;

	for (i = slot_of(key, n_slots); slots[i].key; i = (i + 1) & (n_slots - 1))
		;
	slots[i] = (struct slot){ key, name };
	n_names++;
}

static bool mangled_seen;

/* The name of OFF in module IDX; NULL without memory (asked again). */
static const struct gs_name *resolve(int idx, uint64_t off)
{
	const struct gs_name *found;
	struct gs_name n = { 0 }, *made;
	struct mod_state *ms;
	const struct gs_module *m;
	uint64_t key;
	char *copy = NULL;

	if (idx < 0 || off == 0 || off >> KEY_OFFSET_BITS)
		return &none;
	key = key_of(idx, off);
	found = map_find(key);
	if (found)
		return found;
	if (!map_room()) {
		if (n_names >= MAX_ADDRESSES && !full_told) {
			full_told = true;
			gs_warn("more than %u distinct return addresses: the later ones are shown "
				"as module+offset here (gpuspy report names them)",
				MAX_ADDRESSES);
		}
		return n_names >= MAX_ADDRESSES ? &none : NULL;
	}
	ms = mod_load(idx);
	if (!ms)
		return NULL;
	m = unwind_module((unsigned)idx);
	/* a return address: the call that made it is the byte before */
	if (ms->how == MOD_TABLE) {
		n.symbol = elfsym_lookup(&ms->tab, off - 1);
		if (n.symbol)
			lines_of(ms, m, off - 1, &n);
	} else {
		const char *s = loader_symbol(m, m->base + off);

		/* the loader's string goes when the module does: copied */
		if (s && !(n.symbol = copy = strdup(s)))
			return NULL;
	}
	if (!n.symbol) {
		map_put(key, &none);
		return &none;
	}
	made = malloc(sizeof(*made));
	if (!made) {
		free(copy);
		return NULL;
	}
	*made = n;
	if (n.symbol[0] == '_' && n.symbol[1] == 'Z')
		mangled_seen = true;
	map_put(key, made);
	return made;
}

/* ---- C++ names for people ---- */

static char *(*demangle_fn)(const char *, char *, size_t *, int *);

/*
 * The process's own demangler, looked for (outside any gpuspy lock: the
 * loader takes its own) once a C++ name has been seen, until found:
 * libstdc++ may come later, with the first C++ library.  gpuspy never
 * loads or links it.
 */
static void demangler_look(void)
{
	void *cxx;

	if (demangle_fn || !mangled_seen)
		return;
	/* a Python extension loads libstdc++ with RTLD_LOCAL, out of
	 * RTLD_DEFAULT's reach: asked for by name, never loaded here */
	cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
	*(void **)&demangle_fn = real_dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!demangle_fn && cxx)
		*(void **)&demangle_fn = real_dlsym(cxx, "__cxa_demangle");
	/* the handle is kept: the function must stay mapped */
}

const char *symbols_function(const struct gs_name *cn)
{
	/* every name but `none` is made by malloc here, and `none` is
	 * never handed out (symbols_of): its cache is ours to fill */
	struct gs_name *n = (struct gs_name *)cn;
	int status = -1;
	char *d;

	if (n->pretty)
		return n->pretty;
	if (!demangle_fn || n->symbol[0] != '_' || n->symbol[1] != 'Z')
		return n->symbol;
	d = demangle_fn(n->symbol, NULL, NULL, &status);
	if (status != 0 || !d) {
		free(d);
		return n->symbol;
	}
	n->pretty = d;
	return d;
}

void symbols_sitename(const struct gs_frame *fr, struct sitename_frame *out)
{
	const struct gs_name *n = symbols_of(fr);

	memset(out, 0, sizeof(*out));
	if (n) {
		out->function = symbols_function(n);
		out->file = n->file;
		out->line = n->line;
	}
	out->module = fr->module >= 0 ?
			      sitename_basename(unwind_module((unsigned)fr->module)->path) :
			      NULL;
	out->offset = fr->offset;
}

/* ---- the passes ---- */

bool symbols_site_named(const struct gs_site *s)
{
	for (unsigned i = 0; i < s->depth; i++) {
		const struct gs_name *n =
			atomic_load_explicit(&s->frames[i].name, memory_order_acquire);

		if (!n || n->provisional)
			return false;
	}
	return true;
}

/* Names S's frames; false when one is left for the next pass. */
static bool name_site(struct gs_site *s)
{
	bool whole = true;

	for (unsigned i = 0; i < s->depth; i++) {
		struct gs_frame *fr = &s->frames[i];
		const struct gs_name *cur = atomic_load_explicit(&fr->name, memory_order_acquire);
		const struct gs_name *n;

		if (cur && !cur->provisional)
			continue;
		n = resolve(fr->module, fr->offset);
		if (!n) {
			whole = false;
			continue;
		}
		/* a program's thread may put a provisional name in meanwhile;
		 * the one made here replaces it, unless it names nothing (the
		 * module unloaded since: the loader's name of then stays) */
		while (!(cur && n == &none) &&
		       !atomic_compare_exchange_weak_explicit(
			       &fr->name, &cur, n, memory_order_release, memory_order_acquire))
			;
	}
	return whole;
}

void symbols_name(const struct site_walk *w)
{
	unsigned from = atomic_load_explicit(&named_below, memory_order_relaxed), upto = w->n;

	demangler_look();
	for (unsigned i = from; i < w->n; i++) {
		struct gs_site *s = w->by_id[i];

		/* an id taken, its site not pushed yet, or a frame left: the
		 * next pass starts there */
		if ((!s || !name_site(s)) && upto == w->n)
			upto = i;
	}
	demangler_look();
	atomic_store_explicit(&named_below, upto, memory_order_release);
}

static void catch_up_frame(struct gs_frame *fr)
{
	const struct gs_name *expected = NULL;
	const struct gs_module *m;
	struct gs_name *n;
	const char *s;

	if (atomic_load_explicit(&fr->name, memory_order_acquire) || fr->module < 0)
		return;
	m = unwind_module((unsigned)fr->module);
	s = loader_symbol(m, m->base + fr->offset);
	if (!s)
		return;
	n = calloc(1, sizeof(*n));
	if (!n)
		return;
	n->symbol = strdup(s);
	n->provisional = true;
	/* another thread's, or the snapshot thread's, may be there first;
	 * a name published is never freed (readers hold no lock) */
	if (!n->symbol ||
	    !atomic_compare_exchange_strong_explicit(&fr->name, &expected, n, memory_order_release,
						     memory_order_relaxed)) {
		free((char *)n->symbol);
		free(n);
	}
}

void symbols_catch_up(void)
{
	unsigned from = atomic_load_explicit(&named_below, memory_order_acquire);
	unsigned count = site_count(), seen = 0;

	/* newest first: the sites above FROM are at the head of the list,
	 * all of them once COUNT - FROM are seen (a site whose id is taken
	 * but not yet pushed makes it a walk of the whole list) */
	for (struct gs_site *s = site_list(); s && seen < count - from; s = s->next_all) {
		if (s->id < from || s->id >= count)
			continue;
		seen++;
		for (unsigned i = 0; i < s->depth; i++)
			catch_up_frame(&s->frames[i]);
	}
}
