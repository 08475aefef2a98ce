/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of gpuspy_read, validate.c: each check of the kit, and the
 * one line it leaves: "FILE: PATH.KEY: what is wrong".
 */
#include "read_test.h"

static json_t *parse(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);

	assert_non_null(j);
	return j;
}

static void test_validate_member(void **state)
{
	struct rd_error err = { "" };
	struct vctx v = { .file = "f.json", .err = &err, .where = "sites[3]" };
	json_t *o = parse("{\"a\": 1, \"b\": \"x\", \"t\": false}");
	json_t *j;

	assert_int_equal(validate_member(&v, o, "a", true, JSON_INTEGER, &j), 0);
	assert_int_equal(json_integer_value(j), 1);
	/* JSON_TRUE stands for either boolean */
	assert_int_equal(validate_member(&v, o, "t", true, JSON_TRUE, &j), 0);
	assert_non_null(j);
	/* absent and optional: no error, no value */
	assert_int_equal(validate_member(&v, o, "zz", false, JSON_STRING, &j), 0);
	assert_null(j);
	assert_int_equal(validate_member(&v, o, "zz", true, JSON_STRING, &j), -EINVAL);
	assert_string_equal(err.msg, "f.json: sites[3].zz: missing");
	assert_int_equal(validate_member(&v, o, "b", true, JSON_ARRAY, &j), -EINVAL);
	assert_string_equal(err.msg, "f.json: sites[3].b: expected an array, got a string");
	json_decref(o);
}

static void test_validate_int(void **state)
{
	struct rd_error err = { "" };
	struct vctx v = { .file = "f.json", .err = &err };
	json_t *o = parse("{\"n\": -3, \"m\": 70, \"r\": 1.5}");
	int64_t x = 42;

	assert_int_equal(validate_int(&v, o, "m", true, 0, 100, &x), 0);
	assert_int_equal(x, 70);
	/* absent: left untouched */
	assert_int_equal(validate_int(&v, o, "zz", false, 0, 100, &x), 0);
	assert_int_equal(x, 70);
	assert_int_equal(validate_int(&v, o, "m", true, 0, 50, &x), -EINVAL);
	assert_string_equal(err.msg, "f.json: m: 70 is out of range [0, 50]");
	assert_int_equal(validate_count(&v, o, "n", &x), -EINVAL);
	assert_string_equal(err.msg, "f.json: n: -3 is negative");
	assert_int_equal(validate_count(&v, o, "r", &x), -EINVAL);
	assert_string_equal(err.msg, "f.json: r: expected an integer, got a real number");
	json_decref(o);
}

static void test_validate_str_time(void **state)
{
	struct rd_error err = { "" };
	struct vctx v = { .file = "f.json", .err = &err, .where = "python" };
	json_t *o = parse("{\"s\": \"abc\", \"e\": \"\", \"t\": 12.5, \"neg\": -1, \"bad\": []}");
	char *s = NULL;
	double t = -1;

	assert_int_equal(validate_str(&v, o, "s", true, true, &s), 0);
	assert_string_equal(s, "abc");
	free(s);
	s = NULL;
	assert_int_equal(validate_str(&v, o, "e", true, false, &s), 0);
	assert_string_equal(s, "");
	free(s);
	s = NULL;
	assert_int_equal(validate_str(&v, o, "e", true, true, &s), -EINVAL);
	assert_null(s);
	assert_string_equal(err.msg, "f.json: python.e: empty string");
	assert_int_equal(validate_time(&v, o, "t", true, &t), 0);
	assert_true(t == 12.5);
	assert_int_equal(validate_time(&v, o, "neg", true, &t), -EINVAL);
	assert_string_equal(err.msg, "f.json: python.neg: negative time");
	assert_int_equal(validate_number(&v, o, "bad"), -EINVAL);
	assert_string_equal(err.msg, "f.json: python.bad: expected a number, got an array");
	assert_int_equal(validate_time(&v, o, "zz", true, &t), -EINVAL);
	assert_string_equal(err.msg, "f.json: python.zz: missing");
	json_decref(o);
}

static void test_validate_element_counts(void **state)
{
	struct rd_error err = { "" };
	struct vctx v = { .file = "f.json", .err = &err }, sub = v;
	json_t *o = parse("{\"doors\": {\"a\": 1, \"b\": -2}, \"arr\": [{}, 3]}");
	json_t *arr = json_object_get(o, "arr");
	char where[64];

	assert_int_equal(validate_counts_object(&v, o, "doors"), -EINVAL);
	assert_string_equal(err.msg, "f.json: doors.b: -2 is negative");
	assert_int_equal(validate_counts_object(&v, o, "absent"), 0);
	assert_int_equal(
		validate_element(&sub, json_array_get(arr, 0), where, sizeof(where), "arr[%d]", 0),
		0);
	assert_string_equal(sub.where, "arr[0]");
	assert_int_equal(
		validate_element(&sub, json_array_get(arr, 1), where, sizeof(where), "arr[%d]", 1),
		-EINVAL);
	assert_string_equal(err.msg, "f.json: arr[1]: expected an object, got an integer");
	json_decref(o);
}

static void test_validate_format(void **state)
{
	struct rd_error err = { "" };
	struct vctx v = { .file = "f.json", .err = &err };
	json_t *ok = parse("{\"format\": \"gpuspy-x/1\"}");
	json_t *other = parse("{\"format\": \"gpuspy-x/2\"}");
	json_t *none = parse("{}");
	json_t *arr = parse("[1]");

	assert_int_equal(validate_format(&v, ok, "thing", "gpuspy-x/1"), 0);
	assert_int_equal(validate_format(&v, other, "thing", "gpuspy-x/1"), -EINVAL);
	assert_string_equal(err.msg, "f.json: unsupported format \"gpuspy-x/2\" (this gpuspy "
				     "reads \"gpuspy-x/1\"; a newer gpuspy wrote it)");
	/* an older one, or another kind, is not said to be newer */
	json_decref(other);
	other = parse("{\"format\": \"gpuspy-x/0\"}");
	assert_int_equal(validate_format(&v, other, "thing", "gpuspy-x/1"), -EINVAL);
	assert_string_equal(
		err.msg,
		"f.json: unsupported format \"gpuspy-x/0\" (this gpuspy reads \"gpuspy-x/1\")");
	assert_int_equal(validate_format(&v, none, "thing", "gpuspy-x/1"), -EINVAL);
	assert_string_equal(err.msg, "f.json: format: missing");
	assert_int_equal(validate_format(&v, arr, "thing", "gpuspy-x/1"), -EINVAL);
	assert_string_equal(err.msg, "f.json: not a gpuspy thing (the top level is an array)");
	json_decref(ok);
	json_decref(other);
	json_decref(none);
	json_decref(arr);
}

static void test_validate_read_file(void **state)
{
	struct rd_error err = { "" };
	struct stat st;
	char *buf = NULL;
	size_t len = 0;

	assert_int_equal(validate_read_file(fixture("process/node7-4242/report.json"), &buf, &len,
					    &st, &err),
			 0);
	assert_true(len > 0);
	assert_int_equal((size_t)st.st_size, len);
	free(buf);
	assert_int_equal(validate_read_file(fixture("process"), &buf, &len, &st, &err), -EISDIR);
	assert_non_null(strstr(err.msg, "is a directory, not a report"));
	assert_int_equal(validate_read_file("/dev/null", &buf, &len, &st, &err), -EINVAL);
	assert_string_equal(err.msg, "/dev/null: not a regular file");
	assert_int_equal(validate_read_file("/nonexistent/gpuspy.json", &buf, &len, &st, &err),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate_member),
		cmocka_unit_test(test_validate_int),
		cmocka_unit_test(test_validate_str_time),
		cmocka_unit_test(test_validate_element_counts),
		cmocka_unit_test(test_validate_format),
		cmocka_unit_test(test_validate_read_file),
	};

	if (read_test_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
