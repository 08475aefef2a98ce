/* SPDX-License-Identifier: MIT */
/*
 * The ELF reader of the process's symbolizer (src/preload/3-out/elfsym.c): the
 * input is the file at a module's path, read as symbols.c reads it - the
 * headers and build-id, its compressed sections' sizes, each symbol
 * table, a few lookups - from a memfd
 * (a regular file, no directory needed).  A name found must lie in the
 * table's pool.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct elfsym_file f;

	if (fd < 0)
		fd = memfd_create("gpuspy-fuzz-elf", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	if (elfsym_open(fd, &f) < 0)
		return 0;
	(void)elfsym_inflated_size(&f);
	for (int w = 0; w < 2; w++) {
		struct elfsym_table t;

		/* a small budget too: the refusal path, and fast runs */
		if (elfsym_read(&f, w ? f.dynsym : f.symtab, w ? 4096 : 16 << 20, &t) < 0)
			continue;
		for (size_t i = 0; i < t.n; i++)
			for (uint64_t d = 0; d < 3; d++) {
				const char *n = elfsym_lookup(&t, t.syms[i].addr + d * 7);

				if (n && (n < t.pool || n + strlen(n) >= t.pool + t.pool_len))
					abort();
			}
		elfsym_free(&t);
	}
	elfsym_close(&f);
	return 0;
}
