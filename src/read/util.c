/* SPDX-License-Identifier: MIT */
/* Small string and path helpers shared by the readers and the commands. */
#include <fcntl.h>
#include <limits.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "util.h"
#include "utf8.h"

bool util_is_c1(const unsigned char *p)
{
	return p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
}

void util_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			*p = '?';
		} else if (util_is_c1(p)) {
			p[0] = '?';
			p[1] = '?';
			p++;
		}
	}
}

void rd_error_set(struct rd_error *err, const char *file, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!err)
		return;
	if (file)
		n = snprintf(err->msg, sizeof(err->msg), "%s: ", file);
	if (n < 0 || (size_t)n >= sizeof(err->msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof(err->msg) - n, fmt, ap);
	va_end(ap);
	util_sanitize(err->msg);
}

size_t util_utf8_len(const unsigned char *p)
{
	return p[0] ? utf8_seq_len(p) : 0;
}

size_t util_utf8_fix(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t fixed = 0;

	while (p && *p) {
		size_t n = util_utf8_len(p);

		if (n) {
			p += n;
			continue;
		}
		*p++ = '?';
		fixed++;
	}
	return fixed;
}

int util_utf8_prefix(const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t at = 0;

	while (p[at] && at < max) {
		size_t n = util_utf8_len(p + at);

		/* a byte that starts no character counts as one */
		n = n ? n : 1;
		if (at + n > max)
			break;
		at += n;
	}
	return at > INT32_MAX ? INT32_MAX : (int)at;
}

/* Set once, before anything is read (rd_read_setup): the command's. */
static rd_notice_fn *notice_fn;
static bool read_strict;

void rd_read_setup(rd_notice_fn *notice, bool strict)
{
	notice_fn = notice;
	read_strict = strict;
}

bool rd_read_strict(void)
{
	return read_strict;
}

void rd_notice(enum rd_notice kind, const char *file, const char *fmt, ...)
{
	struct rd_error line;
	char what[768];
	va_list ap;

	if (!notice_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	rd_error_set(&line, file, "%s", what);
	notice_fn(kind, line.msg);
}

char *util_path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	char *s;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (asprintf(&s, "%.*s%s%s", (int)n, dir, n > 0 && dir[n - 1] == '/' ? "" : "/", name) < 0)
		return NULL;
	return s;
}

void util_path_normalize(char *path, bool dotdot)
{
	bool absolute = path[0] == '/';
	char *out = path; /* the result never gets longer than the input */
	char *in = path;
	size_t len = 0;	 /* bytes of OUT in use */
	size_t kept = 0; /* components in OUT that ".." may remove */

	if (absolute) {
		out[len++] = '/';
		in++;
	}
	while (*in) {
		char *end = strchrnul(in, '/');
		size_t n = end - in;

		if (n == 0 || (n == 1 && in[0] == '.')) {
			/* nothing */
		} else if (dotdot && n == 2 && in[0] == '.' && in[1] == '.') {
			if (kept > 0) {
				/* drop the last component and its slash */
				while (len > (absolute ? 1 : 0) && out[len - 1] != '/')
					len--;
				if (len > (absolute ? 1 : 0))
					len--;
				kept--;
			} else if (!absolute) {
				if (len > 0)
					out[len++] = '/';
				memmove(out + len, in, 2);
				len += 2;
			}
		} else {
			if (len > 0 && out[len - 1] != '/')
				out[len++] = '/';
			memmove(out + len, in, n);
			len += n;
			if (!(n == 2 && in[0] == '.' && in[1] == '.'))
				kept++;
		}
		in = *end ? end + 1 : end;
	}
	if (len == 0)
		out[len++] = '.';
	out[len] = '\0';
}

int util_parse_count(const char *s, int64_t *out)
{
	int64_t x = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || __builtin_mul_overflow(x, 10, &x) ||
		    __builtin_add_overflow(x, *s - '0', &x))
			return -EINVAL;
	}
	*out = x;
	return 0;
}

int util_parse_size(const char *s, int64_t *out)
{
	static const char units[] = "KMGT";
	int64_t whole = 0, scale = 1, frac = 0, fscale = 1, v;
	const char *u;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, *s - '0', &whole))
			return -EINVAL;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		/* digits past the ninth say nothing a byte count could show */
		for (; *s >= '0' && *s <= '9'; s++)
			if (fscale < 1000000000) {
				frac = frac * 10 + (*s - '0');
				fscale *= 10;
			}
	}
	/* a blank folds to NUL, which strchr finds at the end of UNITS */
	if (*s && *s != ' ' && (u = strchr(units, *s & ~0x20)) != NULL) {
		for (const char *x = units; x <= u; x++)
			scale *= 1024;
		s++;
		if (*s == 'i')
			s++;
	}
	if (*s == 'B' || *s == 'b')
		s++;
	if (*s)
		return -EINVAL;
	if (__builtin_mul_overflow(whole, scale, &v) ||
	    __builtin_add_overflow(v, (int64_t)((double)frac / (double)fscale * (double)scale), &v))
		return -EINVAL;
	*out = v;
	return 0;
}

const char *util_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

bool util_add(int64_t *a, int64_t b)
{
	return !__builtin_add_overflow(*a, b, a);
}

void util_add_sat(int64_t *a, int64_t b)
{
	if (__builtin_add_overflow(*a, b, a))
		*a = b > 0 ? INT64_MAX : INT64_MIN;
}

/* The directory of FILE ("." when it names none); NULL on out-of-memory. */
char *util_dir_of(const char *file)
{
	const char *slash = strrchr(file, '/');

	if (!slash)
		return strdup(".");
	if (slash == file)
		return strdup("/");
	return strndup(file, slash - file);
}

const char *util_human_size(int64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024 && bytes > -1024) {
		snprintf(buf, size, "%" PRId64 " B", bytes);
		return buf;
	}
	while (u < 5 && (v >= 1024.0 || v <= -1024.0)) {
		v /= 1024.0;
		u++;
	}
	/* 1023.96 KiB would print as "1024.0 KiB"; say "1.0 MiB" instead */
	if (u < 5 && (v >= 1023.95 || v <= -1023.95)) {
		v /= 1024.0;
		u++;
	}
	/*
	 * u >= 0: |bytes| >= 1024 here, so the loop divided at least once (the
	 * analyzer does not follow the int64_t to double conversion).
	 * NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage) */
	snprintf(buf, size, "%.1f %s", v, units[u]);
	return buf;
}
