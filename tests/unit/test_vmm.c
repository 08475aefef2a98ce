/* SPDX-License-Identifier: MIT */
/*
 * vmm.c: the driver frees VMM memory only once its handle is released and
 * its last mapping gone, so a release while mapped is deferred until the
 * last unmap, and the handle number may meanwhile be handed out again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core.h"
#include "counters.h"
#include "record.h"
#include "table.h"
#include "vmm.h"

#define GRAIN (2ull << 20)

static struct gs_counters *vmm = &gs_totals.kind[GS_KIND_VMM];

/* The kind's frees, summed over the stripes, as the report reads them. */
static long long vmm_frees(void)
{
	struct gs_count_snap o;

	counters_read(vmm, &o);
	return o.frees;
}

static void create(uint64_t handle, uint64_t size)
{
	record_alloc(GS_API_cuMemCreate, GS_DOOR_DRIVER, GS_KIND_VMM, GS_SPACE_HANDLE, handle, size,
		     0, 0);
}

/* cuMemRelease's bracket, as its hook has it (shapes.h); returns deferred. */
static bool release(uint64_t handle, bool ok)
{
	bool deferred;
	uint64_t orphan = 0;
	struct gs_alloc *a = vmm_release_begin(handle, &deferred, &orphan);

	vmm_release_end(handle, a, deferred, orphan, ok);
	return deferred;
}

static void test_release_unmapped_frees_now(void **state)
{
	long long live = counters_live_bytes(vmm);

	(void)state;
	create(0x100, GRAIN);
	assert_int_equal(counters_live_bytes(vmm), live + GRAIN);
	assert_false(release(0x100, true));
	assert_int_equal(counters_live_bytes(vmm), live);
}

static void test_release_while_mapped_waits_for_last_unmap(void **state)
{
	long long live = counters_live_bytes(vmm);

	(void)state;
	create(0x200, 2 * GRAIN);
	vmm_on_map(0x7000000000, GRAIN, 0x200);
	vmm_on_map(0x7000200000, GRAIN, 0x200);
	assert_true(release(0x200, true));
	/* released, still mapped twice: the memory is alive */
	assert_int_equal(counters_live_bytes(vmm), live + 2 * GRAIN);
	assert_null(table_remove(GS_SPACE_HANDLE, 0x200)); /* no longer under the handle */
	vmm_on_unmap(0x7000000000, GRAIN);
	assert_int_equal(counters_live_bytes(vmm), live + 2 * GRAIN);
	vmm_on_unmap(0x7000200000, GRAIN);
	assert_int_equal(counters_live_bytes(vmm), live);
}

/* The driver reuses the released handle's number while the old memory is
 * still mapped: both are live, and each goes at its own time. */
static void test_handle_reused_while_orphan_mapped(void **state)
{
	long long live = counters_live_bytes(vmm);

	(void)state;
	create(0x300, GRAIN);
	vmm_on_map(0x7100000000, GRAIN, 0x300);
	assert_true(release(0x300, true));
	create(0x300, 3 * GRAIN); /* the new one, same number */
	assert_int_equal(counters_live_bytes(vmm), live + 4 * GRAIN);
	vmm_on_unmap(0x7100000000, GRAIN); /* the old one's last mapping */
	assert_int_equal(counters_live_bytes(vmm), live + 3 * GRAIN);
	assert_false(release(0x300, true));
	assert_int_equal(counters_live_bytes(vmm), live);
}

/* A release the driver refused: the handle still owns its memory, and a
 * later release and unmap free it once. */
static void test_failed_release_keeps_handle(void **state)
{
	long long live = counters_live_bytes(vmm);
	long long frees = vmm_frees();

	(void)state;
	create(0x400, GRAIN);
	vmm_on_map(0x7200000000, GRAIN, 0x400);
	assert_true(release(0x400, false));
	assert_int_equal(counters_live_bytes(vmm), live + GRAIN);
	assert_true(release(0x400, true));
	vmm_on_unmap(0x7200000000, GRAIN);
	assert_int_equal(counters_live_bytes(vmm), live);
	assert_int_equal(vmm_frees(), frees + 1);
}

/* One unmap call covering two mappings laid end to end. */
static void test_unmap_range_of_two(void **state)
{
	long long live = counters_live_bytes(vmm);

	(void)state;
	create(0x500, GRAIN);
	create(0x501, GRAIN);
	vmm_on_map(0x7300000000, GRAIN, 0x500);
	vmm_on_map(0x7300200000, GRAIN, 0x501);
	assert_true(release(0x500, true));
	assert_true(release(0x501, true));
	assert_int_equal(counters_live_bytes(vmm), live + 2 * GRAIN);
	vmm_on_unmap(0x7300000000, 2 * GRAIN);
	assert_int_equal(counters_live_bytes(vmm), live);
	assert_int_equal(atomic_load(&gs_totals.vmm_mapped_bytes), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_release_unmapped_frees_now),
		cmocka_unit_test(test_release_while_mapped_waits_for_last_unmap),
		cmocka_unit_test(test_handle_reused_while_orphan_mapped),
		cmocka_unit_test(test_failed_release_keeps_handle),
		cmocka_unit_test(test_unmap_range_of_two),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
