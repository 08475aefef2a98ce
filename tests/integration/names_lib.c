/* SPDX-License-Identifier: MIT */
/*
 * The library of tests/integration/names.c: a static function that keeps
 * 1 MiB each time it is called, handed out by the one exported function,
 * so that only the library's .symtab names it.  Built with -DIMPOSTOR, the
 * same code names it impostor_staircase.
 */
#include "prog.h"

#ifdef IMPOSTOR
#define lib_staircase impostor_staircase
#endif

void (*names_lib_step(void))(void);

static __attribute__((noinline)) void lib_staircase(void)
{
	void *p;

	rt_ok(cudaMalloc(&p, 1 << 20), "cudaMalloc"); /* the library's growing line */
}

void (*names_lib_step(void))(void)
{
	return lib_staircase;
}
