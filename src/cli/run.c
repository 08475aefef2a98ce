/* SPDX-License-Identifier: MIT */
/*
 * gpuspy run: start a command with libgpuspy.so preloaded and its reports
 * directed to one run directory, and pass its exit status on.
 *
 * gpuspy stays the parent rather than exec'ing the command itself, so that
 * it can point at the reports once the command is over; while it waits it
 * behaves like a shell waiting for a foreground job: the terminal's SIGINT
 * and SIGQUIT reach the command directly and gpuspy ignores them, while
 * SIGTERM and SIGHUP, which are usually sent to gpuspy alone, are passed on.
 *
 * How the command ended is recorded in the run directory (run.json): a
 * process of it that wrote no report.json is then known to have been
 * killed, and by which signal, rather than only to have not exited.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "config.h"
#include "cli.h"
#include "discover.h"
#include "env.h"
#include "http.h"
#include "names.h"
#include "rundir.h"
#include "util.h"

/* gpuspy's own failure (fork, memory), as env(1) does, so that it is not
 * taken for a status of the command */
#define EXIT_RUN_FAILED 125

static const char usage[] =
	"Usage: gpuspy run [-o DIR] [--prometheus ADDR] [--] CMD [ARGS...]\n"
	"\n"
	"Run CMD with libgpuspy.so preloaded; every process of it that allocates\n"
	"CUDA memory writes a report under the run directory at exit.\n"
	"\n"
	"  -o, --output DIR   run directory (default: $GPUSPY_OUTPUT_DIR, else a new\n"
	"                     ./gpuspy-out/<time>-<command>-<pid>, and\n"
	"                     ./gpuspy-out/latest points at it)\n"
	"      --prometheus ADDR\n"
	"                     serve each process's metrics at http://ADDR/metrics\n"
	"                     (GPUSPY_PROMETHEUS): PORT (loopback), IPV4:PORT or\n"
	"                     [IPV6]:PORT; port 0: the kernel picks\n"
	"  -h, --help         show this help\n";

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
	pid_t pid = child_pid;
	int saved = errno;

	if (pid > 0)
		kill(pid, sig);
	errno = saved;
}

/* A usage error: one line, then status 2. */
static int usage_error(const char *what, const char *arg)
{
	return cli_usage_error("run", what, arg);
}

/* PATH made absolute against the working directory, without resolving
 * symbolic links: the user's spelling of the path is kept. */
static char *absolute(const char *path)
{
	char *cwd, *s;

	if (path[0] == '/') {
		s = strdup(path);
	} else {
		cwd = getcwd(NULL, 0);
		if (!cwd)
			return NULL;
		s = util_path_join(cwd, path);
		free(cwd);
	}
	if (s)
		util_path_normalize(s, false);
	return s;
}

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The library, in the order of gpuspy-run(1): $GPUSPY_LIBRARY, next to the
 * executable, the build tree's src/preload from src/cli, the installed
 * tree's libdir from its bindir (an install that was moved, or staged
 * with DESTDIR), the configured libdir.  NULL with a message printed. */
static char *find_library(void)
{
	const char *env = getenv("GPUSPY_LIBRARY");
	char exe[PATH_MAX];
	char *candidates[4] = { NULL, NULL, NULL, NULL };
	char *found = NULL;
	ssize_t n;

	if (env && env[0]) {
		/* asked for explicitly: no silent fallback to another one */
		if (!is_file(env)) {
			cli_error(env, "no such file (GPUSPY_LIBRARY)");
			return NULL;
		}
		/* the file exists: its canonical path is the one ld.so
		 * would also end up with */
		found = realpath(env, NULL);
		if (!found)
			cli_error(env, "%s (GPUSPY_LIBRARY)", strerror(errno));
		return found;
	}

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			candidates[0] = util_path_join(exe, "libgpuspy.so");
			candidates[1] = util_path_join(exe, "../preload/libgpuspy.so");
			/* /proc/self/exe has no symbolic links left, so ".."
			 * may be removed lexically */
			if (candidates[1])
				util_path_normalize(candidates[1], true);
			/* empty when bindir or libdir was configured absolute */
			if (GPUSPY_BIN_TO_LIB[0])
				candidates[2] =
					util_path_join(exe, GPUSPY_BIN_TO_LIB "/libgpuspy.so");
			if (candidates[2])
				util_path_normalize(candidates[2], true);
		}
	}
	candidates[3] = strdup(GPUSPY_LIBDIR "/libgpuspy.so");
	for (int i = 0; i < 4; i++) {
		if (!found && candidates[i] && is_file(candidates[i])) {
			found = candidates[i];
			candidates[i] = NULL;
		}
		free(candidates[i]);
	}
	if (!found)
		cli_error("libgpuspy.so",
			  "not found (looked next to gpuspy, in ../preload, " GPUSPY_BIN_TO_LIB
			  " and %s); set GPUSPY_LIBRARY",
			  GPUSPY_LIBDIR);
	return found;
}

/* Whether LIST (LD_PRELOAD: separated by spaces or colons, as ld.so reads
 * it) already names LIB, by that name or by another path to the same
 * file. */
static bool preload_has(const char *list, const char *lib)
{
	size_t len = strlen(lib);
	struct stat lst, st;
	bool have_lst = stat(lib, &lst) == 0;

	while (*list) {
		size_t n = strcspn(list, " :");

		if (n == len && memcmp(list, lib, len) == 0)
			return true;
		if (have_lst && n > 0 && n < PATH_MAX) {
			char one[PATH_MAX];

			memcpy(one, list, n);
			one[n] = '\0';
			if (stat(one, &st) == 0 && st.st_dev == lst.st_dev &&
			    st.st_ino == lst.st_ino)
				return true;
		}
		list += n;
		if (*list)
			list++;
	}
	return false;
}

/* LD_PRELOAD with LIB first, and the run: GPUSPY_RUN_ID and GPUSPY_RUN_DIR
 * (rundir_choose: every process of the command inherits them), and
 * GPUSPY_OUTPUT_DIR for an explicit run directory. */
static int setup_environment(const char *lib, const struct rundir_choice *run, bool explicit)
{
	const char *old = getenv("LD_PRELOAD");
	char *val = NULL;
	int r = 0;

	if (!old || !old[0] || !preload_has(old, lib)) {
		/* first, so that gpuspy's wrappers are found before those of
		 * any other preloaded library */
		if (old && old[0]) {
			if (asprintf(&val, "%s:%s", lib, old) < 0)
				return -ENOMEM;
		} else {
			val = strdup(lib);
			if (!val)
				return -ENOMEM;
		}
		r = setenv("LD_PRELOAD", val, 1) < 0 ? -errno : 0;
		free(val);
	}
	if (r == 0 && explicit && setenv("GPUSPY_OUTPUT_DIR", run->dir, 1) < 0)
		r = -errno;
	if (r == 0 && !explicit && unsetenv("GPUSPY_OUTPUT_DIR") < 0)
		r = -errno;
	if (r == 0 &&
	    (setenv(GS_ENV_RUN_ID, run->id, 1) < 0 || setenv(GS_ENV_RUN_DIR, run->dir, 1) < 0))
		r = -errno;
	return r;
}

/* How the command went: its pid, when it started and ended, its wait
 * status (valid when WAITED). */
struct outcome {
	pid_t pid;
	double start_time, end_time;
	bool waited;
	int status;
	/* the commit the run was built from ("" when unknown), and where it
	 * was found: a variable of names_commit_env, or "git" */
	char commit[GS_COMMIT_MAX + 1];
	const char *commit_from;
};

/* The commit of the run into O: the first of names_commit_env that is set
 * (and is a commit, names_commit_valid), else the working directory's
 * HEAD when it is a git repository; "" when neither says. */
static void find_commit(struct outcome *o)
{
	char buf[GS_COMMIT_MAX + 2];

	o->commit[0] = '\0';
	o->commit_from = NULL;
	for (size_t i = 0; i < GS_COMMIT_ENV_COUNT; i++) {
		const char *v = getenv(names_commit_env[i]);

		if (v && *v) {
			if (!names_commit_valid(v)) {
				cli_error(NULL,
					  "warning: $%s is not a commit (blanks, control "
					  "characters, or more than %d bytes): not recorded",
					  names_commit_env[i], GS_COMMIT_MAX);
				continue;
			}
			memcpy(o->commit, v, strlen(v) + 1);
			o->commit_from = names_commit_env[i];
			return;
		}
	}
	/* valid: at most GS_COMMIT_MAX bytes */
	if (cli_git((const char *const[]){ "rev-parse", "--verify", "--quiet", "HEAD", NULL }, buf,
		    sizeof(buf)) == 0 &&
	    names_commit_valid(buf)) {
		memcpy(o->commit, buf, strlen(buf) + 1);
		o->commit_from = "git";
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fork, exec, wait.  Returns the exit status to pass on. */
static int spawn(char **argv, struct outcome *o)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	struct sigaction fwd = { .sa_handler = forward_signal };
	struct sigaction old_int, old_quit, old_term, old_hup;
	sigset_t block, old_mask;
	int status, r;
	pid_t pid;

	/* TERM and HUP stay blocked until the child's pid is known to the
	 * handler, so that neither is lost nor kills gpuspy alone */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old_mask);
	sigemptyset(&fwd.sa_mask);
	fwd.sa_flags = SA_RESTART;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	sigaction(SIGTERM, &fwd, &old_term);
	sigaction(SIGHUP, &fwd, &old_hup);

	fflush(NULL);
	o->start_time = now();
	pid = fork();
	if (pid < 0) {
		cli_error(NULL, "fork: %s", strerror(errno));
		return EXIT_RUN_FAILED;
	}
	if (pid == 0) {
		/* Dispositions first, mask last: a TERM that arrived since
		 * the fork then acts on the child as it would have on the
		 * command.  An ignored SIGINT would survive exec, hence the
		 * restore of the original (usually default) action. */
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		execvp(argv[0], argv);
		r = errno;
		cli_error(argv[0], "%s", strerror(r));
		/* as shells do: 127 not found, 126 found but not executable */
		_exit(r == ENOENT || r == ENOTDIR ? EXIT_EXEC_NOT_FOUND : EXIT_EXEC_FAILED);
	}
	child_pid = pid;
	o->pid = pid;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);

	while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	child_pid = 0;
	o->end_time = now();
	if (r < 0) {
		cli_error(NULL, "waitpid: %s", strerror(errno));
		return EXIT_RUN_FAILED;
	}
	o->waited = true;
	o->status = status;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_RUN_FAILED;
}

/* DOC written to DIR/NAME whole, through a temporary of this process's
 * own, never through a link (cli_write_file). */
static int write_json_file(const char *dir, const char *name, const json_t *doc)
{
	char path[GS_FILE_PATH_SIZE];
	char *text = json_dumps(doc, JSON_INDENT(2));
	char *nl;
	int r;

	if (!text)
		return -ENOMEM;
	if (names_join(path, sizeof(path), dir, name) < 0) {
		free(text);
		return -ENAMETOOLONG;
	}
	nl = realloc(text, strlen(text) + 2);
	if (!nl) {
		free(text);
		return -ENOMEM;
	}
	strcat(nl, "\n");
	r = cli_write_file(path, nl, strlen(nl));
	free(nl);
	return r;
}

/* run.json (docs/format.md, "gpuspy-run/1"): the command, its run id,
 * pid and host, when it started and ended, and its exit status or the
 * signal that killed it.  Written even when no process of the command
 * allocated anything: `gpuspy report` then says so, and what ran. */
static void record_run(const char *outdir, const char *id, char **argv, const struct outcome *o)
{
	char host[GS_HOST_SIZE];
	struct stat st;
	json_t *doc, *cmd;
	int r = -ENOMEM;

	if (!o->waited || stat(outdir, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	names_host(host, sizeof(host));
	doc = json_object();
	cmd = json_array();
	if (doc && cmd) {
		for (char **a = argv; *a; a++)
			json_array_append_new(cmd, json_string(*a));
		json_object_set_new(doc, "format", json_string(GS_FORMAT_RUN));
		json_object_set_new(doc, "gpuspy_version", json_string(GPUSPY_VERSION));
		json_object_set_new(doc, "command", cmd);
		cmd = NULL;
		json_object_set_new(doc, "run", json_string(id));
		json_object_set_new(doc, "host", json_string(host));
		json_object_set_new(doc, "pid", json_integer(o->pid));
		json_object_set_new(doc, "start_time", json_real(o->start_time));
		json_object_set_new(doc, "end_time", json_real(o->end_time));
		if (o->commit[0]) {
			json_object_set_new(doc, "commit", json_string(o->commit));
			json_object_set_new(doc, "commit_from", json_string(o->commit_from));
		}
		if (WIFSIGNALED(o->status))
			json_object_set_new(doc, "signal", json_integer(WTERMSIG(o->status)));
		else
			json_object_set_new(doc, "exit_status",
					    json_integer(WIFEXITED(o->status) ?
								 WEXITSTATUS(o->status) :
								 EXIT_RUN_FAILED));
		r = write_json_file(outdir, GS_FILE_RUN, doc);
	}
	json_decref(cmd);
	json_decref(doc);
	if (r < 0) {
		char file[PATH_MAX + sizeof(GS_FILE_RUN) + 1];

		snprintf(file, sizeof(file), "%s/" GS_FILE_RUN, outdir);
		cli_error(file, "cannot record the run: %s", strerror(-r));
	}
}

/* PATH and the directories above it, made 0700 where missing, as the
 * library makes them; one that exists is taken as it is, provided it is a
 * directory.  0 or -errno. */
static int make_dirs(char *path)
{
	struct stat st;

	for (char *p = path + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			int r = -errno;

			*p = c;
			return r;
		}
		*p = c;
		if (!c)
			break;
	}
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* How many process directories (<host>-<pid>) DIR holds; 0 when it does
 * not exist. */
static size_t count_processes(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	pid_t pid;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.' && names_parse_process_dir(de->d_name, &pid, NULL) == 0;
	closedir(d);
	return n;
}

/*
 * The run directory, made before the command starts.  An explicit one
 * that holds an earlier run is warned about: the two are read as one.  A
 * new one under the default output directory must be ours (its name is
 * easy to guess: another user's directory or link there is refused), and
 * "latest" is pointed at it.  0, or -1 with the reason printed.
 */
static int prepare_run_dir(const struct rundir_choice *run)
{
	char path[GS_RUN_DIR_SIZE];
	struct stat st;
	size_t n;
	int r;

	if (!run->output_dir[0]) {
		n = count_processes(run->dir);
		if (n > 0) {
			fputs("gpuspy run: ", stderr);
			cli_put_clean(stderr, run->dir);
			fprintf(stderr,
				" already holds %zu process %s of an earlier run: its reports "
				"and this run's will be read together; give each run its own "
				"directory\n",
				n, n == 1 ? "directory" : "directories");
		}
	}
	snprintf(path, sizeof(path), "%s", run->output_dir[0] ? run->output_dir : run->dir);
	r = make_dirs(path);
	if (r == 0 && run->output_dir[0] && mkdir(run->dir, 0700) < 0 && errno != EEXIST)
		r = -errno;
	if (r == 0 && run->output_dir[0] &&
	    (lstat(run->dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()))
		r = -EPERM;
	if (r < 0) {
		fputs("gpuspy run: cannot make the run directory ", stderr);
		cli_put_clean(stderr, run->dir);
		fprintf(stderr, ": %s\n",
			r == -EPERM ? "something not ours is there" : strerror(-r));
		return -1;
	}
	if (run->output_dir[0]) {
		r = rundir_point_latest(run->output_dir, run->id);
		if (r < 0) {
			fputs("gpuspy run: cannot point ", stderr);
			cli_put_clean(stderr, run->output_dir);
			fprintf(stderr, "/" GS_FILE_LATEST " at the run: %s\n", strerror(-r));
		}
	}
	return 0;
}

/* "SIGKILL", or NULL for a number without a name. */
static const char *signal_name(int sig)
{
	static char buf[16];
	const char *abbrev = sigabbrev_np(sig);

	if (!abbrev)
		return NULL;
	snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	return buf;
}

int run_print_library(void)
{
	char *lib = find_library();
	int e;

	if (!lib)
		return EXIT_USAGE;
	e = puts(lib) < 0 || fflush(stdout) != 0 ? EXIT_FAILURE_OTHER : EXIT_OK;
	free(lib);
	return e;
}

/* Whether NAME is a temporary of the library's, ".<file>.tmp". */
static bool tmp_name(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && name[0] == '.' && strcmp(name + n - 4, ".tmp") == 0;
}

/*
 * The temporaries a process killed mid-write left (".snapshot.json.tmp"):
 * in each process directory of RUN_DIR of this host whose process is gone,
 * every such regular file of ours is removed, relative to the directory,
 * never through a link.  Nothing else is touched; a process still running
 * (a daemon the command left) keeps its own.
 */
static void sweep_temporaries(const char *run_dir)
{
	char host[GS_HOST_SIZE];
	struct dirent *de;
	DIR *d = opendir(run_dir);

	if (!d)
		return;
	names_host_component(host, sizeof(host));
	while ((de = readdir(d))) {
		size_t host_len;
		struct dirent *e;
		pid_t pid;
		DIR *pd;
		int fd;

		if (names_parse_process_dir(de->d_name, &pid, &host_len) < 0 ||
		    host_len != strlen(host) || strncmp(de->d_name, host, host_len) != 0 ||
		    kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		pd = fd >= 0 ? fdopendir(fd) : NULL;
		if (!pd) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		while ((e = readdir(pd))) {
			struct stat st;

			if (tmp_name(e->d_name) &&
			    fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(st.st_mode) && st.st_uid == geteuid())
				unlinkat(fd, e->d_name, 0);
		}
		closedir(pd);
	}
	closedir(d);
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "prometheus", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *outopt = NULL, *env_out, *prom = NULL;
	char *lib = NULL, *outdir = NULL;
	char id[GS_RUN_ID_SIZE];
	struct rundir_choice run = { 0 };
	struct outcome o = { 0 };
	bool reports, explicit;
	int c, r, status;

	opterr = 0;
	optind = 1;
	/* "+": stop at the first non-option, so that the command's own
	 * options are never taken for gpuspy's, with or without "--" */
	while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!optarg[0])
				return usage_error("empty output directory", NULL);
			outopt = optarg;
			break;
		case 'P': {
			struct sockaddr_storage ss;
			socklen_t len;
			bool host;

			if (http_parse_addr(optarg, &ss, &len, &host) < 0)
				return usage_error(
					"--prometheus: not PORT, IPV4:PORT or [IPV6]:PORT:",
					optarg);
			prom = optarg;
			break;
		}
		case 'h':
			fputs(usage, stdout);
			return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_OTHER;
		case ':':
			return usage_error("missing value for", argv[optind - 1]);
		default:
			return usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("no command given", NULL);
	/* the library reads it in every process of the command */
	if (prom && setenv("GPUSPY_PROMETHEUS", prom, 1) < 0) {
		cli_error(NULL, "cannot set the environment: %s", strerror(errno));
		return EXIT_RUN_FAILED;
	}

	lib = find_library();
	if (!lib)
		return EXIT_USAGE;
	/* ld.so splits LD_PRELOAD at spaces and colons, and would look for
	 * the pieces of such a path */
	if (strpbrk(lib, " :")) {
		cli_error(lib, "the library path contains a space or a colon, which LD_PRELOAD "
			       "cannot hold");
		free(lib);
		return EXIT_USAGE;
	}

	env_out = getenv("GPUSPY_OUTPUT_DIR");
	if (!outopt && env_out && env_out[0])
		outopt = env_out;
	explicit = outopt != NULL;
	outdir = absolute(explicit ? outopt : GS_OUTPUT_DIR_DEFAULT);
	if (!outdir) {
		r = errno;
		cli_error(explicit ? outopt : GS_OUTPUT_DIR_DEFAULT, "cannot make it absolute: %s",
			  strerror(r));
		free(lib);
		return EXIT_RUN_FAILED;
	}
	/* A new run, whatever run gpuspy itself may be part of; named after
	 * the command and gpuspy's pid, the root of the command's tree. */
	r = rundir_id(id, sizeof(id), time(NULL), (const char *const *)(argv + optind),
		      (size_t)(argc - optind), getpid());
	if (r == 0) {
		char *cwd = getcwd(NULL, 0);

		r = cwd ? rundir_choose(explicit ? outdir : NULL, NULL, NULL, cwd, id, &run) :
			  -errno;
		free(cwd);
	}
	if (r < 0) {
		fputs("gpuspy run: cannot name the run directory in ", stderr);
		cli_put_clean(stderr, outdir);
		fprintf(stderr, ": %s\n", strerror(-r));
		status = EXIT_RUN_FAILED;
		goto out;
	}
	if (prepare_run_dir(&run) < 0) {
		status = EXIT_RUN_FAILED;
		goto out;
	}

	r = setup_environment(lib, &run, explicit);
	if (r < 0) {
		cli_error(NULL, "cannot set the environment: %s", strerror(-r));
		status = EXIT_RUN_FAILED;
		goto out;
	}

	/* before the command starts: it may move HEAD */
	find_commit(&o);
	status = spawn(argv + optind, &o);
	record_run(run.dir, run.id, argv + optind, &o);
	sweep_temporaries(run.dir);

	/* the reports of this run: an explicit directory may hold older ones */
	reports = discover_has_reports_since(run.dir, explicit ? o.start_time : -1);
	if (o.waited && WIFSIGNALED(o.status)) {
		const char *name = signal_name(WTERMSIG(o.status));

		fputs("gpuspy run: ", stderr);
		cli_put_clean(stderr, argv[optind]);
		fprintf(stderr, " was killed by signal %d", WTERMSIG(o.status));
		if (name)
			fprintf(stderr, " (%s)", name);
		fputs(reports ? "; the reports are partial: the last snapshot of each process\n" :
				"\n",
		      stderr);
	}
	if (reports) {
		fputs("gpuspy: run directory ", stderr);
		cli_put_clean(stderr, run.dir);
		fprintf(stderr, " %s see: gpuspy report ", cli_glyph(CLI_DASH));
		cli_put_clean(stderr, run.dir);
		putc('\n', stderr);
	} else if (o.waited &&
		   !(WIFEXITED(o.status) && (WEXITSTATUS(o.status) == EXIT_EXEC_FAILED ||
					     WEXITSTATUS(o.status) == EXIT_EXEC_NOT_FOUND))) {
		/* not after a command that could not be started: that was said */
		fputs("gpuspy run: no process of ", stderr);
		cli_put_clean(stderr, argv[optind]);
		fputs(" allocated GPU memory through CUDA: it used no GPU, reached CUDA by a way "
		      "gpuspy does not hook, or lost LD_PRELOAD on the way; see libgpuspy(7), "
		      "NOTHING RECORDED\n",
		      stderr);
	}
out:
	free(lib);
	free(outdir);
	return status;
}
