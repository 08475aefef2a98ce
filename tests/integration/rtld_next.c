/* SPDX-License-Identifier: MIT */
/*
 * gpuspy hooks dlsym, but dlsym(RTLD_NEXT, ...) must still resolve
 * relative to the caller.  This program is itself an interposer: its
 * puts() and cuMemAlloc_v2() find the next definition with RTLD_NEXT.
 * For puts that is libc's.  For cuMemAlloc_v2 it is gpuspy's hook under
 * LD_PRELOAD (the next object after the program), so the leak is seen; a
 * dlsym hook that resolved relative to itself would skip to libcuda and
 * the leak would go unseen.
 * Usage: rtld_next SIZE COUNT
 * Leaks COUNT x SIZE from leak_rtld_next().
 */
#include "prog.h"

void leak_rtld_next(size_t size, size_t count);

static typeof(puts) *next_puts;

int puts(const char *s)
{
	if (!next_puts)
		load_sym(RTLD_NEXT, "puts", &next_puts);
	fputs("[wrapped] ", stdout);
	return next_puts(s);
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	static typeof(cuMemAlloc_v2) *next;

	if (!next)
		load_sym(RTLD_NEXT, "cuMemAlloc_v2", &next);
	return next(dptr, bytesize);
}

__attribute__((noinline)) void leak_rtld_next(size_t size, size_t count)
{
	CUdeviceptr p;

	for (size_t i = 0; i < count; i++)
		cu_ok(cuMemAlloc_v2(&p, size), "cuMemAlloc_v2");
}

int main(int argc, char **argv)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *libc_puts = libc ? dlsym(libc, "puts") : NULL;

	puts("rtld_next: hello");
	printf("rtld_next: the next puts is libc's: %s\n",
	       libc_puts && (void *)next_puts == libc_puts ? "yes" : "no");
	driver_context();
	leak_rtld_next(arg_size(argc, argv, 1), arg_size(argc, argv, 2));
	printf("rtld_next: done\n");
	return 0;
}
