/* SPDX-License-Identifier: MIT */
/* UTF-8 sequences, one rule for every side (the library's names and
 * metrics, the reader's printers). */
#ifndef GPUSPY_UTF8_H
#define GPUSPY_UTF8_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at S (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF; 1 for any byte
 * below 0x80, NUL included), 0 when there is none. */
static inline size_t utf8_seq_len(const unsigned char *s)
{
	unsigned c = s[0], cp;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

#endif
