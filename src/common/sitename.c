/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sitename.h"
#include "utf8.h"

const char *sitename_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

struct out {
	char *buf;
	size_t size, len;
};

static void put_byte(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

/* S, as text of one line when CLEAN: controls (C0, DEL, C1) and bytes
 * that are not UTF-8 each become one '?'. */
static void put(struct out *o, const char *s, bool clean)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = clean ? utf8_seq_len(p) : 1;

		/* a C0 control or DEL; a C1 control: two bytes, one '?' */
		if ((clean && n == 1 && (*p < 0x20 || *p == 0x7f)) ||
		    (clean && n == 2 && p[0] == 0xc2 && p[1] <= 0x9f)) {
			put_byte(o, '?');
		} else if (n == 0) {
			put_byte(o, '?');
			n = 1;
		} else {
			for (size_t i = 0; i < n; i++)
				put_byte(o, (char)p[i]);
		}
		p += n;
	}
	if (o->size)
		o->buf[o->len < o->size ? o->len : o->size - 1] = '\0';
}

/* PREFIX, V in decimal (in hex when HEX) */
static void put_num(struct out *o, const char *prefix, uint64_t v, bool hex)
{
	char num[32];

	if (hex)
		snprintf(num, sizeof(num), "%" PRIx64, v);
	else
		snprintf(num, sizeof(num), "%" PRId64, (int64_t)v);
	put(o, prefix, false);
	put(o, num, false);
}

/* F's short form, with LEAD (> 0) and MORE other lines instead of its own
 * line or lines when LEAD is given. */
static void put_frame(struct out *o, const struct sitename_frame *f, int64_t lead, size_t more)
{
	if (!f->function) {
		if (f->module) {
			put(o, f->module, true);
			put(o, "+", false);
		}
		put_num(o, "0x", f->offset, true);
		return;
	}
	put(o, f->function, true);
	if (f->file) {
		put(o, " (", false);
		put(o, sitename_basename(f->file), true);
		if (lead > 0) {
			put_num(o, ":", (uint64_t)lead, false);
			if (more) {
				put_num(o, " +", more, false);
				put(o, more == 1 ? " line" : " lines", false);
			}
		} else if (f->line > 0) {
			put_num(o, ":", (uint64_t)f->line, false);
		} else {
			for (size_t i = 0; i < f->nlines; i++)
				put_num(o, i ? "," : ":", (uint64_t)f->lines[i], false);
		}
		put(o, ")", false);
	} else if (f->module) {
		put(o, " (", false);
		put(o, f->module, true);
		put(o, ")", false);
	}
}

static void out_init(struct out *o, char *buf, size_t size)
{
	*o = (struct out){ .buf = buf, .size = size };
	if (size)
		buf[0] = '\0';
}

size_t sitename_short(char *buf, size_t size, const struct sitename_frame *f)
{
	struct out o;

	out_init(&o, buf, size);
	put_frame(&o, f, 0, 0);
	return o.len;
}

ssize_t sitename_headline(const struct sitename_frame *frames, size_t n)
{
	/* the user's own Python line says most ... */
	for (size_t i = 0; i < n; i++)
		if (frames[i].python && frames[i].user)
			return (ssize_t)i;
	/* ... else the innermost native code that is not machinery, in a
	 * module if there is one */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++)
			if (!frames[i].python && !frames[i].noise &&
			    (pass == 1 || frames[i].module))
				return (ssize_t)i;
	return n > 0 ? 0 : -1;
}

size_t sitename_lead_line(const struct sitename_line *lines, size_t n)
{
	size_t best = 0;

	for (size_t i = 1; i < n; i++) {
		const struct sitename_line *a = &lines[i], *b = &lines[best];

		if (a->growing != b->growing) {
			if (a->growing)
				best = i;
		} else if (a->live_bytes != b->live_bytes) {
			if (a->live_bytes > b->live_bytes)
				best = i;
		} else if (a->peak_bytes > b->peak_bytes) {
			best = i;
		}
	}
	return best;
}

/* The headline of S with its lead line. */
static void put_base(struct out *o, const struct sitename_site *s)
{
	ssize_t h = sitename_headline(s->frames, s->nframes);
	const struct sitename_frame *f;

	if (h < 0) {
		put(o, "(no stack)", false);
		return;
	}
	f = &s->frames[h];
	if (f->file && s->nlines > 1)
		put_frame(o, f, s->lines[sitename_lead_line(s->lines, s->nlines)].line,
			  s->nlines - 1);
	else if (f->file && s->nlines == 1 && f->line <= 0)
		put_frame(o, f, s->lines[0].line, 0);
	else
		put_frame(o, f, 0, 0);
}

size_t sitename_name(char *buf, size_t size, const struct sitename_site *s)
{
	struct out o;

	out_init(&o, buf, size);
	put_base(&o, s);
	return o.len;
}

/*
 * Telling sites apart.  Each site's name grows by parts, " from F" for a
 * caller, " via F" for a frame under the headline, " by API", " #K"; the
 * stage says which kind of part it tries next, DEPTH how far it has gone.
 */
enum stage { STAGE_CALLER, STAGE_INNER, STAGE_API, STAGE_NUMBER };

struct naming {
	const struct sitename_site *s;
	ssize_t headline;
	char *name;
	size_t depth; /* callers (or inner frames) used so far */
	enum stage stage;
};

/* The DEPTH-th (from 0) frame of N outward from the headline, noise left
 * out; or inward (towards the innermost) when INWARD. */
static const struct sitename_frame *nth_frame(const struct naming *m, size_t depth, bool inward)
{
	const struct sitename_site *s = m->s;

	if (m->headline < 0)
		return NULL;
	if (!inward) {
		for (size_t i = (size_t)m->headline + 1; i < s->nframes; i++)
			if (!s->frames[i].noise && depth-- == 0)
				return &s->frames[i];
		return NULL;
	}
	for (size_t i = (size_t)m->headline; i-- > 0;)
		if (!s->frames[i].python && !s->frames[i].noise && depth-- == 0)
			return &s->frames[i];
	return NULL;
}

static char *short_dup(const struct sitename_frame *f)
{
	size_t n = sitename_short(NULL, 0, f);
	char *b = malloc(n + 1);

	if (b)
		sitename_short(b, n + 1, f);
	return b;
}

/* NAME with WORD and TEXT appended, in place; -ENOMEM. */
static int append(char **name, const char *word, const char *text)
{
	size_t a = strlen(*name), b = strlen(word), c = strlen(text);
	char *n = realloc(*name, a + b + c + 1);

	if (!n)
		return -ENOMEM;
	snprintf(n + a, b + c + 1, "%s%s", word, text);
	*name = n;
	return 0;
}

static int cmp_naming(const void *pa, const void *pb)
{
	const struct naming *a = *(struct naming *const *)pa, *b = *(struct naming *const *)pb;
	int c = strcmp(a->name, b->name);

	/* the order given breaks ties, so "#K" follows it */
	return c ? c : (a > b) - (a < b);
}

/* Whether the frames at DEPTH of G[0..N-1] differ somewhere; each one's
 * short form into TEXT[i] (NULL: it has none). */
static int frames_differ(struct naming **g, size_t n, size_t depth, bool inward, char **text,
			 bool *differ, bool *any)
{
	*differ = false;
	*any = false;
	memset(text, 0, n * sizeof(*text));
	for (size_t i = 0; i < n; i++) {
		const struct sitename_frame *f = nth_frame(g[i], depth, inward);

		if (f && !(text[i] = short_dup(f)))
			return -ENOMEM;
		*any |= text[i] != NULL;
		if (i && (!text[i] != !text[0] || (text[i] && strcmp(text[i], text[0]) != 0)))
			*differ = true;
	}
	return 0;
}

/* One step towards telling G[0..N-1] (whose names coincide) apart: the
 * earliest stage any of them is at, from the deepest frame reached there. */
static int split_group(struct naming **g, size_t n, char **text)
{
	enum stage stage = STAGE_NUMBER;
	size_t depth = 0;
	int e = 0;

	for (size_t i = 0; i < n; i++)
		stage = g[i]->stage < stage ? g[i]->stage : stage;
	for (size_t i = 0; i < n; i++)
		if (g[i]->stage == stage && g[i]->depth > depth)
			depth = g[i]->depth;
	if (stage == STAGE_CALLER || stage == STAGE_INNER) {
		bool inward = stage == STAGE_INNER, differ, any;

		for (;; depth++) {
			e = frames_differ(g, n, depth, inward, text, &differ, &any);
			if (e < 0 || differ || !any)
				break;
			for (size_t i = 0; i < n; i++)
				free(text[i]);
		}
		for (size_t i = 0; i < n && e == 0 && differ; i++) {
			if (text[i])
				e = append(&g[i]->name, inward ? " via " : " from ", text[i]);
			g[i]->depth = depth + 1;
			g[i]->stage = stage;
		}
		for (size_t i = 0; i < n; i++)
			free(text[i]);
		if (e < 0 || differ)
			return e;
		for (size_t i = 0; i < n; i++) {
			g[i]->stage = (enum stage)(stage + 1);
			g[i]->depth = 0;
		}
		return 0;
	}
	if (stage == STAGE_API) {
		bool differ = false;

		for (size_t i = 1; i < n; i++)
			differ |= strcmp(g[i]->s->api ? g[i]->s->api : "",
					 g[0]->s->api ? g[0]->s->api : "") != 0;
		for (size_t i = 0; i < n && e == 0; i++) {
			if (differ && g[i]->s->api)
				e = append(&g[i]->name, " by ", g[i]->s->api);
			g[i]->stage = STAGE_NUMBER;
		}
		return e;
	}
	for (size_t i = 1; i < n && e == 0; i++) {
		char num[32];

		snprintf(num, sizeof(num), "%zu", i + 1);
		e = append(&g[i]->name, " #", num);
	}
	return e;
}

int sitename_names(const struct sitename_site *sites, size_t n, char **names)
{
	struct naming *m = calloc(n + 1, sizeof(*m));
	struct naming **order = calloc(n + 1, sizeof(*order));
	char **text = calloc(n + 1, sizeof(*text));
	int e = m && order && text ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && e == 0; i++) {
		size_t len = sitename_name(NULL, 0, &sites[i]);

		m[i].s = &sites[i];
		m[i].headline = sitename_headline(sites[i].frames, sites[i].nframes);
		m[i].name = malloc(len + 1);
		if (!m[i].name)
			e = -ENOMEM;
		else
			sitename_name(m[i].name, len + 1, &sites[i]);
		order[i] = &m[i];
	}
	/* each round extends every group of equal names; a group reaches
	 * STAGE_NUMBER after at most its frames' count of rounds, and that
	 * stage ends it */
	for (bool again = e == 0 && n > 1; again && e == 0;) {
		again = false;
		qsort(order, n, sizeof(*order), cmp_naming);
		for (size_t i = 0; i < n && e == 0;) {
			size_t j = i + 1;

			while (j < n && strcmp(order[j]->name, order[i]->name) == 0)
				j++;
			if (j - i > 1) {
				e = split_group(order + i, j - i, text);
				again = true;
			}
			i = j;
		}
	}
	for (size_t i = 0; m && i < n; i++) {
		if (e == 0)
			names[i] = m[i].name;
		else
			free(m[i].name);
	}
	free(m);
	free(order);
	free(text);
	return e;
}

size_t sitename_python_at(const struct sitename_frame *native, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (native[i].function &&
		    strcmp(native[i].function, "_PyEval_EvalFrameDefault") == 0)
			return i;
	for (size_t i = 0; i < n; i++)
		if (native[i].module && (strncmp(native[i].module, "libpython", 9) == 0 ||
					 strncmp(native[i].module, "python3", 7) == 0))
			return i;
	return n;
}

size_t sitename_key(char *buf, size_t size, const char *api, const struct sitename_frame *frames,
		    size_t n)
{
	struct out o;
	bool first = true;

	out_init(&o, buf, size);
	put(&o, api ? api : "?", false);
	put(&o, "|", false);
	for (size_t i = 0; i < n; i++) {
		const struct sitename_frame *f = &frames[i];

		/* noise is the same for every site of its kind, and may differ
		 * between versions of the driver, the interpreter, the
		 * framework: it would only split sites that are one */
		if (f->noise)
			continue;
		if (!first)
			put(&o, ";", false);
		first = false;
		if (f->python) {
			/* the file's basename: the same script run from another
			 * checkout is the same code; no line, which moves with
			 * every edit above it */
			put(&o, f->file ? sitename_basename(f->file) : "?", false);
			put(&o, "!", false);
			put(&o, f->function ? f->function : "?", false);
			continue;
		}
		put(&o, f->module ? f->module : "?", false);
		/* an address outside any module is absolute, and would make
		 * the key differ in every process: only its name, if any */
		if (f->function) {
			put(&o, "!", false);
			put(&o, f->function, false);
		} else if (f->module) {
			put_num(&o, "+0x", f->offset, true);
		}
	}
	return o.len;
}

const char *sitename_digest(const char *key, char *buf, size_t size)
{
	uint64_t h = 14695981039346656037ULL; /* FNV-1a, 64 bits */

	for (const unsigned char *k = (const unsigned char *)key; *k; k++)
		h = (h ^ *k) * 1099511628211ULL;
	snprintf(buf, size, "%016" PRIx64, h);
	return buf;
}

/* "/lib/python3.12/", "/lib64/python3.11/", "/lib/python3.13t/" (the
 * free-threaded build): the interpreter's standard library directory. */
static bool is_stdlib(const char *file)
{
	for (const char *p = strstr(file, "/lib"); p; p = strstr(p + 1, "/lib")) {
		const char *q = p + 4;

		if (strncmp(q, "64", 2) == 0)
			q += 2;
		if (strncmp(q, "/python3.", 9) != 0)
			continue;
		q += 9;
		if (*q < '0' || *q > '9')
			continue;
		while (*q >= '0' && *q <= '9')
			q++;
		if (*q == 't')
			q++;
		if (*q == '/')
			return true;
	}
	return false;
}

bool sitename_user_file(const char *file)
{
	static const char *const not_user[] = {
		"/site-packages/",
		"/dist-packages/",
	};

	if (!file || !file[0] || strcmp(file, "?") == 0)
		return false;
	if (strncmp(file, "<frozen", 7) == 0)
		return false;
	for (size_t i = 0; i < sizeof(not_user) / sizeof(not_user[0]); i++)
		if (strstr(file, not_user[i]))
			return false;
	return !is_stdlib(file);
}
