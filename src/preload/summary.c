/* SPDX-License-Identifier: MIT */
/*
 * What gpuspy says to people from inside the process: report.txt and the
 * stderr lines.  `gpuspy report` says more, with symbolized frames.
 */
#include <dlfcn.h>
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
#include "oom_facts.h"
#include "oom_rule.h"
#include "pystack.h"
#include "real.h"
#include "sitename.h"
#include "sites.h"
#include "summary.h"
#include "trend.h"
#include "unwind.h"
#include "view.h"

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
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

	for (unsigned i = 0; i < s->depth; i++) {
		const struct gs_frame *fr = &s->frames[i];
		const char *mod = fr->module >= 0 ?
					  basename_of(unwind_module((unsigned)fr->module)->path) :
					  "";

		if (strncmp(mod, "libcuda", 7) == 0 || strncmp(mod, "libc.so", 7) == 0)
			continue;
		if (fr->symbol)
			return fr;
		if (!unnamed)
			unnamed = fr;
	}
	return unnamed ? unnamed : (s->depth ? &s->frames[0] : NULL);
}

/*
 * For people (report.txt, stderr) C++ names read better demangled.  The
 * process's own libstdc++ does it when a C++ library loaded it; gpuspy
 * never links it.  report.json keeps the raw symbol.  Under gs_events_lock.
 */
/* The innermost Python frame of user code, as `gpuspy report` picks its
 * headline (sitename_user_file). */
static const struct gs_pyframe *user_pyframe(const struct gs_site *s)
{
	for (unsigned i = 0; i < s->pydepth; i++)
		if (sitename_user_file(s->py[i].file))
			return &s->py[i];
	return NULL;
}

/* SYM demangled by the process's own libstdc++, NULL when it cannot be
 * (not C++, no libstdc++ loaded); the caller frees it.  Under
 * gs_events_lock: the looked-up function is kept in a static. */
static char *demangled(const char *sym)
{
	static char *(*demangle)(const char *, char *, size_t *, int *);
	static bool looked;
	char *d;
	int status = -1;

	if (!looked) {
		/* a Python extension loads libstdc++ with RTLD_LOCAL, out of
		 * RTLD_DEFAULT's reach: asked by name, never loaded here */
		void *cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);

		demangle = (char *(*)(const char *, char *, size_t *, int *))real_dlsym(
			RTLD_DEFAULT, "__cxa_demangle");
		if (!demangle && cxx)
			demangle = (char *(*)(const char *, char *, size_t *, int *))real_dlsym(
				cxx, "__cxa_demangle");
		/* the handle is kept: the function must stay mapped */
		looked = true;
	}
	if (!demangle || sym[0] != '_' || sym[1] != 'Z')
		return NULL;
	d = demangle(sym, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	return d;
}

static void frame_text(char *buf, size_t len, const struct gs_frame *fr)
{
	const char *mod =
		fr->module >= 0 ? basename_of(unwind_module((unsigned)fr->module)->path) : "?";
	char *d;

	if (!fr->symbol) {
		snprintf(buf, len, "%s+0x%llx", mod, (unsigned long long)fr->offset);
		return;
	}
	d = demangled(fr->symbol);
	snprintf(buf, len, "%s (%s+0x%llx)", d ? d : fr->symbol, mod,
		 (unsigned long long)fr->offset);
	free(d);
}

/* "allocation" for 1, else "allocations". */
static const char *summary_allocs(long long n)
{
	return n == 1 ? "allocation" : "allocations";
}

static const struct gs_frame *user_frame(const struct gs_site *s);

#define TORCH_TOP 3

/* The PyTorch view's last word (summary_torch_top), under gs_events_lock. */
static struct {
	unsigned n;
	char where[TORCH_TOP][256];
	long long live[TORCH_TOP], blocks[TORCH_TOP];
} torch_top;

/* The user's line of S, as the summaries name it: its innermost Python
 * frame of user code, else its first native frame that is not noise. */
static void where_text(char *buf, size_t len, const struct gs_site *s)
{
	const struct gs_pyframe *py = user_pyframe(s);
	const struct gs_frame *uf = user_frame(s);

	if (py)
		snprintf(buf, len, "%s (%s:%d)", py->function ? py->function : "?", py->file,
			 py->line);
	else if (uf)
		frame_text(buf, len, uf);
	else
		snprintf(buf, len, "?");
}

int summary_write_text(FILE *f, const struct gs_view *v)
{
	struct gs_site **sites = v->sites;
	unsigned n = v->n;
	const char *host = v->host;
	char a[32], b[32], c[32], fr[512];

	human(a, sizeof(a), v->gpu_live);
	human(b, sizeof(b), v->gpu_peak);
	human(c, sizeof(c), v->kind[GS_KIND_PINNED].live_bytes);
	fprintf(f, "gpuspy %s: process %d on %s\n\n", GPUSPY_VERSION, (int)getpid(), host);
	fprintf(f, "Leaked at exit:  %s in %lld %s (GPU memory)\n", a, v->gpu_allocs,
		summary_allocs(v->gpu_allocs));
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
		fprintf(f, "%s in %lld %s from %s (%s, %s via %s), peak %s\n", a, allocs,
			summary_allocs(allocs), fr, names_kinds[s->kind], gs_api_names[s->api],
			gs_door_names[s->door], b);
		for (unsigned j = 0; j < s->pydepth; j++)
			fprintf(f, "    py %s:%d in %s\n", s->py[j].file ? s->py[j].file : "?",
				s->py[j].line, s->py[j].function ? s->py[j].function : "?");
		for (unsigned j = 0; j < s->depth; j++) {
			frame_text(fr, sizeof(fr), &s->frames[j]);
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
	char a[32], b[32], fr[512];

	if (gs_config.quiet)
		return;
	human(a, sizeof(a), v->gpu_live);
	human(b, sizeof(b), v->gpu_peak);
	gs_warn("%s in %lld %s of GPU memory still live at exit, peak %s (pid %d)", a,
		v->gpu_allocs, summary_allocs(v->gpu_allocs), b, (int)getpid());
	for (unsigned i = 0; i < torch_top.n; i++) {
		human(a, sizeof(a), torch_top.live[i]);
		gs_warn("  %s in %lld from %s [PyTorch view]", a, torch_top.blocks[i],
			torch_top.where[i]);
	}
	for (unsigned i = 0, shown = 0; i < v->n && shown < 3; i++) {
		struct gs_site *s = v->sites[i];

		if (counters_live_bytes(&s->c) <= 0)
			break;
		if (s->kind == GS_KIND_PINNED)
			continue;
		shown++;
		human(a, sizeof(a), counters_live_bytes(&s->c));
		where_text(fr, sizeof(fr), s);
		gs_warn("  %s in %lld from %s", a,
			atomic_load(&s->c.allocs) - atomic_load(&s->c.frees), fr);
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

	oom_facts_of(e, &f);
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
 * and dynamic symbol.
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
	const char *sym = fr->symbol;

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
		if (fr->symbol)
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
	char *d = NULL;
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
		const struct gs_frame *fr = &s->frames[h];

		/* no source line: the process reads no debug information */
		if (fr->symbol)
			d = demangled(fr->symbol);
		sf.function = d ? d : fr->symbol;
		sf.module = fr->module >= 0 ?
				    basename_of(unwind_module((unsigned)fr->module)->path) :
				    NULL;
		sf.offset = fr->offset;
		sitename_short(buf, len, &sf);
		free(d);
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
		if (fr->symbol) {
			h = fnv(h, "!");
			h = fnv(h, fr->symbol);
		} else if (fr->module >= 0) {
			snprintf(off, sizeof(off), "+0x%llx", (unsigned long long)fr->offset);
			h = fnv(h, off);
		}
		h = fnv(h, ";");
	}
	gs_unlock(&gs_events_lock);
	snprintf(buf, len, "%016llx", (unsigned long long)h);
}

/*
 * Named once while the job runs, when a site is first seen growing: how
 * fast (MiB per minute), since when (seconds since the process started),
 * the shape, and where.  torch_view.py writes its lines in the same form.
 */
void summary_growth(const struct gs_site *s, double since, double rate_bps, int shape,
		    bool at_marks)
{
	const struct gs_pyframe *py = user_pyframe(s);
	const struct gs_frame *uf = user_frame(s);
	char a[32], fr[512];

	if (gs_config.quiet)
		return;
	human(a, sizeof(a), counters_live_bytes(&s->c));
	gs_lock(&gs_events_lock); /* frame_text's demangler state */
	if (py)
		snprintf(fr, sizeof(fr), "%s (%s:%d)", py->function ? py->function : "?", py->file,
			 py->line);
	else if (uf)
		frame_text(fr, sizeof(fr), uf);
	else
		snprintf(fr, sizeof(fr), "?");
	gs_unlock(&gs_events_lock);
	gs_warn("growing: %.1f MiB/min since %.0f s, %s%s, at %s; %s live (pid %d)",
		rate_bps * 60 / (1024.0 * 1024.0), since, trend_shape_name(shape),
		at_marks ? " from mark to mark" : "", fr, a, (int)getpid());
}
