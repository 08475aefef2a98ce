// SPDX-License-Identifier: MIT
// For summary_demangle.py: a C++ library whose exported function
// gstest::leak_cxx(unsigned long) leaks through cudaMalloc.  A C program
// loads it with RTLD_LOCAL, as CPython loads an extension: its libstdc++
// is then out of RTLD_DEFAULT's reach.
#include <cstddef>
#include <cstdlib>
#include <string>

extern "C" int cudaMalloc(void **ptr, std::size_t size);

namespace gstest
{
std::string last_size;

__attribute__((noinline)) void *leak_cxx(std::size_t n)
{
	void *p = nullptr;

	// libstdc++ used, so that the library depends on it
	last_size = std::to_string(n);
	if (cudaMalloc(&p, n) != 0) // the leaking line
		std::abort();
	return p;
}
} // namespace gstest

extern "C" void cxx_alloc_entry(std::size_t n)
{
	gstest::leak_cxx(n);
}
