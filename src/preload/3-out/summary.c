/* SPDX-License-Identifier: MIT */
/*
 * What gpuspy says to people from inside the process: report.txt and the
 * stderr lines, with the names the snapshot thread found for the frames
 * (symbols.c).  `gpuspy report` says more: the whole stack symbolized,
 * noise folded, Python placed among the native frames.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "config.h"
#include "core.h"
#include "counters.h"
#include "locks.h"
#include "log.h"
#include "names.h"
#include "pools.h"
#include "oom.h"
#include "oom_rule.h"
#include "pystack.h"
#include "sitename.h"
#include "sites.h"
#include "summary.h"
#include "site_names.h"
#include "symbols.h"
#include "trend.h"
#include "unwind.h"
#include "view.h"

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The raw symbol FR is named by, or NULL. */
static const char *frame_symbol(const struct gs_frame *fr)
{
	const struct gs_name *n = symbols_of(fr);

	return n ? n->symbol : NULL;
}

static void human(char *buf, size_t len, long long b)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	unsigned u = 0;

	while ((v >= 1024.0 || v <= -1024.0) && u < 4) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%lld B", b);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
}

/*
 * The frame a person recognises: the first one outside CUDA's own
 * libraries, preferring one the process can name; the C library's
 * start-up frames are never the answer.
 */
static const struct gs_frame *useful_frame(const struct gs_site *s)
{
	const struct gs_frame *unnamed = NULL;

	if (!s->frames) /* never (sites.c), but said for the analyzer */
		return NULL;

	for (unsigned i = 0; i < s->depth; i++) {
		const struct gs_frame *fr = &s->frames[i];
		const char *mod = fr->module >= 0 ?
					  basename_of(unwind_module((unsigned)fr->module)->path) :
					  "";

		if (strncmp(mod, "libcuda", 7) == 0 || strncmp(mod, "libc.so", 7) == 0)
			continue;
		if (frame_symbol(fr))
			return fr;
		if (!unnamed)
			unnamed = fr;
	}
	return unnamed ? unnamed : (s->depth ? &s->frames[0] : NULL);
}

/* The innermost Python frame of user code, as `gpuspy report` picks its
 * headline (sitename_user_file). */
static const struct gs_pyframe *user_pyframe(const struct gs_site *s)
{
	for (unsigned i = 0; i < s->pydepth; i++)
		if (sitename_user_file(s->py[i].file))
			return &s->py[i];
	return NULL;
}

/* S, cleaned of control characters, as the names are (sitename_short). */
static void clean(char *buf, size_t len, const char *s)
{
	const struct sitename_frame sf = { .function = s };

	sitename_short(buf, len, &sf);
}

/* FR's name as the headlines show it, the rule of `gpuspy report` and of
 * the metrics (sitename_short): "step (train.c:41)", "step (libfoo.so)"
 * without a line, "libfoo.so+0x1a2b" without a symbol.  For people, C++
 * names demangled (symbols_function); report.json keeps the raw symbol. */
static void frame_name(char *buf, size_t len, const struct gs_frame *fr)
{
	struct sitename_frame sf;

	symbols_sitename(fr, &sf);
	sitename_short(buf, len, &sf);
}

/* A row of report.txt's stacks: the name and source line where known,
 * and always the module and offset. */
static void frame_row(char *buf, size_t len, const struct gs_frame *fr)
{
	const struct gs_name *n = symbols_of(fr);
	char mod[200], fn[512], file[200];

	clean(mod, sizeof(mod),
	      fr->module >= 0 ? basename_of(unwind_module((unsigned)fr->module)->path) : "?");
	if (!n) {
		snprintf(buf, len, "%s+0x%llx", mod, (unsigned long long)fr->offset);
		return;
	}
	clean(fn, sizeof(fn), symbols_function(n));
	if (n->file && n->line > 0) {
		clean(file, sizeof(file), basename_of(n->file));
		snprintf(buf, len, "%s (%s:%d, %s+0x%llx)", fn, file, n->line, mod,
			 (unsigned long long)fr->offset);
	} else {
		snprintf(buf, len, "%s (%s+0x%llx)", fn, mod, (unsigned long long)fr->offset);
	}
}

/* "allocation" for 1, else "allocations". */
static const char *summary_allocs(long long n)
{
	return n == 1 ? "allocation" : "allocations";
}

static const struct gs_frame *user_frame(const struct gs_site *s);
static double mib_per_min(double bps);
static const char *secs(char *buf, size_t len, double t);
static void growth_by(char *buf, size_t len, const struct gs_verdict *v);

#define TORCH_TOP 3

/* The PyTorch view's last word (summary_torch_top), under gs_events_lock. */
static struct {
	unsigned n;
	char where[TORCH_TOP][256];
	long long live[TORCH_TOP], blocks[TORCH_TOP];
} torch_top;

/* S as the summaries name it: its one name, the report's (site_names.c);
 * before its first naming, its innermost Python frame of user code, else
 * its first native frame that is not noise. */
static void where_text(char *buf, size_t len, const struct gs_site *s)
{
	const struct gs_pyframe *py = user_pyframe(s);
	const struct gs_frame *uf = user_frame(s);
	const char *name = site_names_of(s);

	if (name)
		snprintf(buf, len, "%s", name);
	else if (py)
		snprintf(buf, len, "%s (%s:%d)", py->function ? py->function : "?", py->file,
			 py->line);
	else if (uf)
		frame_name(buf, len, uf);
	else
		snprintf(buf, len, "?");
}

/* What the framework pools still hold among V's GPU sites (listed; the
 * folded ones count as the program's), per pool and in all. */
struct pool_held {
	long long bytes[GS_POOL_COUNT], allocs[GS_POOL_COUNT];
	long long all_bytes, all_allocs;
};

static int site_pool(const struct gs_site *s)
{
	return s->kind == GS_KIND_PINNED ? GS_POOL_NONE : summary_site_pool(s);
}

static void pool_held(const struct gs_view *v, struct pool_held *h)
{
	memset(h, 0, sizeof(*h));
	for (unsigned i = 0; i < v->n; i++) {
		const struct gs_site *s = v->sites[i];
		long long live = counters_live_bytes(&s->c);
		int p;

		if (live <= 0 || (p = site_pool(s)) == GS_POOL_NONE)
			continue;
		h->bytes[p] += live;
		h->allocs[p] += atomic_load(&s->c.allocs) - atomic_load(&s->c.frees);
		h->all_bytes += live;
		h->all_allocs += atomic_load(&s->c.allocs) - atomic_load(&s->c.frees);
	}
}

/* "PyTorch", "PyTorch and CuPy": the pools that hold something in H. */
static void pool_names(char *buf, size_t len, const struct pool_held *h)
{
	size_t k = 0;
	unsigned n = 0, total = 0;

	for (int p = 0; p < GS_POOL_COUNT; p++)
		total += h->bytes[p] > 0;
	buf[0] = '\0';
	for (int p = 0; p < GS_POOL_COUNT && k < len; p++) {
		if (h->bytes[p] <= 0)
			continue;
		n++;
		k += (size_t)snprintf(buf + k, len - k, "%s%s",
				      n == 1	 ? "" :
				      n == total ? " and " :
						   ", ",
				      pools_title(p));
	}
}

/* The verdict of S as a person reads it, after "  ": "growing: +1.0
 * MiB/min since 12 s (staircase)", or "grew, then stopped at 30 s: ...". */
static void verdict_text(char *buf, size_t len, const struct gs_verdict *gv)
{
	const struct trend_verdict *v = &gv->v;
	char a[32], b[32];

	if (v->state == TREND_STOPPED)
		snprintf(buf, len, "grew, then stopped at %s: %+.1f MiB/min from %s (%s)",
			 secs(a, sizeof(a), v->until), mib_per_min(v->rate),
			 secs(b, sizeof(b), v->since), trend_shape_name(v->shape));
	else
		snprintf(buf, len, "growing: %+.1f MiB/min since %s (%s)", mib_per_min(v->rate),
			 secs(a, sizeof(a), v->since), trend_shape_name(v->shape));
}

int summary_write_text(FILE *f, const struct gs_view *v)
{
	struct gs_site **sites = v->sites;
	unsigned n = v->n;
	const char *host = v->host;
	char a[32], b[32], c[32], fr[1024], by[96];
	struct pool_held held;

	pool_held(v, &held);
	human(a, sizeof(a), v->gpu_live - held.all_bytes);
	human(b, sizeof(b), v->gpu_peak);
	human(c, sizeof(c), v->kind[GS_KIND_PINNED].live_bytes);
	fprintf(f, "gpuspy %s: process %d on %s\n\n", GPUSPY_VERSION, (int)getpid(), host);
	if (!held.all_bytes) {
		fprintf(f, "Leaked at exit:  %s in %lld %s (GPU memory)\n", a, v->gpu_allocs,
			summary_allocs(v->gpu_allocs));
	} else {
		/* a framework's pool keeps what it cached until the process
		 * goes: that is not the program's leak */
		fprintf(f,
			"Leaked at exit:  %s in %lld %s (GPU memory left by the program's own "
			"code)\n",
			a, v->gpu_allocs - held.all_allocs,
			summary_allocs(v->gpu_allocs - held.all_allocs));
		pool_names(fr, sizeof(fr), &held);
		human(c, sizeof(c), held.all_bytes);
		fprintf(f,
			"Held by pools:   %s in %lld %s held by the %s pool%s at exit (the "
			"framework's cache, not a leak)\n",
			c, held.all_allocs, held.all_allocs == 1 ? "segment" : "segments", fr,
			strstr(fr, " and ") ? "s" : "");
		human(c, sizeof(c), v->kind[GS_KIND_PINNED].live_bytes);
	}
	fprintf(f, "Peak:            %s\n", b);
	fprintf(f, "Pinned host:     %s in %lld %s still live\n", c,
		v->kind[GS_KIND_PINNED].live_allocs,
		summary_allocs(v->kind[GS_KIND_PINNED].live_allocs));
	fprintf(f, "Untracked frees: %lld\n", atomic_load(&gs_totals.untracked_frees));
	/* Which doors fired: a door that saw nothing is one gpuspy was not
	 * used through, or one that missed the program's calls. */
	fputs("Calls per door: ", f);
	for (int i = 0; i < GS_CALL_COUNT; i++)
		fprintf(f, "%s%s %lld", i ? ", " : "", gs_call_names[i],
			calls_total((enum gs_call)i));
	fputs("\n\n", f);
	if (torch_top.n) {
		/* the Python lines that hold the pool's blocks, which the
		 * CUDA sites below name only as the pool's segments */
		fputs("PYTORCH VIEW (largest live blocks, by Python line)\n", f);
		for (unsigned i = 0; i < torch_top.n; i++) {
			human(a, sizeof(a), torch_top.live[i]);
			fprintf(f, "%s in %lld blocks from %s\n", a, torch_top.blocks[i],
				torch_top.where[i]);
		}
		putc('\n', f);
	}
	{
		bool any = false;

		/* the growth rule's verdicts: what keeps growing, and what grew,
		 * then stopped (libgpuspy(7)) */
		for (unsigned i = 0; i < n; i++) {
			const struct gs_site *s = sites[i];

			if (!s->verdict)
				continue;
			if (!any)
				fputs("GROWTH\n", f);
			any = true;
			char vt[160];

			verdict_text(vt, sizeof(vt), s->verdict);
			growth_by(by, sizeof(by), s->verdict);
			where_text(fr, sizeof(fr), s);
			fprintf(f, "%s%s at %s\n", vt, by, fr);
		}
		if (any)
			putc('\n', f);
	}
	fputs("LEAKED AT EXIT\n", f);
	for (unsigned i = 0; i < n; i++) {
		const struct gs_site *s = sites[i];
		long long live = counters_live_bytes(&s->c);
		long long allocs = atomic_load(&s->c.allocs) - atomic_load(&s->c.frees);

		if (live <= 0)
			break;
		human(a, sizeof(a), live);
		human(b, sizeof(b), atomic_load(&s->c.peak_bytes));
		where_text(fr, sizeof(fr), s);
		fprintf(f, "%s in %lld %s from %s (%s, %s via %s), peak %s%s%s%s\n", a, allocs,
			summary_allocs(allocs), fr, names_kinds[s->kind], gs_api_names[s->api],
			gs_door_names[s->door], b,
			site_pool(s) != GS_POOL_NONE ? " [held by the " : "",
			site_pool(s) != GS_POOL_NONE ? pools_title(site_pool(s)) : "",
			site_pool(s) != GS_POOL_NONE ? " pool]" : "");
		for (unsigned j = 0; j < s->pydepth; j++)
			fprintf(f, "    py %s:%d in %s\n", s->py[j].file ? s->py[j].file : "?",
				s->py[j].line, s->py[j].function ? s->py[j].function : "?");
		for (unsigned j = 0; j < s->depth; j++) {
			frame_row(fr, sizeof(fr), &s->frames[j]);
			fprintf(f, "    #%u %s\n", j, fr);
		}
	}
	if (v->n_folded) {
		long long live = 0, allocs = 0;

		for (int k = 0; k < GS_KIND_COUNT; k++) {
			live += v->folded[k].c.live_bytes;
			allocs += v->folded[k].c.live_allocs;
		}
		human(a, sizeof(a), live);
		fprintf(f, "%llu more sites folded (GPUSPY_MAX_SITES=%u): %s in %lld allocations\n",
			v->n_folded, gs_config.max_sites, a, allocs);
	}
	fputs("\nRun `gpuspy report` on this directory for symbolized frames with files and "
	      "lines.\n",
	      f);
	return ferror(f) ? -EIO : 0;
}

int summary_torch_top(unsigned i, const char *where, long long live, long long blocks)
{
	if (i >= TORCH_TOP || !where || live < 0 || blocks < 0)
		return -EINVAL;
	gs_lock(&gs_events_lock);
	if (i == 0)
		torch_top.n = 0;
	/* "" only empties the list: nothing is live in the view */
	if (where[0] && i == torch_top.n) {
		snprintf(torch_top.where[i], sizeof(torch_top.where[i]), "%s", where);
		/* from a file's text: one line, whatever it holds */
		for (char *c = torch_top.where[i]; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		torch_top.live[i] = live;
		torch_top.blocks[i] = blocks;
		torch_top.n++;
	}
	gs_unlock(&gs_events_lock);
	return 0;
}

/* At exit, on stderr: the totals; the PyTorch view's largest holders,
 * which name the Python line where the CUDA sites name the pool; the three
 * largest GPU sites, by the user's line.  Under gs_events_lock. */
void summary_exit(const struct gs_view *v)
{
	char a[32], b[32], fr[512], vt[160], by[96];
	struct pool_held held;
	unsigned told = 0;

	if (gs_config.quiet)
		return;
	pool_held(v, &held);
	human(a, sizeof(a), v->gpu_live - held.all_bytes);
	human(b, sizeof(b), v->gpu_peak);
	gs_warn("%s in %lld %s of GPU memory still live at exit%s, peak %s (pid %d)", a,
		v->gpu_allocs - held.all_allocs, summary_allocs(v->gpu_allocs - held.all_allocs),
		held.all_bytes ? " from the program's own code" : "", b, (int)getpid());
	if (held.all_bytes) {
		/* the framework's cache, which it frees only with the process */
		pool_names(fr, sizeof(fr), &held);
		human(a, sizeof(a), held.all_bytes);
		gs_warn("  %s in %lld %s held by the %s pool%s at exit (the framework's cache, not "
			"a leak)",
			a, held.all_allocs, held.all_allocs == 1 ? "segment" : "segments", fr,
			strstr(fr, " and ") ? "s" : "");
	}
	for (unsigned i = 0; i < torch_top.n; i++) {
		human(a, sizeof(a), torch_top.live[i]);
		gs_warn("  %s in %lld from %s [PyTorch view]", a, torch_top.blocks[i],
			torch_top.where[i]);
	}
	for (unsigned i = 0, shown = 0; i < v->n && shown < 3; i++) {
		struct gs_site *s = v->sites[i];

		if (counters_live_bytes(&s->c) <= 0)
			break;
		/* the pools' segments are said above */
		if (s->kind == GS_KIND_PINNED || site_pool(s) != GS_POOL_NONE)
			continue;
		shown++;
		human(a, sizeof(a), counters_live_bytes(&s->c));
		where_text(fr, sizeof(fr), s);
		gs_warn("  %s in %lld from %s", a,
			atomic_load(&s->c.allocs) - atomic_load(&s->c.frees), fr);
	}
	/* the growth rule's verdicts at the end: growing, or grew and then
	 * stopped, which every report says alike */
	for (unsigned i = 0; i < v->n && told < 3; i++) {
		const struct gs_site *s = v->sites[i];

		if (!s->verdict)
			continue;
		told++;
		verdict_text(vt, sizeof(vt), s->verdict);
		growth_by(by, sizeof(by), s->verdict);
		where_text(fr, sizeof(fr), s);
		gs_warn("  %s%s at %s", vt, by, fr);
	}
	if (v->n_ooms || v->oom_dropped)
		gs_warn("  %u %s failed for lack of memory (post-mortems: oom-*.json)",
			v->n_ooms + v->oom_dropped, summary_allocs(v->n_ooms + v->oom_dropped));
	gs_warn("report: %s/report.txt", v->dir);
}

/* E's verdict (src/common/oom_rule.h), one line. */
static void oom_verdict(const struct gs_oom *e)
{
	struct oom_facts f;
	struct oom_verdict v;
	char line[1024];

	oom_as_facts(e, &f);
	oom_judge(&f, &v);
	oom_verdict_line(line, sizeof(line), &f, &v);
	gs_warn("  %s", line);
}

/* The post-mortem NAME was written for E. */
void summary_oom(const struct gs_view *v, const struct gs_oom *e, const char *name)
{
	char a[32], b[32], c[32], d[32];

	if (gs_config.quiet)
		return;
	human(a, sizeof(a), (long long)e->requested);
	human(b, sizeof(b), e->live);
	human(c, sizeof(c), e->free_bytes);
	human(d, sizeof(d), e->total_bytes);
	if (e->free_bytes >= 0 && e->total_bytes >= 0)
		gs_warn("out of memory: %s of %s on device %d failed (gpuspy tracks %s live; "
			"device free %s of %s); post-mortem: %s/%s",
			gs_api_names[e->api], a, e->device, b, c, d, v->dir, name);
	else
		gs_warn("out of memory: %s of %s on device %d failed (gpuspy tracks %s "
			"live); post-mortem: %s/%s",
			gs_api_names[e->api], a, e->device, b, v->dir, name);
	oom_verdict(e);
}

void summary_torch_oom(const struct gs_view *v, const struct gs_oom *e, const char *name)
{
	if (gs_config.quiet)
		return;
	gs_warn("out of memory: PyTorch raised OutOfMemoryError on device %d after event %u; "
		"post-mortem rewritten with its figures: %s/%s",
		e->device, e->number, v->dir, name);
	oom_verdict(e);
}

void summary_snapshot(const char *label, const char *dir, const char *name)
{
	if (!gs_config.quiet)
		gs_warn("snapshot \"%s\": %s/%s", label, dir, name);
}

/*
 * The frame of the user's code, for the growth notice: the innermost one
 * with a symbol outside gpuspy, CUDA (its libraries, or the runtime linked
 * into the program), the C library, the Python interpreter and ctypes'
 * foreign calls - the frames `gpuspy report` folds away as noise
 * (src/read/classify.c), judged here on what the process knows: module
 * and symbol.
 */
/* Whether the mangled NAME is in namespace PREFIX ("_ZN2at6detail") and
 * its next name starts with WORD: at::detail::empty_generic is
 * "_ZN2at6detail13empty_genericE...". */
static bool mangled_in(const char *name, const char *prefix, const char *word)
{
	size_t n = strlen(prefix);

	if (strncmp(name, prefix, n) != 0)
		return false;
	name += n;
	while (*name >= '0' && *name <= '9')
		name++;
	return strncmp(name, word, strlen(word)) == 0;
}

static bool frame_noise(const struct gs_frame *fr)
{
	static const char *const modules[] = {
		"libgpuspy", "libcuda", "libcudart", "libc.so",	    "libpython",
		"python3",   "libffi",	"_ctypes.",  "libc10_cuda",
	};
	const char *mod =
		fr->module >= 0 ? basename_of(unwind_module((unsigned)fr->module)->path) : "";
	const char *sym = frame_symbol(fr);

	for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
		if (strncmp(mod, modules[i], strlen(modules[i])) == 0)
			return true;
	if (!sym)
		return false;
	/* PyTorch's allocator and tensor factories, as the reader folds them
	 * (docs/format.md, "noise"), by their mangled names */
	if (strstr(sym, "CUDACachingAllocator") || strncmp(sym, "_ZN3c104cuda", 12) == 0 ||
	    mangled_in(sym, "_ZN2at6detail", "empty") ||
	    mangled_in(sym, "_ZN2at6native", "empty_") || mangled_in(sym, "_ZN2at4_ops", "empty") ||
	    mangled_in(sym, "_ZN2at", "empty") ||
	    strncmp(sym, "_ZN2at18TensorIteratorBase", 26) == 0)
		return true;
	return strncmp(sym, "cuda", 4) == 0 || strncmp(sym, "__cudart", 8) == 0 ||
	       strcmp(sym, "_start") == 0;
}

static const struct gs_frame *user_frame(const struct gs_site *s)
{
	const struct gs_frame *unnamed = NULL;

	for (unsigned i = 0; i < s->depth; i++) {
		const struct gs_frame *fr = &s->frames[i];

		if (frame_noise(fr))
			continue;
		if (frame_symbol(fr))
			return fr;
		if (!unnamed)
			unnamed = fr;
	}
	return unnamed ? unnamed : useful_frame(s);
}

void summary_where(char *buf, size_t len, const struct gs_site *s)
{
	gs_lock(&gs_events_lock);
	where_text(buf, len, s);
	gs_unlock(&gs_events_lock);
}

/*
 * The frame `gpuspy report` heads S with (merge_site_headline), judged on
 * what the process knows: the user's innermost Python frame, else the
 * innermost native frame that is not noise, in a module if there is one,
 * else the innermost frame.  *PY says which of S's lists it is in.
 */
static int headline_frame(const struct gs_site *s, bool *py)
{
	*py = true;
	for (unsigned i = 0; i < s->pydepth; i++)
		if (sitename_user_file(s->py[i].file))
			return (int)i;
	*py = false;
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < s->depth; i++)
			if (!frame_noise(&s->frames[i]) && (pass == 1 || s->frames[i].module >= 0))
				return (int)i;
	if (s->depth)
		return 0;
	*py = s->pydepth > 0;
	return s->pydepth ? 0 : -1;
}

void summary_site_name(char *buf, size_t len, const struct gs_site *s)
{
	struct sitename_frame sf = { 0 };
	bool py;
	int h;

	gs_lock(&gs_events_lock);
	h = headline_frame(s, &py);
	if (h < 0) {
		snprintf(buf, len, "(no stack)");
	} else if (py) {
		sf.function = s->py[h].function ? s->py[h].function : "?";
		sf.file = s->py[h].file;
		sf.line = s->py[h].line;
		sitename_short(buf, len, &sf);
	} else {
		symbols_sitename(&s->frames[h], &sf);
		sitename_short(buf, len, &sf);
	}
	gs_unlock(&gs_events_lock);
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (const unsigned char *k = (const unsigned char *)(s ? s : "?"); *k; k++)
		h = (h ^ *k) * 1099511628211ULL;
	return h;
}

void summary_site_key(char *buf, size_t len, const struct gs_site *s)
{
	uint64_t h = 14695981039346656037ULL; /* FNV-1a, 64 bits */
	char off[32];

	h = fnv(h, s->api < GS_API_COUNT ? gs_api_names[s->api] : "?");
	h = fnv(h, "|");
	for (unsigned i = 0; i < s->pydepth; i++) {
		h = fnv(h, s->py[i].file ? basename_of(s->py[i].file) : "?");
		h = fnv(h, "!");
		h = fnv(h, s->py[i].function);
		h = fnv(h, ";");
	}
	gs_lock(&gs_events_lock);
	for (unsigned i = 0; i < s->depth; i++) {
		const struct gs_frame *fr = &s->frames[i];

		if (frame_noise(fr))
			continue;
		h = fnv(h, fr->module >= 0 ?
				   basename_of(unwind_module((unsigned)fr->module)->path) :
				   "?");
		if (frame_symbol(fr)) {
			h = fnv(h, "!");
			h = fnv(h, frame_symbol(fr));
		} else if (fr->module >= 0) {
			snprintf(off, sizeof(off), "+0x%llx", (unsigned long long)fr->offset);
			h = fnv(h, off);
		}
		h = fnv(h, ";");
	}
	gs_unlock(&gs_events_lock);
	snprintf(buf, len, "%016llx", (unsigned long long)h);
}

/* S for a growth notice, into FR: its one name (the snapshot thread
 * names; where_text). */
static void growth_where(char *fr, size_t len, const struct gs_site *s)
{
	where_text(fr, len, s);
}

static double mib_per_min(double bps)
{
	return bps * 60 / (1024.0 * 1024.0);
}

/* Seconds since the process started, as the notices say them: tenths
 * below 10 s (a warm-up of 400 ms is not "from 0 s to 0 s"). */
static const char *secs(char *buf, size_t len, double t)
{
	snprintf(buf, len, t < 10 ? "%.1f s" : "%.0f s", t);
	return buf;
}

/* "PyTorch", ... for enum gs_fw, as fw_view.py names them. */
static const char *const fw_titles[GS_FW_COUNT] = {
	[GS_FW_PYTORCH] = "PyTorch",
	[GS_FW_PADDLE] = "PaddlePaddle",
	[GS_FW_JAX] = "JAX",
	[GS_FW_CUPY] = "CuPy",
};

/* ", in JAX's own allocated bytes on device 0" for a verdict by a
 * framework's counter, " from mark to mark" by the marks, "" otherwise. */
static void growth_by(char *buf, size_t len, const struct gs_verdict *v)
{
	if (v->by == GS_BY_MARKS)
		snprintf(buf, len, " from mark to mark");
	else if (v->by != GS_BY_FRAMEWORK || v->fw >= GS_FW_COUNT)
		buf[0] = '\0';
	else if (v->place == GS_FW_HOST)
		snprintf(buf, len, ", in %s's own allocated bytes of pinned host memory",
			 fw_titles[v->fw]);
	else
		snprintf(buf, len, ", in %s's own allocated bytes on device %u", fw_titles[v->fw],
			 v->place);
}

/*
 * Named once while the job runs, when a site is first seen growing: how
 * fast (MiB per minute), since when (seconds since the process started),
 * the shape, and where.  torch_view.py writes its lines in the same form.
 */
void summary_growth(const struct gs_site *s, const struct gs_verdict *v)
{
	char a[32], t[32], fr[512], by[96];

	if (gs_config.quiet)
		return;
	human(a, sizeof(a), counters_live_bytes(&s->c));
	growth_where(fr, sizeof(fr), s);
	growth_by(by, sizeof(by), v);
	gs_warn("growing: %.1f MiB/min since %s, %s%s, at %s; %s live (pid %d)",
		mib_per_min(v->v.rate), secs(t, sizeof(t), v->v.since),
		trend_shape_name(v->v.shape), by, fr, a, (int)getpid());
}

/* A site named growing stopped (grew, then stopped: libgpuspy(7)), or
 * grows again. */
void summary_growth_change(const struct gs_site *s, const struct gs_verdict *v)
{
	char a[32], t0[32], t1[32], fr[512], by[96];

	if (gs_config.quiet)
		return;
	human(a, sizeof(a), counters_live_bytes(&s->c));
	growth_where(fr, sizeof(fr), s);
	growth_by(by, sizeof(by), v);
	secs(t0, sizeof(t0), v->v.since);
	secs(t1, sizeof(t1), v->v.until);
	if (v->v.state == TREND_STOPPED)
		gs_warn("grew, then stopped: %.1f MiB/min from %s to %s, %s%s, at %s; %s live "
			"(pid %d)",
			mib_per_min(v->v.rate), t0, t1, trend_shape_name(v->v.shape), by, fr, a,
			(int)getpid());
	else
		gs_warn("growing again at %s: %.1f MiB/min since %s, %s%s, at %s; %s live (pid %d)",
			t1, mib_per_min(v->v.rate), t0, trend_shape_name(v->v.shape), by, fr, a,
			(int)getpid());
}

void summary_growth_fw(const struct gs_verdict *v, long long allocated, const struct gs_site *site)
{
	char a[32], b[32], t[32], fr[512], by[96];

	if (gs_config.quiet)
		return;
	human(a, sizeof(a), allocated);
	growth_by(by, sizeof(by), v);
	secs(t, sizeof(t), v->v.since);
	if (!site) {
		gs_warn("growing: %.1f MiB/min since %s, %s%s; %s allocated (pid %d)",
			mib_per_min(v->v.rate), t, trend_shape_name(v->v.shape), by, a,
			(int)getpid());
		return;
	}
	human(b, sizeof(b), counters_live_bytes(&site->c));
	growth_where(fr, sizeof(fr), site);
	gs_warn("growing: %.1f MiB/min since %s, %s%s, its pool's segments at %s; %s allocated, "
		"%s in segments (pid %d)",
		mib_per_min(v->v.rate), t, trend_shape_name(v->v.shape), by, fr, a, b,
		(int)getpid());
}

int summary_site_pool(const struct gs_site *s)
{
	const char *api = s->api < GS_API_COUNT ? gs_api_names[s->api] : NULL;

	for (unsigned i = 0; i < s->depth; i++) {
		const struct gs_frame *fr = &s->frames[i];
		int pool = pools_frame(
			api, fr->module >= 0 ? unwind_module((unsigned)fr->module)->path : NULL,
			frame_symbol(fr));

		if (pool != GS_POOL_NONE)
			return pool;
	}
	return GS_POOL_NONE;
}
