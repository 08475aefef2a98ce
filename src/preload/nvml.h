/* SPDX-License-Identifier: MIT */
/* nvml.c: what NVML says each GPU and process holds */
#ifndef GPUSPY_NVML_H
#define GPUSPY_NVML_H

#include <stdio.h>

void nvml_write(FILE *f);

#endif /* GPUSPY_NVML_H */
