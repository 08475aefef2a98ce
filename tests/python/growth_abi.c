/* SPDX-License-Identifier: MIT */
/*
 * The growth rule of src/common as libgpuspy links it, for the Python
 * tests through ctypes: the addresses of its functions and the size of
 * its state, which torch_probe.c gives the PyTorch view.
 */
#include <stdint.h>

#include "trend.h"

void growth_abi(uintptr_t out[6]);

void growth_abi(uintptr_t out[6])
{
	out[0] = (uintptr_t)trend_init;
	out[1] = (uintptr_t)trend_push;
	out[2] = (uintptr_t)trend_state;
	out[3] = (uintptr_t)trend_query;
	out[4] = (uintptr_t)trend_shape_name;
	out[5] = trend_state_size();
}
