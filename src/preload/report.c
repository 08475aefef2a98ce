/* SPDX-License-Identifier: MIT */
/*
 * The exit report: report.json (format gpuspy-process/1, docs/format.md),
 * report.txt, and a few lines on stderr.  Written into
 * <run dir>/<host>-<pid>/ through a temporary name and rename(), so a
 * reader never sees half a file.  Any failure (full disk, say) is one
 * line on stderr; the host program's exit is never disturbed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "gpuspy.h"
#include "gpuspy_int.h"

extern char **environ;

/* Variables that explain a run's memory behaviour, kept in the report. */
static const char *const env_prefixes[] = {
	"PYTORCH_", "CUDA_",	   "XLA_",	  "TF_GPU_",	 "TF_FORCE_GPU_", "TF_XLA_",
	"TF_CUDA_", "JAX_",	   "FLAGS_",	  "NCCL_",	 "CUPY_",	  "GPUSPY_",
	"RANK=",    "LOCAL_RANK=", "WORLD_SIZE=", "LD_PRELOAD=",
};

/* Length of the valid UTF-8 sequence at p, or 0 (overlong forms,
 * surrogates and code points past U+10FFFF are invalid). */
static int utf8_len(const unsigned char *p)
{
	int n;
	unsigned cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* A JSON string.  Command lines and paths are bytes, not always UTF-8:
 * an invalid byte becomes U+FFFD so the report stays valid JSON. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
		int n = utf8_len(p);

		if (n == 0) {
			fputs("\\ufffd", f);
			p++;
		} else if (*p == '"' || *p == '\\') {
			fputc('\\', f);
			fputc(*p++, f);
		} else if (*p < 0x20) {
			fprintf(f, "\\u%04x", *p++);
		} else {
			fwrite(p, 1, (size_t)n, f);
			p += n;
		}
	}
	fputc('"', f);
}

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

static void write_command(FILE *f)
{
	char buf[8192];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	bool first = true;

	if (fd >= 0)
		close(fd);
	fputc('[', f);
	for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(buf + i) + 1) {
		buf[n] = '\0';
		if (!first)
			fputs(", ", f);
		json_str(f, buf + i);
		first = false;
	}
	fputc(']', f);
}

static void write_env(FILE *f)
{
	bool first = true;

	fputc('{', f);
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[256];
		bool keep = false;

		if (!eq || (size_t)(eq - *e) >= sizeof(name))
			continue;
		for (size_t i = 0; i < sizeof(env_prefixes) / sizeof(env_prefixes[0]); i++)
			if (strncmp(*e, env_prefixes[i], strlen(env_prefixes[i])) == 0)
				keep = true;
		if (!keep)
			continue;
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = '\0';
		fputs(first ? "" : ", ", f);
		json_str(f, name);
		fputs(": ", f);
		json_str(f, eq + 1);
		first = false;
	}
	fputc('}', f);
}

static void write_counters(FILE *f, struct gs_counters *c)
{
	struct gs_count_snap k;

	counters_read(c, &k);
	fprintf(f,
		"\"live_bytes\": %lld, \"live_allocations\": %lld, \"peak_bytes\": %lld, "
		"\"allocated_bytes\": %lld, \"allocations\": %lld, \"freed_bytes\": %lld, "
		"\"frees\": %lld",
		k.live_bytes, k.live_allocs, k.peak_bytes, k.alloc_bytes, k.allocs, k.freed_bytes,
		k.frees);
}

/* The process-wide figures, read once so that the JSON, the text and the
 * stderr lines agree with each other. */
static struct {
	struct gs_count_snap kind[GS_KIND_COUNT];
	long long gpu_live, gpu_allocs, gpu_peak;
} view;

static void view_read(void)
{
	view.gpu_live = view.gpu_allocs = 0;
	for (int k = 0; k < GS_KIND_COUNT; k++) {
		counters_read(&gs_totals.kind[k], &view.kind[k]);
		if (k == GS_KIND_PINNED)
			continue;
		view.gpu_live += view.kind[k].live_bytes;
		view.gpu_allocs += view.kind[k].live_allocs;
	}
	view.gpu_peak = atomic_load(&gs_totals.gpu_peak_bytes);
	if (view.gpu_peak < view.gpu_live)
		view.gpu_peak = view.gpu_live;
}

static void write_site(FILE *f, struct gs_site *s)
{
	fprintf(f, "    {\"id\": %u, \"kind\": \"%s\", \"api\": \"%s\", \"door\": \"%s\", ", s->id,
		gs_kind_names[s->kind], gs_api_names[s->api], gs_door_names[s->door]);
	write_counters(f, &s->c);
	fprintf(f, ", \"growing\": %s, \"first_seq\": %llu,\n     \"frames\": [",
		atomic_load(&s->growing) ? "true" : "false", (unsigned long long)s->first_seq);
	for (unsigned i = 0; i < s->depth; i++) {
		const struct gs_frame *fr = &s->frames[i];

		fprintf(f, "%s{\"module\": %d, \"offset\": %llu", i ? ", " : "", fr->module,
			(unsigned long long)fr->offset);
		if (fr->symbol) {
			fputs(", \"symbol\": ", f);
			json_str(f, fr->symbol);
		}
		fputc('}', f);
	}
	fputc(']', f);
	if (s->pydepth) {
		fputs(",\n     \"python\": [", f);
		for (unsigned i = 0; i < s->pydepth; i++) {
			const struct gs_pyframe *p = &s->py[i];

			fputs(i ? ", {\"file\": " : "{\"file\": ", f);
			json_str(f, p->file ? p->file : "?");
			fputs(", \"function\": ", f);
			json_str(f, p->function ? p->function : "?");
			fprintf(f, ", \"line\": %d}", p->line > 0 ? p->line : 0);
		}
		fputc(']', f);
	}
	fputc('}', f);
}

/* What one report file describes: taken under gs_events_lock. */
struct snapshot {
	struct gs_site **sites; /* sorted by live bytes */
	unsigned n;
	char host[200];
	char dir[4400];		    /* <run dir>/<host>-<pid>, created */
	const struct gs_oom *event; /* the out-of-memory this file is about */
	unsigned long long samples; /* snapshot.json: the thread's samples so far */
	const char *label;	    /* snapshot-N.json: what asked for it */
	unsigned number;	    /* snapshot-N.json */
};

/*
 * Out-of-memory events: the first OOM_FILES get a post-mortem file; all
 * are listed in every later report.  Written under gs_events_lock.
 */
#define OOM_FILES 16
static struct gs_oom ooms[OOM_FILES];
static unsigned n_ooms, oom_dropped;

/*
 * gpuspy_mark(): the last MARKS marks, oldest first, under gs_events_lock.
 * Each keeps what every site held live at that moment, so that two runs
 * can be compared at the same phase (`gpuspy diff --at LABEL`).
 */
#define MARKS	  64
#define LABEL_MAX 128
static struct {
	double time;
	char label[LABEL_MAX];
	long long live;		    /* GPU memory (device + managed + vmm) */
	struct gs_peak_site *sites; /* live > 0, any kind; NULL: none or no memory */
	unsigned n;
} marks[MARKS];
static unsigned n_marks; /* ever made */

/* On-demand snapshots: snapshot-1.json ... snapshot-64.json. */
#define LABELLED_FILES 64
static unsigned n_labelled;

static void write_oom_event(FILE *f, const struct gs_oom *e, bool with_file)
{
	fprintf(f,
		"{\"type\": \"oom\", \"number\": %u, \"time\": %.3f, \"api\": \"%s\", "
		"\"kind\": \"%s\", \"requested_bytes\": %llu, \"device\": %d, "
		"\"live_bytes\": %lld, \"free_bytes\": %lld, \"total_bytes\": %lld, \"site\": %u",
		e->number, e->time, gs_api_names[e->api], gs_kind_names[e->kind],
		(unsigned long long)e->requested, e->device, e->live, e->free_bytes, e->total_bytes,
		e->site);
	if (with_file && e->number <= OOM_FILES)
		fprintf(f, ", \"file\": \"oom-%u.json\"", e->number);
	fputc('}', f);
}

static void write_at_peak(FILE *f)
{
	const struct gs_peak_snap *p;
	bool first = true;

	peak_lock();
	p = peak_snapshot();
	if (p) {
		fprintf(f, ",\n  \"at_peak\": {\"bytes\": %lld, \"time\": %.3f, \"devices\": [",
			p->bytes, p->time);
		for (int d = 0; d <= GS_MAX_DEVICES; d++) {
			if (!p->devices[d])
				continue;
			fprintf(f, "%s{\"device\": %d, \"live_bytes\": %lld}", first ? "" : ", ",
				d - 1, p->devices[d]);
			first = false;
		}
		fputs("],\n    \"sites\": [", f);
		for (unsigned i = 0; i < p->n; i++)
			fprintf(f, "%s{\"site\": %u, \"live_bytes\": %lld}", i ? ", " : "",
				p->sites[i].site, p->sites[i].live_bytes);
		fputs("]}", f);
	}
	peak_unlock();
}

static int write_json(FILE *f, const struct snapshot *snap)
{
	struct gs_site **sites = snap->sites;
	unsigned n = snap->n;
	char hostq[256];
	bool first;

	snprintf(hostq, sizeof(hostq), "%s", snap->host);

	fprintf(f, "{\n  \"format\": \"gpuspy-process/1\",\n  \"gpuspy_version\": \"%s\",\n",
		GPUSPY_VERSION);
	fputs("  \"host\": ", f);
	json_str(f, hostq);
	fprintf(f, ",\n  \"pid\": %d,\n  \"ppid\": %d,\n  \"exe\": ", (int)getpid(),
		(int)getppid());
	{
		char exe[4096];
		ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[k > 0 ? k : 0] = '\0';
		json_str(f, exe);
	}
	fputs(",\n  \"command\": ", f);
	write_command(f);
	fputs(",\n  \"environment\": ", f);
	write_env(f);
	fprintf(f, ",\n  \"start_time\": %.3f,\n  \"end_time\": %.3f,\n", gs_state.start_time,
		gs_now());
	fprintf(f, "  \"complete\": %s,\n  \"depth\": %u,\n  \"unwinder\": \"%s\",\n",
		atomic_load(&gs_state.complete) ? "true" : "false", gs_config.depth, unwind_name());
	{
		const char *version, *note;
		bool supported;

		if (pystack_info(&version, &supported, &note)) {
			fprintf(f, "  \"python\": {\"version\": \"%s\", \"supported\": %s", version,
				supported ? "true" : "false");
			if (!supported) {
				fputs(", \"note\": ", f);
				json_str(f, note);
			}
			fputs("},\n", f);
		}
	}
	{
		const struct gs_cuda_info *ci = driver_info();

		fprintf(f, "  \"cuda\": {\"driver_version\": %d, \"devices\": [",
			ci->driver_version);
		for (unsigned i = 0; i < ci->ndevices; i++) {
			fprintf(f, "%s{\"device\": %d, \"name\": ", i ? ", " : "",
				ci->devices[i].ordinal);
			json_str(f, ci->devices[i].name);
			fprintf(f, ", \"total_bytes\": %lld}", ci->devices[i].total_bytes);
		}
		fputs("]},\n", f);
	}
	fprintf(f, "  \"leaked\": {\"bytes\": %lld, \"allocations\": %lld},\n", view.gpu_live,
		view.gpu_allocs);
	fprintf(f, "  \"peak\": {\"bytes\": %lld},\n  \"kinds\": {\n", view.gpu_peak);
	for (int k = 0; k < GS_KIND_COUNT; k++) {
		fprintf(f, "    \"%s\": {", gs_kind_names[k]);
		write_counters(f, &gs_totals.kind[k]);
		fputs(k + 1 < GS_KIND_COUNT ? "},\n" : "}\n  },\n", f);
	}
	fprintf(f,
		"  \"vmm_address_space\": {\"reserved_bytes\": %lld, \"mapped_bytes\": %lld},\n"
		"  \"untracked_frees\": %lld,\n  \"replaced\": %lld,\n",
		atomic_load(&gs_totals.vmm_reserved_bytes),
		atomic_load(&gs_totals.vmm_mapped_bytes), atomic_load(&gs_totals.untracked_frees),
		atomic_load(&gs_totals.replaced));
	fputs("  \"doors\": {", f);
	for (int d = 0; d < GS_DOOR_COUNT; d++)
		fprintf(f, "%s\"%s\": %lld", d ? ", " : "", gs_door_names[d],
			atomic_load(&gs_totals.doors[d]));
	fputs("},\n  \"devices\": [", f);
	first = true;
	/* From counters, not a walk of the table: a snapshot's cost grows with
	 * the number of sites, not of live allocations. */
	for (int i = 0; i <= GS_MAX_DEVICES; i++) {
		long long cnt = atomic_load(&gs_device_allocs[i]);

		if (cnt <= 0)
			continue;
		fprintf(f, "%s{\"device\": %d, \"live_bytes\": %lld, \"live_allocations\": %lld}",
			first ? "" : ", ", i - 1, atomic_load(&gs_device_live[i]), cnt);
		first = false;
	}
	fputs("],\n  \"modules\": [\n", f);
	for (unsigned i = 0, nm = unwind_module_count(); i < nm; i++) {
		const struct gs_module *m = unwind_module(i);

		fputs("    {\"path\": ", f);
		json_str(f, m->path);
		fprintf(f, ", \"build_id\": \"%s\", \"base\": %llu}%s\n", m->build_id,
			(unsigned long long)m->base, i + 1 < nm ? "," : "");
	}
	fputs("  ],\n  \"sites\": [\n", f);
	for (unsigned i = 0; i < n; i++) {
		write_site(f, sites[i]);
		fputs(i + 1 < n ? ",\n" : "\n", f);
	}
	fputs("  ]", f);
	write_at_peak(f);
	/* The outside view, for snapshots and post-mortems (not at exit). */
	if (snap->samples || snap->label || snap->event)
		nvml_write(f);
	if (n_ooms || oom_dropped) {
		fputs(",\n  \"oom\": [", f);
		for (unsigned i = 0; i < n_ooms; i++) {
			fputs(i ? ",\n    " : "\n    ", f);
			write_oom_event(f, &ooms[i], true);
		}
		fprintf(f, "],\n  \"oom_dropped\": %u", oom_dropped);
	}
	if (snap->event) {
		fputs(",\n  \"event\": ", f);
		write_oom_event(f, snap->event, false);
	}
	if (snap->samples)
		fprintf(f, ",\n  \"snapshot\": {\"samples\": %llu, \"interval_us\": %llu}",
			snap->samples, gs_config.interval_us);
	if (snap->label) {
		fprintf(f, ",\n  \"snapshot\": {\"number\": %u, \"label\": ", snap->number);
		json_str(f, snap->label);
		fputc('}', f);
	}
	if (n_marks) {
		unsigned oldest = n_marks > MARKS ? n_marks - MARKS : 0;

		fputs(",\n  \"marks\": [", f);
		for (unsigned i = oldest; i < n_marks; i++) {
			const unsigned m = i % MARKS;

			fprintf(f,
				"%s{\"time\": %.3f, \"label\": ", i > oldest ? ",\n    " : "\n    ",
				marks[m].time);
			json_str(f, marks[m].label);
			fprintf(f, ", \"live_bytes\": %lld, \"sites\": [", marks[m].live);
			for (unsigned j = 0; j < marks[m].n; j++)
				fprintf(f, "%s{\"site\": %u, \"live_bytes\": %lld}", j ? ", " : "",
					marks[m].sites[j].site, marks[m].sites[j].live_bytes);
			fputs("]}", f);
		}
		fputs("],\n  \"mark\": ", f);
		json_str(f, marks[(n_marks - 1) % MARKS].label);
	}
	fputs("\n}\n", f);
	return ferror(f) ? -EIO : 0;
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
 * headline: not the standard library, not an installed package. */
static const struct gs_pyframe *user_pyframe(const struct gs_site *s)
{
	for (unsigned i = 0; i < s->pydepth; i++) {
		const char *f = s->py[i].file;

		if (f && !strstr(f, "/site-packages/") && !strstr(f, "/dist-packages/") &&
		    !strstr(f, "/lib/python3.") && strncmp(f, "<frozen", 7) != 0)
			return &s->py[i];
	}
	return NULL;
}

static void frame_text(char *buf, size_t len, const struct gs_frame *fr)
{
	static char *(*demangle)(const char *, char *, size_t *, int *);
	static bool looked;
	const char *mod =
		fr->module >= 0 ? basename_of(unwind_module((unsigned)fr->module)->path) : "?";
	char *d = NULL;
	int status = -1;

	if (!fr->symbol) {
		snprintf(buf, len, "%s+0x%llx", mod, (unsigned long long)fr->offset);
		return;
	}
	if (!looked) {
		demangle = (char *(*)(const char *, char *, size_t *, int *))real_dlsym(
			RTLD_DEFAULT, "__cxa_demangle");
		looked = true;
	}
	if (demangle && fr->symbol[0] == '_' && fr->symbol[1] == 'Z')
		d = demangle(fr->symbol, NULL, NULL, &status);
	snprintf(buf, len, "%s (%s+0x%llx)", d && status == 0 ? d : fr->symbol, mod,
		 (unsigned long long)fr->offset);
	free(d);
}

static int cmp_live(const void *a, const void *b)
{
	const struct gs_site *x = *(struct gs_site *const *)a, *y = *(struct gs_site *const *)b;
	long long lx = counters_live_bytes(&x->c), ly = counters_live_bytes(&y->c);
	long long px = atomic_load(&x->c.peak_bytes), py = atomic_load(&y->c.peak_bytes);

	if (lx != ly)
		return lx < ly ? 1 : -1;
	if (px != py)
		return px < py ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int write_text(FILE *f, const struct snapshot *snap)
{
	struct gs_site **sites = snap->sites;
	unsigned n = snap->n;
	const char *host = snap->host;
	char a[32], b[32], c[32], fr[512];

	human(a, sizeof(a), view.gpu_live);
	human(b, sizeof(b), view.gpu_peak);
	human(c, sizeof(c), view.kind[GS_KIND_PINNED].live_bytes);
	fprintf(f, "gpuspy %s: process %d on %s\n\n", GPUSPY_VERSION, (int)getpid(), host);
	fprintf(f, "Leaked at exit:  %s in %lld allocations (GPU memory)\n", a, view.gpu_allocs);
	fprintf(f, "Peak:            %s\n", b);
	fprintf(f, "Pinned host:     %s in %lld allocations still live\n", c,
		view.kind[GS_KIND_PINNED].live_allocs);
	fprintf(f, "Untracked frees: %lld\n\n", atomic_load(&gs_totals.untracked_frees));
	fputs("LEAKED AT EXIT\n", f);
	for (unsigned i = 0; i < n; i++) {
		const struct gs_site *s = sites[i];
		long long live = counters_live_bytes(&s->c);

		if (live <= 0)
			break;
		human(a, sizeof(a), live);
		human(b, sizeof(b), atomic_load(&s->c.peak_bytes));
		fprintf(f, "%s in %lld allocations (%s, %s via %s), peak %s\n", a,
			atomic_load(&s->c.allocs) - atomic_load(&s->c.frees),
			gs_kind_names[s->kind], gs_api_names[s->api], gs_door_names[s->door], b);
		for (unsigned j = 0; j < s->pydepth; j++)
			fprintf(f, "    py %s:%d in %s\n", s->py[j].file ? s->py[j].file : "?",
				s->py[j].line, s->py[j].function ? s->py[j].function : "?");
		for (unsigned j = 0; j < s->depth; j++) {
			frame_text(fr, sizeof(fr), &s->frames[j]);
			fprintf(f, "    #%u %s\n", j, fr);
		}
	}
	fputs("\nRun `gpuspy report` on this directory for symbolized frames with files and "
	      "lines.\n",
	      f);
	return ferror(f) ? -EIO : 0;
}

static int write_file(const struct snapshot *snap, const char *name,
		      int (*fn)(FILE *, const struct snapshot *))
{
	const char *dir = snap->dir;
	char tmp[4608], path[4608];
	FILE *f;
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlink(tmp);
		return err;
	}
	err = fn(f, snap);
	if (fflush(f) != 0 && !err)
		err = -errno;
	if (fsync(fd) != 0 && !err && errno != EINVAL)
		err = -errno;
	if (fclose(f) != 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) != 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* With gs_events_lock held.  Returns 0, or -errno with a line printed. */
static int snapshot_take(struct snapshot *snap, const struct gs_oom *event)
{
	unsigned cap = site_count() + 16;

	snap->n = 0;
	snap->event = event;
	snap->samples = 0;
	snap->label = NULL;
	snap->number = 0;
	snap->sites = calloc(cap, sizeof(*snap->sites));
	if (!snap->sites) {
		gs_warn("out of memory writing a report");
		return -ENOMEM;
	}
	view_read();
	for (struct gs_site *s = site_list(); s && snap->n < cap; s = s->next_all)
		snap->sites[snap->n++] = s;
	qsort(snap->sites, snap->n, sizeof(*snap->sites), cmp_live);

	if (gethostname(snap->host, sizeof(snap->host)) != 0)
		snprintf(snap->host, sizeof(snap->host), "unknown");
	snap->host[sizeof(snap->host) - 1] = '\0';
	snprintf(snap->dir, sizeof(snap->dir), "%s/%s-%d", gs_state.run_dir, snap->host,
		 (int)getpid());
	if (mkdir(snap->dir, 0777) < 0 && errno != EEXIST) {
		int err = -errno;

		gs_warn("cannot create %s: %s; no report written", snap->dir, strerror(errno));
		free(snap->sites);
		return err;
	}
	return 0;
}

void report_write_exit(void)
{
	struct snapshot snap;
	char a[32], b[32], fr[512];
	int err;

	gs_lock(&gs_events_lock);
	if (snapshot_take(&snap, NULL) < 0) {
		gs_unlock(&gs_events_lock);
		return;
	}
	err = write_file(&snap, "report.json", write_json);
	if (!err)
		err = write_file(&snap, "report.txt", write_text);
	if (err) {
		gs_warn("cannot write the report in %s: %s", snap.dir, strerror(-err));
		goto out;
	}

	if (!gs_config.quiet) {
		human(a, sizeof(a), view.gpu_live);
		human(b, sizeof(b), view.gpu_peak);
		gs_warn("%s in %lld allocations of GPU memory still live at exit, peak %s (pid %d)",
			a, view.gpu_allocs, b, (int)getpid());
		for (unsigned i = 0, shown = 0; i < snap.n && shown < 3; i++) {
			struct gs_site *s = snap.sites[i];
			const struct gs_frame *uf = useful_frame(s);
			const struct gs_pyframe *py = user_pyframe(s);

			if (counters_live_bytes(&s->c) <= 0)
				break;
			if (s->kind == GS_KIND_PINNED)
				continue;
			shown++;
			human(a, sizeof(a), counters_live_bytes(&s->c));
			if (py)
				snprintf(fr, sizeof(fr), "%s (%s:%d)",
					 py->function ? py->function : "?", py->file, py->line);
			else if (uf)
				frame_text(fr, sizeof(fr), uf);
			else
				snprintf(fr, sizeof(fr), "?");
			gs_warn("  %s in %lld from %s", a,
				atomic_load(&s->c.allocs) - atomic_load(&s->c.frees), fr);
		}
		if (n_ooms || oom_dropped)
			gs_warn("  %u allocations failed for lack of memory (post-mortems: oom-*.json)",
				n_ooms + oom_dropped);
		gs_warn("report: %s/report.txt", snap.dir);
	}
out:
	free(snap.sites);
	gs_unlock(&gs_events_lock);
}

/*
 * An allocation just failed for lack of memory: write the post-mortem now,
 * on the failing thread, before the error goes back to a framework that
 * may empty its caches and retry (after which the evidence is gone).
 */
void report_oom(struct gs_oom *e)
{
	struct snapshot snap;
	char name[32], a[32], b[32], c[32], d[32];
	int err;

	gs_lock(&gs_events_lock);
	e->number = n_ooms + oom_dropped + 1;
	if (n_ooms >= OOM_FILES) {
		oom_dropped++;
		gs_unlock(&gs_events_lock);
		return;
	}
	ooms[n_ooms++] = *e;
	if (snapshot_take(&snap, e) < 0) {
		gs_unlock(&gs_events_lock);
		return;
	}
	snprintf(name, sizeof(name), "oom-%u.json", e->number);
	err = write_file(&snap, name, write_json);
	if (err) {
		gs_warn("cannot write %s/%s: %s", snap.dir, name, strerror(-err));
	} else if (!gs_config.quiet) {
		human(a, sizeof(a), (long long)e->requested);
		human(b, sizeof(b), e->live);
		human(c, sizeof(c), e->free_bytes);
		human(d, sizeof(d), e->total_bytes);
		if (e->free_bytes >= 0 && e->total_bytes >= 0)
			gs_warn("out of memory: %s of %s on device %d failed (gpuspy tracks %s live; "
				"device free %s of %s); post-mortem: %s/%s",
				gs_api_names[e->api], a, e->device, b, c, d, snap.dir, name);
		else
			gs_warn("out of memory: %s of %s on device %d failed (gpuspy tracks %s "
				"live); post-mortem: %s/%s",
				gs_api_names[e->api], a, e->device, b, snap.dir, name);
	}
	free(snap.sites);
	gs_unlock(&gs_events_lock);
}

/* The snapshot thread's periodic file: the whole report, as of now. */
void report_write_snapshot(unsigned long long samples)
{
	struct snapshot snap;
	int err;

	gs_lock(&gs_events_lock);
	if (snapshot_take(&snap, NULL) == 0) {
		snap.samples = samples;
		err = write_file(&snap, "snapshot.json", write_json);
		free(snap.sites);
		if (err) {
			gs_unlock(&gs_events_lock);
			gs_fail("cannot write %s/snapshot.json: %s", snap.dir, strerror(-err));
			return;
		}
	}
	gs_unlock(&gs_events_lock);
}

/* Named once while the job runs, when a site is first seen growing. */
void report_growth_notice(const struct gs_site *s)
{
	const struct gs_pyframe *py = user_pyframe(s);
	const struct gs_frame *uf = useful_frame(s);
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
	gs_warn("memory keeps growing at %s: %s live now (pid %d)", fr, a, (int)getpid());
}

/*
 * On the caller's thread: a copy of each site's live bytes, O(sites) with
 * no walk of the live table.  Without memory for the copy the mark keeps
 * its label and time and an empty list, and says so by being empty.
 */
void report_mark(const char *label)
{
	unsigned cap = site_count() + 16, n = 0, m;
	struct gs_peak_site *copy = calloc(cap, sizeof(*copy));
	long long live = 0;

	for (struct gs_site *s = site_list(); copy && s && n < cap; s = s->next_all) {
		long long b = counters_live_bytes(&s->c);

		if (b <= 0)
			continue;
		copy[n].site = s->id;
		copy[n].live_bytes = b;
		n++;
	}
	for (int k = 0; k < GS_KIND_COUNT; k++)
		if (k != GS_KIND_PINNED)
			live += counters_live_bytes(&gs_totals.kind[k]);
	gs_lock(&gs_events_lock);
	m = n_marks % MARKS;
	free(marks[m].sites);
	marks[m].time = gs_now();
	snprintf(marks[m].label, LABEL_MAX, "%s", label ? label : "");
	marks[m].live = live;
	marks[m].sites = copy;
	marks[m].n = copy ? n : 0;
	n_marks++;
	gs_unlock(&gs_events_lock);
}

/* snapshot-N.json, now, on the calling thread.  0, or -1 if not written. */
int report_write_labelled(const char *label)
{
	struct snapshot snap;
	char name[32];
	int err;

	gs_lock(&gs_events_lock);
	if (n_labelled >= LABELLED_FILES) {
		gs_unlock(&gs_events_lock);
		gs_warn("snapshot '%s' not written: %d on-demand snapshots already", label,
			LABELLED_FILES);
		return -1;
	}
	if (snapshot_take(&snap, NULL) < 0) {
		gs_unlock(&gs_events_lock);
		return -1;
	}
	snap.label = label;
	snap.number = ++n_labelled;
	snprintf(name, sizeof(name), "snapshot-%u.json", snap.number);
	err = write_file(&snap, name, write_json);
	if (err)
		gs_warn("cannot write %s/%s: %s", snap.dir, name, strerror(-err));
	else if (!gs_config.quiet)
		gs_warn("snapshot \"%s\": %s/%s", label, snap.dir, name);
	free(snap.sites);
	gs_unlock(&gs_events_lock);
	return err ? -1 : 0;
}

/*
 * The signal asked for a snapshot.  `gpuspy snapshot PID LABEL` leaves
 * the label in <process dir>/.request before signalling.
 */
void report_write_requested(void)
{
	char host[200], path[4608], label[LABEL_MAX] = "signal";
	int fd;

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/%s-%d/.request", gs_state.run_dir, host, (int)getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, label, sizeof(label) - 1);

		close(fd);
		unlink(path);
		if (n > 0) {
			label[n] = '\0';
			label[strcspn(label, "\n")] = '\0';
		} else {
			snprintf(label, sizeof(label), "signal");
		}
	}
	report_write_labelled(label);
}
