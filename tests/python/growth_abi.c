/* SPDX-License-Identifier: MIT */
/*
 * The growth rule of src/common as libgpuspy links it, for the Python
 * tests through ctypes: the addresses of its functions and the size of
 * its state, which torch_probe.c gives the PyTorch view.
 */
#include <stdint.h>

#include "growth.h"

void growth_abi(uintptr_t out[4]);

void growth_abi(uintptr_t out[4])
{
	out[0] = (uintptr_t)growth_init;
	out[1] = (uintptr_t)growth_push;
	out[2] = (uintptr_t)growth_judge;
	out[3] = sizeof(struct gs_growth);
}
