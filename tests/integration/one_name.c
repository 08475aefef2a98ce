/* SPDX-License-Identifier: MIT */
/*
 * Five shapes of memory in one process, for tests/integration/one_name.py:
 * every surface of gpuspy must name the growing site alike, and call only
 * it growing.  Built without -rdynamic, every allocating function static:
 * only the executable's .symtab names them.
 *
 *   staircase  an epoch leak: each epoch keeps 4 MiB (the line marked
 *              STAIRCASE-KEEP) and, from another line of the same function
 *              (STAIRCASE-TEMP), holds a 1 MiB scratch freed before the
 *              epoch ends: one site of two lines, the growing one leads
 *   warm_up    8 x 512 KiB in the first 400 ms, then flat to the end
 *   sawtooth   16 MiB allocated and freed every 100 ms
 *   big_once   256 MiB for 300 ms in the second epoch
 *   leak_once  the standard leak: 3 x 1 MiB at the start, never freed
 *
 * After EPOCHS epochs of EPOCH_MS it prints "one_name: ready" and waits
 * for its standard input to close (the test scrapes /metrics then), and
 * exits with what the staircase and leak_once hold still live.
 * Usage: one_name EPOCHS EPOCH_MS
 */
#include <time.h>
#include <unistd.h>

#include "prog.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* inline, so that each shape's own function is the innermost frame, the
 * one its site is named after */
#define get(size)                                                                                  \
	({                                                                                         \
		void *p_;                                                                          \
		rt_ok(cudaMalloc(&p_, (size)), "cudaMalloc");                                      \
		p_;                                                                                \
	})
#define put(p) rt_ok(cudaFree(p), "cudaFree")

__attribute__((noinline)) static void *staircase(int tick, int ticks_per_epoch, void **scratch)
{
	void *kept = NULL;

	if (tick % ticks_per_epoch == 0)
		kept = get(4 << 20); /* STAIRCASE-KEEP */
	if (tick % ticks_per_epoch == 1)
		*scratch = get(1 << 20); /* STAIRCASE-TEMP */
	if (tick % ticks_per_epoch == ticks_per_epoch - 1 && *scratch) {
		put(*scratch);
		*scratch = NULL;
	}
	return kept;
}

__attribute__((noinline)) static void warm_up(int tick)
{
	if (tick < 8)
		get(512 << 10); /* WARM-UP */
}

__attribute__((noinline)) static void sawtooth(void)
{
	put(get(16 << 20)); /* SAWTOOTH */
}

__attribute__((noinline)) static void big_once(int tick, int ticks_per_epoch, void **big)
{
	if (tick == ticks_per_epoch + 2)
		*big = get(256 << 20); /* BIG-ONCE */
	if (tick == ticks_per_epoch + 5 && *big) {
		put(*big);
		*big = NULL;
	}
}

__attribute__((noinline)) static void leak_once(void)
{
	for (int i = 0; i < 3; i++)
		get(1 << 20); /* LEAK-ONCE */
}

int main(int argc, char **argv)
{
	int epochs = (int)arg_size(argc, argv, 1);
	long epoch_ms = (long)arg_size(argc, argv, 2);
	/* ticks of 50 ms; warm_up's 8 allocations in the first 400 ms */
	int per_epoch = (int)(epoch_ms / 50);
	void *scratch = NULL, *big = NULL;
	char c;

	if (per_epoch < 4) {
		fprintf(stderr, "one_name: epochs of at least 200 ms\n");
		return PROG_FAIL;
	}
	leak_once();
	for (int tick = 0; tick < epochs * per_epoch; tick++) {
		staircase(tick, per_epoch, &scratch);
		warm_up(tick);
		if (tick % 2 == 0)
			sawtooth();
		big_once(tick, per_epoch, &big);
		sleep_ms(50);
	}
	puts("one_name: ready");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
