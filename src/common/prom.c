/* SPDX-License-Identifier: MIT */
/*
 * The exposition text of prom.h.  Families are written in one table's
 * order, each walking every process, so that a page of many processes
 * names each family once, as the format requires.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"
#include "ranks.h"
#include "utf8.h"

void prom_buf_append(struct prom_buf *b, const char *s, size_t n)
{
	if (b->err)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

void prom_buf_free(struct prom_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static void prom_puts(struct prom_buf *b, const char *s)
{
	prom_buf_append(b, s, strlen(s));
}

static void prom_u64(struct prom_buf *b, uint64_t v)
{
	char d[24];
	size_t i = sizeof(d);

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	prom_buf_append(b, d + i, sizeof(d) - i);
}

void prom_escape(struct prom_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		const unsigned char *run = p;
		size_t n;

		while (*p && *p != '\\' && *p != '"' && *p != '\n' && (n = utf8_seq_len(p)))
			p += n;
		prom_buf_append(b, (const char *)run, (size_t)(p - run));
		if (!*p)
			break;
		if (*p == '\\')
			prom_puts(b, "\\\\");
		else if (*p == '"')
			prom_puts(b, "\\\"");
		else if (*p == '\n')
			prom_puts(b, "\\n");
		else
			prom_puts(b, "\xef\xbf\xbd"); /* U+FFFD */
		p++;
	}
}

/* V's first entry of a comma-separated device list, when it names a MIG
 * device, into OUT of SIZE; else "". */
static void prom_mig(const char *v, char *out, size_t size)
{
	size_t n = v ? strcspn(v, ",") : 0;

	out[0] = '\0';
	if (n < 5 || strncmp(v, "MIG-", 4) != 0)
		return;
	if (n >= size)
		n = size - 1;
	memcpy(out, v, n);
	out[n] = '\0';
}

void prom_place_from_env(struct prom_place *pl, prom_env_fn get, void *arg)
{
	static const char *const names[PROM_PLACE_LABELS] = { "pod", "namespace", "container",
							      "mig" };
	static const char *const vars[PROM_PLACE_LABELS - 1] = { PROM_ENV_POD, PROM_ENV_NAMESPACE,
								 PROM_ENV_CONTAINER };
	const char *cuda = get(PROM_ENV_CUDA_VISIBLE, arg);

	pl->nlabels = 0;
	for (size_t i = 0; i < PROM_PLACE_LABELS; i++) {
		if (i < PROM_PLACE_LABELS - 1) {
			const char *v = get(vars[i], arg);

			snprintf(pl->value[i], PROM_PLACE_MAX, "%s", v ? v : "");
		} else {
			/* the device the process sees: CUDA_VISIBLE_DEVICES
			 * decides, when it is set */
			prom_mig(cuda && *cuda ? cuda : get(PROM_ENV_NVIDIA_VISIBLE, arg),
				 pl->value[i], PROM_PLACE_MAX);
		}
		if (pl->value[i][0])
			pl->labels[pl->nlabels++] = (struct prom_label){ names[i], pl->value[i] };
	}
}

static bool prom_label_name_ok(const char *s)
{
	if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	if (s[0] == '_' && s[1] == '_') /* reserved for Prometheus itself */
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/*
 * One series being written: its name, then labels added one by one, the
 * process's extra labels last; prom_value() closes it.
 */
struct prom_series {
	struct prom_buf *b;
	const struct prom_process *p;
	int nlab;
};

static void prom_begin(struct prom_series *s, struct prom_buf *b, const struct prom_process *p,
		       const char *name)
{
	s->b = b;
	s->p = p;
	s->nlab = 0;
	prom_puts(b, name);
}

static void prom_label(struct prom_series *s, const char *name, const char *value)
{
	prom_puts(s->b, s->nlab++ ? "," : "{");
	prom_puts(s->b, name);
	prom_puts(s->b, "=\"");
	prom_escape(s->b, value);
	prom_puts(s->b, "\"");
}

static void prom_label_int(struct prom_series *s, const char *name, long v)
{
	char d[24];

	snprintf(d, sizeof(d), "%ld", v);
	prom_label(s, name, d);
}

static void prom_extra(struct prom_series *s, bool skip_own)
{
	size_t i;

	for (i = 0; i < s->p->nlabels; i++) {
		const char *n = s->p->labels[i].name;

		if (skip_own &&
		    (strcmp(n, "host") == 0 || strcmp(n, "rank") == 0 || strcmp(n, "pid") == 0 ||
		     strcmp(n, "command") == 0 || strcmp(n, "version") == 0))
			continue;
		prom_label(s, n, s->p->labels[i].value);
	}
}

static void prom_close(struct prom_series *s)
{
	prom_extra(s, false);
	if (s->nlab)
		prom_puts(s->b, "}");
	prom_puts(s->b, " ");
}

static void prom_value(struct prom_series *s, uint64_t v)
{
	prom_close(s);
	prom_u64(s->b, v);
	prom_puts(s->b, "\n");
}

/* What prom_write() worked out of a process's sites. */
struct prom_sel {
	size_t ntop;
	uint64_t other[GS_KIND_COUNT];
	bool present[GS_KIND_COUNT];
	uint64_t folded;
};

struct prom_ctx {
	struct prom_buf *b;
	struct prom_process *const *procs;
	size_t n;
	struct prom_sel *sel;
};

typedef bool (*prom_family_fn)(struct prom_ctx *c, size_t i, const char *name, bool write);

struct prom_family {
	const char *name, *type, *help;
	/* writes process I's series of the family; with WRITE false only
	 * says whether it has any */
	prom_family_fn fn;
};

static bool prom_info(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	const struct prom_process *p = c->procs[i];
	struct prom_series s;

	if (!write)
		return true;
	prom_begin(&s, c->b, p, name);
	prom_label_int(&s, "pid", p->pid);
	prom_label(&s, "host", p->host);
	prom_label(&s, "rank", p->rank);
	prom_label(&s, "command", p->command);
	prom_label(&s, "version", p->version);
	prom_extra(&s, true);
	prom_puts(c->b, "} 1\n");
	return true;
}

static bool prom_tracked(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	const struct prom_process *p = c->procs[i];
	struct prom_series s;
	size_t d;

	for (d = 0; write && d < p->ndevices; d++) {
		prom_begin(&s, c->b, p, name);
		prom_label_int(&s, "device", p->devices[d].ordinal);
		prom_value(&s, p->devices[d].tracked);
	}
	return p->ndevices > 0;
}

enum prom_kind_field { PK_LIVE, PK_PEAK, PK_ALLOCS, PK_FREES, PK_ABYTES, PK_FBYTES };

static uint64_t prom_kind_get(const struct prom_kind_counts *k, enum prom_kind_field f)
{
	switch (f) {
	case PK_LIVE:
		return k->live;
	case PK_PEAK:
		return k->peak;
	case PK_ALLOCS:
		return k->allocs;
	case PK_FREES:
		return k->frees;
	case PK_ABYTES:
		return k->alloc_bytes;
	case PK_FBYTES:
		return k->freed_bytes;
	}
	return 0;
}

static bool prom_per_kind(struct prom_ctx *c, size_t i, const char *name, bool write,
			  enum prom_kind_field f)
{
	const struct prom_process *p = c->procs[i];
	struct prom_series s;
	bool any = false;
	int k;

	for (k = 0; k < GS_KIND_COUNT; k++) {
		if (!p->kinds[k].has)
			continue;
		any = true;
		if (!write)
			break;
		prom_begin(&s, c->b, p, name);
		prom_label(&s, "kind", names_kind(k));
		prom_value(&s, prom_kind_get(&p->kinds[k], f));
	}
	return any;
}

#define PROM_KIND_FAMILY(fn, field)                                                                \
	static bool fn(struct prom_ctx *c, size_t i, const char *name, bool write)                 \
	{                                                                                          \
		return prom_per_kind(c, i, name, write, field);                                    \
	}
PROM_KIND_FAMILY(prom_live, PK_LIVE)
PROM_KIND_FAMILY(prom_peak, PK_PEAK)
PROM_KIND_FAMILY(prom_allocs, PK_ALLOCS)
PROM_KIND_FAMILY(prom_frees, PK_FREES)
PROM_KIND_FAMILY(prom_abytes, PK_ABYTES)
PROM_KIND_FAMILY(prom_fbytes, PK_FBYTES)

static bool prom_scalar(struct prom_ctx *c, size_t i, const char *name, bool write, bool has,
			uint64_t v)
{
	struct prom_series s;

	if (has && write) {
		prom_begin(&s, c->b, c->procs[i], name);
		prom_value(&s, v);
	}
	return has;
}

static bool prom_gpu_peak(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	return prom_scalar(c, i, name, write, c->procs[i]->has_gpu_peak, c->procs[i]->gpu_peak);
}

static bool prom_oom(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	return prom_scalar(c, i, name, write, c->procs[i]->has_oom, c->procs[i]->oom_events);
}

static bool prom_limit(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	return prom_scalar(c, i, name, write, c->procs[i]->has_limit, c->procs[i]->limit);
}

static bool prom_growing(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	return prom_scalar(c, i, name, write, c->procs[i]->has_growing, c->procs[i]->growing_sites);
}

static bool prom_sites_common(struct prom_ctx *c, size_t i, const char *name, bool write,
			      bool growth)
{
	const struct prom_process *p = c->procs[i];
	const struct prom_sel *sel = &c->sel[i];
	struct prom_series s;
	size_t j;
	int k;

	if (!write)
		return sel->ntop > 0 || (!growth && sel->folded > 0);
	for (j = 0; j < sel->ntop; j++) {
		const struct prom_site *st = &p->sites[j];

		prom_begin(&s, c->b, p, name);
		prom_label(&s, "site", st->key);
		prom_label(&s, "name", st->name);
		prom_label(&s, "kind", names_kind(st->kind));
		prom_value(&s, growth ? st->growing : st->live);
	}
	for (k = 0; !growth && k < GS_KIND_COUNT; k++) {
		if (!sel->present[k])
			continue;
		prom_begin(&s, c->b, p, name);
		prom_label(&s, "site", "other");
		prom_label(&s, "name", "other");
		prom_label(&s, "kind", names_kind(k));
		prom_value(&s, sel->other[k]);
	}
	return true;
}

static bool prom_site_live(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	return prom_sites_common(c, i, name, write, false);
}

static bool prom_site_growing(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	return prom_sites_common(c, i, name, write, true);
}

static bool prom_folded(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	const struct prom_sel *sel = &c->sel[i];
	bool any = sel->ntop > 0 || sel->folded > 0;

	return prom_scalar(c, i, name, write, any, sel->folded);
}

enum prom_nvml_field { PN_USED, PN_DEV_USED, PN_DEV_TOTAL };

static bool prom_nvml_common(struct prom_ctx *c, size_t i, const char *name, bool write,
			     enum prom_nvml_field f)
{
	const struct prom_process *p = c->procs[i];
	struct prom_series s;
	bool any = false;
	size_t d;

	for (d = 0; d < p->nnvml; d++) {
		const struct prom_nvml *v = &p->nvml[d];
		bool has = f == PN_USED	    ? v->has_used :
			   f == PN_DEV_USED ? v->has_device_used :
					      v->has_device_total;

		if (!has)
			continue;
		any = true;
		if (!write)
			break;
		prom_begin(&s, c->b, p, name);
		prom_label_int(&s, "device", v->index);
		prom_value(&s, f == PN_USED	? v->used :
			       f == PN_DEV_USED ? v->device_used :
						  v->device_total);
	}
	return any;
}

static bool prom_nvml_used(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	return prom_nvml_common(c, i, name, write, PN_USED);
}

static bool prom_nvml_dev_used(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	return prom_nvml_common(c, i, name, write, PN_DEV_USED);
}

static bool prom_nvml_dev_total(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	return prom_nvml_common(c, i, name, write, PN_DEV_TOTAL);
}

static bool prom_pool_common(struct prom_ctx *c, size_t i, const char *name, bool write,
			     bool reserved)
{
	const struct prom_process *p = c->procs[i];
	struct prom_series s;
	bool any = false;
	size_t d;

	for (d = 0; d < p->npools; d++) {
		const struct prom_pool *v = &p->pools[d];

		if (!(reserved ? v->has_reserved : v->has_allocated))
			continue;
		any = true;
		if (!write)
			break;
		prom_begin(&s, c->b, p, name);
		prom_label_int(&s, "device", v->device);
		prom_label(&s, "framework", v->framework);
		prom_value(&s, reserved ? v->reserved : v->allocated);
	}
	return any;
}

static bool prom_pool_reserved(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	return prom_pool_common(c, i, name, write, true);
}

static bool prom_pool_allocated(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	return prom_pool_common(c, i, name, write, false);
}

static bool prom_sample_time(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	const struct prom_process *p = c->procs[i];
	struct prom_series s;
	char v[48];

	if (p->has_sample_time && write) {
		prom_begin(&s, c->b, p, name);
		prom_close(&s);
		snprintf(v, sizeof(v), "%.3f\n", p->sample_time);
		prom_puts(c->b, v);
	}
	return p->has_sample_time;
}

/* What process P holds on device D beyond its own (ranks.h): the tracked
 * allocations there and NVML's figure beyond them; -1: D is not one of
 * its devices. */
static int64_t prom_wrong_bytes(const struct prom_process *p, int d)
{
	int64_t tracked = -1, nvml = -1;

	for (size_t k = 0; k < p->ndevices; k++)
		if (p->devices[k].ordinal == d)
			tracked = (int64_t)p->devices[k].tracked;
	for (size_t k = 0; k < p->nnvml; k++)
		if (p->nvml[k].index == d && p->nvml[k].has_used)
			nvml = (int64_t)p->nvml[k].used;
	if (tracked < 0 && nvml < 0)
		return -1;
	if (tracked < 0)
		tracked = 0;
	return tracked + ranks_context_bytes(tracked, nvml);
}

static bool prom_has_label(const struct prom_process *p, const char *name)
{
	for (size_t k = 0; k < p->nlabels; k++)
		if (strcmp(p->labels[k].name, name) == 0)
			return true;
	return false;
}

static bool prom_wrong_device(struct prom_ctx *c, size_t i, const char *name, bool write)
{
	const struct prom_process *p = c->procs[i];
	bool any = false;

	if (!p->has_own_device)
		return false;
	/* each device once: those tracked, then NVML's not tracked */
	for (size_t k = 0; k < p->ndevices + p->nnvml; k++) {
		int d = k < p->ndevices ? p->devices[k].ordinal : p->nvml[k - p->ndevices].index;
		struct prom_series s;
		int64_t v;
		bool seen = false;

		for (size_t j = 0; k >= p->ndevices && j < p->ndevices; j++)
			seen |= p->devices[j].ordinal == d;
		if (seen || d == p->own_device || (v = prom_wrong_bytes(p, d)) < 0)
			continue;
		any = true;
		if (!write)
			break;
		prom_begin(&s, c->b, p, name);
		prom_label_int(&s, "device", d);
		prom_label_int(&s, "own_device", p->own_device);
		if (!prom_has_label(p, "rank"))
			prom_label(&s, "rank", p->rank ? p->rank : "");
		prom_value(&s, (uint64_t)v);
	}
	return any;
}

static const struct prom_family prom_families[] = {
	{ "gpuspy_info", "gauge", "The process gpuspy runs in (always 1).", prom_info },
	{ "gpuspy_tracked_bytes", "gauge",
	  "GPU memory (device, managed, VMM) live by CUDA ordinal, as tracked by gpuspy.",
	  prom_tracked },
	{ "gpuspy_wrong_device_bytes", "gauge",
	  "GPU memory a rank holds on a device not its own (LOCAL_RANK's): allocations and context.",
	  prom_wrong_device },
	{ "gpuspy_live_bytes", "gauge", "Tracked live bytes per kind.", prom_live },
	{ "gpuspy_peak_bytes", "gauge", "Peak live bytes per kind.", prom_peak },
	{ "gpuspy_gpu_peak_bytes", "gauge", "Peak of device, managed and VMM bytes live at once.",
	  prom_gpu_peak },
	{ "gpuspy_allocations_total", "counter", "Allocations seen.", prom_allocs },
	{ "gpuspy_frees_total", "counter", "Frees seen.", prom_frees },
	{ "gpuspy_allocated_bytes_total", "counter", "Bytes allocated, summed.", prom_abytes },
	{ "gpuspy_freed_bytes_total", "counter", "Bytes freed, summed.", prom_fbytes },
	{ "gpuspy_oom_events_total", "counter", "Out-of-memory failures seen.", prom_oom },
	{ "gpuspy_limit_bytes", "gauge",
	  "GPUSPY_LIMIT: the memory each device is capped at in this process (a capped run).",
	  prom_limit },
	{ "gpuspy_growing_sites", "gauge", "Call sites flagged growing by the growth rule.",
	  prom_growing },
	{ "gpuspy_site_live_bytes", "gauge",
	  "Live bytes of the top call sites; site=\"other\" sums the rest per kind.",
	  prom_site_live },
	{ "gpuspy_site_growing", "gauge", "Whether a top call site is flagged growing (0 or 1).",
	  prom_site_growing },
	{ "gpuspy_sites_folded", "gauge", "Call sites with live bytes summed into site=\"other\".",
	  prom_folded },
	{ "gpuspy_nvml_used_bytes", "gauge", "GPU memory NVML attributes to this process.",
	  prom_nvml_used },
	{ "gpuspy_nvml_device_used_bytes", "gauge", "The whole GPU's used memory per NVML.",
	  prom_nvml_dev_used },
	{ "gpuspy_nvml_device_total_bytes", "gauge", "The GPU's total memory per NVML.",
	  prom_nvml_dev_total },
	{ "gpuspy_pool_reserved_bytes", "gauge", "Memory the framework's pool holds from CUDA.",
	  prom_pool_reserved },
	{ "gpuspy_pool_allocated_bytes", "gauge",
	  "Memory the framework's pool has handed out (tensors).", prom_pool_allocated },
	{ "gpuspy_sample_time_seconds", "gauge", "Unix time of the sample these values are from.",
	  prom_sample_time },
};

static int prom_site_cmp(const void *a, const void *b)
{
	const struct prom_site *x = a, *y = b;
	int k;

	if (x->live != y->live)
		return x->live > y->live ? -1 : 1;
	k = strcmp(x->key ? x->key : "", y->key ? y->key : "");
	if (k)
		return k;
	return x->kind - y->kind;
}

static void prom_select(struct prom_process *p, unsigned top, struct prom_sel *sel)
{
	size_t j, nlive = 0;
	int k;

	memset(sel, 0, sizeof(*sel));
	if (p->nsites)
		qsort(p->sites, p->nsites, sizeof(*p->sites), prom_site_cmp);
	while (nlive < p->nsites && p->sites[nlive].live)
		nlive++;
	for (j = 0; j < nlive; j++) {
		k = p->sites[j].kind;
		if (k < 0 || k >= GS_KIND_COUNT)
			continue;
		sel->present[k] = true;
		if (j >= top)
			sel->other[k] += p->sites[j].live;
	}
	sel->ntop = nlive < top ? nlive : top;
	sel->folded = (nlive - sel->ntop) + p->folded_sites;
	for (k = 0; k < GS_KIND_COUNT; k++) {
		sel->other[k] += p->folded_live[k];
		if (p->folded_live[k])
			sel->present[k] = true;
	}
}

int prom_write(struct prom_buf *b, struct prom_process *const *procs, size_t n, unsigned top)
{
	struct prom_ctx c = { .b = b, .procs = procs, .n = n };
	size_t f, i, l;

	if (top > PROM_TOP_MAX)
		top = PROM_TOP_MAX;
	for (i = 0; i < n; i++)
		for (l = 0; l < procs[i]->nlabels; l++)
			if (!prom_label_name_ok(procs[i]->labels[l].name))
				return -EINVAL;
	c.sel = calloc(n ? n : 1, sizeof(*c.sel));
	if (!c.sel)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		prom_select(procs[i], top, &c.sel[i]);
	for (f = 0; f < sizeof(prom_families) / sizeof(prom_families[0]); f++) {
		const struct prom_family *fam = &prom_families[f];
		bool any = false;

		for (i = 0; i < n && !any; i++)
			any = fam->fn(&c, i, fam->name, false);
		if (!any)
			continue;
		prom_puts(b, "# HELP ");
		prom_puts(b, fam->name);
		prom_puts(b, " ");
		prom_puts(b, fam->help);
		prom_puts(b, "\n# TYPE ");
		prom_puts(b, fam->name);
		prom_puts(b, " ");
		prom_puts(b, fam->type);
		prom_puts(b, "\n");
		for (i = 0; i < n; i++)
			fam->fn(&c, i, fam->name, true);
	}
	free(c.sel);
	if (!b->err && !b->p)
		prom_buf_append(b, "", 0);
	return b->err;
}
