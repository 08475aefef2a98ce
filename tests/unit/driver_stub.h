/* SPDX-License-Identifier: MIT */
/*
 * driver_stub.c: what gpuspy asks the real driver (driver.h), answered
 * without one, for the unit tests that link the recorder: no GPU, no
 * capture, no graph memory, and one current device, UNIT_DEVICE.
 */
#ifndef GPUSPY_UNIT_DRIVER_STUB_H
#define GPUSPY_UNIT_DRIVER_STUB_H

/* The current device: a number that no default would give, so that a
 * test sees the recorder asked. */
#define UNIT_DEVICE 3

#endif /* GPUSPY_UNIT_DRIVER_STUB_H */
