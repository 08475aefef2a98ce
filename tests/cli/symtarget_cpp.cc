// SPDX-License-Identifier: MIT
// A mangled name for the symbolization test: gpuspy report must print
// "gstest::cpp_caller(int)", demangled, with its file and line.
#include "symtarget.h"

namespace gstest
{

int cpp_line;

__attribute__((noinline)) void *cpp_caller(int x)
{
	void *ra = symtarget_capture();
	cpp_line = __LINE__ - 1 + x; /* the line of the call above */

	return ra;
}

} // namespace gstest

extern "C" void *symtarget_cpp_entry(int *line)
{
	void *ra = gstest::cpp_caller(0);

	*line = gstest::cpp_line;
	return ra;
}
