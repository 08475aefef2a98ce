/* SPDX-License-Identifier: MIT */
/*
 * check: runs one program without and then with gpuspy, and checks what
 * gpuspy saw against what the program is known to do.
 *
 *   check --lib LIBGPUSPY --cli GPUSPY --fake-dir DIR [EXPECTATIONS]
 *         [--env NAME=VALUE]... -- PROGRAM [ARGS...]
 *
 * The program runs twice with LD_LIBRARY_PATH=DIR (where the fake
 * libcuda.so.1 and libcudart.so.13 live): plainly, then with
 * LD_PRELOAD=LIBGPUSPY and GPUSPY_OUTPUT_DIR set to a fresh directory.
 * Every GPUSPY_* variable of the caller's environment is dropped, so only
 * --env settings reach the program (both runs).  Its stdout and exit
 * status must not change.  Then `GPUSPY report --format json DIR` is read
 * with jansson and compared with the expectations:
 *
 *   --expect-status N            exit status of the program (default 0)
 *   --expect-line TEXT           stdout has this line (repeatable)
 *   --expect-processes N         process directories written (default 1);
 *                                with 0 the report is not run
 *   --expect-leaked-bytes N      report leaked.bytes
 *   --expect-leaked-allocs N     report leaked.allocations
 *   --expect-site F=BYTES/ALLOCS leaked_bytes/leaked_allocations summed over
 *                                the sites with a frame whose function is F
 *   --expect-allocations F=N     allocations summed over the same sites
 *   --expect-api F=API           every site with a frame whose function is F
 *                                (one at least) is reported as API: the entry
 *                                point that caught it (repeatable)
 *   --expect-total-allocations N allocations summed over all sites
 *   --expect-total-frees N       frees summed over all sites
 *   --expect-pinned-bytes N      pinned.leaked_bytes (default 0)
 *   --expect-untracked N         untracked_frees (default 0)
 *   --expect-json PATH=N         the integer at PATH of the report, its
 *                                members and array indexes joined by dots
 *                                (processes.0.graph.launches); repeatable
 *   --valgrind PATH              run the program under valgrind when it
 *                                runs with gpuspy; an error there changes
 *                                its exit status, which fails the test
 *
 * SANITIZER_PRELOAD, when set, goes before LIBGPUSPY in LD_PRELOAD: a
 * sanitizer's runtime must be the first library loaded (scripts/sanitize);
 * SANITIZER_GPUSPY adds GPUSPY_* settings that such a run needs.
 * Each expectation is one cmocka test, so a failure names what differed.
 * The directory is removed when everything passed; otherwise it is kept,
 * and the report printed, for a look.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

extern char **environ;

#define MAX_ITEMS 64
#define UNCHECKED (-1LL)

struct site_expect {
	const char *function;
	long long bytes;
	long long allocs;
};

struct api_expect {
	const char *function;
	const char *api;
};

static struct {
	const char *lib, *cli, *fake_dir, *valgrind;
	char **argv, **spied_argv; /* spied_argv: argv, or valgrind running it */
	int argc;
	int status;
	long long processes;
	long long leaked_bytes, leaked_allocs;
	long long total_allocs, total_frees;
	long long pinned_bytes, untracked;
	const char *lines[MAX_ITEMS];
	size_t n_lines;
	struct site_expect sites[MAX_ITEMS];
	size_t n_sites;
	struct site_expect allocs[MAX_ITEMS]; /* only .allocs used */
	size_t n_allocs;
	struct api_expect apis[MAX_ITEMS];
	size_t n_apis;
	const char *envs[MAX_ITEMS];
	size_t n_envs;
	struct site_expect json[MAX_ITEMS]; /* .function: the path; .allocs: the value */
	size_t n_json;
} want;

struct run {
	char *out;  /* stdout, NUL-terminated */
	int status; /* exit status, 128+signal, or -1 when it could not run */
};

static struct {
	char *dir;
	struct run plain, spied, report;
	long long dirs;
	json_t *json;
	char json_error[256];
} got;

/* ---- running things ---- */

static bool env_ours(const char *entry)
{
	return !strncmp(entry, "GPUSPY_", 7) || !strncmp(entry, "LD_PRELOAD=", 11) ||
	       !strncmp(entry, "LD_LIBRARY_PATH=", 16);
}

__attribute__((format(printf, 1, 2))) static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		perror("check: vasprintf");
		exit(2);
	}
	va_end(ap);
	return s;
}

/*
 * The caller's environment without the variables this run decides, then
 * those.  `spied`: add the preload and output directory; `fake`: add the
 * fake libraries and the --env settings (the program's runs only).
 */
static char **make_env(bool fake, bool spied)
{
	size_t n = 0, i = 0;
	const char *old_path = getenv("LD_LIBRARY_PATH");
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + want.n_envs + 4, sizeof(*env));
	if (!env)
		exit(2);
	for (char **e = environ; *e; e++)
		if (!env_ours(*e))
			env[i++] = *e;
	if (fake) {
		env[i++] = old_path && *old_path ?
				   xasprintf("LD_LIBRARY_PATH=%s:%s", want.fake_dir, old_path) :
				   xasprintf("LD_LIBRARY_PATH=%s", want.fake_dir);
		for (size_t k = 0; k < want.n_envs; k++)
			env[i++] = (char *)want.envs[k];
	} else if (old_path) {
		env[i++] = xasprintf("LD_LIBRARY_PATH=%s", old_path);
	}
	if (spied) {
		const char *first = getenv("SANITIZER_PRELOAD");

		env[i++] = first && *first ? xasprintf("LD_PRELOAD=%s:%s", first, want.lib) :
					     xasprintf("LD_PRELOAD=%s", want.lib);
		env[i++] = xasprintf("GPUSPY_OUTPUT_DIR=%s", got.dir);
	}
	return env;
}

/* Runs argv with stdout captured, stdin from /dev/null, stderr shared. */
static struct run run(char **argv, char **env)
{
	struct run r = { .status = -1 };
	posix_spawn_file_actions_t fa;
	size_t len = 0, cap = 4096;
	int fd[2], status, err;
	ssize_t n;
	pid_t pid;

	r.out = malloc(cap);
	if (!r.out || pipe2(fd, O_CLOEXEC))
		exit(2);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	err = posix_spawn(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (err) {
		fprintf(stderr, "check: cannot run %s: %s\n", argv[0], strerror(err));
		close(fd[0]);
		r.out[0] = '\0';
		return r;
	}
	for (;;) {
		if (len + 1 == cap && !(r.out = realloc(r.out, cap *= 2)))
			exit(2);
		n = read(fd[0], r.out + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	r.out[len] = '\0';
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return r;
	r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return r;
}

static long long count_dirs(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	long long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* ---- reading the report ---- */

/* Fails the current test unless root.key (or root.obj.key) is an integer. */
static long long report_int(const char *obj, const char *key)
{
	json_t *o = obj ? json_object_get(got.json, obj) : got.json;
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		fail_msg("the report has no integer %s%s%s", obj ? obj : "", obj ? "." : "", key);
	return json_integer_value(v);
}

static bool site_has_function(json_t *site, const char *function)
{
	json_t *frames = json_object_get(site, "frames");

	for (size_t i = 0; i < json_array_size(frames); i++) {
		json_t *frame = json_array_get(frames, i);
		const char *f = json_string_value(json_object_get(frame, "function"));

		if (f && !strcmp(f, function))
			return true;
	}
	return false;
}

/*
 * Sums `field` over the sites having `function` in a frame, or over all
 * sites (NULL); *matched says how many sites that was.
 */
static long long sites_sum(const char *function, const char *field, size_t *matched)
{
	json_t *sites = json_object_get(got.json, "sites"), *site, *v;
	long long sum = 0;

	if (!json_is_array(sites))
		fail_msg("the report has no sites array");
	*matched = 0;
	for (size_t i = 0; i < json_array_size(sites); i++) {
		site = json_array_get(sites, i);
		if (function && !site_has_function(site, function))
			continue;
		v = json_object_get(site, field);
		if (!json_is_integer(v))
			fail_msg("site %zu has no integer %s", i, field);
		sum += json_integer_value(v);
		(*matched)++;
	}
	return sum;
}

/* cmocka's assert_int_equal prints hex; byte counts read better in decimal. */
static void expect_eq(const char *what, long long value, long long expected)
{
	if (value != expected)
		fail_msg("%s is %lld, expected %lld", what, value, expected);
}

static void expect_sum(const char *function, const char *field, long long expected)
{
	size_t matched;
	long long sum = sites_sum(function, field, &matched);

	if (sum != expected)
		fail_msg("%s summed over the %zu sites %s%s is %lld, expected %lld", field, matched,
			 function ? "with a frame in " : "in all", function ? function : "", sum,
			 expected);
}

/* ---- the checks ---- */

static void test_plain_status(void **state)
{
	expect_eq("exit status", got.plain.status, want.status);
}

static void test_same_status(void **state)
{
	expect_eq("exit status under gpuspy", got.spied.status, got.plain.status);
}

static void test_same_stdout(void **state)
{
	assert_string_equal(got.spied.out, got.plain.out);
}

static void test_line(void **state)
{
	const char *line = *state;
	size_t len = strlen(line);

	for (const char *p = got.plain.out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, line, len) && (p[len] == '\n' || !p[len]))
			return;
	fail_msg("no line \"%s\" in:\n%s", line, got.plain.out);
}

static void test_dirs(void **state)
{
	expect_eq("number of entries in the output directory", got.dirs, want.processes);
}

static void test_report_runs(void **state)
{
	expect_eq("exit status of gpuspy report", got.report.status, 0);
	if (!got.json)
		fail_msg("not JSON: %s", got.json_error);
}

static void test_format(void **state)
{
	const char *format = json_string_value(json_object_get(got.json, "format"));

	assert_non_null(format);
	assert_string_equal(format, "gpuspy-report/1");
}

static void test_processes(void **state)
{
	json_t *procs = json_object_get(got.json, "processes");

	if (!json_is_array(procs))
		fail_msg("the report has no processes array");
	expect_eq("number of processes", (long long)json_array_size(procs), want.processes);
	for (size_t i = 0; i < json_array_size(procs); i++)
		if (!json_is_true(json_object_get(json_array_get(procs, i), "complete")))
			fail_msg("process %zu is not complete", i);
}

static void test_leaked_bytes(void **state)
{
	expect_eq("leaked.bytes", report_int("leaked", "bytes"), want.leaked_bytes);
}

static void test_leaked_allocs(void **state)
{
	expect_eq("leaked.allocations", report_int("leaked", "allocations"), want.leaked_allocs);
}

static void test_site(void **state)
{
	const struct site_expect *s = *state;

	expect_sum(s->function, "leaked_bytes", s->bytes);
	expect_sum(s->function, "leaked_allocations", s->allocs);
}

static void test_site_allocs(void **state)
{
	const struct site_expect *s = *state;

	expect_sum(s->function, "allocations", s->allocs);
}

static void test_site_api(void **state)
{
	const struct api_expect *e = *state;
	json_t *sites = json_object_get(got.json, "sites"), *site;
	size_t matched = 0;

	if (!json_is_array(sites))
		fail_msg("the report has no sites array");
	for (size_t i = 0; i < json_array_size(sites); i++) {
		const char *api;

		site = json_array_get(sites, i);
		if (!site_has_function(site, e->function))
			continue;
		matched++;
		api = json_string_value(json_object_get(site, "api"));
		if (!api || strcmp(api, e->api))
			fail_msg("site %zu, with a frame in %s, is reported as %s, expected %s", i,
				 e->function, api ? api : "(none)", e->api);
	}
	if (!matched)
		fail_msg("no site has a frame in %s", e->function);
}

static void test_total_allocs(void **state)
{
	expect_sum(NULL, "allocations", want.total_allocs);
}

static void test_total_frees(void **state)
{
	expect_sum(NULL, "frees", want.total_frees);
}

static void test_pinned(void **state)
{
	expect_eq("pinned.leaked_bytes", report_int("pinned", "leaked_bytes"), want.pinned_bytes);
}

static void test_untracked(void **state)
{
	expect_eq("untracked_frees", report_int(NULL, "untracked_frees"), want.untracked);
}

/* The value at a dotted PATH of the report, or NULL. */
static json_t *json_at(const char *path)
{
	char *copy = strdup(path), *save = NULL;
	json_t *j = got.json;

	if (!copy)
		exit(2);
	for (char *tok = strtok_r(copy, ".", &save); tok && j; tok = strtok_r(NULL, ".", &save)) {
		char *end;
		unsigned long i = strtoul(tok, &end, 10);

		j = json_is_array(j) && !*end ? json_array_get(j, i) : json_object_get(j, tok);
	}
	free(copy);
	return j;
}

static void test_json(void **state)
{
	const struct site_expect *e = *state;
	json_t *v = json_at(e->function);

	if (!json_is_integer(v))
		fail_msg("the report has no integer at %s", e->function);
	expect_eq(e->function, json_integer_value(v), e->allocs);
}

/* ---- command line ---- */

static void usage(void)
{
	fprintf(stderr,
		"usage: check --lib LIBGPUSPY --cli GPUSPY --fake-dir DIR [--expect-status N]\n"
		"             [--expect-line TEXT]... [--expect-processes N]\n"
		"             [--expect-leaked-bytes N] [--expect-leaked-allocs N]\n"
		"             [--expect-site FUNCTION=BYTES/ALLOCS]...\n"
		"             [--expect-allocations FUNCTION=N]... [--expect-api FUNCTION=API]...\n"
		"             [--expect-total-allocations N] [--expect-total-frees N]\n"
		"             [--expect-pinned-bytes N] [--expect-untracked N]\n"
		"             [--expect-json PATH=N]...\n"
		"             [--valgrind PATH] [--env NAME=VALUE]... -- PROGRAM [ARGS...]\n");
	exit(2);
}

static long long number(const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, "check: bad number '%s'\n", s);
		usage();
	}
	return v;
}

/* FUNCTION=API */
static struct api_expect api_arg(char *arg)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		usage();
	*eq = '\0';
	return (struct api_expect){ arg, eq + 1 };
}

/* FUNCTION=BYTES/ALLOCS, or FUNCTION=ALLOCS when !with_bytes. */
static struct site_expect site_arg(char *arg, bool with_bytes)
{
	struct site_expect s = { .bytes = UNCHECKED };
	char *eq = strrchr(arg, '='), *slash;

	if (!eq || eq == arg)
		usage();
	*eq = '\0';
	s.function = arg;
	if (with_bytes) {
		slash = strchr(eq + 1, '/');
		if (!slash)
			usage();
		*slash = '\0';
		s.bytes = number(eq + 1);
		s.allocs = number(slash + 1);
	} else {
		s.allocs = number(eq + 1);
	}
	return s;
}

static void add(size_t *n, const char *what)
{
	if (*n == MAX_ITEMS) {
		fprintf(stderr, "check: too many %s\n", what);
		exit(2);
	}
	(*n)++;
}

/*
 * SANITIZER_GPUSPY: NAME=VALUE settings, separated by spaces, added after
 * the --env ones (which win): what a sanitizer's runtime needs of gpuspy,
 * such as an unwinder other than libunwind under TSan (scripts/sanitize).
 */
static void sanitizer_settings(void)
{
	const char *v = getenv("SANITIZER_GPUSPY");
	char *copy, *save = NULL;

	if (!v || !*v)
		return;
	copy = strdup(v);
	if (!copy)
		exit(2);
	for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		add(&want.n_envs, "settings");
		want.envs[want.n_envs - 1] = tok;
	}
}

enum {
	OPT_LIB = 256,
	OPT_CLI,
	OPT_FAKE_DIR,
	OPT_STATUS,
	OPT_LINE,
	OPT_PROCESSES,
	OPT_LEAKED_BYTES,
	OPT_LEAKED_ALLOCS,
	OPT_SITE,
	OPT_ALLOCATIONS,
	OPT_API,
	OPT_TOTAL_ALLOCS,
	OPT_TOTAL_FREES,
	OPT_PINNED,
	OPT_UNTRACKED,
	OPT_JSON,
	OPT_ENV,
	OPT_VALGRIND,
};

static char *absolute(const char *path)
{
	char *abs = realpath(path, NULL);

	if (!abs) {
		fprintf(stderr, "check: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	return abs;
}

static void parse_args(int argc, char **argv)
{
	/* clang-format off */
	static const struct option opts[] = {
		{ "lib", required_argument, NULL, OPT_LIB },
		{ "cli", required_argument, NULL, OPT_CLI },
		{ "fake-dir", required_argument, NULL, OPT_FAKE_DIR },
		{ "expect-status", required_argument, NULL, OPT_STATUS },
		{ "expect-line", required_argument, NULL, OPT_LINE },
		{ "expect-processes", required_argument, NULL, OPT_PROCESSES },
		{ "expect-leaked-bytes", required_argument, NULL, OPT_LEAKED_BYTES },
		{ "expect-leaked-allocs", required_argument, NULL, OPT_LEAKED_ALLOCS },
		{ "expect-site", required_argument, NULL, OPT_SITE },
		{ "expect-allocations", required_argument, NULL, OPT_ALLOCATIONS },
		{ "expect-api", required_argument, NULL, OPT_API },
		{ "expect-total-allocations", required_argument, NULL, OPT_TOTAL_ALLOCS },
		{ "expect-total-frees", required_argument, NULL, OPT_TOTAL_FREES },
		{ "expect-pinned-bytes", required_argument, NULL, OPT_PINNED },
		{ "expect-untracked", required_argument, NULL, OPT_UNTRACKED },
		{ "expect-json", required_argument, NULL, OPT_JSON },
		{ "env", required_argument, NULL, OPT_ENV },
		{ "valgrind", required_argument, NULL, OPT_VALGRIND },
		{ NULL, 0, NULL, 0 },
	};
	/* clang-format on */
	int c;

	want.processes = 1;
	want.leaked_bytes = UNCHECKED;
	want.leaked_allocs = UNCHECKED;
	want.total_allocs = UNCHECKED;
	want.total_frees = UNCHECKED;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case OPT_LIB:
			want.lib = optarg;
			break;
		case OPT_CLI:
			want.cli = optarg;
			break;
		case OPT_FAKE_DIR:
			want.fake_dir = optarg;
			break;
		case OPT_STATUS:
			want.status = (int)number(optarg);
			break;
		case OPT_LINE:
			want.lines[want.n_lines] = optarg;
			add(&want.n_lines, "--expect-line");
			break;
		case OPT_PROCESSES:
			want.processes = number(optarg);
			break;
		case OPT_LEAKED_BYTES:
			want.leaked_bytes = number(optarg);
			break;
		case OPT_LEAKED_ALLOCS:
			want.leaked_allocs = number(optarg);
			break;
		case OPT_SITE:
			want.sites[want.n_sites] = site_arg(optarg, true);
			add(&want.n_sites, "--expect-site");
			break;
		case OPT_ALLOCATIONS:
			want.allocs[want.n_allocs] = site_arg(optarg, false);
			add(&want.n_allocs, "--expect-allocations");
			break;
		case OPT_API:
			want.apis[want.n_apis] = api_arg(optarg);
			add(&want.n_apis, "--expect-api");
			break;
		case OPT_TOTAL_ALLOCS:
			want.total_allocs = number(optarg);
			break;
		case OPT_TOTAL_FREES:
			want.total_frees = number(optarg);
			break;
		case OPT_PINNED:
			want.pinned_bytes = number(optarg);
			break;
		case OPT_UNTRACKED:
			want.untracked = number(optarg);
			break;
		case OPT_JSON:
			want.json[want.n_json] = site_arg(optarg, false);
			add(&want.n_json, "--expect-json");
			break;
		case OPT_ENV:
			if (!strchr(optarg, '='))
				usage();
			want.envs[want.n_envs] = optarg;
			add(&want.n_envs, "--env");
			break;
		case OPT_VALGRIND:
			want.valgrind = optarg;
			break;
		default:
			usage();
		}
	}
	if (!want.lib || !want.cli || !want.fake_dir || optind >= argc)
		usage();
	sanitizer_settings();
	want.argv = argv + optind;
	want.argc = argc - optind;
	/* meson passes build-relative paths; children may change directory. */
	want.lib = absolute(want.lib);
	want.cli = absolute(want.cli);
	want.fake_dir = absolute(want.fake_dir);
	want.argv[0] = absolute(want.argv[0]);
	want.spied_argv = want.argv;
	if (want.valgrind) {
		/* 97: no program here exits with it. */
		static char *vg[] = { NULL, "-q", "--error-exitcode=97", "--" };
		const size_t n = sizeof(vg) / sizeof(vg[0]);

		want.spied_argv = calloc(n + (size_t)want.argc + 1, sizeof(char *));
		if (!want.spied_argv)
			exit(2);
		vg[0] = absolute(want.valgrind);
		memcpy(want.spied_argv, vg, sizeof(vg));
		memcpy(want.spied_argv + n, want.argv, (size_t)want.argc * sizeof(char *));
	}
}

/* ---- main ---- */

static struct CMUnitTest tests[3 * MAX_ITEMS + 16];
static size_t n_tests;

static void test(const char *name, CMUnitTestFunction fn, void *state)
{
	tests[n_tests].name = name;
	tests[n_tests].test_func = fn;
	tests[n_tests].initial_state = state;
	n_tests++;
}

static void collect(void)
{
	const char *tmp = getenv("TMPDIR");
	json_error_t err;

	got.dir = xasprintf("%s/gpuspy-check-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(got.dir)) {
		perror("check: mkdtemp");
		exit(2);
	}
	got.plain = run(want.argv, make_env(true, false));
	got.spied = run(want.spied_argv, make_env(true, true));
	got.dirs = count_dirs(got.dir);
	if (want.processes) {
		char *report[] = { (char *)want.cli, "report", "--format", "json", got.dir, NULL };

		got.report = run(report, make_env(false, false));
		got.json = json_loads(got.report.out, 0, &err);
		if (!got.json)
			snprintf(got.json_error, sizeof(got.json_error), "line %d: %s", err.line,
				 err.text);
	}
}

int main(int argc, char **argv)
{
	const char *name;
	int failed;

	parse_args(argc, argv);
	name = strrchr(want.argv[0], '/');
	name = name ? name + 1 : want.argv[0];
	collect();

	test(xasprintf("%s exits %d without gpuspy", name, want.status), test_plain_status, NULL);
	test("same exit status under gpuspy", test_same_status, NULL);
	test("same stdout under gpuspy", test_same_stdout, NULL);
	for (size_t i = 0; i < want.n_lines; i++)
		test(xasprintf("stdout has \"%s\"", want.lines[i]), test_line,
		     (void *)want.lines[i]);
	test(xasprintf("%lld process directories", want.processes), test_dirs, NULL);
	if (want.processes) {
		test("gpuspy report --format json", test_report_runs, NULL);
		test("format", test_format, NULL);
		test("processes", test_processes, NULL);
		if (want.leaked_bytes != UNCHECKED)
			test(xasprintf("leaked.bytes %lld", want.leaked_bytes), test_leaked_bytes,
			     NULL);
		if (want.leaked_allocs != UNCHECKED)
			test(xasprintf("leaked.allocations %lld", want.leaked_allocs),
			     test_leaked_allocs, NULL);
		for (size_t i = 0; i < want.n_sites; i++)
			test(xasprintf("sites of %s leak %lld/%lld", want.sites[i].function,
				       want.sites[i].bytes, want.sites[i].allocs),
			     test_site, &want.sites[i]);
		for (size_t i = 0; i < want.n_allocs; i++)
			test(xasprintf("sites of %s made %lld allocations", want.allocs[i].function,
				       want.allocs[i].allocs),
			     test_site_allocs, &want.allocs[i]);
		for (size_t i = 0; i < want.n_apis; i++)
			test(xasprintf("sites of %s are reported as %s", want.apis[i].function,
				       want.apis[i].api),
			     test_site_api, &want.apis[i]);
		if (want.total_allocs != UNCHECKED)
			test(xasprintf("%lld allocations in all", want.total_allocs),
			     test_total_allocs, NULL);
		if (want.total_frees != UNCHECKED)
			test(xasprintf("%lld frees in all", want.total_frees), test_total_frees,
			     NULL);
		for (size_t i = 0; i < want.n_json; i++)
			test(xasprintf("%s is %lld", want.json[i].function, want.json[i].allocs),
			     test_json, &want.json[i]);
		test(xasprintf("pinned.leaked_bytes %lld", want.pinned_bytes), test_pinned, NULL);
		test(xasprintf("untracked_frees %lld", want.untracked), test_untracked, NULL);
	}

	failed = _cmocka_run_group_tests(name, tests, n_tests, NULL, NULL);
	if (failed) {
		fprintf(stderr, "check: output kept in %s\n", got.dir);
		if (want.processes)
			fprintf(stderr, "check: gpuspy report said:\n%s\n", got.report.out);
	} else {
		nftw(got.dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	return failed ? 1 : 0;
}
