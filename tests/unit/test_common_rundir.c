/* SPDX-License-Identifier: MIT */
/*
 * Runs (src/common/rundir.c): the ids and the command they are named
 * after, which run a process joins, and the latest pointer, written
 * atomically and read back only when it names a run directory beside it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "rundir.h"

/* 2026-12-01 13:45:02 UTC */
#define T 1796132702

static void check_id(const char *const *argv, size_t argc, const char *want)
{
	char buf[GS_RUN_ID_SIZE];

	assert_int_equal(rundir_id(buf, sizeof(buf), T, argv, argc, 4242), 0);
	assert_string_equal(buf, want);
	assert_true(rundir_id_valid(buf));
}

static void test_id(void **state)
{
	const char *py[] = { "/usr/bin/python3", "-u", "scripts/train.py", "--lr", "1e-3" };
	const char *mod[] = { "python3", "-m", "torch.distributed.run", "--nproc", "8" };
	const char *prog[] = { "./a.out" };
	const char *odd[] = { "/bin/my prog;rm -rf $HOME" };
	const char *dot[] = { ".hidden" };
	const char *none[] = { "" };
	char buf[GS_RUN_ID_SIZE];
	pid_t pid;

	check_id(py, 5, "20261201T134502Z-train.py-4242");
	check_id(mod, 5, "20261201T134502Z-torch.distributed.run-4242");
	check_id(prog, 1, "20261201T134502Z-a.out-4242");
	check_id(odd, 1, "20261201T134502Z-my_prog_rm_-rf__HOME-4242");
	check_id(dot, 1, "20261201T134502Z-_hidden-4242");
	check_id(none, 1, "20261201T134502Z-run-4242");
	check_id(NULL, 0, "20261201T134502Z-run-4242");
	assert_int_equal(rundir_id(buf, 20, T, py, 5, 4242), -ENAMETOOLONG);

	assert_int_equal(rundir_id_pid("20261201T134502Z-train.py-4242", &pid), 0);
	assert_int_equal(pid, 4242);
	assert_int_equal(rundir_id_command("20261201T134502Z-my-job-7", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "my-job");
	for (const char *const *bad =
		     (const char *const[]){ "latest", "..", "node7-4242", "20261201T134502Z-4242",
					    "20261201T134502Z--4242", "20261201-134502-x-1",
					    "20261201T134502Z-x-0", "20261201T134502Z-x/y-1",
					    "../20261201T134502Z-x-1", "20261201T134502Z-x-1/", "",
					    NULL };
	     *bad; bad++)
		if (rundir_id_valid(*bad))
			fail_msg("'%s' taken for a run id", *bad);
}

static void test_choose(void **state)
{
	const char *id = "20261201T134502Z-train.py-4242";
	const char *other = "20261201T134510Z-eval.py-4300";
	struct rundir_choice c;

	/* a run of its own, under the default */
	assert_int_equal(rundir_choose(NULL, NULL, NULL, "/home/u", id, &c), 0);
	assert_false(c.inherited);
	assert_string_equal(c.dir, "/home/u/gpuspy-out/20261201T134502Z-train.py-4242");
	assert_string_equal(c.output_dir, "/home/u/gpuspy-out");
	/* an explicit directory is the run directory, no latest there */
	assert_int_equal(rundir_choose("runs/a", NULL, NULL, "/home/u", id, &c), 0);
	assert_string_equal(c.dir, "/home/u/runs/a");
	assert_string_equal(c.output_dir, "");
	/* inherited, whatever the child's working directory */
	assert_int_equal(rundir_choose(NULL, other,
				       "/home/u/gpuspy-out/20261201T134510Z-eval.py-4300", "/tmp",
				       id, &c),
			 0);
	assert_true(c.inherited);
	assert_string_equal(c.id, other);
	assert_string_equal(c.dir, "/home/u/gpuspy-out/20261201T134510Z-eval.py-4300");
	assert_string_equal(c.output_dir, "/home/u/gpuspy-out");
	/* inherited into the same explicit directory */
	assert_int_equal(rundir_choose("runs/a", other, "/home/u/runs/a", "/home/u", id, &c), 0);
	assert_true(c.inherited);
	assert_string_equal(c.output_dir, "");
	/* a child told to write elsewhere starts a run of its own */
	assert_int_equal(rundir_choose("/x", other, "/home/u/runs/a", "/home/u", id, &c), 0);
	assert_false(c.inherited);
	assert_string_equal(c.id, id);
	assert_string_equal(c.dir, "/x");
	/* an inherited run that is not one is not taken */
	assert_int_equal(rundir_choose(NULL, "../../etc", "/home/u/x", "/home/u", id, &c), 0);
	assert_false(c.inherited);
	assert_int_equal(rundir_choose(NULL, other, "relative/dir", "/home/u", id, &c), 0);
	assert_false(c.inherited);
	/* no new run asked for */
	assert_int_equal(rundir_choose(NULL, NULL, NULL, "/home/u", NULL, &c), -ENOENT);
}

static void test_latest(void **state)
{
	char tmpl[] = "/tmp/gpuspy-rundir-XXXXXX", path[512], id[GS_RUN_ID_SIZE];
	const char *a = "20261201T134502Z-a-1", *b = "20261201T134503Z-b-2";
	char *dir = mkdtemp(tmpl);

	assert_non_null(dir);
	assert_int_equal(rundir_read_latest(dir, id, sizeof(id)), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, a);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, b);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(rundir_point_latest(dir, a), 0);
	assert_int_equal(rundir_read_latest(dir, id, sizeof(id)), 1);
	assert_string_equal(id, a);
	/* replaced, not written through */
	assert_int_equal(rundir_point_latest(dir, b), 0);
	assert_int_equal(rundir_read_latest(dir, id, sizeof(id)), 1);
	assert_string_equal(id, b);
	assert_int_equal(rundir_point_latest(dir, "../x"), -EINVAL);

	snprintf(path, sizeof(path), "%s/latest", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/etc", path), 0);
	assert_int_equal(rundir_read_latest(dir, id, sizeof(id)), -EXDEV);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("20991231T000000Z-gone-3", path), 0);
	assert_int_equal(rundir_read_latest(dir, id, sizeof(id)), -ENOTDIR);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(rundir_read_latest(dir, id, sizeof(id)), -ENOLINK);
	assert_int_equal(rundir_point_latest(dir, a), -EISDIR);
	assert_int_equal(rmdir(path), 0);

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_id),
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_latest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
