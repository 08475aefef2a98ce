/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of gpuspy_read, load_process.c, load_torch.c and discover.c:
 * loading the fixtures (report files, process and run directories, what a
 * killed process left), the messages for bad files, Python frames, growth,
 * out-of-memory events and their post-mortems (oom-N.json).
 */
#include "read_test.h"

static void test_load_process(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_process *p;

	assert_int_equal(discover_path(&list, fixture("process/node7-4242"), &err), 0);
	assert_int_equal(list.n, 1);
	p = list.items[0];
	assert_string_equal(p->host, "node7");
	assert_int_equal(p->pid, 4242);
	assert_int_equal(p->ncommand, 3);
	assert_string_equal(p->command[0], "./leaky");
	assert_true(p->complete);
	assert_int_equal(p->leaked_bytes, 3 * MiB + 1024);
	assert_int_equal(p->leaked_allocations, 3);
	assert_int_equal(p->peak_bytes, 11 * MiB);
	assert_int_equal(p->kinds[RD_KIND_PINNED].live_bytes, MiB);
	assert_int_equal(p->kinds[RD_KIND_DEVICE].frees, 4);
	assert_int_equal(p->untracked_frees, 1);
	assert_int_equal(p->nmodules, 2);
	assert_string_equal(p->modules[0].build_id, "5f0c9a11d00dfeed");
	assert_string_equal(p->modules[1].build_id, "");
	assert_int_equal(p->nsites, 4);
	assert_int_equal(p->sites[0].kind, RD_KIND_DEVICE);
	assert_string_equal(p->sites[0].api, "cuMemAlloc_v2");
	assert_int_equal(p->sites[0].nframes, 3);
	assert_int_equal(p->sites[0].frames[0].offset, 4660);
	assert_string_equal(p->sites[0].frames[0].symbol, "leak_driver");
	assert_int_equal(p->sites[2].kind, RD_KIND_PINNED);
	assert_int_equal(p->sites[3].frames[0].module, -1);
	assert_null(p->sites[3].frames[1].symbol);
	rd_process_list_clear(&list);
}

static void test_load_run_dir(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };

	assert_int_equal(discover_path(&list, fixture("run"), &err), 0);
	/* node7-102 has no report.json: skipped, not an error */
	assert_int_equal(list.n, 2);
	assert_int_equal(list.items[0]->pid, 100);
	assert_int_equal(list.items[1]->pid, 101);
	assert_false(list.items[1]->complete);
	assert_non_null(strstr(list.items[0]->path, "run/node7-100"));
	/* at_peak: the sites by id, resolved to their index */
	assert_true(list.items[1]->at_peak.present);
	assert_int_equal(list.items[1]->at_peak.bytes, 3 * MiB - 16 * 1024);
	assert_true(list.items[1]->at_peak.time == 1764510020.5);
	assert_int_equal(list.items[1]->at_peak.ndevices, 1);
	assert_int_equal(list.items[1]->at_peak.devices[0].device, 1);
	assert_int_equal(list.items[1]->at_peak.nsites, 2);
	assert_int_equal(list.items[1]->at_peak.sites[0].site, 8);
	assert_int_equal(list.items[1]->at_peak.sites[0].index, 1);
	assert_int_equal(list.items[1]->at_peak.sites[0].live_bytes, MiB - 16 * 1024);
	assert_int_equal(list.items[1]->at_peak.sites[1].index, 0);

	/* the same report named again, as a process directory and as a
	 * file, is counted once */
	assert_int_equal(discover_path(&list, fixture("run/node7-101"), &err), 0);
	assert_int_equal(discover_path(&list, fixture("run/node7-100/report.json"), &err), 0);
	assert_int_equal(list.n, 2);
	rd_process_list_clear(&list);
}

static void test_bad_file(void **state)
{
	static const struct {
		const char *content;
		const char *want;
	} cases[] = {
		{ "", "empty file" },
		{ "{\"format\": \"gpuspy-process/1\"", "cut short at byte 29" },
		{ "{\"format\": \"gpuspy-process/2\"}", "a newer gpuspy wrote it" },
		{ "{\"format\": \"gpuspy-thing/2\"}", "unsupported format" },
		{ "[1, 2]", "top level is an array" },
		{ "{\"format\": \"gpuspy-process/1\", \"host\": 7}", "host: expected a string" },
		{ "{\"a\": 1, \"a\": 2}", "invalid JSON" },
	};
	char path[] = "/tmp/gpuspy-test-read-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rd_error err = { "" };
		struct rd_process *p = NULL;
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs(cases[i].content, f);
		fclose(f);
		assert_int_equal(load_process_file(path, NULL, &p, &err), -EINVAL);
		assert_null(p);
		assert_non_null(strstr(err.msg, path));
		if (!strstr(err.msg, cases[i].want))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].want);
		assert_null(strchr(err.msg, '\n'));
	}
	unlink(path);
}

static void test_load_python(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_process *p;

	assert_int_equal(discover_path(&list, fixture("python/node3-77"), &err), 0);
	p = list.items[0];
	assert_true(p->python.present);
	assert_true(p->python.supported);
	assert_string_equal(p->python.version, "3.12.3");
	assert_null(p->python.note);
	assert_string_equal(p->exe, "/nonexistent/py/bin/python3.12");
	assert_int_equal(p->sites[0].npython, 4);
	assert_string_equal(p->sites[0].python[1].file, "/nonexistent/home/u/proj/model.py");
	assert_string_equal(p->sites[0].python[1].function, "Model.forward");
	assert_int_equal(p->sites[0].python[1].line, 42);
	/* the runtime's thread ran no Python */
	assert_int_equal(p->sites[3].npython, 0);
	assert_null(p->sites[3].python);
	assert_int_equal(discover_path(&list, fixture("python/node3-79"), &err), 0);
	p = list.items[1];
	assert_true(p->python.present);
	assert_false(p->python.supported);
	assert_string_equal(p->python.note, "CPython 3.14 is not supported yet");
	rd_process_list_clear(&list);
}

/* fixtures/oom: a process with report.json and two post-mortems, and one
 * killed after its first out-of-memory event (fixtures/README.md). */
static void test_load_oom(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_process *p, *q;

	assert_int_equal(discover_path(&list, fixture("oom"), &err), 0);
	assert_int_equal(list.n, 2);
	p = list.items[0];
	assert_int_equal(p->pid, 500);
	assert_false(p->partial);
	assert_non_null(strstr(p->file, "node9-500/report.json"));
	assert_true(p->start_time == 1764510000.0);
	assert_int_equal(p->noom, 3);
	assert_int_equal(p->oom_dropped, 2);
	assert_int_equal(p->oom[0].number, 1);
	assert_true(p->oom[0].time == 1764510040.5);
	assert_string_equal(p->oom[0].api, "cudaMalloc");
	assert_int_equal(p->oom[0].kind, RD_KIND_DEVICE);
	assert_int_equal(p->oom[0].requested_bytes, 80 * GiB);
	assert_int_equal(p->oom[0].site, 4);
	assert_string_equal(p->oom[0].file, "oom-1.json");
	/* each post-mortem read from the process's directory */
	assert_non_null(p->oom[0].snapshot);
	assert_true(p->oom[0].snapshot->partial);
	assert_int_equal(p->oom[0].snapshot->event.number, 1);
	assert_int_equal(p->oom[0].snapshot->noom, 1);
	assert_non_null(p->oom[1].snapshot);
	assert_int_equal(p->oom[1].snapshot->event.number, 2);
	assert_int_equal(p->oom[1].kind, RD_KIND_PINNED);
	/* no file was written for the third */
	assert_null(p->oom[2].file);
	assert_null(p->oom[2].snapshot);
	assert_int_equal(p->oom[2].free_bytes, -1);
	assert_int_equal(p->oom[2].total_bytes, -1);
	assert_int_equal(p->sites[3].id, 4);

	/* no report.json: its only post-mortem is its report, and the
	 * snapshot of its event is the process itself */
	q = list.items[1];
	assert_int_equal(q->pid, 501);
	assert_true(q->partial);
	assert_non_null(strstr(q->file, "node9-501/oom-1.json"));
	assert_non_null(strstr(q->path, "oom/node9-501"));
	assert_int_equal(q->event.number, 1);
	assert_int_equal(q->event.kind, RD_KIND_VMM);
	assert_null(q->event.file);
	assert_int_equal(q->noom, 1);
	assert_ptr_equal(q->oom[0].snapshot, q);
	assert_int_equal(q->oom[0].device, 1);

	/* named again, as its directory: counted once */
	assert_int_equal(discover_path(&list, fixture("oom/node9-501"), &err), 0);
	assert_int_equal(list.n, 2);
	rd_process_list_clear(&list);

	/* a post-mortem named by itself: partial; the earlier one is read
	 * from its directory */
	assert_int_equal(discover_path(&list, fixture("oom/node9-500/oom-2.json"), &err), 0);
	assert_int_equal(list.n, 1);
	p = list.items[0];
	assert_true(p->partial);
	assert_int_equal(p->noom, 2);
	assert_non_null(p->oom[0].snapshot);
	assert_int_equal(p->oom[0].snapshot->event.number, 1);
	assert_ptr_equal(p->oom[1].snapshot, p);
	rd_process_list_clear(&list);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* A post-mortem removed since: the event stays, without what was live
 * then.  Without report.json, the highest number is the report: 10 after
 * 9, not "oom-9.json" after "oom-10.json". */
static void test_oom_files(void **state)
{
	char dir[] = "/tmp/gpuspy-test-oom-XXXXXX";
	char a[PATH_MAX], b[PATH_MAX];
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_report r;

	assert_non_null(mkdtemp(dir));
	snprintf(b, sizeof(b), "%s/report.json", dir);
	copy_file(fixture("oom/node9-500/report.json"), b);
	snprintf(b, sizeof(b), "%s/oom-2.json", dir);
	copy_file(fixture("oom/node9-500/oom-2.json"), b);
	assert_int_equal(discover_path(&list, dir, &err), 0);
	assert_int_equal(list.n, 1);
	assert_null(list.items[0]->oom[0].snapshot);
	assert_non_null(list.items[0]->oom[1].snapshot);
	assert_int_equal(merge_build(&r, &list, NULL, &err), 0);
	assert_int_equal(r.nooms, 3);
	assert_int_equal(r.ooms[0].ntop, 0);
	/* the site is then the one of report.json */
	assert_string_equal(oom_requested_by(&r.ooms[0])->function, "grow_buffer");
	assert_int_equal(r.ooms[1].ntop, 1);
	merge_clear(&r);
	rd_process_list_clear(&list);

	/* no report.json; oom-9.json and oom-10.json (a copy of the
	 * crashed process's only one, whose entries name oom-1.json) */
	unlink(b);
	snprintf(b, sizeof(b), "%s/report.json", dir);
	unlink(b);
	snprintf(a, sizeof(a), "%s/oom-9.json", dir);
	copy_file(fixture("oom/node9-500/oom-1.json"), a);
	snprintf(b, sizeof(b), "%s/oom-10.json", dir);
	copy_file(fixture("oom/node9-501/oom-1.json"), b);
	assert_int_equal(discover_path(&list, dir, &err), 0);
	assert_int_equal(list.n, 1);
	assert_int_equal(list.items[0]->pid, 501);
	assert_true(list.items[0]->partial);
	assert_non_null(strstr(list.items[0]->file, "/oom-10.json"));
	/* oom-1.json is not there */
	assert_null(list.items[0]->oom[0].snapshot);
	rd_process_list_clear(&list);
	unlink(a);
	unlink(b);
	assert_int_equal(rmdir(dir), 0);
}

/* Memory over time (fixtures/README.md, growth/): sites[].growing, read
 * and merged ("growing in any process"); killed processes read from
 * snapshot.json, or from an oom-N.json newer than it. */
static bool near(double a, double b)
{
	return a > b - 0.001 && a < b + 0.001;
}

static const struct rd_report_site *site_by_key(const struct rd_report *r, const char *key)
{
	for (size_t i = 0; i < r->nsites; i++)
		if (strcmp(r->sites[i]->key, key) == 0)
			return r->sites[i];
	fail_msg("no site %s", key);
	return NULL;
}

static void test_load_growth(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_process *p;
	struct rd_report r;

	assert_int_equal(discover_path(&list, fixture("growth"), &err), 0);
	assert_int_equal(list.n, 3);

	/* ran to the end: report.json, the final state */
	p = list.items[0];
	assert_int_equal(p->pid, 300);
	assert_false(p->partial);
	assert_false(p->snapshot.present);
	assert_non_null(strstr(p->file, "node4-300/report.json"));
	assert_true(p->sites[0].growing);  /* leak_step */
	assert_true(p->sites[1].growing);  /* cache_grow */
	assert_false(p->sites[2].growing); /* churn_step */
	assert_false(p->sites[3].growing); /* warm_pool */

	/* killed: its last periodic snapshot */
	p = list.items[1];
	assert_int_equal(p->pid, 301);
	assert_true(p->partial);
	assert_non_null(strstr(p->file, "node4-301/snapshot.json"));
	assert_non_null(strstr(p->path, "growth/node4-301"));
	assert_true(p->snapshot.present);
	assert_true(p->snapshot.periodic);
	assert_int_equal(p->snapshot.samples, 69);
	assert_int_equal(p->snapshot.interval_us, 100000);
	assert_true(near(p->start_time, 1764510001.0));
	assert_true(near(p->end_time, 1764510007.9));
	assert_int_equal(p->event.number, 0);

	/* killed after two events: oom-2.json is newer than snapshot.json */
	p = list.items[2];
	assert_int_equal(p->pid, 302);
	assert_true(p->partial);
	assert_non_null(strstr(p->file, "node4-302/oom-2.json"));
	assert_false(p->snapshot.present);
	assert_int_equal(p->event.number, 2);
	assert_int_equal(p->sites[0].c.live_bytes, 14 * MiB);

	/* growing in any process makes the merged site growing */
	assert_int_equal(merge_build(&r, &list, NULL, &err), 0);
	assert_int_equal(r.partial, 2);
	assert_int_equal(r.nsites, 5);
	assert_true(site_by_key(&r, "cudaMalloc|trainer!leak_step;trainer!train_loop;trainer!main")
			    ->growing);
	assert_int_equal(
		site_by_key(&r, "cudaMalloc|trainer!leak_step;trainer!train_loop;trainer!main")
			->processes,
		3);
	/* only in node4-301's snapshot */
	assert_true(
		site_by_key(&r, "cudaMalloc|trainer!alloc_batch;trainer!train_loop;trainer!main")
			->growing);
	assert_true(site_by_key(&r, "cudaMallocManaged|trainer!cache_grow;trainer!main")->growing);
	assert_false(site_by_key(&r, "cudaMalloc|trainer!warm_pool;trainer!main")->growing);
	assert_false(
		site_by_key(&r, "cudaMalloc|trainer!churn_step;trainer!train_loop;trainer!main")
			->growing);
	merge_clear(&r);
	rd_process_list_clear(&list);

	/* a snapshot.json named directly, though older than oom-2.json; the
	 * post-mortem it names is read from its directory */
	assert_int_equal(discover_path(&list, fixture("growth/node4-302/snapshot.json"), &err), 0);
	assert_int_equal(list.n, 1);
	p = list.items[0];
	assert_true(p->partial);
	assert_true(p->snapshot.periodic);
	assert_int_equal(p->snapshot.samples, 40);
	assert_int_equal(p->sites[0].c.live_bytes, 12 * MiB);
	assert_int_equal(p->noom, 1);
	assert_non_null(p->oom[0].snapshot);
	assert_int_equal(p->oom[0].snapshot->event.number, 1);
	rd_process_list_clear(&list);
}

/* FROM copied to TO with the first OLD replaced by NEW. */
static void copy_replace(const char *from, const char *to, const char *old, const char *new)
{
	char buf[65536], *at;
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	n = fread(buf, 1, sizeof(buf) - 1, in);
	assert_true(n < sizeof(buf) - 1);
	buf[n] = '\0';
	at = strstr(buf, old);
	assert_non_null(at);
	fwrite(buf, 1, at - buf, out);
	fputs(new, out);
	fputs(at + strlen(old), out);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* Which file of DIR load_path reads, as a static basename. */
static const char *fallback_of(const char *dir)
{
	static char name[64];
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	const char *slash;
	int r = discover_path(&list, dir, &err);

	if (r != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(list.n, 1);
	assert_true(list.items[0]->partial);
	slash = strrchr(list.items[0]->file, '/');
	snprintf(name, sizeof(name), "%s", slash ? slash + 1 : list.items[0]->file);
	rd_process_list_clear(&list);
	return name;
}

/* The newer by end_time, not by the files' times; snapshot.json on a tie
 * or an unknown time; report.json whenever it is there. */
static void test_snapshot_fallback(void **state)
{
	char dir[] = "/tmp/gpuspy-test-snap-XXXXXX";
	char snap[PATH_MAX], oom1[PATH_MAX], oom2[PATH_MAX], rep[PATH_MAX];
	char src[PATH_MAX + 64];
	/* snapshot.json written last, as far as the file system knows */
	struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
	struct timespec now[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };

	assert_non_null(mkdtemp(dir));
	/* fixture() returns one static buffer */
	snprintf(src, sizeof(src), "%s", fixture("growth/node4-302/snapshot.json"));
	snprintf(snap, sizeof(snap), "%s/snapshot.json", dir);
	snprintf(oom1, sizeof(oom1), "%s/oom-1.json", dir);
	snprintf(oom2, sizeof(oom2), "%s/oom-2.json", dir);
	snprintf(rep, sizeof(rep), "%s/report.json", dir);
	copy_file(fixture("growth/node4-302/oom-1.json"), oom1);
	copy_file(fixture("growth/node4-302/oom-2.json"), oom2);

	/* end_time 6.0 < 9.0, whatever the modification times say */
	copy_file(src, snap);
	assert_int_equal(utimensat(AT_FDCWD, oom2, old, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, snap, now, 0), 0);
	assert_string_equal(fallback_of(dir), "oom-2.json");

	/* a tie: snapshot.json */
	copy_replace(src, snap, "\"end_time\": 1764510006.0", "\"end_time\": 1764510009.0");
	assert_string_equal(fallback_of(dir), "snapshot.json");
	/* newer */
	copy_replace(src, snap, "\"end_time\": 1764510006.0", "\"end_time\": 1764510009.5");
	assert_int_equal(utimensat(AT_FDCWD, snap, old, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, oom2, now, 0), 0);
	assert_string_equal(fallback_of(dir), "snapshot.json");
	/* snapshot.json's time unknown */
	copy_replace(src, snap, "\"end_time\": 1764510006.0,", "");
	assert_string_equal(fallback_of(dir), "snapshot.json");
	/* oom-2.json's time unknown */
	copy_file(src, snap);
	copy_replace(fixture("growth/node4-302/oom-2.json"), oom2, "\"end_time\": 1764510009.0,",
		     "");
	assert_string_equal(fallback_of(dir), "snapshot.json");

	/* snapshot.json alone */
	unlink(oom1);
	unlink(oom2);
	assert_string_equal(fallback_of(dir), "snapshot.json");

	/* report.json, the final state, is always read */
	copy_file(fixture("growth/node4-300/report.json"), rep);
	{
		struct rd_process_list list = { 0 };
		struct rd_error err = { "" };

		assert_int_equal(discover_path(&list, dir, &err), 0);
		assert_int_equal(list.n, 1);
		assert_false(list.items[0]->partial);
		assert_non_null(strstr(list.items[0]->file, "/report.json"));
		rd_process_list_clear(&list);
	}
	unlink(rep);

	/* a snapshot.json without "snapshot" is refused, naming it */
	copy_replace(src, snap, "\"snapshot\": {", "\"not_a_snapshot\": {");
	{
		struct rd_process_list list = { 0 };
		struct rd_error err = { "" };

		/* read around: the process is unreadable, with why */
		assert_int_equal(discover_path(&list, dir, &err), 0);
		assert_int_equal(list.n, 0);
		assert_int_equal(list.nunreadable, 1);
		assert_string_equal(list.unreadable[0].path, dir);
		assert_int_equal(list.unreadable[0].error, -EINVAL);
		assert_non_null(strstr(list.unreadable[0].msg, "snapshot.json"));
		assert_non_null(strstr(list.unreadable[0].msg, "snapshot: missing"));
		assert_string_equal(list.unreadable[0].reason,
				    "snapshot.json: snapshot: missing (a snapshot.json is the "
				    "report of a snapshot)");
		rd_process_list_clear(&list);
	}
	unlink(snap);
	assert_int_equal(rmdir(dir), 0);
}

/* A run directory of two processes, one cut short: the other is read, the
 * cut one listed as unreadable with why; both cut: nothing read, 0, both
 * listed (the caller decides); a missing path is still an error. */
static void test_read_around(void **state)
{
	char dir[] = "/tmp/gpuspy-test-around-XXXXXX";
	char a[PATH_MAX], b[PATH_MAX], f[PATH_MAX + 16];
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/node7-100", dir);
	snprintf(b, sizeof(b), "%s/node7-101", dir);
	assert_int_equal(mkdir(a, 0700), 0);
	assert_int_equal(mkdir(b, 0700), 0);
	snprintf(f, sizeof(f), "%s/report.json", a);
	copy_file(fixture("run/node7-100/report.json"), f);
	snprintf(f, sizeof(f), "%s/report.json", b);
	copy_file(fixture("run/node7-101/report.json"), f);
	assert_int_equal(truncate(f, 300), 0);

	assert_int_equal(discover_path(&list, dir, &err), 0);
	assert_int_equal(list.n, 1);
	assert_int_equal(list.items[0]->pid, 100);
	assert_int_equal(list.nunreadable, 1);
	assert_string_equal(list.unreadable[0].path, b);
	assert_int_equal(list.unreadable[0].error, -EINVAL);
	assert_non_null(strstr(list.unreadable[0].reason, "report.json: cut short at byte 300"));
	assert_ptr_equal(list.unreadable[0].msg + strlen(b) + 1, list.unreadable[0].reason);
	rd_process_list_clear(&list);

	snprintf(f, sizeof(f), "%s/report.json", a);
	assert_int_equal(truncate(f, 10), 0);
	assert_int_equal(discover_path(&list, dir, &err), 0);
	assert_int_equal(list.n, 0);
	assert_int_equal(list.nunreadable, 2);
	assert_string_equal(list.unreadable[0].path, a);
	assert_string_equal(list.unreadable[1].path, b);
	/* a report file named directly: its own path, reason without it */
	assert_int_equal(discover_path(&list, f, &err), 0);
	assert_int_equal(list.nunreadable, 3);
	assert_string_equal(list.unreadable[2].path, f);
	assert_non_null(strstr(list.unreadable[2].reason, "cut short at byte 10"));
	assert_ptr_equal(list.unreadable[2].msg + strlen(f) + 2, list.unreadable[2].reason);
	rd_process_list_clear(&list);

	snprintf(f, sizeof(f), "%s/none", dir);
	assert_int_equal(discover_path(&list, f, &err), -ENOENT);
	assert_int_equal(list.nunreadable, 0);
	rd_process_list_clear(&list);

	snprintf(f, sizeof(f), "%s/report.json", a);
	unlink(f);
	snprintf(f, sizeof(f), "%s/report.json", b);
	unlink(f);
	rmdir(a);
	rmdir(b);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_process), cmocka_unit_test(test_load_run_dir),
		cmocka_unit_test(test_bad_file),     cmocka_unit_test(test_load_python),
		cmocka_unit_test(test_load_oom),     cmocka_unit_test(test_oom_files),
		cmocka_unit_test(test_load_growth),  cmocka_unit_test(test_snapshot_fallback),
		cmocka_unit_test(test_read_around),
	};

	if (read_test_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
