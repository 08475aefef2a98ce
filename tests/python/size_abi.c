/* SPDX-License-Identifier: MIT */
/*
 * GPUSPY_LIMIT's size parser of src/common (env_size) as libgpuspy links
 * it, for the Python tests through ctypes: the package's parse_size()
 * (python/gpuspy/_lib.py, the sizes of the pytest markers) is checked
 * against it.
 */
#include "env.h"

int size_abi(const char *v, unsigned long long *bytes);

int size_abi(const char *v, unsigned long long *bytes)
{
	return env_size(v, bytes);
}
