/* SPDX-License-Identifier: MIT */
/*
 * A shared library with known functions at known lines, built with debug
 * information, for the symbolization test: make_symreport records return
 * addresses into it and 'gpuspy report' must name them.
 */
#include "symtarget.h"

int symtarget_line;

/* Exported, hence interposable: the compiler can neither inline it nor
 * turn the call below into a jump, so its return address really lies in
 * symtarget_caller. */
__attribute__((noinline)) void *symtarget_capture(void)
{
	return __builtin_return_address(0);
}

__attribute__((noinline)) void *symtarget_caller(void)
{
	void *ra = symtarget_capture();
	symtarget_line = __LINE__ - 1; /* the line of the call above */

	return ra;
}
