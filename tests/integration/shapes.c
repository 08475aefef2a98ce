/* SPDX-License-Identifier: MIT */
/*
 * Memory over time in one shape, for tests/integration/shapes.py: N
 * periods of PERIOD_MS, each allocation from the function named after the
 * shape, so that the test finds its site by name.  At the end one line on
 * stdout, "shapes: done", before the program exits: a growth notice must
 * come before it.
 *   per_step   keeps 1 MiB each period
 *   epoch      keeps 8 MiB each period (an epoch: flat between)
 *   cycle      64 MiB allocated in one period, freed in the next
 *   warm_up    keeps 64 MiB in each of the first 3 periods, then nothing
 *   warm_up8   keeps 512 KiB in each of the first 8 periods, then nothing:
 *              flagged while it rises (a leak at every sample), then
 *              grew, then stopped
 *   fill16     a cache that keeps 32 MiB in each of the first 16 periods,
 *              then nothing: the same
 *   cache      fills 4 slots of 32 MiB (one each 5 periods), then
 *              replaces the oldest every period: bounded
 *   big_once   one 1 GiB allocation in the third period
 *   marked     keeps 2 MiB each period and marks it (gpuspy_mark); in
 *              between, ten times a period, holds a scratch of 256 to 512
 *              MiB from the same site, freed before each mark
 * Usage: shapes SHAPE N PERIOD_MS
 */
#include <time.h>

#include "prog.h"

void per_step(int i);
void epoch(int i);
void cycle(int i);
void warm_up(int i);
void warm_up8(int i);
void fill16(int i);
void cache(int i);
void big_once(int i);
void *marked_hold(size_t size);

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *keep(size_t size)
{
	void *p;

	rt_ok(cudaMalloc(&p, size), "cudaMalloc");
	return p;
}

__attribute__((noinline)) void per_step(int i)
{
	(void)i;
	keep(1 << 20);
}

__attribute__((noinline)) void epoch(int i)
{
	(void)i;
	keep(8 << 20);
}

__attribute__((noinline)) void cycle(int i)
{
	static void *p;

	if (i % 2 == 0) {
		p = keep(64 << 20);
	} else {
		rt_ok(cudaFree(p), "cudaFree");
	}
}

__attribute__((noinline)) void warm_up(int i)
{
	if (i < 3)
		keep(64 << 20);
}

__attribute__((noinline)) void warm_up8(int i)
{
	if (i < 8)
		keep(512 << 10);
}

__attribute__((noinline)) void fill16(int i)
{
	if (i < 16)
		keep(32 << 20);
}

__attribute__((noinline)) void cache(int i)
{
	static void *slot[4];
	static int filled, oldest;

	if (filled < 4) {
		if (i % 5 == 0)
			slot[filled++] = keep(32 << 20);
		return;
	}
	rt_ok(cudaFree(slot[oldest]), "cudaFree");
	slot[oldest] = keep(32 << 20);
	oldest = (oldest + 1) % 4;
}

__attribute__((noinline)) void big_once(int i)
{
	if (i == 2)
		keep(1ULL << 30);
}

__attribute__((noinline)) void *marked_hold(size_t size)
{
	return keep(size);
}

/* gpuspy_mark when libgpuspy.so is preloaded: looked up, not linked. */
static void mark(const char *label)
{
	int (*fn)(const char *) = NULL;
	void *p = dlsym(RTLD_DEFAULT, "gpuspy_mark");

	memcpy(&fn, &p, sizeof(p));
	if (fn)
		fn(label);
}

/* One call site for what is kept and for the scratch: one series. */
static void marked(long period_ms)
{
	static unsigned long long seed = 12345;

	for (int k = 0; k <= 10; k++) {
		size_t size = 2 << 20;
		void *p;

		if (k) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			size = (256ULL << 20) + (seed >> 33) % (256ULL << 20);
		}
		p = marked_hold(size);
		if (!k)
			continue;
		sleep_ms(period_ms / 10);
		rt_ok(cudaFree(p), "cudaFree");
	}
	mark("epoch");
}

int main(int argc, char **argv)
{
	const char *shape = argc > 1 ? argv[1] : "";
	int n = (int)arg_size(argc, argv, 2);
	long ms = (long)arg_size(argc, argv, 3);
	static const struct {
		const char *name;
		void (*fn)(int i);
	} shapes[] = {
		{ "per_step", per_step }, { "epoch", epoch },	{ "cycle", cycle },
		{ "warm_up", warm_up },	  { "cache", cache },	{ "big_once", big_once },
		{ "warm_up8", warm_up8 }, { "fill16", fill16 },
	};
	void (*fn)(int i) = NULL;

	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
		if (strcmp(shape, shapes[k].name) == 0)
			fn = shapes[k].fn;
	if (!fn && strcmp(shape, "marked") != 0) {
		fprintf(stderr, "shapes: unknown shape '%s'\n", shape);
		return PROG_FAIL;
	}
	for (int i = 0; i < n; i++) {
		if (fn) {
			fn(i);
			sleep_ms(ms);
		} else {
			marked(ms);
		}
	}
	printf("shapes: done\n");
	fflush(stdout);
	return 0;
}
