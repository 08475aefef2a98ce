/* SPDX-License-Identifier: MIT */
/*
 * For summary_demangle.py: load LIB (libcxx_alloc.so) with RTLD_LOCAL and
 * call its cxx_alloc_entry(SIZE).  A C program: libstdc++ comes only with
 * LIB, local to it.
 * Usage: dlopen_cxx LIB SIZE
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	void (*entry)(size_t);
	void *h;

	if (argc < 3)
		return 99;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen_cxx: %s\n", dlerror());
		return 99;
	}
	*(void **)&entry = dlsym(h, "cxx_alloc_entry");
	if (!entry)
		return 99;
	entry(strtoul(argv[2], NULL, 0));
	printf("done\n");
	return 0;
}
