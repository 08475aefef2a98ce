/* SPDX-License-Identifier: MIT */
/*
 * Turning (module path, offset) into function, file and line, after the
 * process is gone, with elfutils' libdwfl.
 *
 * Each module is reported on its own Dwfl at base 0, so that a module
 * address is the link-time address: for ET_DYN the report's offset (return
 * address minus load bias) is exactly that, and for ET_EXEC the bias is 0
 * and the offset is the absolute address, which is the link-time one too.
 * One Dwfl per path is kept for the whole run, since opening a module and
 * indexing its DWARF costs far more than any lookup.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "symbolize.h"
#include "util.h"

#ifdef GPUSPY_HAVE_CXA_DEMANGLE
/* libstdc++'s, declared here so that the CLI stays a C program. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
#endif

/* A function symbol; NAME points into the ELF data the Dwfl holds. */
struct sym_entry {
	GElf_Addr addr;
	GElf_Addr size; /* 0: unknown, up to the next symbol */
	const char *name;
	GElf_Word shndx; /* a sizeless symbol covers only its own section */
	int rank;	 /* which of two symbols at one address wins */
};

struct sym_module {
	struct sym_module *next; /* hash chain */
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod; /* NULL when the file could not be used */
	char *build_id;	  /* hex, "" when the file has none */
	/* Sorted by address, read at the first lookup.  libdwfl's own
	 * dwfl_module_addrinfo scans the whole symbol table on every call,
	 * which made a report of 50000 sites take over a minute. */
	struct sym_entry *syms;
	size_t nsyms;
	bool syms_read;
};

#define SYM_BUCKETS 1024

struct symbolizer {
	struct sym_module *buckets[SYM_BUCKETS];
};

/* Separate debug files are looked for the usual ways: .gnu_debuglink next
 * to the file and under /usr/lib/debug, and by build-id. */
static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

int symbolizer_new(struct symbolizer **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < SYM_BUCKETS; i++) {
		struct sym_module *m = s->buckets[i];

		while (m) {
			struct sym_module *next = m->next;

			if (m->dwfl)
				dwfl_end(m->dwfl);
			free(m->path);
			free(m->build_id);
			free(m->syms);
			free(m);
			m = next;
		}
	}
	free(s);
}

static size_t hash_str(const char *s)
{
	size_t h = 14695981039346656037ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int build_id_hex(Dwfl_Module *mod, char **out)
{
	const unsigned char *bits;
	GElf_Addr vaddr, bias;
	char *hex;
	int n;

	/* the build-id is read only once the ELF is */
	dwfl_module_getelf(mod, &bias);
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n < 0)
		n = 0;
	hex = malloc(2 * (size_t)n + 1);
	if (!hex)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		snprintf(hex + 2 * (size_t)i, 3, "%02x", bits[i]);
	hex[2 * (size_t)n] = '\0';
	*out = hex;
	return 0;
}

/* Open PATH into M.  A file that cannot be used leaves M->mod NULL, which
 * is remembered like a success: no retry per frame. */
static int module_open(struct sym_module *m)
{
	const char *base = strrchr(m->path, '/');
	struct stat st;
	int fd;

	/* The path comes from the report: refuse anything but a regular
	 * file, and open without blocking, so that a FIFO or a device cannot
	 * hang the reader. */
	fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	m->dwfl = dwfl_begin(&offline_callbacks);
	if (!m->dwfl) {
		close(fd);
		return 0;
	}
	dwfl_report_begin(m->dwfl);
	/* base 0 with add_p_vaddr: the bias is 0 even for a prelinked DSO
	 * whose first segment is not at 0, so module addresses stay
	 * link-time addresses (see the top of this file) */
	m->mod = dwfl_report_elf(m->dwfl, base ? base + 1 : m->path, m->path, fd, 0, true);
	/* on success the Dwfl owns the descriptor */
	if (!m->mod)
		close(fd);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod)
		return 0;
	return build_id_hex(m->mod, &m->build_id);
}

struct sym_module *symbolizer_module(struct symbolizer *s, const char *path, const char *build_id)
{
	size_t b = hash_str(path) % SYM_BUCKETS;
	struct sym_module *m;

	for (m = s->buckets[b]; m; m = m->next)
		if (strcmp(m->path, path) == 0)
			break;
	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m)
			return NULL;
		m->path = strdup(path);
		if (!m->path || module_open(m) < 0) {
			if (m->dwfl)
				dwfl_end(m->dwfl);
			free(m->path);
			free(m);
			return NULL;
		}
		m->next = s->buckets[b];
		s->buckets[b] = m;
	}
	if (!m->mod)
		return NULL;
	/* A different build-id means the file was rebuilt or replaced since
	 * the run: its names and lines would be plausible and wrong. */
	if (build_id && build_id[0] && m->build_id[0] && strcmp(build_id, m->build_id) != 0)
		return NULL;
	return m;
}

char *symbolize_demangle(const char *name)
{
#ifdef GPUSPY_HAVE_CXA_DEMANGLE
	if (name[0] == '_' && name[1] == 'Z') {
		int status = 0;
		char *d = __cxa_demangle(name, NULL, NULL, &status);

		if (d && status == 0)
			return d;
		free(d);
	}
#endif
	return strdup(name);
}

void sym_info_clear(struct sym_info *info)
{
	free(info->function);
	free(info->file);
	memset(info, 0, sizeof(*info));
}

static int cmp_entries(const void *pa, const void *pb)
{
	const struct sym_entry *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	/* the better name first at one address */
	return b->rank - a->rank;
}

/* At one address a global name beats a weak one, which beats a local
 * one, and a sized symbol beats one without size: "malloc" rather than
 * "__libc_malloc"... as far as the symbol table lets us tell. */
static int symbol_rank(const GElf_Sym *sym)
{
	int rank = 0;

	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		rank = 4;
		break;
	case STB_WEAK:
		rank = 2;
		break;
	default:
		break;
	}
	return rank + (sym->st_size > 0);
}

static int read_symbols(struct sym_module *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	size_t k = 0;

	m->syms_read = true;
	if (n <= 0)
		return 0;
	m->syms = calloc((size_t)n, sizeof(*m->syms));
	if (!m->syms)
		return -ENOMEM;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name =
			dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !name[0] || shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		m->syms[k++] = (struct sym_entry){
			.addr = addr,
			.size = sym.st_size,
			.name = name,
			.shndx = shndx,
			.rank = symbol_rank(&sym),
		};
	}
	qsort(m->syms, k, sizeof(*m->syms), cmp_entries);
	/* keep the first (best) of each address */
	m->nsyms = 0;
	for (size_t i = 0; i < k; i++)
		if (m->nsyms == 0 || m->syms[m->nsyms - 1].addr != m->syms[i].addr)
			m->syms[m->nsyms++] = m->syms[i];
	return 0;
}

/* The function ADDR lies in, or NULL. */
static const char *lookup_symbol(struct sym_module *m, GElf_Addr addr)
{
	const struct sym_entry *e;
	size_t lo = 0, hi;

	if (!m->syms_read && read_symbols(m) < 0)
		return NULL;
	hi = m->nsyms;
	/* the last symbol at or below ADDR */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	e = &m->syms[lo - 1];
	if (e->size > 0)
		return addr < e->addr + e->size ? e->name : NULL;
	/* A symbol without size (_init, assembly) reaches up to the next
	 * one, but not into another section: ".plt" after "_init" is not
	 * _init.  This is what dwfl_module_addrinfo decides too. */
	{
		Dwarf_Addr a = addr, bias;
		Elf_Scn *scn = dwfl_module_address_section(m->mod, &a, &bias);

		if (!scn || elf_ndxscn(scn) != e->shndx)
			return NULL;
	}
	return e->name;
}

/* SRC as an absolute path when the compilation directory is known: the
 * line table may hold names relative to it ("../src/x.c" from meson's
 * build directory), which mean nothing to someone reading the report
 * elsewhere. */
static char *source_path(Dwfl_Line *line, const char *src)
{
	Dwarf_Die *cu = dwfl_linecu(line);
	Dwarf_Attribute attr;
	const char *dir = NULL;
	char *path;

	if (src[0] != '/' && cu && dwarf_attr_integrate(cu, DW_AT_comp_dir, &attr))
		dir = dwarf_formstring(&attr);
	if (dir && dir[0] == '/')
		path = util_path_join(dir, src);
	else
		path = strdup(src);
	/* "/build/../src/x.c": lexically, since the build directory may no
	 * longer exist on the machine reading the report */
	if (path)
		util_path_normalize(path, true);
	return path;
}

int symbolize_frame(struct sym_module *mod, uint64_t offset, const char *fallback_symbol,
		    struct sym_info *info)
{
	const char *name = NULL;

	memset(info, 0, sizeof(*info));
	if (mod) {
		/* a return address: the call that made it is one byte before */
		GElf_Addr addr = offset > 0 ? offset - 1 : 0;
		Dwfl_Line *line;

		name = lookup_symbol(mod, addr);
		line = dwfl_module_getsrc(mod->mod, addr);
		if (line) {
			int lineno = 0;
			const char *src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

			if (src && src[0]) {
				info->file = source_path(line, src);
				if (!info->file)
					goto nomem;
				info->line = lineno > 0 ? lineno : 0;
			}
		}
	}
	if (!name || !name[0])
		name = fallback_symbol;
	if (name && name[0]) {
		/* .symtab names carry the symbol version
		 * ("__libc_start_main@@GLIBC_2.34"): dropped, so that the
		 * same function has the same key whichever table named it */
		size_t n = strcspn(name, "@");
		char *plain = n > 0 ? strndup(name, n) : NULL;

		if (n > 0 && !plain)
			goto nomem;
		info->function = symbolize_demangle(plain ? plain : name);
		free(plain);
		if (!info->function)
			goto nomem;
	}
	/* the module's tables are any bytes: every printer gets UTF-8 */
	util_utf8_fix(info->function);
	util_utf8_fix(info->file);
	return 0;
nomem:
	sym_info_clear(info);
	return -ENOMEM;
}
