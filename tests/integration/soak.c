/* SPDX-License-Identifier: MIT */
/*
 * The soak program (scripts/soak): long runs on the fake driver that count
 * for themselves what gpuspy must report, and say what they cost.
 *
 *   soak churn THREADS PAIRS LEAK_N
 *     THREADS threads each make PAIRS cuMemAlloc/cuMemFree pairs of random
 *     sizes (1 B .. 1 MiB, a fixed seed per thread) from churn_pairs();
 *     then leak_known() leaks LEAK_N allocations of known sizes.
 *   soak sites NSITES HOLD_MS [free]
 *     NSITES allocations, each from its own call stack: walk() recurses
 *     WALK_LEVELS times, branching eight ways at each level on three bits
 *     of the allocation's number, so that every number below 8^WALK_LEVELS
 *     reaches site_alloc() through distinct return addresses.  Three in
 *     four stay live (with "free", none: what the sites cost alone).  Then, for HOLD_MS each, a phase where a few sites
 *     keep allocating and freeing ("steady") and one where nothing
 *     changes ("idle").  Once the sites are made, a gpuspy_mark("created")
 *     when gpuspy is loaded.
 *
 * Each prints "soak: KEY=VALUE ..." lines on stdout, flushed at once: what
 * it counted, its VmRSS along the way, the phases, and last, as its final
 * statement before returning from main, "soak: end_ns=N cpu_ns=M"
 * (CLOCK_MONOTONIC, and the CPU time of all its threads so far) so that the
 * caller can measure how long the process takes to exit, and how much CPU
 * its exit work costs.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "prog.h"

#define WALK_LEVELS 8 /* 8^8 = 16,777,216 distinct stacks */
#define MAX_SIZE    (1u << 20)

void churn_pairs(unsigned thread, size_t pairs);
void leak_known(size_t n);
void walk(unsigned level, unsigned long code);
void site_alloc(unsigned long code);
void walk_codes(unsigned long first, unsigned long n, long hold_ms, bool touch);

static long long clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* VmRSS or VmHWM of this process, in KiB. */
static long status_kb(const char *key)
{
	char line[256];
	size_t len = strlen(key);
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, len) == 0 && line[len] == ':')
			kb = strtol(line + len + 1, NULL, 10);
	fclose(f);
	return kb;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- churn ---- */

struct tally {
	unsigned long long allocs, frees, alloc_bytes, freed_bytes;
} __attribute__((aligned(64)));

static struct tally *tallies;
static atomic_ullong pairs_done;

__attribute__((noinline)) void churn_pairs(unsigned thread, size_t pairs)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull * (thread + 1);
	struct tally *t = &tallies[thread];
	CUdeviceptr p;

	for (size_t i = 0; i < pairs; i++) {
		size_t size = 1 + (size_t)(xorshift(&seed) % MAX_SIZE);

		cu_ok(cuMemAlloc_v2(&p, size), "cuMemAlloc_v2");
		t->allocs++;
		t->alloc_bytes += size;
		cu_ok(cuMemFree_v2(p), "cuMemFree_v2");
		t->frees++;
		t->freed_bytes += size;
		if ((i & 1023) == 1023)
			atomic_fetch_add_explicit(&pairs_done, 1024, memory_order_relaxed);
	}
	atomic_fetch_add_explicit(&pairs_done, pairs & 1023, memory_order_relaxed);
}

struct job {
	unsigned thread;
	size_t pairs;
};

static void *churn_main(void *arg)
{
	const struct job *j = arg;

	driver_context();
	churn_pairs(j->thread, j->pairs);
	return NULL;
}

/* Allocation i is (i + 1) * 4097 bytes. */
__attribute__((noinline)) void leak_known(size_t n)
{
	CUdeviceptr p;

	for (size_t i = 0; i < n; i++)
		cu_ok(cuMemAlloc_v2(&p, (i + 1) * 4097), "cuMemAlloc_v2");
}

static int churn(int argc, char **argv)
{
	unsigned nthreads = (unsigned)arg_size(argc, argv, 2);
	size_t pairs = arg_size(argc, argv, 3), leak_n = arg_size(argc, argv, 4);
	unsigned long long total = (unsigned long long)nthreads * pairs, first_at = 0;
	struct tally sum = { 0 };
	pthread_t *th = calloc(nthreads, sizeof(*th));
	struct job *jobs = calloc(nthreads, sizeof(*jobs));
	long first_kb = -1;
	long long t0;

	tallies = calloc(nthreads, sizeof(*tallies));
	if (!th || !jobs || !tallies || !nthreads)
		return PROG_FAIL;
	driver_context();
	t0 = now_ns();
	for (unsigned i = 0; i < nthreads; i++) {
		jobs[i] = (struct job){ i, pairs };
		if (pthread_create(&th[i], NULL, churn_main, &jobs[i]))
			return PROG_FAIL;
	}
	/* The RSS once a tenth of the pairs are made (everything gpuspy
	 * sets up once is there by then) and at the end: the difference is
	 * what the pairs themselves cost. */
	while (first_kb < 0) {
		unsigned long long done = atomic_load(&pairs_done);
		struct timespec pause = { 0, 5 * 1000 * 1000 };

		if (done >= total / 10) {
			first_kb = status_kb("VmRSS");
			first_at = done;
		} else {
			nanosleep(&pause, NULL);
		}
	}
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("soak: pairs=%llu wall_ns=%lld rss_first_kb=%ld rss_first_at=%llu "
	       "rss_last_kb=%ld rss_last_at=%llu hwm_kb=%ld\n",
	       total, now_ns() - t0, first_kb, first_at, status_kb("VmRSS"),
	       (unsigned long long)atomic_load(&pairs_done), status_kb("VmHWM"));
	leak_known(leak_n);
	for (unsigned i = 0; i < nthreads; i++) {
		sum.allocs += tallies[i].allocs;
		sum.frees += tallies[i].frees;
		sum.alloc_bytes += tallies[i].alloc_bytes;
		sum.freed_bytes += tallies[i].freed_bytes;
	}
	sum.allocs += leak_n;
	sum.alloc_bytes += 4097ull * leak_n * (leak_n + 1) / 2;
	printf("soak: allocations=%llu frees=%llu allocated_bytes=%llu freed_bytes=%llu "
	       "live_bytes=%llu live_allocations=%llu\n",
	       sum.allocs, sum.frees, sum.alloc_bytes, sum.freed_bytes,
	       sum.alloc_bytes - sum.freed_bytes, sum.allocs - sum.frees);
	free(th);
	free(jobs);
	free(tallies);
	printf("soak: end_ns=%lld cpu_ns=%lld\n", now_ns(), clock_ns(CLOCK_PROCESS_CPUTIME_ID));
	fflush(stdout);
	return 0;
}

/* ---- distinct sites ---- */

static struct tally site_tally;
static bool keep_live = true, free_all;

__attribute__((noinline)) void site_alloc(unsigned long code)
{
	size_t size = 1 + (size_t)(code * 2654435761u % 65536);
	CUdeviceptr p;

	cu_ok(cuMemAlloc_v2(&p, size), "cuMemAlloc_v2");
	site_tally.allocs++;
	site_tally.alloc_bytes += size;
	/* the newest block is the fake driver's first: freed in O(1) */
	if (!keep_live || free_all || code % 4 == 0) {
		cu_ok(cuMemFree_v2(p), "cuMemFree_v2");
		site_tally.frees++;
		site_tally.freed_bytes += size;
	}
}

/* One call instruction per branch and level: 8^level distinct stacks. */
__attribute__((noinline)) void walk(unsigned level, unsigned long code)
{
	if (level == 0) {
		site_alloc(code);
		return;
	}
	switch ((code >> (3 * (level - 1))) & 7) {
	case 0:
		walk(level - 1, code);
		break;
	case 1:
		walk(level - 1, code);
		break;
	case 2:
		walk(level - 1, code);
		break;
	case 3:
		walk(level - 1, code);
		break;
	case 4:
		walk(level - 1, code);
		break;
	case 5:
		walk(level - 1, code);
		break;
	case 6:
		walk(level - 1, code);
		break;
	default:
		walk(level - 1, code);
		break;
	}
}

/*
 * The one call of walk(), so that the phases reach the same stacks as the
 * sites were made with: N codes from FIRST; or for HOLD_MS, when TOUCH, a
 * few of the sites made again and again (alloc + free, nothing new).
 */
__attribute__((noinline)) void walk_codes(unsigned long first, unsigned long n, long hold_ms,
					  bool touch)
{
	long long end = now_ns() + hold_ms * 1000000LL;
	struct timespec pause = { 0, 1000 * 1000 };

	keep_live = !hold_ms;
	for (unsigned long i = 0;; i++) {
		if (hold_ms ? now_ns() >= end : i >= n)
			break;
		/* one call instruction for every code, or the stacks differ */
		if (!hold_ms || touch)
			walk(WALK_LEVELS, hold_ms ? (i % 16) * 4 + 4 : first + i);
		if (hold_ms)
			nanosleep(&pause, NULL);
	}
	keep_live = true;
}

/* gpuspy_mark(), when gpuspy is loaded: each site that holds memory
 * holds one allocation, so the mark holds as many sites as allocations. */
static void mark(const char *label)
{
	void (*fn)(const char *) = NULL;
	void *p = dlsym(RTLD_DEFAULT, "gpuspy_mark");

	memcpy(&fn, &p, sizeof(p));
	if (fn)
		fn(label);
}

static int sites(int argc, char **argv)
{
	size_t n = arg_size(argc, argv, 2);
	long hold_ms = (long)arg_size(argc, argv, 3);
	const struct {
		const char *name;
		long hold_ms;
		bool touch;
	} phases[] = { { NULL, 0, false },
		       { "steady", hold_ms, true },
		       { "idle", hold_ms, false } };
	long rss0 = 0;
	long long t0 = 0;

	if (n > (1ul << (3 * WALK_LEVELS)) || n < 64)
		return PROG_FAIL;
	free_all = argc > 4 && strcmp(argv[4], "free") == 0;
	driver_context();
	for (size_t p = 0; p < sizeof(phases) / sizeof(phases[0]); p++) {
		if (phases[p].name) {
			printf("soak: phase=%s start_ns=%lld\n", phases[p].name, now_ns());
			fflush(stdout);
		} else {
			rss0 = status_kb("VmRSS");
			t0 = now_ns();
		}
		walk_codes(0, n, phases[p].hold_ms, phases[p].touch);
		if (phases[p].name) {
			printf("soak: phase=%s end_ns=%lld\n", phases[p].name, now_ns());
		} else {
			printf("soak: sites=%zu create_ns=%lld rss_before_kb=%ld rss_after_kb=%ld "
			       "marked_sites=%llu marked_bytes=%llu\n",
			       n, now_ns() - t0, rss0, status_kb("VmRSS"),
			       site_tally.allocs - site_tally.frees,
			       site_tally.alloc_bytes - site_tally.freed_bytes);
			mark("created");
		}
		fflush(stdout);
	}
	printf("soak: allocations=%llu frees=%llu allocated_bytes=%llu freed_bytes=%llu "
	       "live_bytes=%llu live_allocations=%llu hwm_kb=%ld\n",
	       site_tally.allocs, site_tally.frees, site_tally.alloc_bytes, site_tally.freed_bytes,
	       site_tally.alloc_bytes - site_tally.freed_bytes,
	       site_tally.allocs - site_tally.frees, status_kb("VmHWM"));
	printf("soak: end_ns=%lld cpu_ns=%lld\n", now_ns(), clock_ns(CLOCK_PROCESS_CPUTIME_ID));
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "churn") == 0)
		return churn(argc, argv);
	if (argc > 1 && strcmp(argv[1], "sites") == 0)
		return sites(argc, argv);
	fprintf(stderr,
		"usage: soak churn THREADS PAIRS LEAK_N | soak sites NSITES HOLD_MS [free]\n");
	return PROG_FAIL;
}
