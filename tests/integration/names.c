/* SPDX-License-Identifier: MIT */
/*
 * Names found inside the process, for tests/integration/names.py.  Built
 * without -rdynamic, so that the process's dynamic symbols name none of
 * its functions: only the executable's .symtab names staircase_here(), a
 * static function that keeps 1 MiB at every step (a staircase).
 *
 *   names exe STEPS STEP_MS                    staircase_here() each step
 *   names exe-replace STEPS STEP_MS FILE       after the first step, FILE is
 *                                              renamed over this program
 *   names exe-delete STEPS STEP_MS             after the first step, this
 *                                              program is deleted
 *   names lib STEPS STEP_MS LIB [OTHER|-]      LIB's static function each
 *                                              step; OTHER is renamed over
 *                                              LIB ("-": LIB is deleted)
 *                                              once it is loaded, before
 *                                              its first step
 *   names lib-call STEPS STEP_MS LIB [OTHER|-] the same through LIB's
 *                                              exported names_lib_call()
 *
 * Then "names: held" on stdout, and it waits for stdin to end (the test
 * reads the metrics meanwhile) before it exits.  Built with -DIMPOSTOR
 * (names.py renames that build over this one), the same code names its
 * function impostor_here: a name that must never be shown for this one.
 */
#include <time.h>
#include <unistd.h>

#include "prog.h"

#ifdef IMPOSTOR
#define staircase_here impostor_here
#endif

static __attribute__((noinline)) void staircase_here(void)
{
	void *p;

	rt_ok(cudaMalloc(&p, 1 << 20), "cudaMalloc"); /* the growing line */
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void fail(const char *what, const char *path)
{
	fprintf(stderr, "names: %s %s failed\n", what, path);
	exit(PROG_FAIL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int steps = (int)arg_size(argc, argv, 2);
	long ms = (long)arg_size(argc, argv, 3);
	void (*step)(void) = staircase_here;
	char self[4096], buf[64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		fail("readlink", "/proc/self/exe");
	self[n] = '\0';
	if (strcmp(mode, "lib") == 0 || strcmp(mode, "lib-call") == 0) {
		void *h = argc > 4 ? dlopen(argv[4], RTLD_NOW | RTLD_LOCAL) : NULL;
		void (*(*get)(void))(void) = NULL;

		if (!h)
			fail("dlopen", argc > 4 ? argv[4] : "(none)");
		if (strcmp(mode, "lib") == 0) {
			*(void **)&get = dlsym(h, "names_lib_step");
			if (!get)
				fail("dlsym", "names_lib_step");
			/* called through a pointer: no frame of the library's
			 * is named by the library's dynamic symbols */
			step = get();
		} else {
			*(void **)&step = dlsym(h, "names_lib_call");
			if (!step)
				fail("dlsym", "names_lib_call");
		}
		if (argc > 5 && strcmp(argv[5], "-") == 0 && unlink(argv[4]) < 0)
			fail("unlink", argv[4]);
		if (argc > 5 && strcmp(argv[5], "-") != 0 && rename(argv[5], argv[4]) < 0)
			fail("rename", argv[5]);
	} else if (strcmp(mode, "exe") != 0 && strcmp(mode, "exe-replace") != 0 &&
		   strcmp(mode, "exe-delete") != 0) {
		fprintf(stderr, "names: unknown mode '%s'\n", mode);
		return PROG_FAIL;
	}
	for (int i = 0; i < steps; i++) {
		step();
		/* the module is registered at its first allocation: replaced
		 * after that, before anything names it */
		if (i == 0 && strcmp(mode, "exe-replace") == 0 &&
		    (argc < 5 || rename(argv[4], self) < 0))
			fail("rename", argc > 4 ? argv[4] : "(none)");
		if (i == 0 && strcmp(mode, "exe-delete") == 0 && unlink(self) < 0)
			fail("unlink", self);
		sleep_ms(ms);
	}
	printf("names: held\n");
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	return 0;
}
