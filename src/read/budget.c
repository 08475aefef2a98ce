/* SPDX-License-Identifier: MIT */
/* Per-site budgets: the file and its first-match rule (budget.h). */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget.h"
#include "utf8.h"
#include "util.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Whether WORD (LEN bytes) is a unit written alone: K, M, G or T with an
 * optional "i" and "B" ("KiB", "MB", "g"), or "B". */
static bool unit_alone(const char *w, size_t len)
{
	size_t i = 0;

	if (len && strchr("KMGTkmgt", w[0]))
		i = 1 + (len > 1 && w[1] == 'i');
	if (i < len && (w[i] == 'B' || w[i] == 'b'))
		i++;
	return len > 0 && i == len;
}

/* How many bytes of S (LEN of them, well-formed UTF-8) to quote in a
 * message: at most MAX, never cutting a character. */
static int quote_len(const char *s, size_t len, size_t max)
{
	size_t n = len < max ? len : max;

	while (n > 0 && n < len && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return (int)n;
}

static int add_rule(struct budget_file *b, const char *pat, size_t plen, int64_t bytes, size_t line)
{
	struct budget_rule *r = reallocarray(b->rules, b->nrules + 1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	b->rules = r;
	r = &r[b->nrules];
	r->pattern = strndup(pat, plen);
	if (!r->pattern)
		return -ENOMEM;
	r->bytes = bytes;
	r->line = line;
	b->nrules++;
	return 0;
}

/* One line (LEN bytes, no newline) into B: 0, or -EINVAL with ERR set. */
static int parse_line(struct budget_file *b, const char *file, const char *s, size_t len,
		      size_t lineno, struct rd_error *err)
{
	char size[64];
	const char *w, *end = s + len, *line_end;
	size_t wlen;
	int64_t bytes;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq_len((const unsigned char *)s + i);

		if (n == 0 || (n == 1 && ((unsigned char)s[i] < 0x20 && s[i] != '\t')) ||
		    s[i] == 0x7f || util_is_c1((const unsigned char *)s + i)) {
			rd_error_set(err, file, "line %zu: %s", lineno,
				     s[i] == '\0' ? "a NUL byte" :
				     n == 0	  ? "bytes that are not UTF-8" :
						    "a control character");
			return -EINVAL;
		}
		i += n;
	}
	while (s < end && is_blank(*s))
		s++;
	while (end > s && is_blank(end[-1]))
		end--;
	line_end = end;
	if (s == end || *s == '#')
		return 0;
	/* SIZE: the last word, or the last two when the last is a unit alone */
	for (w = end; w > s && !is_blank(w[-1]); w--)
		;
	wlen = (size_t)(end - w);
	if (unit_alone(w, wlen) && w > s) {
		const char *u = w;
		size_t ulen = wlen;

		for (w--; w > s && is_blank(w[-1]); w--)
			;
		end = w;
		for (; w > s && !is_blank(w[-1]); w--)
			;
		wlen = (size_t)(end - w);
		if (wlen + ulen < sizeof(size)) {
			memcpy(size, w, wlen);
			memcpy(size + wlen, u, ulen);
			size[wlen + ulen] = '\0';
		} else {
			size[0] = '\0';
		}
	} else if (wlen < sizeof(size)) {
		memcpy(size, w, wlen);
		size[wlen] = '\0';
	} else {
		size[0] = '\0';
	}
	/* the line is not NUL-terminated: quote it by its length */
	if (w == s) {
		rd_error_set(err, file,
			     "line %zu: a PATTERN and a SIZE expected ('* 512MiB'), not '%.*s'",
			     lineno, quote_len(s, (size_t)(line_end - s), 80), s);
		return -EINVAL;
	}
	if (util_parse_size(size, &bytes) < 0) {
		rd_error_set(err, file, "line %zu: '%.*s' is not a size (512MiB, 1.5 GB, 65536)",
			     lineno, quote_len(w, (size_t)(line_end - w), 40), w);
		return -EINVAL;
	}
	for (end = w; end > s && is_blank(end[-1]); end--)
		;
	return add_rule(b, s, (size_t)(end - s), bytes, lineno);
}

int budget_parse(const char *file, const char *text, size_t len, struct budget_file *b,
		 struct rd_error *err)
{
	size_t lineno = 0;
	int e = 0;

	memset(b, 0, sizeof(*b));
	b->file = strdup(file);
	if (!b->file)
		return -ENOMEM;
	for (size_t off = 0; off < len && e == 0;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;

		lineno++;
		if (n > BUDGET_LINE_MAX) {
			rd_error_set(err, file, "line %zu: longer than %d bytes", lineno,
				     BUDGET_LINE_MAX);
			e = -EINVAL;
			break;
		}
		/* a file written on Windows */
		e = parse_line(b, file, text + off, n && text[off + n - 1] == '\r' ? n - 1 : n,
			       lineno, err);
		off += n + 1;
	}
	if (e == 0 && b->nrules == 0) {
		rd_error_set(err, file,
			     "no budget in it: lines of PATTERN SIZE expected ('* 512MiB')");
		e = -EINVAL;
	}
	if (e < 0)
		budget_clear(b);
	return e;
}

int budget_load(const char *file, struct budget_file *b, struct rd_error *err)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int e = 0;
	/* O_NONBLOCK: a FIFO given as the file must not hang the gate */
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	memset(b, 0, sizeof(*b));
	if (fd < 0) {
		e = -errno;
		rd_error_set(err, file, "%s", strerror(errno));
		return e;
	}
	if (fstat(fd, &st) < 0) {
		e = -errno;
		rd_error_set(err, file, "%s", strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		e = -EINVAL;
		rd_error_set(err, file, "not a regular file");
	} else if (st.st_size > BUDGET_FILE_MAX) {
		e = -EFBIG;
		rd_error_set(err, file, "larger than %d bytes: not a budget file", BUDGET_FILE_MAX);
	} else {
		buf = malloc((size_t)st.st_size + 1);
		if (!buf)
			e = -ENOMEM;
	}
	/* buf is set whenever e is 0; said for the analyzer, which cannot
	 * know that errno is never 0 after a failed call */
	while (e == 0 && buf) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = -errno;
			rd_error_set(err, file, "%s", strerror(errno));
		} else if (n == 0) {
			break;
		} else if ((len += (size_t)n) > (size_t)st.st_size) {
			/* it grew while read */
			e = -EFBIG;
			rd_error_set(err, file, "changed while it was read");
		}
	}
	close(fd);
	if (e == 0 && buf) {
		buf[len] = '\0';
		e = budget_parse(file, buf, len, b, err);
	}
	free(buf);
	return e;
}

const struct budget_rule *budget_match(const struct budget_file *b, const char *name)
{
	for (size_t i = 0; i < b->nrules; i++)
		if (fnmatch(b->rules[i].pattern, name, 0) == 0)
			return &b->rules[i];
	return NULL;
}

void budget_clear(struct budget_file *b)
{
	for (size_t i = 0; i < b->nrules; i++)
		free(b->rules[i].pattern);
	free(b->rules);
	free(b->file);
	memset(b, 0, sizeof(*b));
}
