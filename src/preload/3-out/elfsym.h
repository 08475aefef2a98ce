/* SPDX-License-Identifier: MIT */
/*
 * elfsym.c: the function symbols of an ELF file, read with pread() only.
 *
 * The file is untrusted (a module's path may now name another file, a
 * truncated one, or anything at all): every offset, size and count is
 * checked against the file's size and the caller's limit before it is
 * used, nothing is mapped (a file truncated under a mapping would raise
 * SIGBUS in the process), and a file that is not a 64-bit ELF of this
 * machine's byte order is refused.  No lock, no global state: the
 * resolver (symbols.c) calls it from the snapshot thread.
 */
#ifndef GPUSPY_ELFSYM_H
#define GPUSPY_ELFSYM_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* A GNU build-id in hex, as struct gs_module holds it. */
#define ELFSYM_BUILD_ID_HEX ((size_t)41 * 2)

/* What elfsym_open read of a file's headers. */
struct elfsym_file {
	int fd;
	uint64_t size;			    /* of the file, when it was opened */
	Elf64_Shdr *sh;			    /* the section headers, SHNUM of them */
	size_t shnum;			    /* 0: none (the file has no section table) */
	int symtab;			    /* index of its SHT_SYMTAB section, -1: none */
	int dynsym;			    /* index of its SHT_DYNSYM section, -1: none */
	char build_id[ELFSYM_BUILD_ID_HEX]; /* "" when it has none */
};

/* One function: ADDR is its link-time address. */
struct elfsym {
	uint64_t addr;
	uint64_t size; /* 0: up to the next symbol, within its section */
	uint32_t name; /* offset of its name in the table's pool */
	uint32_t sect; /* its section's index */
};

/* An allocated section's addresses, by section index (0, 0 for others):
 * how far a symbol without size reaches. */
struct elfsym_sect {
	uint64_t addr, size;
};

/* The functions of one symbol table, sorted by address, one per address
 * (the best name: global before weak before local, sized before not,
 * then the first in the table), their names in one pool. */
struct elfsym_table {
	struct elfsym *syms;
	size_t n;
	char *pool;
	size_t pool_len;
	struct elfsym_sect *sects;
	size_t nsects;
	size_t bytes; /* what the three arrays hold */
};

/*
 * Reads FD's ELF header, section headers and build-id into F (FD stays
 * the caller's; F->fd is set to it).  0, -ENOEXEC when FD is not an ELF
 * file gpuspy can read, -ENOMEM, or -errno of a read.
 */
int elfsym_open(int fd, struct elfsym_file *f);
void elfsym_close(struct elfsym_file *f);

/* What F's compressed sections (SHF_COMPRESSED: debug information, as a
 * reader of it would inflate them) take once inflated; a header that
 * cannot be read counts as UINT64_MAX. */
uint64_t elfsym_inflated_size(const struct elfsym_file *f);

/*
 * The functions of F's symbol table SECTION (F->symtab or F->dynsym) into
 * T.  MAX_BYTES bounds what T may hold, and what is held while it is
 * made; a table larger is refused (-E2BIG).  0, -ENOEXEC (the section is
 * not a symbol table the file can hold), -E2BIG, -ENOMEM or -errno.
 */
int elfsym_read(const struct elfsym_file *f, int section, size_t max_bytes, struct elfsym_table *t);
void elfsym_free(struct elfsym_table *t);

/*
 * The name of the function ADDR (a link-time address) lies in, or NULL:
 * the last symbol at or below ADDR, if its size reaches ADDR, or, for a
 * symbol without size, if ADDR lies in the symbol's own section.  The
 * rule of `gpuspy report` (src/read/symbolize.c), so that the process
 * and the report name an address alike.
 */
const char *elfsym_lookup(const struct elfsym_table *t, uint64_t addr);

#endif /* GPUSPY_ELFSYM_H */
