/* SPDX-License-Identifier: MIT */
/* The function symbols of an ELF file, read with pread() (see elfsym.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsym.h"

/* More sections than any linker makes; a count beyond is a corrupt file,
 * and its table would cost 64 bytes a section to read. */
#define MAX_SECTIONS 65536
/* A note section read for its build-id: the notes of a real file are a
 * few hundred bytes. */
#define MAX_NOTES ((uint64_t)64 * 1024)
/* Symbols read at once, and the window the names are read through: a
 * longer name is dropped. */
#define SYM_CHUNK   2048
#define NAME_WINDOW ((size_t)64 * 1024)

/* All of [OFF, OFF + LEN) of FD, or -errno; a file shorter than that
 * (truncated since it was measured) is -EIO. */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Whether [OFF, OFF + LEN) lies in a file of SIZE bytes. */
static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* The GNU build-id among the notes of BUF, in hex into OUT, as unwind.c
 * writes the one of the image in memory (the same truncation), so that
 * the two compare. */
static bool notes_build_id(const unsigned char *buf, size_t len, size_t align, char *out)
{
	size_t p = 0;

	while (len - p >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		size_t name, desc, next;

		memcpy(&nh, buf + p, sizeof(nh));
		name = p + sizeof(nh);
		/* each of these is at most 2^32 + align: no wrap in size_t */
		desc = name + (((size_t)nh.n_namesz + align - 1) & ~(align - 1));
		if (desc > len || nh.n_descsz > len - desc)
			return false;
		next = desc + (((size_t)nh.n_descsz + align - 1) & ~(align - 1));
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(buf + name, "GNU", 4) == 0) {
			size_t k = 0;

			for (size_t j = 0; j < nh.n_descsz && k + 3 <= ELFSYM_BUILD_ID_HEX; j++)
				k += (size_t)snprintf(out + k, ELFSYM_BUILD_ID_HEX - k, "%02x",
						      buf[desc + j]);
			return true;
		}
		if (next >= len)
			return false;
		p = next;
	}
	return false;
}

/* The build-id in the note region [OFF, OFF + LEN) of F, if any. */
static bool region_build_id(struct elfsym_file *f, uint64_t off, uint64_t len, uint64_t align)
{
	unsigned char *buf;
	bool found = false;

	if (!in_file(off, len, f->size) || len < sizeof(Elf64_Nhdr))
		return false;
	if (len > MAX_NOTES)
		len = MAX_NOTES;
	buf = malloc(len);
	if (!buf)
		return false;
	if (read_at(f->fd, buf, len, off) == 0)
		found = notes_build_id(buf, len, align == 8 ? 8 : 4, f->build_id);
	free(buf);
	return found;
}

static void find_build_id(struct elfsym_file *f, const Elf64_Ehdr *eh)
{
	f->build_id[0] = '\0';
	for (size_t i = 0; i < f->shnum; i++) {
		const Elf64_Shdr *s = &f->sh[i];

		if (s->sh_type == SHT_NOTE &&
		    region_build_id(f, s->sh_offset, s->sh_size, s->sh_addralign))
			return;
	}
	if (f->shnum || !eh->e_phoff || eh->e_phentsize != sizeof(Elf64_Phdr))
		return;
	/* no section table: the program headers' notes */
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		uint64_t at = eh->e_phoff + (uint64_t)i * sizeof(ph);

		if (!in_file(at, sizeof(ph), f->size) || read_at(f->fd, &ph, sizeof(ph), at) < 0)
			return;
		if (ph.p_type == PT_NOTE &&
		    region_build_id(f, ph.p_offset, ph.p_filesz, ph.p_align))
			return;
	}
}

int elfsym_open(int fd, struct elfsym_file *f)
{
	Elf64_Ehdr eh;
	struct stat st;
	size_t shnum;
	int err;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->symtab = f->dynsym = -1;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(eh))
		return -ENOEXEC;
	f->size = (uint64_t)st.st_size;
	err = read_at(fd, &eh, sizeof(eh), 0);
	if (err)
		return err;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] !=
		    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
	    eh.e_ident[EI_VERSION] != EV_CURRENT || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return -ENOEXEC;
	shnum = eh.e_shnum;
	if (eh.e_shoff) {
		if (eh.e_shentsize != sizeof(Elf64_Shdr))
			return -ENOEXEC;
		if (shnum == 0) { /* more than 0xff00: the count is section 0's size */
			Elf64_Shdr s0;

			if (!in_file(eh.e_shoff, sizeof(s0), f->size))
				return -ENOEXEC;
			err = read_at(fd, &s0, sizeof(s0), eh.e_shoff);
			if (err)
				return err;
			if (s0.sh_size > MAX_SECTIONS)
				return -ENOEXEC;
			shnum = (size_t)s0.sh_size;
		}
		if (shnum > MAX_SECTIONS ||
		    !in_file(eh.e_shoff, shnum * sizeof(Elf64_Shdr), f->size))
			return -ENOEXEC;
	} else {
		shnum = 0;
	}
	if (shnum) {
		f->sh = malloc(shnum * sizeof(*f->sh));
		if (!f->sh)
			return -ENOMEM;
		err = read_at(fd, f->sh, shnum * sizeof(*f->sh), eh.e_shoff);
		if (err) {
			elfsym_close(f);
			return err;
		}
		f->shnum = shnum;
	}
	for (size_t i = 0; i < f->shnum; i++) {
		if (f->sh[i].sh_type == SHT_SYMTAB && f->symtab < 0 && f->sh[i].sh_size)
			f->symtab = (int)i;
		if (f->sh[i].sh_type == SHT_DYNSYM && f->dynsym < 0 && f->sh[i].sh_size)
			f->dynsym = (int)i;
	}
	find_build_id(f, &eh);
	return 0;
}

uint64_t elfsym_inflated_size(const struct elfsym_file *f)
{
	uint64_t total = 0;

	for (size_t i = 0; i < f->shnum; i++) {
		const Elf64_Shdr *s = &f->sh[i];
		Elf64_Chdr ch;

		if (!(s->sh_flags & SHF_COMPRESSED) || s->sh_type == SHT_NOBITS)
			continue;
		if (!in_file(s->sh_offset, sizeof(ch), f->size) ||
		    read_at(f->fd, &ch, sizeof(ch), s->sh_offset) < 0 ||
		    ch.ch_size > UINT64_MAX - total)
			return UINT64_MAX;
		total += ch.ch_size;
	}
	return total;
}

void elfsym_close(struct elfsym_file *f)
{
	free(f->sh);
	f->sh = NULL;
	f->shnum = 0;
}

/* A function symbol while the table is made. */
struct cand {
	uint64_t addr, size;
	uint32_t name_off; /* in the string table */
	uint32_t pool_off; /* in the pool; UINT32_MAX: dropped */
	uint32_t sect;
	uint32_t index; /* in the symbol table: the first wins a tie */
	int rank;
};

/* At one address a global name beats a weak one, which beats a local
 * one, and a sized symbol beats one without size (symbolize.c's rank). */
static int sym_rank(const Elf64_Sym *s)
{
	int rank = 0;

	if (ELF64_ST_BIND(s->st_info) == STB_GLOBAL)
		rank = 4;
	else if (ELF64_ST_BIND(s->st_info) == STB_WEAK)
		rank = 2;
	return rank + (s->st_size > 0);
}

static int by_name_off(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;

	return a->name_off < b->name_off ? -1 : a->name_off > b->name_off;
}

static int by_address(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->rank != b->rank)
		return b->rank - a->rank;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* What a table being made holds, against its limit. */
struct budget {
	size_t used, max;
};

static bool budget_take(struct budget *b, size_t n)
{
	if (n > b->max - b->used)
		return false;
	b->used += n;
	return true;
}

/* Pass 1: the function symbols of SYM, whose names lie in a string table
 * of STRSIZE bytes, into *OUT (*N of them). */
static int read_cands(const struct elfsym_file *f, const Elf64_Shdr *sym, uint64_t strsize,
		      struct budget *b, struct cand **out, size_t *n)
{
	uint64_t count = sym->sh_size / sizeof(Elf64_Sym);
	/* zeroed: the analyzer cannot tell that pread() filled it */
	Elf64_Sym *chunk = calloc(SYM_CHUNK, sizeof(*chunk));
	struct cand *c = NULL;
	size_t cap = 0;
	int err = 0;

	*n = 0;
	if (!chunk)
		return -ENOMEM;
	/* symbol 0 is the null symbol */
	for (uint64_t first = 1; first < count && !err; first += SYM_CHUNK) {
		size_t k = count - first < SYM_CHUNK ? (size_t)(count - first) : SYM_CHUNK;

		err = read_at(f->fd, chunk, k * sizeof(*chunk),
			      sym->sh_offset + first * sizeof(Elf64_Sym));
		if (err)
			break;
		for (size_t i = 0; i < k && !err; i++) {
			const Elf64_Sym *s = &chunk[i];
			int type = ELF64_ST_TYPE(s->st_info);

			if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    s->st_shndx == SHN_UNDEF || s->st_name == 0 || s->st_name >= strsize ||
			    s->st_size > UINT64_MAX - s->st_value)
				continue;
			if (*n == cap) {
				size_t more = cap ? cap : 1024;
				struct cand *m;

				if (!budget_take(b, more * sizeof(*c))) {
					err = -E2BIG;
					break;
				}
				m = realloc(c, (cap + more) * sizeof(*c));
				if (!m) {
					err = -ENOMEM;
					break;
				}
				c = m;
				cap += more;
			}
			c[(*n)++] = (struct cand){
				.addr = s->st_value,
				.size = s->st_size,
				.name_off = s->st_name,
				.sect = s->st_shndx,
				.index = (uint32_t)(first + i),
				.rank = sym_rank(s),
			};
		}
	}
	free(chunk);
	if (err) {
		free(c);
		*n = 0;
		return err;
	}
	*out = c;
	return 0;
}

/* Pass 2: the names, read in the order of their offsets through a window
 * on the string table [STR_OFF, STR_OFF + STR_SIZE), into T's pool; a
 * name not ended within the table or the window is dropped. */
static int read_names(const struct elfsym_file *f, uint64_t str_off, uint64_t str_size,
		      struct cand *c, size_t n, struct budget *b, struct elfsym_table *t)
{
	char *win = malloc(NAME_WINDOW);
	uint64_t w_start = 0, w_len = 0; /* the window, in table offsets */
	size_t cap = 0;
	int err = 0;

	if (!win)
		return -ENOMEM;
	if (n) /* C is NULL without symbols */
		qsort(c, n, sizeof(*c), by_name_off);
	for (size_t i = 0; i < n && !err; i++) {
		const char *name = NULL, *end = NULL;
		size_t len, cut;

		if (i && c[i].name_off == c[i - 1].name_off) {
			c[i].pool_off = c[i - 1].pool_off;
			continue;
		}
		c[i].pool_off = UINT32_MAX;
		for (int pass = 0; pass < 2; pass++) {
			end = NULL;
			if (c[i].name_off >= w_start && c[i].name_off < w_start + w_len) {
				name = win + (c[i].name_off - w_start);
				end = memchr(name, '\0', (size_t)(w_start + w_len - c[i].name_off));
			}
			if (end || pass)
				break;
			w_start = c[i].name_off;
			w_len = str_size - w_start < NAME_WINDOW ? str_size - w_start : NAME_WINDOW;
			err = read_at(f->fd, win, (size_t)w_len, str_off + w_start);
			if (err)
				w_len = 0;
		}
		if (err || !end)
			continue;
		len = (size_t)(end - name);
		/* .symtab names carry their version ("memcpy@@GLIBC_2.14"):
		 * dropped, as the report drops it (symbolize_frame) */
		cut = strcspn(name, "@");
		if (cut > 0)
			len = cut;
		if (len == 0)
			continue;
		if (t->pool_len + len + 1 > cap) {
			size_t want = cap ? cap : (size_t)64 * 1024;
			char *p;

			while (want < len + 1)
				want *= 2;
			if (cap + want > UINT32_MAX || !budget_take(b, want)) {
				err = -E2BIG;
				break;
			}
			p = realloc(t->pool, cap + want);
			if (!p) {
				err = -ENOMEM;
				break;
			}
			t->pool = p;
			cap += want;
		}
		memcpy(t->pool + t->pool_len, name, len);
		t->pool[t->pool_len + len] = '\0';
		c[i].pool_off = (uint32_t)t->pool_len;
		t->pool_len += len + 1;
	}
	free(win);
	return err;
}

int elfsym_read(const struct elfsym_file *f, int section, size_t max_bytes, struct elfsym_table *t)
{
	struct budget b = { 0, max_bytes };
	const Elf64_Shdr *sym, *str;
	struct cand *c = NULL;
	size_t n = 0, k = 0;
	int err;

	memset(t, 0, sizeof(*t));
	if (section < 0 || (size_t)section >= f->shnum)
		return -ENOEXEC;
	sym = &f->sh[section];
	if ((sym->sh_type != SHT_SYMTAB && sym->sh_type != SHT_DYNSYM) ||
	    sym->sh_entsize != sizeof(Elf64_Sym) ||
	    !in_file(sym->sh_offset, sym->sh_size, f->size) || sym->sh_link >= f->shnum)
		return -ENOEXEC;
	str = &f->sh[sym->sh_link];
	if (str->sh_type != SHT_STRTAB || !in_file(str->sh_offset, str->sh_size, f->size))
		return -ENOEXEC;

	if (!budget_take(&b, f->shnum * sizeof(*t->sects)))
		return -E2BIG;
	t->sects = calloc(f->shnum ? f->shnum : 1, sizeof(*t->sects));
	if (!t->sects)
		return -ENOMEM;
	t->nsects = f->shnum;
	for (size_t i = 0; i < f->shnum; i++)
		if ((f->sh[i].sh_flags & SHF_ALLOC) &&
		    f->sh[i].sh_size <= UINT64_MAX - f->sh[i].sh_addr)
			t->sects[i] = (struct elfsym_sect){ f->sh[i].sh_addr, f->sh[i].sh_size };

	err = read_cands(f, sym, str->sh_size, &b, &c, &n);
	if (!err)
		err = read_names(f, str->sh_offset, str->sh_size, c, n, &b, t);
	if (!err) {
		/* the names kept, by address, the best of each address first */
		for (size_t i = 0; i < n; i++)
			if (c[i].pool_off != UINT32_MAX)
				c[k++] = c[i];
		if (k)
			qsort(c, k, sizeof(*c), by_address);
		t->syms = malloc((k ? k : 1) * sizeof(*t->syms));
		if (!t->syms)
			err = -ENOMEM;
	}
	if (err) {
		free(c);
		elfsym_free(t);
		return err;
	}
	/* the first of each address is the best one */
	for (size_t i = 0; i < k; i++)
		if (i == 0 || c[i - 1].addr != c[i].addr)
			t->syms[t->n++] =
				(struct elfsym){ c[i].addr, c[i].size, c[i].pool_off, c[i].sect };
	free(c);
	if (t->n) {
		struct elfsym *s = realloc(t->syms, t->n * sizeof(*s));

		if (s)
			t->syms = s;
	}
	if (t->pool_len) {
		char *p = realloc(t->pool, t->pool_len);

		if (p)
			t->pool = p;
	}
	t->bytes = t->n * sizeof(*t->syms) + t->pool_len + t->nsects * sizeof(*t->sects);
	return 0;
}

void elfsym_free(struct elfsym_table *t)
{
	free(t->syms);
	free(t->pool);
	free(t->sects);
	memset(t, 0, sizeof(*t));
}

const char *elfsym_lookup(const struct elfsym_table *t, uint64_t addr)
{
	const struct elfsym *e;
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	e = &t->syms[lo - 1];
	if (e->size > 0)
		return addr - e->addr < e->size ? t->pool + e->name : NULL;
	/* Without size it reaches up to the next symbol, but not into
	 * another section: ".plt" after "_init" is not _init. */
	if (e->sect >= t->nsects || !t->sects[e->sect].size || addr < t->sects[e->sect].addr ||
	    addr - t->sects[e->sect].addr >= t->sects[e->sect].size)
		return NULL;
	return t->pool + e->name;
}
