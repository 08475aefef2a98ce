/* SPDX-License-Identifier: MIT */
/*
 * The library of tests/integration/names.c: a static function that keeps
 * 1 MiB each time it is called, handed out by names_lib_step(), so that
 * only the library's .symtab names it; or called by names_lib_call(),
 * which the library's dynamic symbols name too.  Built with -DIMPOSTOR,
 * the same code names them impostor_*.
 */
#include "prog.h"

#ifdef IMPOSTOR
#define lib_staircase  impostor_staircase
#define names_lib_call impostor_lib_call
#endif

void (*names_lib_step(void))(void);
void names_lib_call(void);

static __attribute__((noinline)) void lib_staircase(void)
{
	void *p;

	rt_ok(cudaMalloc(&p, 1 << 20), "cudaMalloc"); /* the library's growing line */
}

void (*names_lib_step(void))(void)
{
	return lib_staircase;
}

__attribute__((noinline)) void names_lib_call(void)
{
	lib_staircase();
}
