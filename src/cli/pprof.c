/* SPDX-License-Identifier: MIT */
/*
 * gpuspy report --format pprof: the live GPU memory of one moment (stacks.h)
 * as a gzip-compressed profile.proto (profile.proto beside this file), the
 * format pprof reads, encoded with protobuf-c.
 *
 * One sample per site of each process, so that the labels of a process
 * (device, rank) stay with its memory; pprof adds up samples of the same
 * stack.  Every frame is a location, noise included: pprof's own -hide and
 * -focus do what the text report's folding does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "print.h"
#include "profile.pb-c.h"
#include "util.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* Strings to ids: the string table, and the functions, mappings and
 * locations, each deduplicated by a key string (open addressing). */
struct pprof_map {
	char **keys;
	uint64_t *vals;
	size_t size, n;
};

static uint64_t pprof_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int pprof_map_grow(struct pprof_map *m)
{
	size_t size = m->size ? 2 * m->size : 256;
	char **keys = calloc(size, sizeof(*keys));
	uint64_t *vals = calloc(size, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->size; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		for (j = pprof_hash(m->keys[i]) & (size - 1); keys[j]; j = (j + 1) & (size - 1))
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->size = size;
	return 0;
}

/* The slot of KEY: *FOUND says whether it is there. */
static size_t pprof_map_slot(const struct pprof_map *m, const char *key, bool *found)
{
	size_t j = pprof_hash(key) & (m->size - 1);

	while (m->keys[j] && strcmp(m->keys[j], key) != 0)
		j = (j + 1) & (m->size - 1);
	*found = m->keys[j] != NULL;
	return j;
}

static void pprof_map_free(struct pprof_map *m)
{
	for (size_t i = 0; i < m->size; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
}

/* Growable arrays of the profile's messages. */
#define PPROF_PUSH(arr, n, cap, item)                                                              \
	({                                                                                         \
		int ok_ = 1;                                                                       \
		if ((n) == (cap)) {                                                                \
			size_t nc_ = (cap) ? 2 * (cap) : 64;                                       \
			void *na_ = reallocarray((arr), nc_, sizeof(*(arr)));                      \
			if (na_) {                                                                 \
				(arr) = na_;                                                       \
				(cap) = nc_;                                                       \
			} else {                                                                   \
				ok_ = 0;                                                           \
			}                                                                          \
		}                                                                                  \
		if (ok_)                                                                           \
			(arr)[(n)++] = (item);                                                     \
		ok_;                                                                               \
	})

struct pprof {
	pb_profile prof;
	struct pprof_map strings, functions, mappings, locations;
	char **strtab;
	size_t nstr, capstr;
	pb_function **fn;
	size_t nfn, capfn;
	pb_mapping **map;
	size_t nmap, capmap;
	pb_location **loc;
	size_t nloc, caploc;
	pb_sample **smp;
	size_t nsmp, capsmp;
	int64_t *comments;
	size_t ncom, capcom;
	bool oom;
};

/* The string table index of S (NULL: ""); 0 when out of memory, which
 * the caller learns from P->oom. */
static int64_t pprof_str(struct pprof *p, const char *s)
{
	bool found;
	size_t slot;
	char *k, *t;

	if (!s || !*s)
		return 0;
	if (p->strings.n * 2 >= p->strings.size && pprof_map_grow(&p->strings) < 0)
		goto oom;
	slot = pprof_map_slot(&p->strings, s, &found);
	if (found)
		return (int64_t)p->strings.vals[slot];
	k = strdup(s);
	t = strdup(s);
	if (!k || !t || !PPROF_PUSH(p->strtab, p->nstr, p->capstr, t)) {
		free(k);
		free(t);
		goto oom;
	}
	p->strings.keys[slot] = k;
	p->strings.vals[slot] = p->nstr - 1;
	p->strings.n++;
	return (int64_t)(p->nstr - 1);
oom:
	p->oom = true;
	return 0;
}

/* The id of KEY in M, 0 when new (then the caller makes the message and
 * sets it with pprof_map_set). */
static uint64_t pprof_lookup(struct pprof *p, struct pprof_map *m, const char *key)
{
	bool found;
	size_t slot;

	if (m->n * 2 >= m->size && pprof_map_grow(m) < 0) {
		p->oom = true;
		return 0;
	}
	slot = pprof_map_slot(m, key, &found);
	return found ? m->vals[slot] : 0;
}

static void pprof_map_set(struct pprof *p, struct pprof_map *m, const char *key, uint64_t id)
{
	bool found;
	size_t slot = pprof_map_slot(m, key, &found);
	char *k = strdup(key);

	if (!k) {
		p->oom = true;
		return;
	}
	m->keys[slot] = k;
	m->vals[slot] = id;
	m->n++;
}

static uint64_t pprof_function(struct pprof *p, const char *name, const char *file)
{
	char *key = NULL;
	uint64_t id;
	pb_function *f;

	if (asprintf(&key, "%s\n%s", name, file ? file : "") < 0) {
		p->oom = true;
		return 0;
	}
	id = pprof_lookup(p, &p->functions, key);
	if (id == 0 && !p->oom && (f = malloc(sizeof(*f)))) {
		perftools__profiles__function__init(f);
		f->id = p->nfn + 1;
		f->name = pprof_str(p, name);
		f->system_name = f->name;
		f->filename = pprof_str(p, file);
		if (PPROF_PUSH(p->fn, p->nfn, p->capfn, f)) {
			id = f->id;
			pprof_map_set(p, &p->functions, key, id);
		} else {
			free(f);
		}
	}
	if (id == 0)
		p->oom = true;
	free(key);
	return id;
}

/* The mapping of a native frame's module, widened to hold ADDRESS. */
static uint64_t pprof_mapping(struct pprof *p, const struct rd_report_frame *f)
{
	char *key = NULL;
	uint64_t id;
	pb_mapping *m;

	if (!f->module)
		return 0;
	if (asprintf(&key, "%s\n%s", f->module, f->build_id ? f->build_id : "") < 0) {
		p->oom = true;
		return 0;
	}
	id = pprof_lookup(p, &p->mappings, key);
	if (id == 0 && !p->oom && (m = malloc(sizeof(*m)))) {
		perftools__profiles__mapping__init(m);
		m->id = p->nmap + 1;
		m->filename = pprof_str(p, f->module);
		m->build_id = pprof_str(p, f->build_id);
		/* symbolized here: pprof must not look for the binaries */
		m->has_functions = m->has_filenames = m->has_line_numbers = true;
		if (PPROF_PUSH(p->map, p->nmap, p->capmap, m)) {
			id = m->id;
			pprof_map_set(p, &p->mappings, key, id);
		} else {
			free(m);
		}
	}
	free(key);
	if (id == 0) {
		p->oom = true;
		return 0;
	}
	/* offsets from the module's base, as the report has them */
	m = p->map[id - 1];
	if (f->offset >= m->memory_limit)
		m->memory_limit = f->offset + 1;
	return id;
}

static uint64_t pprof_location(struct pprof *p, const struct rd_report_frame *f)
{
	char name[64];
	const char *fn = f->function;
	char *key = NULL;
	uint64_t id, mid = f->python ? 0 : pprof_mapping(p, f);
	pb_location *l;
	pb_line *ln;

	if (!fn) {
		snprintf(name, sizeof(name), "%.*s+0x%" PRIx64,
			 util_utf8_prefix(f->module ? f->module : "", 40),
			 f->module ? f->module : "", f->offset);
		fn = name;
	}
	if (asprintf(&key, "%d\n%" PRIu64 "\n%" PRIu64 "\n%s\n%s\n%" PRId64, f->python, mid,
		     f->python ? 0 : f->offset, fn, f->file ? f->file : "", f->line) < 0) {
		p->oom = true;
		return 0;
	}
	id = pprof_lookup(p, &p->locations, key);
	if (id == 0 && !p->oom) {
		l = malloc(sizeof(*l));
		ln = malloc(sizeof(*ln));
		l = l && ln ? l : (free(l), NULL);
		if (l) {
			perftools__profiles__location__init(l);
			perftools__profiles__line__init(ln);
			l->id = p->nloc + 1;
			l->mapping_id = mid;
			l->address = f->python ? 0 : f->offset;
			ln->function_id = pprof_function(p, fn, f->file);
			ln->line = f->line;
			l->line = malloc(sizeof(*l->line));
			if (l->line && PPROF_PUSH(p->loc, p->nloc, p->caploc, l)) {
				l->line[0] = ln;
				l->n_line = 1;
				id = l->id;
				pprof_map_set(p, &p->locations, key, id);
			} else {
				free(l->line);
				free(l);
				free(ln);
			}
		} else {
			free(ln);
		}
	}
	if (id == 0)
		p->oom = true;
	free(key);
	return id;
}

static void pprof_label(struct pprof *p, pb_sample *s, const char *key, const char *str,
			int64_t num)
{
	pb_label *l = malloc(sizeof(*l));

	if (!l) {
		p->oom = true;
		return;
	}
	perftools__profiles__label__init(l);
	l->key = pprof_str(p, key);
	if (str) {
		l->str = pprof_str(p, str);
	} else {
		l->num = num;
		/* pprof drops a numeric label of 0 that has no unit */
		l->num_unit = pprof_str(p, key);
	}
	s->label[s->n_label++] = l;
}

#define PPROF_MAX_LABELS 8

static void pprof_sample(struct pprof *p, const struct rd_report *r,
			 const struct rd_stack_sample *x)
{
	const struct rd_report_site *site = x->site;
	const struct rd_process *proc = r->procs[x->proc];
	pb_sample *s = calloc(1, sizeof(*s));
	char pname[REPORT_NAME_SIZE];

	if (!s) {
		p->oom = true;
		return;
	}
	perftools__profiles__sample__init(s);
	s->location_id = calloc(site->nframes + 1, sizeof(*s->location_id));
	s->value = calloc(4, sizeof(*s->value));
	s->label = calloc(PPROF_MAX_LABELS, sizeof(*s->label));
	if (!s->location_id || !s->value || !s->label ||
	    !PPROF_PUSH(p->smp, p->nsmp, p->capsmp, s)) {
		free(s->location_id);
		free(s->value);
		free(s->label);
		free(s);
		p->oom = true;
		return;
	}
	ssize_t h = merge_site_headline(site);

	for (size_t i = 0; i < site->nframes; i++) {
		struct rd_report_frame f = site->frames[i];

		/* a site merged from several lines: this process's line */
		if ((ssize_t)i == h && f.line <= 0 && x->line > 0)
			f.line = x->line;
		s->location_id[s->n_location_id++] = pprof_location(p, &f);
	}
	s->n_value = 4;
	s->value[0] = x->live_objects > 0 ? x->live_objects : 0;
	s->value[1] = x->live_bytes;
	s->value[2] = x->allocations;
	s->value[3] = x->alloc_bytes;
	pprof_label(p, s, "kind", names_kind(site->kind), 0);
	pprof_label(p, s, "api", site->api, 0);
	if (x->device >= 0)
		pprof_label(p, s, "device", NULL, x->device);
	if (proc->rank >= 0)
		pprof_label(p, s, "rank", NULL, proc->rank);
	snprintf(pname, sizeof(pname), "%s-%" PRId64, proc->host, proc->pid);
	util_sanitize(pname);
	pprof_label(p, s, "process", pname, 0);
	if (site->library)
		pprof_label(p, s, "library", site->library, 0);
	if (site->pool)
		pprof_label(p, s, "pool", site->pool, 0);
}

static void pprof_comment(struct pprof *p, const char *s)
{
	int64_t i = pprof_str(p, s);

	if (!p->oom && !PPROF_PUSH(p->comments, p->ncom, p->capcom, i))
		p->oom = true;
}

static void pprof_build(struct pprof *p, const struct rd_report *r, const struct rd_stacks *st)
{
	static const char *const types[4][2] = {
		{ "inuse_objects", "count" },
		{ "inuse_space", "bytes" },
		{ "alloc_objects", "count" },
		{ "alloc_space", "bytes" },
	};
	static pb_value_type vt[4];
	static pb_value_type *vtp[4];
	char line[256];
	char *empty;

	perftools__profiles__profile__init(&p->prof);
	/* index 0 is "", outside the map: pprof_str gives it to "" and NULL */
	empty = strdup("");
	if (!empty || !PPROF_PUSH(p->strtab, p->nstr, p->capstr, empty)) {
		free(empty);
		p->oom = true;
		return;
	}
	for (size_t i = 0; i < 4; i++) {
		perftools__profiles__value_type__init(&vt[i]);
		vt[i].type = pprof_str(p, types[i][0]);
		vt[i].unit = pprof_str(p, types[i][1]);
		vtp[i] = &vt[i];
	}
	p->prof.sample_type = vtp;
	p->prof.n_sample_type = 4;
	p->prof.default_sample_type = vt[1].type;
	if (st->time > 0)
		p->prof.time_nanos = (int64_t)(st->time * 1e9);
	if (st->state == STACKS_MARK)
		snprintf(line, sizeof(line), "gpuspy: live GPU memory at the mark \"%.*s\"",
			 util_utf8_prefix(st->label, 200), st->label);
	else
		snprintf(line, sizeof(line), "gpuspy: live GPU memory %s",
			 st->state == STACKS_PEAK ? "at the peak (within 1%)" : "at exit");
	util_sanitize(line);
	pprof_comment(p, line);
	snprintf(line, sizeof(line), "gpuspy: %zu of %zu processes", st->processes, r->nprocs);
	pprof_comment(p, line);
	if (st->state != STACKS_EXIT)
		pprof_comment(p, "gpuspy: inuse_objects is 0: only bytes are kept for that moment");
	pprof_comment(p, "gpuspy: alloc_objects and alloc_space: over the whole run");
	for (size_t i = 0; i < st->n && !p->oom; i++)
		pprof_sample(p, r, &st->samples[i]);
	p->prof.string_table = p->strtab;
	p->prof.n_string_table = p->nstr;
	p->prof.function = p->fn;
	p->prof.n_function = p->nfn;
	p->prof.mapping = p->map;
	p->prof.n_mapping = p->nmap;
	p->prof.location = p->loc;
	p->prof.n_location = p->nloc;
	p->prof.sample = p->smp;
	p->prof.n_sample = p->nsmp;
	p->prof.comment = p->comments;
	p->prof.n_comment = p->ncom;
}

static void pprof_free(struct pprof *p)
{
	for (size_t i = 0; i < p->nstr; i++)
		free(p->strtab[i]);
	free(p->strtab);
	for (size_t i = 0; i < p->nfn; i++)
		free(p->fn[i]);
	free(p->fn);
	for (size_t i = 0; i < p->nmap; i++)
		free(p->map[i]);
	free(p->map);
	for (size_t i = 0; i < p->nloc; i++) {
		free(p->loc[i]->line[0]);
		free(p->loc[i]->line);
		free(p->loc[i]);
	}
	free(p->loc);
	for (size_t i = 0; i < p->nsmp; i++) {
		for (size_t k = 0; k < p->smp[i]->n_label; k++)
			free(p->smp[i]->label[k]);
		free(p->smp[i]->label);
		free(p->smp[i]->location_id);
		free(p->smp[i]->value);
		free(p->smp[i]);
	}
	free(p->smp);
	free(p->comments);
	pprof_map_free(&p->strings);
	pprof_map_free(&p->functions);
	pprof_map_free(&p->mappings);
	pprof_map_free(&p->locations);
}

/* BUF[0..N) gzip-compressed to OUT, whole or not at all. */
static int pprof_gzip(const uint8_t *buf, size_t n, FILE *out)
{
	z_stream z = { 0 };
	uLong bound;
	uint8_t *gz;
	int e = 0;

	/* 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, n) + 32;
	gz = malloc(bound);
	if (!gz) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (uint8_t *)buf;
	z.avail_in = (uInt)n;
	z.next_out = gz;
	z.avail_out = (uInt)bound;
	if (n > UINT32_MAX || deflate(&z, Z_FINISH) != Z_STREAM_END)
		e = -ENOMEM;
	else if (fwrite(gz, 1, z.total_out, out) != z.total_out)
		e = -EIO;
	deflateEnd(&z);
	free(gz);
	return e;
}

int pprof_print(const struct rd_report *r, const struct rd_stacks *st, FILE *out)
{
	struct pprof p = { 0 };
	uint8_t *buf = NULL;
	size_t n = 0;
	int e = 0;

	pprof_build(&p, r, st);
	if (!p.oom) {
		n = perftools__profiles__profile__get_packed_size(&p.prof);
		buf = malloc(n + 1);
	}
	if (!buf) {
		e = -ENOMEM;
	} else {
		perftools__profiles__profile__pack(&p.prof, buf);
		e = pprof_gzip(buf, n, out);
	}
	free(buf);
	pprof_free(&p);
	return e;
}
