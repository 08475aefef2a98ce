/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus text (src/common/prom.c): each family once with HELP and
 * TYPE however many processes, extra labels on every series, escaping,
 * the top N with "other" and the folded count, values left out rather
 * than written as 0.  prom_sample writes a page of the same shape for
 * promtool (the test promtool-metrics).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prom.h"

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0, l = strlen(needle);

	for (const char *p = hay; (p = strstr(p, needle)); p += l)
		n++;
	return n;
}

static void fill(struct prom_process *p, struct prom_site *sites, size_t nsites)
{
	memset(p, 0, sizeof(*p));
	p->pid = 4242;
	p->host = "node7";
	p->rank = "3";
	p->command = "train.py";
	p->version = "0.1.0";
	p->kinds[GS_KIND_DEVICE] = (struct prom_kind_counts){ true, 3000, 5000, 7, 4, 9000, 6000 };
	p->sites = sites;
	p->nsites = nsites;
}

static char *page(struct prom_process **procs, size_t n, unsigned top)
{
	struct prom_buf b = { 0 };

	assert_int_equal(prom_write(&b, procs, n, top), 0);
	assert_non_null(b.p);
	return b.p;
}

static void test_families_once(void **state)
{
	struct prom_site s1[] = { { "00000000000000aa", "a (x.py:1)", GS_KIND_DEVICE, 100,
				    false } };
	struct prom_site s2[] = { { "00000000000000bb", "b (x.py:2)", GS_KIND_DEVICE, 200, true } };
	struct prom_label l1[] = { { "host", "n1" }, { "rank", "0" } };
	struct prom_label l2[] = { { "host", "n1" }, { "rank", "1" } };
	struct prom_process a, b, *procs[] = { &a, &b };
	char *t;

	fill(&a, s1, 1);
	fill(&b, s2, 1);
	a.labels = l1;
	a.nlabels = 2;
	b.labels = l2;
	b.nlabels = 2;
	t = page(procs, 2, 20);
	assert_int_equal(count(t, "# TYPE gpuspy_live_bytes gauge\n"), 1);
	assert_int_equal(count(t, "# HELP gpuspy_live_bytes "), 1);
	assert_int_equal(count(t, "# TYPE gpuspy_allocations_total counter\n"), 1);
	assert_int_equal(count(t, "# TYPE "), count(t, "# HELP "));
	assert_non_null(
		strstr(t, "gpuspy_live_bytes{kind=\"device\",host=\"n1\",rank=\"0\"} 3000\n"));
	assert_non_null(
		strstr(t, "gpuspy_live_bytes{kind=\"device\",host=\"n1\",rank=\"1\"} 3000\n"));
	/* the info series names host and rank once: its own */
	assert_non_null(strstr(t, "gpuspy_info{pid=\"4242\",host=\"node7\",rank=\"3\","
				  "command=\"train.py\",version=\"0.1.0\"} 1\n"));
	assert_non_null(strstr(t, "gpuspy_site_live_bytes{site=\"00000000000000bb\",name=\"b "
				  "(x.py:2)\",kind=\"device\",host=\"n1\",rank=\"1\"} 200\n"));
	assert_non_null(strstr(t, "gpuspy_site_growing{site=\"00000000000000bb\",name=\"b "
				  "(x.py:2)\",kind=\"device\",host=\"n1\",rank=\"1\"} 1\n"));
	/* a family's series stay together: every live_bytes line before peak's TYPE */
	assert_true(strstr(t, "rank=\"1\"} 3000\n") < strstr(t, "# TYPE gpuspy_peak_bytes"));
	free(t);
}

static void test_unknown_left_out(void **state)
{
	struct prom_process a, *procs[] = { &a };
	char *t;

	fill(&a, NULL, 0);
	t = page(procs, 1, 20);
	assert_null(strstr(t, "gpuspy_nvml"));
	assert_null(strstr(t, "gpuspy_pool"));
	assert_null(strstr(t, "gpuspy_oom_events_total"));
	assert_null(strstr(t, "gpuspy_limit_bytes"));
	assert_null(strstr(t, "gpuspy_sample_time_seconds"));
	assert_null(strstr(t, "gpuspy_site_live_bytes"));
	assert_null(strstr(t, "kind=\"managed\""));
	free(t);

	a.has_oom = true;
	a.oom_events = 0;
	a.has_limit = true;
	a.limit = 8ULL << 30;
	a.has_sample_time = true;
	a.sample_time = 1764600000.25;
	struct prom_nvml nv = { .index = 1, .has_device_total = true, .device_total = 80 };
	a.nvml = &nv;
	a.nnvml = 1;
	t = page(procs, 1, 20);
	assert_non_null(strstr(t, "\ngpuspy_oom_events_total 0\n"));
	assert_non_null(
		strstr(t, "\n# TYPE gpuspy_limit_bytes gauge\ngpuspy_limit_bytes 8589934592\n"));
	assert_non_null(strstr(t, "\ngpuspy_sample_time_seconds 1764600000.250\n"));
	assert_non_null(strstr(t, "\ngpuspy_nvml_device_total_bytes{device=\"1\"} 80\n"));
	assert_null(strstr(t, "gpuspy_nvml_used_bytes"));
	free(t);
}

static void test_escape(void **state)
{
	struct prom_buf b = { 0 };

	prom_escape(&b, "a\\b\"c\nd");
	assert_string_equal(b.p, "a\\\\b\\\"c\\nd");
	prom_buf_free(&b);
	/* not UTF-8: an overlong slash, a lone continuation, a surrogate */
	prom_escape(&b, "x\xc0\xafy\x80z\xed\xa0\x80.\xc3\xa9");
	assert_string_equal(b.p, "x\xef\xbf\xbd\xef\xbf\xbdy\xef\xbf\xbdz\xef\xbf\xbd\xef\xbf"
				 "\xbd\xef\xbf\xbd.\xc3\xa9");
	prom_buf_free(&b);
}

static void test_top_other(void **state)
{
	struct prom_site s[] = {
		{ "0000000000000001", "s1", GS_KIND_DEVICE, 10, false },
		{ "0000000000000002", "s2", GS_KIND_DEVICE, 50, false },
		{ "0000000000000003", "s3", GS_KIND_PINNED, 30, false },
		{ "0000000000000004", "s4", GS_KIND_DEVICE, 40, false },
		{ "0000000000000005", "s5", GS_KIND_DEVICE, 0, false },
	};
	struct prom_process a, *procs[] = { &a };
	char *t;

	fill(&a, s, 5);
	a.folded_live[GS_KIND_MANAGED] = 7;
	a.folded_sites = 2;
	t = page(procs, 1, 2);
	assert_non_null(strstr(t, "site=\"0000000000000002\",name=\"s2\",kind=\"device\"} 50\n"));
	assert_non_null(strstr(t, "site=\"0000000000000004\",name=\"s4\",kind=\"device\"} 40\n"));
	assert_null(strstr(t, "name=\"s3\""));
	assert_null(strstr(t, "name=\"s1\""));
	assert_null(strstr(t, "name=\"s5\""));
	assert_non_null(strstr(t, "gpuspy_site_live_bytes{site=\"other\",name=\"other\","
				  "kind=\"device\"} 10\n"));
	assert_non_null(strstr(t, "gpuspy_site_live_bytes{site=\"other\",name=\"other\","
				  "kind=\"managed\"} 7\n"));
	assert_non_null(strstr(t, "gpuspy_site_live_bytes{site=\"other\",name=\"other\","
				  "kind=\"pinned\"} 30\n"));
	assert_null(strstr(t, "kind=\"vmm\""));
	/* s1 and s3 here, two folded by the filler */
	assert_non_null(strstr(t, "\ngpuspy_sites_folded 4\n"));
	assert_int_equal(count(t, "gpuspy_site_growing{"), 2);
	free(t);

	/* TOP 0: every site in "other" */
	t = page(procs, 1, 0);
	assert_null(strstr(t, "gpuspy_site_growing"));
	assert_non_null(strstr(t, "kind=\"device\"} 100\n"));
	assert_non_null(strstr(t, "\ngpuspy_sites_folded 6\n"));
	free(t);
}

static void test_bad_label(void **state)
{
	struct prom_label l[] = { { "1host", "x" } };
	struct prom_process a, *procs[] = { &a };
	struct prom_buf b = { 0 };

	fill(&a, NULL, 0);
	a.labels = l;
	a.nlabels = 1;
	assert_int_equal(prom_write(&b, procs, 1, 20), -EINVAL);
	l[0].name = "__name";
	assert_int_equal(prom_write(&b, procs, 1, 20), -EINVAL);
	prom_buf_free(&b);
}

static void test_empty(void **state)
{
	struct prom_buf b = { 0 };

	assert_int_equal(prom_write(&b, NULL, 0, 20), 0);
	assert_string_equal(b.p, "");
	prom_buf_free(&b);
}

/* gpuspy_wrong_device_bytes: what a rank holds on each device not its own,
 * its tracked allocations and NVML's figure beyond them; the rank label
 * written once, from the extra labels when they have one; nothing
 * without an own device. */
static void test_wrong_device(void **state)
{
	struct prom_device d[] = { { 0, 512 << 20 }, { 1, 2 << 20 }, { 2, 1 << 20 } };
	struct prom_nvml nv[] = { { 0, true, false, false, 800 << 20, 0, 0 },
				  { 1, true, false, false, 900 << 20, 0, 0 },
				  { 3, true, false, false, 300 << 20, 0, 0 } };
	struct prom_label l[] = { { "host", "n1" }, { "rank", "3" } };
	struct prom_process a, *procs[] = { &a };
	char *t;

	(void)state;
	fill(&a, NULL, 0);
	a.devices = d;
	a.ndevices = 3;
	a.nvml = nv;
	a.nnvml = 3;
	t = page(procs, 1, 20);
	assert_null(strstr(t, "gpuspy_wrong_device_bytes"));
	free(t);
	a.has_own_device = true;
	a.own_device = 1;
	t = page(procs, 1, 20);
	/* device 0: NVML's 800 MiB over 512 tracked; device 2: tracked only;
	 * device 3: NVML only, a context; its own device 1: none */
	assert_non_null(strstr(t, "gpuspy_wrong_device_bytes{device=\"0\",own_device=\"1\","
				  "rank=\"3\"} 838860800\n"));
	assert_non_null(strstr(t, "gpuspy_wrong_device_bytes{device=\"2\",own_device=\"1\","
				  "rank=\"3\"} 1048576\n"));
	assert_non_null(strstr(t, "gpuspy_wrong_device_bytes{device=\"3\",own_device=\"1\","
				  "rank=\"3\"} 314572800\n"));
	assert_null(strstr(t, "gpuspy_wrong_device_bytes{device=\"1\""));
	assert_int_equal(count(t, "# TYPE gpuspy_wrong_device_bytes gauge"), 1);
	free(t);
	a.labels = l;
	a.nlabels = 2;
	t = page(procs, 1, 20);
	assert_non_null(strstr(t, "gpuspy_wrong_device_bytes{device=\"0\",own_device=\"1\","
				  "host=\"n1\",rank=\"3\"} 838860800\n"));
	assert_int_equal(count(t, "rank=\"3\",host"), 0);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_families_once), cmocka_unit_test(test_unknown_left_out),
		cmocka_unit_test(test_escape),	      cmocka_unit_test(test_top_other),
		cmocka_unit_test(test_bad_label),     cmocka_unit_test(test_empty),
		cmocka_unit_test(test_wrong_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
