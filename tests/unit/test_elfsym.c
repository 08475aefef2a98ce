/* SPDX-License-Identifier: MIT */
/*
 * elfsym.c, the ELF reader of the process's symbolizer: the rule that
 * picks a name (as `gpuspy report` does), on a file made here; every
 * malformed header or table refused or skipped, never read past; and this
 * test's own executable read whole, then garbled at random and truncated
 * at every length step, each read surviving (the sanitizer build says
 * whether anything was read out of bounds).
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "elfsym.h"

/* ---- a file made here ---- */

#define TEXT_ADDR  0x1000
#define TEXT_SIZE  0x100
#define OTHER_ADDR 0x2000

enum { S_NULL, S_TEXT, S_OTHER, S_STRTAB, S_SYMTAB, S_NOTE, N_SECT };

struct image {
	unsigned char *p;
	size_t len;
	size_t strtab, symtab, nsyms, note, shoff; /* offsets */
};

static const char strings[] = "\0local_a\0global_a\0weak_b\0local_b\0sized_c@@V1\0nosize_d\0"
			      "obj\0undef\0first_e\0second_e\0@at\0big\0unterminated";

static uint32_t str(const char *name)
{
	for (size_t i = 1; i < sizeof(strings);) {
		if (strcmp(strings + i, name) == 0)
			return (uint32_t)i;
		i += strlen(strings + i) + 1;
	}
	fail_msg("no string %s", name);
	return 0;
}

static Elf64_Sym sym(const char *name, int bind, int type, uint64_t value, uint64_t size,
		     uint16_t shndx)
{
	return (Elf64_Sym){ .st_name = str(name),
			    .st_info = (unsigned char)ELF64_ST_INFO(bind, type),
			    .st_shndx = shndx,
			    .st_value = value,
			    .st_size = size };
}

static struct image make_image(void)
{
	const Elf64_Sym syms[] = {
		{ 0 },
		sym("local_a", STB_LOCAL, STT_FUNC, 0x1000, 0x10, S_TEXT),
		sym("global_a", STB_GLOBAL, STT_FUNC, 0x1000, 0x10, S_TEXT),
		sym("local_b", STB_LOCAL, STT_FUNC, 0x1020, 0x10, S_TEXT),
		sym("weak_b", STB_WEAK, STT_FUNC, 0x1020, 0x10, S_TEXT),
		sym("sized_c@@V1", STB_GLOBAL, STT_FUNC, 0x1040, 0x10, S_TEXT),
		sym("obj", STB_GLOBAL, STT_OBJECT, 0x1060, 0x10, S_TEXT),
		sym("undef", STB_GLOBAL, STT_FUNC, 0x1070, 0x10, SHN_UNDEF),
		sym("first_e", STB_GLOBAL, STT_FUNC, 0x10c0, 0x10, S_TEXT),
		sym("second_e", STB_GLOBAL, STT_FUNC, 0x10c0, 0x10, S_TEXT),
		sym("@at", STB_GLOBAL, STT_GNU_IFUNC, 0x10e0, 0x4, S_TEXT),
		sym("big", STB_GLOBAL, STT_FUNC, UINT64_MAX - 4, 0x10, S_TEXT),
		sym("nosize_d", STB_GLOBAL, STT_FUNC, 0x10f0, 0, S_TEXT),
		/* a name beyond the string table */
		{ .st_name = 100000,
		  .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
		  .st_shndx = S_TEXT,
		  .st_value = 0x1050,
		  .st_size = 4 },
		sym("unterminated", STB_GLOBAL, STT_FUNC, 0x10d0, 0x4, S_TEXT),
	};
	static const unsigned char note[] = { 4, 0, 0,	 0,   4,   0, 0,    0,	  3,	0,
					      0, 0, 'G', 'N', 'U', 0, 0xde, 0xad, 0xbe, 0xef };
	struct image im = { 0 };
	Elf64_Ehdr eh = { 0 };
	Elf64_Shdr sh[N_SECT] = { { 0 } };

	im.strtab = sizeof(eh);
	im.symtab = (im.strtab + sizeof(strings) + 7) & ~(size_t)7;
	im.nsyms = sizeof(syms) / sizeof(syms[0]);
	im.note = im.symtab + sizeof(syms);
	im.shoff = (im.note + sizeof(note) + 7) & ~(size_t)7;
	im.len = im.shoff + sizeof(sh);
	im.p = calloc(1, im.len);
	assert_non_null(im.p);

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = im.shoff;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = N_SECT;
	memcpy(im.p, &eh, sizeof(eh));
	/* the string table's last name runs to its end, unterminated */
	memcpy(im.p + im.strtab, strings, sizeof(strings) - 1);
	memcpy(im.p + im.symtab, syms, sizeof(syms));
	memcpy(im.p + im.note, note, sizeof(note));

	sh[S_TEXT] = (Elf64_Shdr){ .sh_type = SHT_NOBITS,
				   .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
				   .sh_addr = TEXT_ADDR,
				   .sh_size = TEXT_SIZE };
	sh[S_OTHER] = (Elf64_Shdr){ .sh_type = SHT_NOBITS,
				    .sh_flags = SHF_ALLOC,
				    .sh_addr = OTHER_ADDR,
				    .sh_size = 0x100 };
	sh[S_STRTAB] = (Elf64_Shdr){ .sh_type = SHT_STRTAB,
				     .sh_offset = im.strtab,
				     .sh_size = sizeof(strings) - 1 };
	sh[S_SYMTAB] = (Elf64_Shdr){ .sh_type = SHT_SYMTAB,
				     .sh_offset = im.symtab,
				     .sh_size = sizeof(syms),
				     .sh_link = S_STRTAB,
				     .sh_entsize = sizeof(Elf64_Sym) };
	sh[S_NOTE] = (Elf64_Shdr){ .sh_type = SHT_NOTE,
				   .sh_offset = im.note,
				   .sh_size = sizeof(note),
				   .sh_addralign = 4 };
	memcpy(im.p + im.shoff, sh, sizeof(sh));
	return im;
}

static char tmp_path[64];

/* A file holding LEN bytes of P, opened for reading. */
static int file_of(const void *p, size_t len)
{
	int fd;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/gpuspy-elfsym-XXXXXX");
	fd = mkstemp(tmp_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, len), (ssize_t)len);
	unlink(tmp_path);
	return fd;
}

static Elf64_Shdr *shdr(struct image *im, int i)
{
	return (Elf64_Shdr *)(im->p + im->shoff) + i;
}

static Elf64_Ehdr *ehdr(struct image *im)
{
	return (Elf64_Ehdr *)im->p;
}

/* elfsym_open and, when it succeeds, elfsym_read of the symtab. */
static int parse(struct image *im, size_t max_bytes, struct elfsym_file *f, struct elfsym_table *t,
		 int *read_err)
{
	int fd = file_of(im->p, im->len);
	int err = elfsym_open(fd, f);

	*read_err = err ? err : elfsym_read(f, f->symtab, max_bytes, t);
	return fd;
}

static void test_rule(void **state)
{
	struct image im = make_image();
	struct elfsym_file f;
	struct elfsym_table t;
	int rerr, fd = parse(&im, 1 << 20, &f, &t, &rerr);

	assert_int_equal(rerr, 0);
	assert_string_equal(f.build_id, "deadbeef");
	assert_int_equal(f.symtab, S_SYMTAB);
	assert_int_equal(f.dynsym, -1);
	/* one address, three names: global before local */
	assert_string_equal(elfsym_lookup(&t, 0x1005), "global_a");
	/* weak before local */
	assert_string_equal(elfsym_lookup(&t, 0x1020), "weak_b");
	assert_string_equal(elfsym_lookup(&t, 0x102f), "weak_b");
	/* a size ends a function */
	assert_null(elfsym_lookup(&t, 0x1010));
	assert_null(elfsym_lookup(&t, 0x1030));
	/* the version cut off */
	assert_string_equal(elfsym_lookup(&t, 0x1041), "sized_c");
	/* objects, undefined symbols and names out of the table are none */
	assert_null(elfsym_lookup(&t, 0x1065));
	assert_null(elfsym_lookup(&t, 0x1075));
	assert_null(elfsym_lookup(&t, 0x1051));
	/* a tie: the first in the table */
	assert_string_equal(elfsym_lookup(&t, 0x10c8), "first_e");
	/* a name that is only a version keeps it; an IFUNC is a function */
	assert_string_equal(elfsym_lookup(&t, 0x10e1), "@at");
	/* a name that runs off its table is dropped */
	assert_null(elfsym_lookup(&t, 0x10d1));
	/* without size: up to its section's end, not into the next one */
	assert_string_equal(elfsym_lookup(&t, 0x10f0), "nosize_d");
	assert_string_equal(elfsym_lookup(&t, 0x10ff), "nosize_d");
	assert_null(elfsym_lookup(&t, 0x1100));
	assert_null(elfsym_lookup(&t, OTHER_ADDR + 5));
	/* below the first, and an address plus size that overflows */
	assert_null(elfsym_lookup(&t, 0xfff));
	assert_null(elfsym_lookup(&t, UINT64_MAX - 2));
	assert_true(t.bytes >= t.n * sizeof(struct elfsym) + t.pool_len);
	elfsym_free(&t);
	elfsym_close(&f);
	close(fd);
	free(im.p);
}

/* One way to break the made file, and what reading it must then say. */
struct breakage {
	const char *what;
	void (*apply)(struct image *im);
	int open_err, read_err; /* read_err when opening succeeds */
};

static void short_file(struct image *im)
{
	im->len = sizeof(Elf64_Ehdr) - 1;
}
static void class32(struct image *im)
{
	im->p[EI_CLASS] = ELFCLASS32;
}
static void big_endian(struct image *im)
{
	im->p[EI_DATA] = ELFDATA2MSB;
}
static void relocatable(struct image *im)
{
	ehdr(im)->e_type = ET_REL;
}
static void bad_magic(struct image *im)
{
	im->p[1] = 'X';
}
static void shoff_past_end(struct image *im)
{
	ehdr(im)->e_shoff = im->len - 10;
}
static void shoff_huge(struct image *im)
{
	ehdr(im)->e_shoff = UINT64_MAX - 16;
}
static void shentsize_wrong(struct image *im)
{
	ehdr(im)->e_shentsize = 32;
}
static void shnum_extended_huge(struct image *im)
{
	ehdr(im)->e_shnum = 0;
	shdr(im, 0)->sh_size = 1ull << 40;
}
static void shnum_past_end(struct image *im)
{
	ehdr(im)->e_shnum = 0xfeff;
}
static void link_out_of_range(struct image *im)
{
	shdr(im, S_SYMTAB)->sh_link = 99;
}
static void link_not_strtab(struct image *im)
{
	shdr(im, S_SYMTAB)->sh_link = S_NOTE;
}
static void symtab_offset_wraps(struct image *im)
{
	shdr(im, S_SYMTAB)->sh_offset = UINT64_MAX - 8;
}
static void symtab_size_past_end(struct image *im)
{
	shdr(im, S_SYMTAB)->sh_size = im->len;
}
static void entsize_wrong(struct image *im)
{
	shdr(im, S_SYMTAB)->sh_entsize = 16;
}
static void strtab_past_end(struct image *im)
{
	shdr(im, S_STRTAB)->sh_size = 1ull << 62;
}
static void note_namesz_huge(struct image *im)
{
	uint32_t huge = 0xfffffff0u;

	memcpy(im->p + im->note, &huge, 4);
}
static void note_descsz_huge(struct image *im)
{
	uint32_t huge = 0xffffffffu;

	memcpy(im->p + im->note + 4, &huge, 4);
}
static void note_past_end(struct image *im)
{
	shdr(im, S_NOTE)->sh_size = UINT64_MAX;
}
static void no_sections(struct image *im)
{
	ehdr(im)->e_shoff = 0;
}

static const struct breakage breakages[] = {
	{ "shorter than a header", short_file, -ENOEXEC, 0 },
	{ "32-bit", class32, -ENOEXEC, 0 },
	{ "big-endian", big_endian, -ENOEXEC, 0 },
	{ "relocatable", relocatable, -ENOEXEC, 0 },
	{ "not ELF", bad_magic, -ENOEXEC, 0 },
	{ "sections past the end", shoff_past_end, -ENOEXEC, 0 },
	{ "section offset wraps", shoff_huge, -ENOEXEC, 0 },
	{ "section header size", shentsize_wrong, -ENOEXEC, 0 },
	{ "extended section count, huge", shnum_extended_huge, -ENOEXEC, 0 },
	{ "section count past the end", shnum_past_end, -ENOEXEC, 0 },
	{ "string table index out of range", link_out_of_range, 0, -ENOEXEC },
	{ "string table not one", link_not_strtab, 0, -ENOEXEC },
	{ "symbol table offset wraps", symtab_offset_wraps, 0, -ENOEXEC },
	{ "symbol table past the end", symtab_size_past_end, 0, -ENOEXEC },
	{ "symbol entry size", entsize_wrong, 0, -ENOEXEC },
	{ "string table past the end", strtab_past_end, 0, -ENOEXEC },
	{ "note name size huge", note_namesz_huge, 0, 0 },
	{ "note size huge", note_descsz_huge, 0, 0 },
	{ "note section past the end", note_past_end, 0, 0 },
	{ "no section table", no_sections, 0, -ENOEXEC },
};

static void test_broken(void **state)
{
	for (size_t i = 0; i < sizeof(breakages) / sizeof(breakages[0]); i++) {
		const struct breakage *b = &breakages[i];
		struct image im = make_image();
		struct elfsym_file f;
		struct elfsym_table t;
		int rerr, fd, err;

		b->apply(&im);
		fd = file_of(im.p, im.len);
		err = elfsym_open(fd, &f);
		if (err != b->open_err)
			fail_msg("%s: open %d, not %d", b->what, err, b->open_err);
		if (!err) {
			rerr = elfsym_read(&f, S_SYMTAB, 1 << 20, &t);
			if (rerr != b->read_err)
				fail_msg("%s: read %d, not %d", b->what, rerr, b->read_err);
			if (!rerr) /* the notes broken: the table still read */
				assert_string_equal(elfsym_lookup(&t, 0x1005), "global_a");
			if (b->apply == note_namesz_huge || b->apply == note_descsz_huge ||
			    b->apply == note_past_end)
				assert_string_equal(f.build_id, "");
			elfsym_free(&t);
			elfsym_close(&f);
		}
		close(fd);
		free(im.p);
	}
}

static void test_budget(void **state)
{
	struct image im = make_image();
	struct elfsym_file f;
	struct elfsym_table t;
	int rerr, fd = parse(&im, 64, &f, &t, &rerr);

	/* more than the limit, while being made too: refused */
	assert_int_equal(rerr, -E2BIG);
	assert_null(t.syms);
	elfsym_close(&f);
	close(fd);
	free(im.p);
}

/* What a reader of the debug information would inflate (lines are not
 * read from a module whose compressed sections are too large). */
static void test_inflated(void **state)
{
	struct image im = make_image();
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = 12345, .ch_addralign = 1 };
	struct elfsym_file f;
	int fd = file_of(im.p, im.len);

	assert_int_equal(elfsym_open(fd, &f), 0);
	assert_int_equal(elfsym_inflated_size(&f), 0);
	elfsym_close(&f);
	close(fd);
	/* the note section made a compressed one */
	memcpy(im.p + im.note, &ch, sizeof(ch));
	shdr(&im, S_NOTE)->sh_flags |= SHF_COMPRESSED;
	shdr(&im, S_NOTE)->sh_size = sizeof(ch);
	fd = file_of(im.p, im.len);
	assert_int_equal(elfsym_open(fd, &f), 0);
	assert_int_equal(elfsym_inflated_size(&f), 12345);
	elfsym_close(&f);
	close(fd);
	/* its header past the end: as large as can be */
	shdr(&im, S_NOTE)->sh_offset = im.len - 4;
	fd = file_of(im.p, im.len);
	assert_int_equal(elfsym_open(fd, &f), 0);
	assert_true(elfsym_inflated_size(&f) == UINT64_MAX);
	elfsym_close(&f);
	close(fd);
	free(im.p);
}

static void test_not_regular(void **state)
{
	struct elfsym_file f;
	int fd = open("/", O_RDONLY | O_DIRECTORY);

	assert_true(fd >= 0);
	assert_int_equal(elfsym_open(fd, &f), -ENOEXEC);
	close(fd);
}

/* ---- this test's own executable ---- */

static __attribute__((noinline)) int probe_target(int x)
{
	return x * 3 + 1;
}

static int main_base(struct dl_phdr_info *info, size_t size, void *data)
{
	if (info->dlpi_name && info->dlpi_name[0])
		return 0;
	*(uintptr_t *)data = info->dlpi_addr;
	return 1;
}

struct self {
	unsigned char *p;
	size_t len;
	uint64_t probe; /* probe_target's link-time address */
};

static struct self self_read(void)
{
	struct self s = { 0 };
	uintptr_t base = 0;
	int fd = open("/proc/self/exe", O_RDONLY);
	struct stat st;

	assert_true(fd >= 0 && fstat(fd, &st) == 0);
	s.len = (size_t)st.st_size;
	s.p = malloc(s.len);
	assert_non_null(s.p);
	assert_int_equal(pread(fd, s.p, s.len, 0), (ssize_t)s.len);
	close(fd);
	dl_iterate_phdr(main_base, &base);
	s.probe = (uintptr_t)&probe_target - base;
	return s;
}

static void test_self(void **state)
{
	struct self s = self_read();
	int fd = file_of(s.p, s.len);
	struct elfsym_file f;
	struct elfsym_table t;

	assert_int_equal(probe_target(1), 4);
	assert_int_equal(elfsym_open(fd, &f), 0);
	assert_true(f.symtab >= 0);
	assert_int_equal(strlen(f.build_id), 40); /* the linker's sha1 */
	assert_int_equal(elfsym_read(&f, f.symtab, 64 << 20, &t), 0);
	/* a static function, named by .symtab alone */
	assert_string_equal(elfsym_lookup(&t, s.probe), "probe_target");
	assert_string_equal(elfsym_lookup(&t, s.probe + 1), "probe_target");
	elfsym_free(&t);
	elfsym_close(&f);
	close(fd);
	free(s.p);
}

/* Reads whatever FD holds now, as the resolver would, looking up a few
 * addresses: nothing may be read out of bounds, and each name found is a
 * string of the table's pool. */
static void read_anything(int fd, uint64_t probe, uint64_t *seed)
{
	struct elfsym_file f;
	struct elfsym_table t;

	if (elfsym_open(fd, &f) < 0)
		return;
	for (int w = 0; w < 2; w++) {
		if (elfsym_read(&f, w ? f.dynsym : f.symtab, 8 << 20, &t) < 0)
			continue;
		for (int k = 0; k < 8; k++) {
			uint64_t a = k ? (*seed = *seed * 6364136223846793005ull + 1) >> 40 : probe;
			const char *n = elfsym_lookup(&t, a);

			if (n)
				assert_true(n >= t.pool && n + strlen(n) < t.pool + t.pool_len);
		}
		elfsym_free(&t);
	}
	elfsym_close(&f);
}

static void test_self_garbled(void **state)
{
	struct self s = self_read();
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)s.p;
	int fd = file_of(s.p, s.len);
	uint64_t seed = 12345;
	/* where the reader looks: the header, the section table, the tables */
	const uint64_t shtab = eh->e_shoff, shlen = (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr);

	for (int i = 0; i < 3000; i++) {
		unsigned char saved[16];
		uint64_t at[16];
		int n = 1 + (int)((seed >> 33) % 16);

		for (int k = 0; k < n; k++) {
			uint64_t r =
				(seed = seed * 6364136223846793005ull + 1442695040888963407ull) >>
				11;
			uint64_t where = r % 4;

			at[k] = where == 0 ? r % sizeof(*eh) :
				where == 1 ? shtab + r % (shlen ? shlen : 1) :
					     r % s.len;
			if (at[k] >= s.len)
				at[k] = r % s.len;
			saved[k] = s.p[at[k]];
			assert_int_equal(pwrite(fd, &(unsigned char){ (unsigned char)(r >> 17) }, 1,
						(off_t)at[k]),
					 1);
		}
		read_anything(fd, s.probe, &seed);
		for (int k = n; k-- > 0;)
			assert_int_equal(pwrite(fd, &saved[k], 1, (off_t)at[k]), 1);
	}
	/* and cut short at every 1/500th of its length, and near its start */
	for (uint64_t len = s.len; len > 0;
	     len = len > s.len / 500 + 1 ? len - s.len / 500 - 1 : 0) {
		assert_int_equal(ftruncate(fd, (off_t)len), 0);
		read_anything(fd, s.probe, &seed);
	}
	for (uint64_t len = 256; len-- > 0;) {
		assert_int_equal(ftruncate(fd, (off_t)len), 0);
		read_anything(fd, s.probe, &seed);
	}
	close(fd);
	free(s.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),	     cmocka_unit_test(test_broken),
		cmocka_unit_test(test_budget),	     cmocka_unit_test(test_inflated),
		cmocka_unit_test(test_not_regular),  cmocka_unit_test(test_self),
		cmocka_unit_test(test_self_garbled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
