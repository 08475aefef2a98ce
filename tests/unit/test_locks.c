/* SPDX-License-Identifier: MIT */
/*
 * fork() while another thread holds each of gpuspy's locks in turn: the
 * child must find every lock free.  The test walks locks.c's own list, so
 * a lock added there is covered with no change here; that no lock exists
 * outside the list is check_locks.sh's business.  The child takes each
 * lock with a deadline and is killed by alarm() as a last resort, so a
 * broken build fails instead of hanging.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "locks.h"
#include "start.h"
#include "state.h"

#define HOLD_MS		 100
#define CHILD_DEADLINE_S 2

static struct gs_mutex *held;
static sem_t taken;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void *holder(void *arg)
{
	(void)arg;
	gs_lock(held);
	sem_post(&taken);
	sleep_ms(HOLD_MS);
	gs_unlock(held);
	return NULL;
}

/* Takes L, trying until the monotonic clock passes DEADLINE. */
static bool lock_by(struct gs_mutex *l, const struct timespec *deadline)
{
	struct timespec now;

	while (!gs_trylock(l)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > deadline->tv_sec ||
		    (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec))
			return false;
		sleep_ms(1);
	}
	return true;
}

/* In the child: every lock of the list, in order, within the deadline. */
static int child_takes_all(void)
{
	struct timespec deadline;

	alarm(CHILD_DEADLINE_S * 3);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += CHILD_DEADLINE_S;
	for (unsigned g = 0; g < locks_count(); g++) {
		const struct gs_lock_group *grp = locks_group(g);

		for (unsigned i = 0; i < grp->n; i++)
			if (!lock_by(&grp->locks[i], &deadline))
				return 10 + (int)g;
	}
	return 0;
}

static void fork_while_held(const struct gs_lock_group *grp, unsigned i)
{
	pthread_t t;
	pid_t pid;
	int status;

	held = &grp->locks[i];
	assert_int_equal(pthread_create(&t, NULL, holder, NULL), 0);
	sem_wait(&taken);
	pid = fork();
	if (pid == 0)
		_exit(child_takes_all());
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	pthread_join(t, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child forked while lock %s[%u] was held: %s %d", grp->name, i,
			 WIFEXITED(status) ? "exit status" : "killed by signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	/* and the parent has it back */
	assert_true(gs_trylock(held));
	gs_unlock(held);
}

static void test_fork_while_each_lock_held(void **state)
{
	unsigned total = 0;

	(void)state;
	gs_init(); /* registers the fork handlers */
	sem_init(&taken, 0, 0);
	assert_true(locks_count() > 0);
	for (unsigned g = 0; g < locks_count(); g++) {
		const struct gs_lock_group *grp = locks_group(g);

		assert_non_null(grp->name);
		assert_true(grp->n > 0);
		for (unsigned i = 0; i < grp->n; i++, total++)
			fork_while_held(grp, i);
	}
	assert_null(locks_group(locks_count()));
	print_message("forked while each of %u locks was held\n", total);
}

/*
 * Mutual exclusion under contention: threads add to a plain counter under
 * one lock, read-modify-write with a yield in between, so that holders
 * are preempted and the others spin, then sleep in the kernel.  A lost
 * wake-up hangs (the meson timeout), a broken exclusion loses adds.
 */
#define CONTENDERS 8
#define ROUNDS	   20000

static struct gs_mutex contended;
static long counter;

static void *contender(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		long v;

		gs_lock(&contended);
		v = counter;
		if (i % 64 == 0)
			sched_yield();
		counter = v + 1;
		gs_unlock(&contended);
	}
	return NULL;
}

static void test_contended_lock_excludes(void **state)
{
	pthread_t t[CONTENDERS];

	(void)state;
	for (int i = 0; i < CONTENDERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, contender, NULL), 0);
	for (int i = 0; i < CONTENDERS; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(counter, (long)CONTENDERS * ROUNDS);
	assert_true(gs_trylock(&contended));
	assert_false(gs_trylock(&contended));
	gs_unlock(&contended);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contended_lock_excludes),
		cmocka_unit_test(test_fork_while_each_lock_held),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
