/* SPDX-License-Identifier: MIT */
/*
 * The live table alone: linked with table.c and the locks it takes, and
 * nothing else of the library (tests/unit/meson.build).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core.h"
#include "table.h"

static struct gs_alloc *entry(uint64_t addr, enum gs_space space, uint64_t size)
{
	struct gs_alloc *a = calloc(1, sizeof(*a));

	assert_non_null(a);
	a->addr = addr;
	a->space = space;
	a->size = size;
	return a;
}

static void test_insert_find_remove(void **state)
{
	int err;

	assert_null(table_insert(entry(0x1000, GS_SPACE_DEVPTR, 10), &err));
	assert_int_equal(err, 0);
	/* Same number, other namespace: a different allocation. */
	assert_null(table_insert(entry(0x1000, GS_SPACE_HANDLE, 20), &err));
	assert_null(table_remove(GS_SPACE_DEVPTR, 0x2000));

	struct gs_alloc *a = table_remove(GS_SPACE_DEVPTR, 0x1000);
	assert_non_null(a);
	assert_int_equal(a->size, 10);
	free(a);
	assert_null(table_remove(GS_SPACE_DEVPTR, 0x1000));
	a = table_remove(GS_SPACE_HANDLE, 0x1000);
	assert_non_null(a);
	assert_int_equal(a->size, 20);
	free(a);
}

static void test_insert_displaces_same_key(void **state)
{
	struct gs_alloc *old;
	int err;

	assert_null(table_insert(entry(0x3000, GS_SPACE_DEVPTR, 1), &err));
	old = table_insert(entry(0x3000, GS_SPACE_DEVPTR, 2), &err);
	assert_non_null(old);
	assert_int_equal(old->size, 1);
	free(old);
	old = table_remove(GS_SPACE_DEVPTR, 0x3000);
	assert_int_equal(old->size, 2);
	free(old);
}

static void test_rekey(void **state)
{
	struct gs_alloc *a;
	int err;

	assert_null(table_insert(entry(7, GS_SPACE_HANDLE, 2 << 20), &err));
	assert_int_equal(table_rekey(GS_SPACE_HANDLE, 7, GS_SPACE_ORPHAN, 1), 0);
	assert_null(table_remove(GS_SPACE_HANDLE, 7));
	a = table_remove(GS_SPACE_ORPHAN, 1);
	assert_non_null(a);
	assert_int_equal(a->size, 2 << 20);
	free(a);
	assert_int_equal(table_rekey(GS_SPACE_HANDLE, 99, GS_SPACE_ORPHAN, 2), -ENOENT);
}

/*
 * Far more entries than a shard's first buckets, so that every shard
 * grows several times with entries in it: keys of every shape the hooks
 * give (2 MiB-aligned device pointers, 512-byte aligned ones, small VMM
 * handles, the same number in each space), all found until removed, the
 * table empty after.  Then the same keys again, into the grown arrays.
 */
#define MANY 40000

static uint64_t many_key(unsigned i)
{
	switch (i % 4) {
	case 0:
		return 0x7f0000000000ull + (uint64_t)(i / 4) * (2u << 20);
	case 1:
		return 0x200000000ull + (uint64_t)(i / 4) * 512;
	case 2:
		return i / 4 + 1; /* a handle */
	default:
		return 0x7f0000000000ull + (uint64_t)(i / 4) * (2u << 20); /* case 0's, orphaned */
	}
}

static enum gs_space many_space(unsigned i)
{
	static const enum gs_space sp[4] = { GS_SPACE_DEVPTR, GS_SPACE_DEVPTR, GS_SPACE_HANDLE,
					     GS_SPACE_ORPHAN };

	return sp[i % 4];
}

static void test_many_entries(void **state)
{
	struct gs_site *tag = (struct gs_site *)&tag; /* any non-NULL pointer */
	int err;

	for (int round = 0; round < 2; round++) {
		for (unsigned i = 0; i < MANY; i++) {
			struct gs_alloc *a = entry(many_key(i), many_space(i), i);

			a->site = tag;
			assert_null(table_insert(a, &err));
			assert_int_equal(err, 0);
		}
		for (unsigned i = 0; i < MANY; i++)
			assert_ptr_equal(table_site(many_space(i), many_key(i)), tag);
		/* keys that are not there (no key above has bit 62) */
		for (unsigned i = 0; i < MANY; i += 7)
			assert_null(table_site(many_space(i), many_key(i) | 1ull << 62));
		/* removed in another order than inserted */
		for (unsigned i = MANY; i-- > 0;) {
			struct gs_alloc *a = table_remove(many_space(i), many_key(i));

			assert_non_null(a);
			assert_int_equal(a->size, i);
			assert_null(table_remove(many_space(i), many_key(i)));
			free(a);
		}
		for (unsigned i = 0; i < MANY; i += 97)
			assert_null(table_site(many_space(i), many_key(i)));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insert_find_remove),
		cmocka_unit_test(test_insert_displaces_same_key),
		cmocka_unit_test(test_rekey),
		cmocka_unit_test(test_many_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
