/* SPDX-License-Identifier: MIT */
/*
 * CUDA graph memory (graph.h says what is counted when).
 *
 * The graphs and executable graphs that hold memory nodes, each with its
 * nodes in the order they were added, live in one hash under
 * gs_graph_lock.  A launch of an executable graph without memory nodes
 * finds nothing and records nothing; while no executable graph has memory
 * nodes, a launch does not even take the lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "driver.h"
#include "graph.h"
#include "locks.h"
#include "log.h"
#include "record.h"
#include "state.h"
#include "table.h"

struct node {
	uint64_t dptr, size;
	struct gs_site *site; /* alloc nodes: where the node was made; NULL: a free node */
	int device;
	enum gs_door door;
};

struct graph {
	const void *handle;
	bool is_exec;
	struct node *nodes;
	unsigned n, cap;
	UT_hash_handle hh;
};

static struct graph *graphs; /* gs_graph_lock */
static atomic_int mem_execs; /* executable graphs with memory nodes */
static atomic_bool any;	     /* a graph call was seen: write "graph" */
static atomic_llong nodes_made, node_bytes, launches, trims;
/*
 * The driver's graph-memory figures as last read, per device of
 * driver_info() (gs_graph_lock): the report at exit is written after the
 * runtime's exit handlers, when the driver may no longer answer; it then
 * carries these, with the time they were read.  Read again at every
 * snapshot, trim and destroy of a graph with memory nodes.
 */
static struct {
	bool valid;
	double time;
	unsigned long long v[4];
} last[GS_INFO_DEVICES];

/* Lock held. */
static void refresh(void)
{
	const struct gs_cuda_info *ci = driver_info();

	for (unsigned i = 0; i < ci->ndevices && i < GS_INFO_DEVICES; i++) {
		unsigned long long v[4];

		if (!driver_graph_mem(ci->devices[i].ordinal, v))
			continue;
		memcpy(last[i].v, v, sizeof(v));
		last[i].time = gs_now();
		last[i].valid = true;
	}
}

static struct graph *find(const void *h)
{
	struct graph *g = NULL;

	HASH_FIND_PTR(graphs, &h, g);
	return g;
}

/* Lock held.  The record of H, made when missing; NULL without memory. */
static struct graph *get(const void *h, bool is_exec)
{
	struct graph *g = find(h);

	if (g)
		return g;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->handle = h;
	g->is_exec = is_exec;
	HASH_ADD_PTR(graphs, handle, g);
	if (gs_hash_oom) {
		gs_hash_oom = 0;
		free(g);
		return NULL;
	}
	return g;
}

/* Lock held. */
static int add(struct graph *g, const struct node *n)
{
	if (g->n == g->cap) {
		unsigned cap = g->cap ? 2 * g->cap : 4;
		struct node *nodes = realloc(g->nodes, cap * sizeof(*nodes));

		if (!nodes)
			return -ENOMEM;
		g->nodes = nodes;
		g->cap = cap;
	}
	g->nodes[g->n++] = *n;
	return 0;
}

/* gpuspy's own failure: the graph's memory can no longer be followed. */
static void lost(void)
{
	atomic_store(&gs_state.complete, false);
	gs_fail("out of memory while recording a CUDA graph");
}

void graph_node_alloc(const void *graph, uint64_t dptr, uint64_t size, int device, enum gs_api api,
		      enum gs_door door)
{
	/* The site first, holding no lock: it may activate gpuspy. */
	struct node n = { dptr, size, record_site(api, door, GS_KIND_DEVICE), device, door };
	struct graph *g;

	atomic_store(&any, true);
	if (!n.site)
		return;
	atomic_fetch_add(&nodes_made, 1);
	atomic_fetch_add(&node_bytes, (long long)size);
	gs_lock(&gs_graph_lock);
	g = get(graph, false);
	if (!g || add(g, &n) < 0)
		lost();
	gs_unlock(&gs_graph_lock);
}

void graph_node_free(const void *graph, uint64_t dptr)
{
	struct node n = { .dptr = dptr };
	struct graph *g;

	atomic_store(&any, true);
	gs_lock(&gs_graph_lock);
	g = get(graph, false);
	if (!g || add(g, &n) < 0)
		lost();
	gs_unlock(&gs_graph_lock);
}

void graph_instantiated(const void *graph, const void *exec, unsigned long long flags)
{
	struct graph *g, *e;

	(void)flags; /* AUTO_FREE_ON_LAUNCH: a relaunch then frees, seen at the launch */
	atomic_store(&any, true);
	gs_lock(&gs_graph_lock);
	g = find(graph);
	e = find(exec);
	if (e) {
		/* A record under a handle the driver gave out again: its
		 * destroy was not seen.  The new executable graph's nodes are
		 * its graph's, none of the old ones. */
		HASH_DEL(graphs, e);
		if (e->is_exec && e->n)
			atomic_fetch_sub(&mem_execs, 1);
		free(e->nodes);
		free(e);
	}
	if (g && g->n) {
		e = get(exec, true);
		if (e && (e->nodes = malloc(g->n * sizeof(*e->nodes)))) {
			memcpy(e->nodes, g->nodes, g->n * sizeof(*e->nodes));
			e->n = e->cap = g->n;
			atomic_fetch_add(&mem_execs, 1);
		} else {
			lost();
		}
	}
	gs_unlock(&gs_graph_lock);
}

/*
 * The allocations first, then the frees, as in a graph whose free nodes
 * depend on its alloc nodes.  An allocation still live at its node's
 * address was freed by this launch (AUTO_FREE_ON_LAUNCH; without it the
 * driver refuses the launch) or by a door gpuspy did not see.
 */
void graph_launched(const void *exec)
{
	struct gs_alloc *a;
	struct graph *e;

	atomic_store(&any, true);
	if (!atomic_load_explicit(&mem_execs, memory_order_relaxed) ||
	    !atomic_load_explicit(&gs_state.tracking, memory_order_relaxed))
		return;
	gs_lock(&gs_graph_lock);
	e = find(exec);
	if (e && e->is_exec) {
		atomic_fetch_add(&launches, 1);
		for (unsigned i = 0; i < e->n; i++) {
			const struct node *n = &e->nodes[i];

			if (!n->site)
				continue;
			a = record_free_begin(GS_SPACE_DEVPTR, n->dptr);
			if (a)
				record_free_end(a, n->dptr, true);
			record_resident(n->site, n->door, n->dptr, n->size, n->device);
		}
		for (unsigned i = 0; i < e->n; i++)
			if (!e->nodes[i].site)
				record_free_end(
					record_free_begin(GS_SPACE_DEVPTR, e->nodes[i].dptr),
					e->nodes[i].dptr, true);
	}
	gs_unlock(&gs_graph_lock);
}

/* A graph or an executable graph is gone; memory its launches made live stays. */
void graph_destroyed(const void *handle)
{
	struct graph *g;

	atomic_store(&any, true);
	gs_lock(&gs_graph_lock);
	g = find(handle);
	if (g) {
		/* only graphs with memory nodes: a program may make and drop
		 * small graphs at every step */
		refresh();
		HASH_DEL(graphs, g);
		if (g->is_exec && g->n)
			atomic_fetch_sub(&mem_execs, 1);
		free(g->nodes);
		free(g);
	}
	gs_unlock(&gs_graph_lock);
}

void graph_trimmed(void)
{
	atomic_store(&any, true);
	atomic_fetch_add(&trims, 1);
	gs_lock(&gs_graph_lock);
	refresh();
	gs_unlock(&gs_graph_lock);
}

/* Set once, by the first cuStreamBeginCapture* of the process, and never
 * cleared: until then no stream can be capturing, and the hot path asks
 * the driver nothing. */
static atomic_bool capture_begun;

void graph_capture_begins(void)
{
	if (!atomic_load_explicit(&capture_begun, memory_order_relaxed))
		atomic_store(&capture_begun, true);
}

bool graph_capturing(const void *stream, bool per_thread, const void **graph)
{
	if (GS_LIKELY(!atomic_load_explicit(&capture_begun, memory_order_acquire)))
		return false;
	return driver_capture_graph(stream, per_thread, graph);
}

long long graph_resident_bytes(void)
{
	return atomic_load(&gs_totals.graph_resident_bytes);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Lock held.  Bytes of the distinct addresses alloc nodes of graphs and
 * executable graphs still hold (an executable graph copies its graph's). */
static long long reserved_bytes(void)
{
	struct graph *g, *tmp;
	unsigned n = 0, k = 0;
	struct {
		uint64_t dptr, size;
	} * v;
	long long sum = 0;

	HASH_ITER(hh, graphs, g, tmp) {
		n += g->n;
	}
	v = n ? malloc(n * sizeof(*v)) : NULL;
	if (!v)
		return 0;
	HASH_ITER(hh, graphs, g, tmp) {
		for (unsigned i = 0; i < g->n; i++) {
			if (g->nodes[i].site) {
				v[k].dptr = g->nodes[i].dptr;
				v[k++].size = g->nodes[i].size;
			}
		}
	}
	qsort(v, k, sizeof(*v), cmp_u64);
	for (unsigned i = 0; i < k; i++)
		if (!i || v[i].dptr != v[i - 1].dptr)
			sum += (long long)v[i].size;
	free(v);
	return sum;
}

/* Lock held.  The driver's own figures, per device: read now, or as last
 * read when the driver no longer answers ("as_of": when that was). */
static void write_devices(FILE *f)
{
	const struct gs_cuda_info *ci = driver_info();
	bool first = true;

	refresh();
	fputs(", \"devices\": [", f);
	for (unsigned i = 0; i < ci->ndevices && i < GS_INFO_DEVICES; i++) {
		const unsigned long long *v = last[i].v;

		if (!last[i].valid)
			continue;
		fprintf(f,
			"%s{\"device\": %d, \"used_current\": %llu, \"used_high\": %llu, "
			"\"reserved_current\": %llu, \"reserved_high\": %llu, \"as_of\": %.3f}",
			first ? "" : ", ", ci->devices[i].ordinal, v[0], v[1], v[2], v[3],
			last[i].time);
		first = false;
	}
	fputc(']', f);
}

void graph_write(FILE *f)
{
	long long reserved, live, allocs, peak;

	if (!atomic_load(&any))
		return;
	gs_lock(&gs_graph_lock);
	reserved = reserved_bytes();
	/* The live figures before the peak, and the peak raised to them: a
	 * launch on another thread may be between its two additions. */
	live = atomic_load(&gs_totals.graph_resident_bytes);
	allocs = atomic_load(&gs_totals.graph_resident_allocs);
	peak = atomic_load(&gs_totals.graph_resident_peak);
	if (peak < live)
		peak = live;
	fprintf(f,
		",\n  \"graph\": {\"alloc_nodes\": %lld, \"alloc_node_bytes\": %lld, "
		"\"reserved_bytes\": %lld, \"launches\": %lld, \"live_bytes\": %lld, "
		"\"live_allocations\": %lld, \"peak_bytes\": %lld, \"trims\": %lld",
		atomic_load(&nodes_made), atomic_load(&node_bytes), reserved,
		atomic_load(&launches), live, allocs, peak, atomic_load(&trims));
	write_devices(f);
	gs_unlock(&gs_graph_lock);
	fputc('}', f);
}
