/* SPDX-License-Identifier: MIT */
/* Call-site accounting, the recorder and the peak, without any CUDA. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "conf.h"
#include "core.h"
#include "counters.h"
#include "driver.h"
#include "driver_stub.h"
#include "locks.h"
#include "peak.h"
#include "pystack.h"
#include "record.h"
#include "sites.h"
#include "state.h"
#include "table.h"
#include "writer.h"

static void test_site_intern_is_stable(void **state)
{
	uintptr_t s1[3] = { 0x401000, 0x401100, 0x401200 };
	uintptr_t s2[3] = { 0x401000, 0x401100, 0x401300 };
	struct gs_site *a =
		site_intern(GS_API_cudaMalloc, GS_KIND_DEVICE, GS_DOOR_RUNTIME, s1, 3, NULL, 0);
	struct gs_site *b =
		site_intern(GS_API_cudaMalloc, GS_KIND_DEVICE, GS_DOOR_RUNTIME, s1, 3, NULL, 0);
	struct gs_site *c =
		site_intern(GS_API_cudaMalloc, GS_KIND_DEVICE, GS_DOOR_RUNTIME, s2, 3, NULL, 0);
	struct gs_site *d =
		site_intern(GS_API_cudaMalloc, GS_KIND_DEVICE, GS_DOOR_RUNTIME, s1, 2, NULL, 0);
	struct gs_site *e =
		site_intern(GS_API_cuMemAlloc_v2, GS_KIND_DEVICE, GS_DOOR_DRIVER, s1, 3, NULL, 0);

	assert_non_null(a);
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, c);
	assert_ptr_not_equal(a, d); /* a shorter stack is another site */
	assert_ptr_not_equal(a, e); /* another api is another site */
	assert_int_equal(a->depth, 3);
	assert_int_equal(a->pydepth, 0);

	/* The same native path from two Python lines: two sites. */
	struct gs_pyraw py1[1] = { { 0x7000, 10, 0x8000 } }, py2[1] = { { 0x7000, 12, 0x8000 } };
	struct gs_site *f =
		site_intern(GS_API_cudaMalloc, GS_KIND_DEVICE, GS_DOOR_RUNTIME, s1, 3, py1, 1);
	struct gs_site *g =
		site_intern(GS_API_cudaMalloc, GS_KIND_DEVICE, GS_DOOR_RUNTIME, s1, 3, py2, 1);
	assert_ptr_not_equal(f, a);
	assert_ptr_not_equal(f, g);
	assert_ptr_equal(
		f, site_intern(GS_API_cudaMalloc, GS_KIND_DEVICE, GS_DOOR_RUNTIME, s1, 3, py1, 1));
	assert_int_equal(f->pydepth, 1);
	assert_int_equal(a->frames[0].module, -1); /* no module maps 0x401000 here */
}

static void test_site_accounting_and_peak(void **state)
{
	uintptr_t pcs[1] = { 0x12345 };
	struct gs_site *s =
		site_intern(GS_API_cudaMalloc, GS_KIND_DEVICE, GS_DOOR_RUNTIME, pcs, 1, NULL, 0);

	struct gs_count_snap k;

	counters_alloc(&s->c, 100);
	counters_alloc(&s->c, 50);
	counters_free(&s->c, 100);
	counters_alloc(&s->c, 10);
	counters_read(&s->c, &k);
	assert_int_equal(k.live_bytes, 60);
	assert_int_equal(k.live_allocs, 2);
	assert_int_equal(k.peak_bytes, 150);
	assert_int_equal(k.alloc_bytes, 160);
	assert_int_equal(k.allocs, 3);
	assert_int_equal(k.freed_bytes, 100);
	assert_int_equal(k.frees, 1);
}

/* A kind's totals, summed over the stripes, as the report reads them. */
static long long total_allocs(struct gs_counters *k)
{
	struct gs_count_snap o;

	counters_read(k, &o);
	return o.allocs;
}

static long long total_frees(struct gs_counters *k)
{
	struct gs_count_snap o;

	counters_read(k, &o);
	return o.frees;
}

/* record.c end to end: an allocation, a failed free, a real free. */
static void test_record_alloc_free(void **state)
{
	struct gs_counters *k = &gs_totals.kind[GS_KIND_MANAGED];
	long long base_allocs = total_allocs(k);
	struct gs_alloc *a;

	record_alloc(GS_API_cudaMallocManaged, GS_DOOR_RUNTIME, GS_KIND_MANAGED, GS_SPACE_DEVPTR,
		     0xabc000, 4096, GS_DEVICE_CURRENT, 0);
	assert_int_equal(counters_live_bytes(k), 4096);
	assert_int_equal(total_allocs(k), base_allocs + 1);

	a = record_free_begin(GS_SPACE_DEVPTR, 0xabc000);
	assert_non_null(a);
	assert_int_equal(a->device, UNIT_DEVICE);
	record_free_end(a, 0xabc000, false); /* the driver refused: still live */
	assert_int_equal(counters_live_bytes(k), 4096);

	a = record_free_begin(GS_SPACE_DEVPTR, 0xabc000);
	assert_non_null(a);
	record_free_end(a, 0xabc000, true);
	assert_int_equal(counters_live_bytes(k), 0);
	assert_int_equal(total_frees(k), 1);
	assert_int_equal(k->peak_bytes, 4096);

	long long untracked = gs_totals.untracked_frees;
	record_free_end(record_free_begin(GS_SPACE_DEVPTR, 0xdead000), 0xdead000, true);
	assert_int_equal(gs_totals.untracked_frees, untracked + 1);
}

/* The copy at the high-water mark is within 1% of the true peak and adds
 * up, site by site, to what was live then. */
static void test_peak_snapshot_within_one_percent(void **state)
{
	long long live0 = atomic_load(&gs_totals.hot.gpu_live_bytes), live = live0, peak = live0;
	const struct gs_peak_snap *p;
	uint64_t addr = 0x500000000000ull;
	unsigned seed = 7;
	long long sum = 0, extra = -live0;

	/* Earlier tests raised some sites' counters without the totals. */
	for (struct gs_site *st = site_list(); st; st = st->next_all)
		if (st->kind != GS_KIND_PINNED && counters_live_bytes(&st->c) > 0)
			extra += counters_live_bytes(&st->c);

	/* A random walk of allocations and frees on a stack of addresses. */
	for (int i = 0, top = 0; i < 20000; i++) {
		seed = seed * 1103515245u + 12345u;
		if (top == 0 || (seed >> 16) % 3 != 0) {
			uint64_t size = 4096 + ((seed >> 8) % 64) * 65536;

			record_alloc(GS_API_cuMemAlloc_v2, GS_DOOR_DRIVER, GS_KIND_DEVICE,
				     GS_SPACE_DEVPTR, addr + (uint64_t)top * 0x10000000ull, size, 1,
				     0);
			top++;
			live += (long long)size;
		} else {
			struct gs_alloc *a;

			top--;
			a = record_free_begin(GS_SPACE_DEVPTR,
					      addr + (uint64_t)top * 0x10000000ull);
			assert_non_null(a);
			live -= (long long)a->size;
			record_free_end(a, 0, true);
		}
		if (live > peak)
			peak = live;
	}
	gs_lock(&gs_peak_lock);
	p = peak_snapshot();
	assert_non_null(p);
	assert_true(p->bytes <= peak);
	assert_true(p->bytes * 101 >= peak * 100);
	for (unsigned i = 0; i < p->n; i++)
		sum += p->sites[i].live_bytes;
	assert_int_equal(sum, p->bytes + extra);
	assert_int_equal(p->devices[gs_device_index(1)] + p->devices[gs_device_index(3)] +
				 p->devices[gs_device_index(0)],
			 p->bytes);
	gs_unlock(&gs_peak_lock);
	assert_int_equal(atomic_load(&gs_totals.gpu_peak_bytes) >= peak, 1);
}

#define THREADS 8
#define PAIRS	10000

static void *worker(void *arg)
{
	uint64_t base = ((uint64_t)(uintptr_t)arg + 1) << 32;

	for (uint64_t i = 0; i < PAIRS; i++) {
		uint64_t addr = base + (i % 64) * 4096;

		record_alloc(GS_API_cuMemAlloc_v2, GS_DOOR_DRIVER, GS_KIND_DEVICE, GS_SPACE_DEVPTR,
			     addr, 512, 0, 0);
		record_free_end(record_free_begin(GS_SPACE_DEVPTR, addr), addr, true);
	}
	return NULL;
}

static void test_threads_exact_totals(void **state)
{
	struct gs_counters *k = &gs_totals.kind[GS_KIND_DEVICE];
	long long allocs0 = total_allocs(k), frees0 = total_frees(k),
		  live0 = counters_live_bytes(k);
	pthread_t t[THREADS];

	for (uintptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(total_allocs(k) - allocs0, THREADS * PAIRS);
	assert_int_equal(total_frees(k) - frees0, THREADS * PAIRS);
	assert_int_equal(counters_live_bytes(k), live0);
	assert_int_equal(gs_totals.replaced, 0);
}

/* The snapshot thread reads every site's counters and writes files while
 * eight threads allocate and free: run under TSan by scripts/sanitize. */
static void test_writer_races_allocators(void **state)
{
	struct gs_counters *k = &gs_totals.kind[GS_KIND_DEVICE];
	long long allocs0 = total_allocs(k);
	pthread_t t[THREADS];

	/* Started at the first allocation, at the default interval: restart
	 * it faster (stopping joins it, so the change races with nothing). */
	writer_stop();
	gs_config.interval_us = 200;
	writer_start();
	for (uintptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	writer_stop();
	assert_int_equal(total_allocs(k) - allocs0, THREADS * PAIRS);
	assert_true(atomic_load(&gs_state.tracking));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_site_intern_is_stable),
		cmocka_unit_test(test_site_accounting_and_peak),
		cmocka_unit_test(test_record_alloc_free),
		cmocka_unit_test(test_threads_exact_totals),
		cmocka_unit_test(test_peak_snapshot_within_one_percent),
		cmocka_unit_test(test_writer_races_allocators),
	};
	int rc;

	/* Nothing of this process is worth a report at exit. */
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	atomic_store(&gs_state.silent, true);
	return rc;
}
