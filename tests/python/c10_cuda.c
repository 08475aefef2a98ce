/* SPDX-License-Identifier: MIT */
/* Named libc10_cuda.so, loaded by tests/python/fake_torch: how libgpuspy
 * tells a process that has PyTorch's CUDA library (src/preload/torch_probe.c). */
int gpuspy_fake_c10_cuda;
