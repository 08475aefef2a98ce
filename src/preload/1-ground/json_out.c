/* SPDX-License-Identifier: MIT */
/* The small JSON emitter of the files gpuspy writes. */
#include <stdio.h>

#include "json_out.h"

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
void json_str(FILE *f, const char *s)
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
