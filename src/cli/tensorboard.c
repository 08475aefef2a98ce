/* SPDX-License-Identifier: MIT */
/*
 * gpuspy export --tensorboard: a process's history (history.jsonl) as the
 * scalars of a TensorBoard event file (docs/format.md, "gpuspy export
 * --tensorboard").
 *
 * The file is a sequence of TFRecords, each an Event of tensorboard.proto
 * (beside this file) encoded with protobuf-c:
 *
 *   uint64 length, little-endian
 *   uint32 masked CRC32C of those 8 bytes
 *   length bytes of data
 *   uint32 masked CRC32C of the data
 *
 * where masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8.  The first
 * record says the file's version, the others hold the scalars of one step
 * each.  No C library of Debian's packages the CRC32C (Castagnoli), so it
 * is computed here from a table, built once.
 *
 * tensorboard_export writes the files: everything is built before
 * anything is created, and every file is created before any is written,
 * so that a refused input or LOGDIR leaves nothing behind.  LOGDIR may lie
 * in a shared place, so it is opened without following a link and must be
 * ours, and the directories and files under it are made relative to its
 * descriptor, O_NOFOLLOW, O_EXCL.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "load_history.h"
#include "print.h"
#include "tensorboard.pb-c.h"
#include "util.h"

typedef Gpuspy__Tensorboard__Event pb_event;
typedef Gpuspy__Tensorboard__Summary pb_summary;
typedef Gpuspy__Tensorboard__Summary__Value pb_value;

/* The longest tag written: a headline of a site is cut to fit. */
#define TB_TAG_MAX 160

static uint32_t tb_crc_table[256];

static void tb_crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		/* the Castagnoli polynomial 0x1EDC6F41, reflected */
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		tb_crc_table[i] = c;
	}
}

static uint32_t tb_crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	if (!tb_crc_table[1])
		tb_crc_init();
	while (n--)
		c = tb_crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static uint32_t tb_masked_crc(const uint8_t *p, size_t n)
{
	uint32_t c = tb_crc32c(p, n);

	return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static void tb_le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* EV appended to OUT as one record. */
static int tb_record(struct tb_events *out, const pb_event *ev)
{
	size_t n = gpuspy__tensorboard__event__get_packed_size(ev);
	size_t need = out->len + 8 + 4 + n + 4;
	uint8_t *p;

	if (need > out->cap) {
		size_t cap = out->cap ? out->cap : 4096;
		uint8_t *nb;

		while (cap < need)
			cap *= 2;
		nb = realloc(out->buf, cap);
		if (!nb)
			return -ENOMEM;
		out->buf = nb;
		out->cap = cap;
	}
	p = out->buf + out->len;
	tb_le(p, n, 8);
	tb_le(p + 8, tb_masked_crc(p, 8), 4);
	gpuspy__tensorboard__event__pack(ev, p + 12);
	tb_le(p + 12 + n, tb_masked_crc(p + 12, n), 4);
	out->len = need;
	return 0;
}

/* A site's one name, as every other surface prints it (merge_site_name):
 * whole (the tag is cut later); NULL on -ENOMEM. */
static char *tb_site_name(const struct rd_report_site *s)
{
	return strdup(merge_site_name(s));
}

/* NAME cut to at most TB_TAG_MAX - 1 bytes into BUF (of TB_TAG_MAX): a tag
 * is a protobuf string, UTF-8 (the report's strings are, jansson checks),
 * so a cut ends before the character it would split. */
static void tb_cut(const char *name, char *buf)
{
	size_t n = strlen(name);

	if (n > TB_TAG_MAX - 1) {
		n = TB_TAG_MAX - 1;
		while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(buf, name, n);
	buf[n] = '\0';
}

/* The sites of one headline in a process, summed over every history
 * series whose site has it, ranked by its peak. */
struct tb_group {
	char *name; /* the headline, whole */
	int64_t peak;
	size_t tag;
	size_t was; /* its index before the groups were sorted */
};

struct tb_build {
	char **tags;
	size_t ntags;
	size_t *tag_of; /* per history series; SIZE_MAX: not written */
	struct tb_group *groups;
	size_t ngroups;
};

static int tb_add_tag(struct tb_build *b, const char *tag, size_t *out)
{
	for (size_t i = 0; i < b->ntags; i++)
		if (strcmp(b->tags[i], tag) == 0) {
			*out = i;
			return 0;
		}
	b->tags[b->ntags] = strdup(tag);
	if (!b->tags[b->ntags])
		return -ENOMEM;
	*out = b->ntags++;
	return 0;
}

/* A value of a row: a sample's, or a bucket's max (a peak never
 * disappears from a curve, as on the timeline of the other exports). */
static int64_t tb_value(const struct rd_hist_row *row, const struct rd_hist_value *v)
{
	return row->type == RD_HIST_BUCKET ? v->max : v->last;
}

static const struct rd_report_site *tb_merged_site(const struct rd_report *r, size_t p, int64_t key)
{
	const struct rd_process *proc = r->procs[p];

	for (size_t i = 0; i < proc->nsites; i++)
		if (proc->sites[i].id == key)
			return r->site_of[p][i];
	return NULL;
}

static int cmp_group(const void *pa, const void *pb)
{
	const struct tb_group *a = pa, *b = pb;

	if (a->peak != b->peak)
		return a->peak < b->peak ? 1 : -1;
	/* bytes, as the unsigned chars of UTF-8: the order of code points */
	return strcmp(a->name, b->name);
}

/* Group G's tag: "sites/HEADLINE" cut; a headline whose tag another of
 * higher peak took (the two differ only past the cut), or that would be
 * the rest's ("other"), gets " #2", " #3"... the first one free. */
static int tb_group_tag(struct tb_build *b, struct tb_group *g)
{
	char tag[TB_TAG_MAX + 32], name[TB_TAG_MAX];

	tb_cut(g->name, name);
	for (unsigned n = 1;; n++) {
		size_t before = b->ntags;
		int e;

		if (n == 1)
			snprintf(tag, sizeof(tag), "sites/%s", name);
		else
			snprintf(tag, sizeof(tag), "sites/%s #%u", name, n);
		if (strcmp(tag, "sites/other") == 0)
			continue;
		e = tb_add_tag(b, tag, &g->tag);
		if (e || b->ntags > before)
			return e;
	}
}

/* Each series of H to its tag: the devices, NVML, the pool, the TOP
 * headlines of highest peak (0: all), the other sites together. */
static int tb_tags(struct tb_build *b, const struct rd_report *r, size_t p,
		   const struct rd_history *h, size_t top)
{
	/* per history series: its group, SIZE_MAX for none */
	size_t *group_of = calloc(h->nseries + 1, sizeof(*group_of));
	size_t *moved = calloc(h->nseries + 1, sizeof(*moved));
	int64_t *sum = calloc(h->nseries + 1, sizeof(*sum));
	char tag[TB_TAG_MAX + 32];
	size_t other = SIZE_MAX;
	int e = 0;

	b->tags = calloc(h->nseries + 2, sizeof(*b->tags));
	b->tag_of = calloc(h->nseries + 1, sizeof(*b->tag_of));
	b->groups = calloc(h->nseries + 1, sizeof(*b->groups));
	if (!group_of || !moved || !sum || !b->tags || !b->tag_of || !b->groups) {
		e = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < h->nseries && e == 0; k++) {
		const struct rd_hist_series *s = &h->series[k];
		const struct rd_report_site *site;
		char *name;
		size_t g;

		b->tag_of[k] = group_of[k] = SIZE_MAX;
		if (s->kind != RD_HIST_SITE)
			continue;
		site = tb_merged_site(r, p, s->key);
		if (!site)
			continue;
		name = tb_site_name(site);
		if (!name) {
			e = -ENOMEM;
			break;
		}
		/* sites that differ only below their headline (a framework's
		 * frames under one line of the user's) are one curve */
		for (g = 0; g < b->ngroups && strcmp(b->groups[g].name, name) != 0; g++)
			;
		if (g == b->ngroups)
			b->groups[b->ngroups++] = (struct tb_group){ .name = name, .was = g };
		else
			free(name);
		group_of[k] = g;
	}
	/* each group's peak: the highest of its summed values over the rows */
	for (size_t i = 0; i < h->nrows && e == 0; i++) {
		const struct rd_hist_row *row = &h->rows[i];

		if (row->type == RD_HIST_EVENT)
			continue;
		memset(sum, 0, (b->ngroups + 1) * sizeof(*sum));
		for (size_t j = 0; j < row->count; j++) {
			const struct rd_hist_value *v = &h->values[row->first + j];

			if (group_of[v->series] != SIZE_MAX)
				util_add_sat(&sum[group_of[v->series]], tb_value(row, v));
		}
		for (size_t g = 0; g < b->ngroups; g++)
			if (sum[g] > b->groups[g].peak)
				b->groups[g].peak = sum[g];
	}
	if (e)
		goto out;
	qsort(b->groups, b->ngroups, sizeof(*b->groups), cmp_group);
	for (size_t g = 0; g < b->ngroups; g++)
		moved[b->groups[g].was] = g;
	for (size_t k = 0; k < h->nseries; k++)
		if (group_of[k] != SIZE_MAX)
			group_of[k] = moved[group_of[k]];
	for (size_t g = 0; g < b->ngroups && e == 0; g++) {
		b->groups[g].tag = SIZE_MAX;
		if (!top || g < top)
			e = tb_group_tag(b, &b->groups[g]);
	}
	for (size_t k = 0; k < h->nseries && e == 0; k++) {
		const struct rd_hist_series *s = &h->series[k];

		switch (s->kind) {
		case RD_HIST_DEVICE:
			if (s->key < 0)
				snprintf(tag, sizeof(tag), "device/unknown");
			else
				snprintf(tag, sizeof(tag), "device/%" PRId64, s->key);
			break;
		case RD_HIST_OUTSIDE:
			snprintf(tag, sizeof(tag), "nvml/%" PRId64, s->key);
			break;
		case RD_HIST_POOL_RESERVED:
			snprintf(tag, sizeof(tag), "pool/reserved/%" PRId64, s->key);
			break;
		case RD_HIST_POOL_ALLOCATED:
			snprintf(tag, sizeof(tag), "pool/allocated/%" PRId64, s->key);
			break;
		case RD_HIST_SITE:
			if (group_of[k] != SIZE_MAX && b->groups[group_of[k]].tag != SIZE_MAX) {
				b->tag_of[k] = b->groups[group_of[k]].tag;
				continue;
			}
			/* a site not among the top, or not in the report */
			if (other == SIZE_MAX)
				e = tb_add_tag(b, "sites/other", &other);
			b->tag_of[k] = other;
			continue;
		case RD_HIST_OTHER:
			if (other == SIZE_MAX)
				e = tb_add_tag(b, "sites/other", &other);
			b->tag_of[k] = other;
			continue;
		case RD_HIST_TORCH:
		case RD_HIST_TORCH_OTHER:
		default:
			/* the PyTorch view's lines: the sites say where memory went */
			continue;
		}
		e = tb_add_tag(b, tag, &b->tag_of[k]);
	}
out:
	free(group_of);
	free(moved);
	free(sum);
	return e;
}

static void tb_build_free(struct tb_build *b)
{
	for (size_t i = 0; b->tags && i < b->ntags; i++)
		free(b->tags[i]);
	free(b->tags);
	free(b->tag_of);
	for (size_t g = 0; b->groups && g < b->ngroups; g++)
		free(b->groups[g].name);
	free(b->groups);
}

/* The step's scalars, one record. */
static int tb_flush(struct tb_events *out, const struct tb_build *b, int64_t step, double wall,
		    const int64_t *val, const bool *has, pb_value *values, pb_value **vp)
{
	pb_event ev;
	pb_summary sum;
	size_t n = 0;

	for (size_t t = 0; t < b->ntags; t++) {
		if (!has[t])
			continue;
		gpuspy__tensorboard__summary__value__init(&values[n]);
		values[n].tag = b->tags[t];
		values[n].value_case = GPUSPY__TENSORBOARD__SUMMARY__VALUE__VALUE_SIMPLE_VALUE;
		values[n].simple_value = (float)val[t];
		vp[n] = &values[n];
		n++;
	}
	if (n == 0)
		return 0;
	gpuspy__tensorboard__event__init(&ev);
	gpuspy__tensorboard__summary__init(&sum);
	sum.value = vp;
	sum.n_value = n;
	ev.wall_time = wall;
	ev.step = step;
	ev.summary = &sum;
	out->nsteps++;
	return tb_record(out, &ev);
}

/* The step of a row at T (seconds since the start) after MARKS marks. */
static int64_t tb_step_of(enum tb_step mode, double t, int64_t marks)
{
	if (mode == TB_STEP_MARK)
		return marks;
	/* t is 0 to 3.2e9 (docs/format.md): truncated is floored, and fits */
	return (int64_t)t;
}

int tensorboard_build(const struct rd_report *r, size_t p, const struct rd_history *h,
		      enum tb_step mode, size_t top, struct tb_events *out)
{
	struct tb_build b = { 0 };
	int64_t *row_val = NULL, *step_val = NULL, step = -1, marks = 0;
	bool *row_has = NULL, *step_has = NULL;
	pb_value *values = NULL;
	pb_value **vp = NULL;
	double wall = h->start;
	pb_event ev;
	int e;

	memset(out, 0, sizeof(*out));
	gpuspy__tensorboard__event__init(&ev);
	ev.wall_time = h->start;
	ev.file_version = "brain.Event:2";
	e = tb_record(out, &ev);
	if (e == 0)
		e = tb_tags(&b, r, p, h, top);
	if (e == 0) {
		row_val = calloc(b.ntags + 1, sizeof(*row_val));
		step_val = calloc(b.ntags + 1, sizeof(*step_val));
		row_has = calloc(b.ntags + 1, sizeof(*row_has));
		step_has = calloc(b.ntags + 1, sizeof(*step_has));
		values = calloc(b.ntags + 1, sizeof(*values));
		vp = calloc(b.ntags + 1, sizeof(*vp));
		if (!row_val || !step_val || !row_has || !step_has || !values || !vp)
			e = -ENOMEM;
	}
	out->ntags = b.ntags;
	for (size_t i = 0; i < h->nrows && e == 0; i++) {
		const struct rd_hist_row *row = &h->rows[i];
		int64_t s;

		if (row->type == RD_HIST_EVENT) {
			marks += row->event == RD_HIST_MARK;
			continue;
		}
		memset(row_val, 0, b.ntags * sizeof(*row_val));
		memset(row_has, 0, b.ntags * sizeof(*row_has));
		for (size_t j = 0; j < row->count; j++) {
			const struct rd_hist_value *v = &h->values[row->first + j];
			size_t t = b.tag_of[v->series];

			if (t == SIZE_MAX)
				continue;
			util_add_sat(&row_val[t], tb_value(row, v));
			row_has[t] = true;
		}
		/* one value per tag and step: the step's highest, at the wall
		 * time of its last row */
		s = tb_step_of(mode, row->t1, marks);
		if (s != step) {
			e = tb_flush(out, &b, step, wall, step_val, step_has, values, vp);
			memset(step_has, 0, b.ntags * sizeof(*step_has));
			step = s;
		}
		for (size_t t = 0; t < b.ntags; t++) {
			if (!row_has[t])
				continue;
			if (!step_has[t] || row_val[t] > step_val[t])
				step_val[t] = row_val[t];
			step_has[t] = true;
		}
		wall = h->start + row->t1;
	}
	if (e == 0)
		e = tb_flush(out, &b, step, wall, step_val, step_has, values, vp);
	out->marks = marks;
	free(row_val);
	free(step_val);
	free(row_has);
	free(step_has);
	free(values);
	free(vp);
	tb_build_free(&b);
	if (e < 0) {
		free(out->buf);
		memset(out, 0, sizeof(*out));
	}
	return e;
}

/* S with every byte but letters, digits, '.', '_' and '-' replaced by
 * '_': a host name read from a file names no other directory. */
static void tb_safe(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			*s = '_';
}

void tensorboard_file_name(const struct rd_process *p, const struct rd_history *h, char *buf,
			   size_t size)
{
	char host[64];

	snprintf(host, sizeof(host), "%s", p->host ? p->host : "unknown");
	tb_safe(host);
	snprintf(buf, size, "events.out.tfevents.%" PRId64 ".%s.%" PRId64 ".gpuspy",
		 (int64_t)h->start, host, p->pid);
}

void tensorboard_run_name(const struct rd_process *p, bool with_host, char *buf, size_t size)
{
	char host[64];

	snprintf(host, sizeof(host), "%s", p->host ? p->host : "unknown");
	tb_safe(host);
	if (p->rank >= 0 && with_host)
		snprintf(buf, size, "rank-%" PRId64 "-%s-%" PRId64, p->rank, host, p->pid);
	else if (p->rank >= 0)
		snprintf(buf, size, "rank-%" PRId64, p->rank);
	else
		snprintf(buf, size, "%s-%" PRId64, host, p->pid);
	/* "." and ".." cannot come out: they hold no '-' */
}

struct tb_file {
	char run[160];
	char name[200];
	int dfd, fd;
	bool made;    /* the run directory is new: removed again on failure */
	bool created; /* the file, likewise */
	struct tb_events ev;
};

/* LOGDIR opened, made when missing (its parent must exist; then *MADE is
 * its name, to remove on failure): a descriptor, or the exit status with
 * one line said. */
static int tb_open_logdir(const char *logdir, int *out, char **made)
{
	char *dir = strdup(logdir);
	struct stat st;
	size_t n;
	int fd, e = 0;

	if (!dir)
		return EXIT_FAILURE_OTHER;
	/* "dir/" would follow a link named dir */
	for (n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
		dir[n - 1] = '\0';
	if (mkdir(dir, 0755) == 0)
		*made = dir;
	else if (errno != EEXIST)
		e = errno;
	fd = e ? -1 : open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && !e)
		e = errno;
	if (e == ENOTDIR && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
		cli_error(logdir, "a symbolic link: refused (give the directory itself)");
	} else if (e == ENOTDIR) {
		cli_error(logdir, "not a directory");
	} else if (e) {
		cli_error(logdir, "%s", strerror(e));
	} else if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		e = EPERM;
		cli_error(logdir, "belongs to another user: refused");
	}
	if (*made != dir)
		free(dir);
	if (e) {
		if (fd >= 0)
			close(fd);
		return EXIT_USAGE;
	}
	*out = fd;
	return 0;
}

/* F's run directory under LFD and its file, both new or the run ours:
 * 0, or the exit status with one line said. */
static int tb_create(int lfd, const char *logdir, struct tb_file *f)
{
	struct stat st;
	int e = 0;

	if (mkdirat(lfd, f->run, 0755) == 0)
		f->made = true;
	else if (errno != EEXIST)
		e = errno;
	f->dfd = e ? -1 : openat(lfd, f->run, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (f->dfd < 0 && !e)
		e = errno;
	if (!e && (fstat(f->dfd, &st) < 0 || st.st_uid != geteuid()))
		e = EPERM;
	if (e) {
		fprintf(stderr, "gpuspy export: ");
		cli_put_clean(stderr, logdir);
		fprintf(stderr, "/%s: %s\n", f->run,
			e == ENOTDIR || e == ELOOP ? "not a directory (or a link): refused" :
			e == EPERM		   ? "belongs to another user: refused" :
						     strerror(e));
		return e == ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
	}
	f->fd = openat(f->dfd, f->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (f->fd < 0) {
		e = errno;
		fprintf(stderr, "gpuspy export: ");
		cli_put_clean(stderr, logdir);
		fprintf(stderr, "/%s/%s: %s\n", f->run, f->name,
			e == EEXIST ? "exists already (this process was exported there before)" :
				      strerror(e));
		return EXIT_USAGE;
	}
	f->created = true;
	return 0;
}

static int tb_write(const struct tb_file *f)
{
	size_t off = 0;

	while (off < f->ev.len) {
		ssize_t w = write(f->fd, f->ev.buf + off, f->ev.len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		off += (size_t)w;
	}
	return 0;
}

/* The run directories' names: "rank-R", or with the host and pid when two
 * processes have one rank, then a number when even that repeats. */
static void tb_names(const struct rd_report *r, const struct rd_history *h, struct tb_file *files)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct tb_file *f = &files[i];
		bool twice = false;

		if (!h[i].present)
			continue;
		for (size_t j = 0; j < r->nprocs && !twice; j++)
			twice = j != i && h[j].present && r->procs[i]->rank >= 0 &&
				r->procs[j]->rank == r->procs[i]->rank;
		tensorboard_run_name(r->procs[i], twice, f->run, sizeof(f->run));
		for (size_t j = 0; j < i; j++)
			if (h[j].present && strcmp(files[j].run, f->run) == 0) {
				size_t n = strlen(f->run);

				snprintf(f->run + n, sizeof(f->run) - n, "-%zu", i + 1);
				break;
			}
		tensorboard_file_name(r->procs[i], &h[i], f->name, sizeof(f->name));
	}
}

int tensorboard_export(const struct rd_report *r, const struct rd_history *h, const char *logdir,
		       enum tb_step step, size_t top)
{
	struct tb_file *files = calloc(r->nprocs + 1, sizeof(*files));
	struct rd_error err = { .msg = "" };
	size_t with = 0, refused = 0;
	char *made = NULL;
	int e = files ? 0 : -ENOMEM, status = EXIT_OK, lfd = -1;

	for (size_t i = 0; files && i < r->nprocs; i++)
		files[i].dfd = files[i].fd = -1;

	/* every history was read before anything is built (format_print) */
	for (size_t i = 0; i < r->nprocs && e == 0; i++) {
		if (!h[i].present) {
			/* a refused one was said as it was read around */
			refused += h[i].refused;
			if (!h[i].refused)
				cli_error(r->procs[i]->path, "no history.jsonl: nothing to export");
			continue;
		}
		with++;
		e = tensorboard_build(r, i, &h[i], step, top, &files[i].ev);
		if (e == 0 && step == TB_STEP_MARK && files[i].ev.marks == 0)
			cli_error(r->procs[i]->path,
				  "its history has no mark: every value is at step 0 "
				  "(try --step time)");
	}
	if (e < 0) {
		cli_print_error(&err, e);
		status = e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
	} else if (with == 0 && refused) {
		cli_notices_say(true);
		status = EXIT_USAGE;
	} else if (with == 0) {
		cli_error(NULL, "no process of these paths has a history: nothing written");
		status = EXIT_USAGE;
	}
	if (status == EXIT_OK) {
		tb_names(r, h, files);
		status = tb_open_logdir(logdir, &lfd, &made);
	}
	for (size_t i = 0; i < r->nprocs && status == EXIT_OK; i++) {
		if (!h[i].present)
			continue;
		status = tb_create(lfd, logdir, &files[i]);
	}
	for (size_t i = 0; i < r->nprocs && status == EXIT_OK; i++) {
		if (files[i].fd < 0)
			continue;
		e = tb_write(&files[i]);
		if (close(files[i].fd) < 0 && e == 0)
			e = -errno;
		files[i].fd = -1;
		if (e < 0) {
			cli_error(logdir, "%s/%s: cannot write: %s", files[i].run, files[i].name,
				  strerror(-e));
			status = EXIT_FAILURE_OTHER;
			break;
		}
	}
	for (size_t i = 0; i < r->nprocs && status == EXIT_OK; i++)
		if (files[i].created)
			printf("%s/%s/%s: %zu tags, %zu steps\n", logdir, files[i].run,
			       files[i].name, files[i].ev.ntags, files[i].ev.nsteps);
	/* a failure leaves nothing of this export behind */
	for (size_t i = 0; files && i < r->nprocs; i++) {
		if (files[i].fd >= 0)
			close(files[i].fd);
		if (status != EXIT_OK && files[i].created)
			unlinkat(files[i].dfd, files[i].name, 0);
		if (files[i].dfd >= 0)
			close(files[i].dfd);
		if (status != EXIT_OK && files[i].made)
			unlinkat(lfd, files[i].run, AT_REMOVEDIR);
		free(files[i].ev.buf);
	}
	if (lfd >= 0)
		close(lfd);
	if (status != EXIT_OK && made)
		rmdir(made);
	free(made);
	free(files);
	return status;
}
