/* SPDX-License-Identifier: MIT */
/* A library that does nothing: what 'gpuspy run' preloads in test_run.py,
 * where the real libgpuspy.so may not exist yet and is not under test. */
int gpuspy_test_fakepreload;
