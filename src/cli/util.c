/* SPDX-License-Identifier: MIT */
/* Small string and path helpers shared by the readers and the commands. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

/* A C1 control is U+0080..U+009F, in UTF-8 0xC2 0x80..0x9F; some terminals
 * act on them (0x9B is CSI), so they are as dangerous as C0 ones. */
static bool is_c1(const unsigned char *p)
{
	return p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
}

void util_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			*p = '?';
		} else if (is_c1(p)) {
			p[0] = '?';
			p[1] = '?';
			p++;
		}
	}
}

void util_put_clean(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			putc('?', out);
		} else if (is_c1(p)) {
			putc('?', out);
			p++;
		} else {
			putc(*p, out);
		}
	}
}

void gs_error_set(struct gs_error *err, const char *file, const char *fmt, ...)
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

char *util_path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	char *s;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (asprintf(&s, "%.*s%s%s", (int)n, dir,
		     n > 0 && dir[n - 1] == '/' ? "" : "/", name) < 0)
		return NULL;
	return s;
}

void util_path_normalize(char *path, bool dotdot)
{
	bool absolute = path[0] == '/';
	char *out = path;	/* the result never gets longer than the input */
	char *in = path;
	size_t len = 0;		/* bytes of OUT in use */
	size_t kept = 0;	/* components in OUT that ".." may remove */

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
