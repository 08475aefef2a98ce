/* SPDX-License-Identifier: MIT */
/* The native library that a pretend framework of tests/python/fake_fw
 * loads on import, under the file name of the real framework's (built as
 * libpaddle.so, xla_extension.so and core.cpython-*.so): what libgpuspy
 * looks for before it asks a framework for its counters
 * (src/preload/3-out/torch_probe.c, fw_libs). */
int gpuspy_fake_fw_native;
