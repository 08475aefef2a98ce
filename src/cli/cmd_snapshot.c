/* SPDX-License-Identifier: MIT */
/*
 * gpuspy snapshot PID [LABEL]: ask a running process to write a snapshot
 * now.  The label goes into <its process directory>/.request, then the
 * signal (its GPUSPY_SIGNAL, by default SIGUSR2); the process's gpuspy
 * thread writes snapshot-N.json, whose path is printed.  Nothing is sent
 * unless libgpuspy.so is mapped into PID and PID handles that signal:
 * its default action would end the process.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "env.h"
#include "names.h"

static const char usage_line[] = "Usage: gpuspy snapshot PID [LABEL]\n";
static const char usage[] =
	"Usage: gpuspy snapshot PID [LABEL]\n"
	"\n"
	"Ask process PID, running under gpuspy, to write a snapshot now: LABEL\n"
	"(default \"snapshot\") is left in its process directory, then the signal\n"
	"of its GPUSPY_SIGNAL (SIGUSR2) is sent, and the path of the\n"
	"snapshot-N.json it writes is printed: a complete report of that moment,\n"
	"for 'gpuspy report'.  Nothing is sent unless libgpuspy.so is mapped into\n"
	"PID and PID handles that signal (its default action ends a process).\n"
	"\n"
	"  -h, --help         show this help\n"
	"\n"
	"Example:\n"
	"  gpuspy snapshot 4242 \"before eval\"\n"
	"  gpuspy report gpuspy-out/latest/node7-4242/snapshot-1.json\n"
	"\n"
	"Exit status: 0 written (its path on stdout); 1 the label could not be\n"
	"written, or no snapshot came within 5 seconds; 2 bad usage, or nothing\n"
	"sent (no such process, no gpuspy or no handler in it yet,\n"
	"GPUSPY_SIGNAL=off, /proc unreadable, no gpuspy directory).\n";

static int count_snapshots(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strncmp(e->d_name, GS_FILE_SNAPSHOT_N_PREFIX,
			     strlen(GS_FILE_SNAPSHOT_N_PREFIX)) == 0;
	closedir(d);
	return n;
}

/*
 * Whether libgpuspy.so is mapped into PID: a stale process directory, or
 * a pid reused since, must not get a signal whose default action ends
 * the process.  0, -ESRCH when it is not there, or -errno when the maps
 * cannot be read.
 */
static int gpuspy_loaded(pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int r = -ESRCH;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (r && getline(&line, &cap, f) > 0) {
		char *nl = strchr(line, '\n'), *base;

		if (nl)
			*nl = '\0';
		base = strrchr(line, '/');
		if (base && strcmp(base + 1, "libgpuspy.so") == 0)
			r = 0;
	}
	if (r && ferror(f))
		r = -EIO;
	free(line);
	fclose(f);
	return r;
}

/* Whether PID has a handler on SIG (SigCgt of /proc/PID/status): gpuspy
 * installs its own at its first allocation, unless the program has one. */
static bool catches(pid_t pid, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *end;

		if (strncmp(line, "SigCgt:", 7) != 0)
			continue;
		errno = 0;
		mask = strtoull(line + 7, &end, 16);
		found = end != line + 7 && errno == 0;
	}
	fclose(f);
	return found && sig >= 1 && sig <= 64 && ((mask >> (sig - 1)) & 1);
}

/* The signal PID's gpuspy listens to: its GPUSPY_SIGNAL, read as the
 * library read it (env_signal), fallback included.  -errno when its
 * environment cannot be read: unset is not to be assumed then. */
static int signal_of(pid_t pid)
{
	char path[64];
	char *v;
	int sig, fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	v = procfs_env(pid, "GPUSPY_SIGNAL");
	sig = env_signal(v);
	if (sig == -EPERM) {
		cli_error(NULL, "GPUSPY_SIGNAL=%s: refused by the library; process %d uses SIGUSR2",
			  v, (int)pid);
		sig = GS_SIGNAL_DEFAULT;
	} else if (sig < 0) {
		cli_error(
			NULL,
			"GPUSPY_SIGNAL=%s: not SIGUSR1, SIGUSR2, a number or off; process %d uses "
			"SIGUSR2",
			v, (int)pid);
		sig = GS_SIGNAL_DEFAULT;
	}
	free(v);
	return sig;
}

/*
 * LABEL into DIR/.request for process PID, never through a link: DIR is
 * opened without following one and must belong to PID's user or to us
 * (in a shared run directory anyone can make a <host>-<pid>), the file
 * is created anew (O_EXCL), and what is in its place already - a request
 * not yet taken, or a planted link - is removed, never opened.  0 or
 * -errno, -EPERM for a directory of someone else's.
 */
static int write_request(pid_t pid, const char *dir, const char *label)
{
	char proc[32];
	struct stat st, target;
	size_t len = strlen(label);
	int dfd, fd = -1, err = 0;

	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (stat(proc, &target) < 0)
		return -errno;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fstat(dfd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (st.st_uid != target.st_uid && st.st_uid != geteuid()) {
		err = -EPERM;
		goto out;
	}
	for (int i = 0; i < 2 && fd < 0; i++) {
		fd = openat(dfd, GS_FILE_REQUEST,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && (errno != EEXIST || i || unlinkat(dfd, GS_FILE_REQUEST, 0) < 0)) {
			err = -errno;
			goto out;
		}
	}
	/* the process reads it: its owner's, when we are root */
	if (geteuid() != target.st_uid && fchown(fd, target.st_uid, target.st_gid) < 0)
		err = -errno;
	if (!err && write(fd, label, len) != (ssize_t)len)
		err = errno ? -errno : -EIO;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (err)
		unlinkat(dfd, GS_FILE_REQUEST, 0);
out:
	close(dfd);
	return err;
}

/* SIGUSR2, SIGRTMIN+3 or "signal 40", for a message. */
static const char *signal_label(int sig, char *buf, size_t size)
{
	if (sig == SIGUSR1)
		return "SIGUSR1";
	if (sig == SIGUSR2)
		return "SIGUSR2";
	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, size, "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, size, "signal %d", sig);
	return buf;
}

int cmd_snapshot(int argc, char **argv)
{
	char dir[PATH_MAX * 2], req[PATH_MAX * 2 + 16];
	char *end;
	const char *label;
	long pid;
	int before, sig, err;

	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (argc < 2 || argc > 3) {
		fputs(usage_line, stderr);
		return EXIT_USAGE;
	}
	pid = strtol(argv[1], &end, 10);
	if (*end || pid <= 0 || pid > INT_MAX) {
		cli_error(NULL, "'%s' is not a process id", argv[1]);
		return EXIT_USAGE;
	}
	label = argc == 3 ? argv[2] : "snapshot";
	if (strchr(label, '\n')) {
		cli_error(NULL, "a label is one line");
		return EXIT_USAGE;
	}
	if (kill((pid_t)pid, 0) < 0) {
		cli_error(NULL, "process %ld: %s", pid, strerror(errno));
		return EXIT_USAGE;
	}
	/* Nothing is sent to a process that has no gpuspy listening: the
	 * signal's default action would end it. */
	err = gpuspy_loaded((pid_t)pid);
	if (err == -ESRCH) {
		cli_error(NULL,
			  "process %ld: no gpuspy in this process; "
			  "nothing sent",
			  pid);
		return EXIT_USAGE;
	}
	if (err < 0) {
		cli_error(NULL, "process %ld: /proc/%ld/maps: %s; nothing sent", pid, pid,
			  strerror(-err));
		return EXIT_USAGE;
	}
	sig = signal_of((pid_t)pid);
	if (sig < 0) {
		cli_error(NULL, "process %ld: /proc/%ld/environ: %s; nothing sent", pid, pid,
			  strerror(-sig));
		return EXIT_USAGE;
	}
	if (!sig) {
		cli_error(NULL, "process %ld runs with GPUSPY_SIGNAL=off", pid);
		return EXIT_USAGE;
	}
	if (!catches((pid_t)pid, sig)) {
		char buf[32];

		cli_error(NULL,
			  "process %ld: gpuspy does not handle %s there yet (it "
			  "starts at the first allocation); nothing sent\n",
			  pid, signal_label(sig, buf, sizeof(buf)));
		return EXIT_USAGE;
	}

	procfs_process_dir((pid_t)pid, dir, sizeof(dir));
	before = count_snapshots(dir);
	if (before < 0) {
		cli_error(dir,
			  "no such directory (is process %ld running under "
			  "gpuspy, and has it allocated GPU memory?)",
			  pid);
		return EXIT_USAGE;
	}
	names_join(req, sizeof(req), dir, GS_FILE_REQUEST);
	err = write_request((pid_t)pid, dir, label);
	if (err) {
		cli_error(req, "%s",
			  err == -EPERM ? "the directory is neither the process's nor yours" :
					  strerror(-err));
		return EXIT_FAILURE_OTHER;
	}
	if (kill((pid_t)pid, sig) < 0) {
		cli_error(NULL, "process %ld: %s", pid, strerror(errno));
		unlink(req);
		return EXIT_USAGE;
	}
	/* The thread writes it at once; allow it five seconds. */
	for (int i = 0; i < 500; i++) {
		struct timespec ts = { 0, 10L * 1000 * 1000 };

		if (count_snapshots(dir) > before) {
			printf("%s/" GS_FILE_SNAPSHOT_N "\n", dir, (unsigned)before + 1);
			return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_OTHER;
		}
		nanosleep(&ts, NULL);
	}
	cli_error(NULL, "process %ld wrote no snapshot in 5 s", pid);
	return EXIT_FAILURE_OTHER;
}
