/* SPDX-License-Identifier: MIT */
/* Matching a name against a rule's alternatives (alts.h). */
#include <stddef.h>
#include <string.h>

#include "alts.h"

/* Whether ALT (N bytes, "a::b::c") occurs in the mangled name S as its
 * nested-name parts do: "a1b1c", each part after the first led by its
 * length ("DeviceMemAllocator::Alloc" in
 * "_ZN15stream_executor18DeviceMemAllocator5AllocEbmm"). */
static bool in_mangled(const char *s, const char *alt, size_t n)
{
	char m[256];
	size_t k = 0;
	const char *p = alt, *end = alt + n;

	while (p < end) {
		const char *q = p;
		size_t len;

		while (q < end && !(q[0] == ':' && q + 1 < end && q[1] == ':'))
			q++;
		len = (size_t)(q - p);
		if (p != alt) {
			int w = 0;

			/* the part's length, in decimal */
			for (size_t x = len; x; x /= 10)
				w++;
			if (k + (size_t)w + len >= sizeof(m))
				return false;
			for (int d = w - 1, x = (int)len; d >= 0; d--, x /= 10)
				m[k + (size_t)d] = (char)('0' + x % 10);
			k += (size_t)w;
		} else if (len >= sizeof(m)) {
			return false;
		}
		memcpy(m + k, p, len);
		k += len;
		p = q < end ? q + 2 : q;
	}
	m[k] = '\0';
	return k && strstr(s, m) != NULL;
}

bool alts_match(const char *s, const char *alts, enum alts_how how)
{
	size_t slen = strlen(s);
	bool mangled = how == ALTS_CONTAINS_MANGLED && strncmp(s, "_Z", 2) == 0;

	while (*alts) {
		size_t n = strcspn(alts, "|");

		switch (how) {
		case ALTS_EXACT:
			if (n == slen && strncmp(s, alts, n) == 0)
				return true;
			break;
		case ALTS_PREFIX:
			if (n <= slen && strncmp(s, alts, n) == 0)
				return true;
			break;
		case ALTS_CONTAINS:
		case ALTS_CONTAINS_MANGLED:
			for (const char *p = s; (size_t)(p - s) + n <= slen; p++)
				if (strncmp(p, alts, n) == 0)
					return true;
			if (mangled && in_mangled(s, alts, n))
				return true;
			break;
		default:
			break;
		}
		alts += n;
		if (*alts == '|')
			alts++;
	}
	return false;
}
