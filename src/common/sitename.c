/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sitename.h"

const char *sitename_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, const char *s, bool clean)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		unsigned char c = *p;

		if (clean && (c < 0x20 || c == 0x7f)) {
			c = '?';
		} else if (clean && c == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			/* a C1 control in UTF-8: two bytes, one '?' */
			c = '?';
			p++;
		}
		if (o->len + 1 < o->size)
			o->buf[o->len] = (char)c;
		o->len++;
	}
	if (o->size)
		o->buf[o->len < o->size ? o->len : o->size - 1] = '\0';
}

static void put_hex(struct out *o, uint64_t v)
{
	char num[32];

	snprintf(num, sizeof(num), "0x%" PRIx64, v);
	put(o, num, false);
}

static void put_line(struct out *o, char sep, int64_t line)
{
	char num[32];

	snprintf(num, sizeof(num), "%c%" PRId64, sep, line);
	put(o, num, false);
}

size_t sitename_short(char *buf, size_t size, const struct sitename_frame *f)
{
	struct out o = { .buf = buf, .size = size };

	if (size)
		buf[0] = '\0';
	if (!f->function) {
		if (f->module) {
			put(&o, f->module, true);
			put(&o, "+", false);
		}
		put_hex(&o, f->offset);
		return o.len;
	}
	put(&o, f->function, true);
	if (f->file) {
		put(&o, " (", false);
		put(&o, sitename_basename(f->file), true);
		if (f->line > 0)
			put_line(&o, ':', f->line);
		else
			for (size_t i = 0; i < f->nlines; i++)
				put_line(&o, i ? ',' : ':', f->lines[i]);
		put(&o, ")", false);
	} else if (f->module) {
		put(&o, " (", false);
		put(&o, f->module, true);
		put(&o, ")", false);
	}
	return o.len;
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
