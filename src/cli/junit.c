/* SPDX-License-Identifier: MIT */
/*
 * JUnit XML, as the test reporters of GitLab, Jenkins and GitHub's
 * actions read it: <testsuites> of <testsuite>s (name, tests, failures,
 * errors, skipped, time, timestamp, hostname; <properties>) of
 * <testcase>s (classname, name, time) that hold a <failure message type>
 * when they failed, and a <system-out> when they have something to say.
 * A gate is a suite, each quantity or call site it judges a case.
 *
 * The strings come from files gpuspy read (site names, paths): whatever
 * they hold, the document stays well-formed XML 1.0 -- markup characters
 * escaped, and bytes that XML cannot carry (C0 controls but tab, newline
 * and return, U+FFFE, U+FFFF, bytes that are not UTF-8) written as '?'.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "names.h"
#include "utf8.h"

#include "config.h"

struct junit_case {
	char *classname, *name, *failure, *detail, *out, *skipped;
};

struct junit_prop {
	char *name, *value;
};

struct junit_suite {
	char *name, *type;
	struct junit_case *cases;
	size_t ncases, nfailed, nskipped;
	struct junit_prop *props;
	size_t nprops;
};

char *cli_strdup_printf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

/* S copied, NULL for NULL; *ERR set when out of memory. */
static char *dup_or_null(const char *s, int *err)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*err = -ENOMEM;
	return d;
}

void junit_suite(struct junit *j, const char *name, const char *type)
{
	struct junit_suite *s;

	if (j->err)
		return;
	s = reallocarray(j->suites, j->nsuites + 1, sizeof(*s));
	if (!s) {
		j->err = -ENOMEM;
		return;
	}
	j->suites = s;
	s = &s[j->nsuites];
	memset(s, 0, sizeof(*s));
	s->name = dup_or_null(name, &j->err);
	s->type = dup_or_null(type, &j->err);
	if (!j->err)
		j->nsuites++;
}

void junit_property(struct junit *j, const char *name, const char *value)
{
	struct junit_suite *s = j->nsuites ? &j->suites[j->nsuites - 1] : NULL;
	struct junit_prop *p;

	if (j->err || !s)
		return;
	p = reallocarray(s->props, s->nprops + 1, sizeof(*p));
	if (!p) {
		j->err = -ENOMEM;
		return;
	}
	s->props = p;
	p = &p[s->nprops];
	p->name = dup_or_null(name, &j->err);
	p->value = dup_or_null(value ? value : "", &j->err);
	s->nprops++;
}

void junit_case(struct junit *j, const char *classname, const char *name, const char *failure,
		const char *detail, const char *out)
{
	struct junit_suite *s = j->nsuites ? &j->suites[j->nsuites - 1] : NULL;
	struct junit_case *c;

	if (j->err || !s)
		return;
	c = reallocarray(s->cases, s->ncases + 1, sizeof(*c));
	if (!c) {
		j->err = -ENOMEM;
		return;
	}
	s->cases = c;
	c = &c[s->ncases++];
	c->classname = dup_or_null(classname, &j->err);
	c->name = dup_or_null(name ? name : "?", &j->err);
	c->failure = dup_or_null(failure, &j->err);
	c->detail = dup_or_null(detail, &j->err);
	c->out = dup_or_null(out, &j->err);
	c->skipped = NULL;
	s->nfailed += failure != NULL;
}

void junit_skip(struct junit *j, const char *classname, const char *name, const char *why)
{
	struct junit_suite *s = j->nsuites ? &j->suites[j->nsuites - 1] : NULL;

	junit_case(j, classname, name, NULL, NULL, NULL);
	if (j->err || !s)
		return;
	s->cases[s->ncases - 1].skipped = dup_or_null(why ? why : "", &j->err);
	s->nskipped++;
}

void junit_free(struct junit *j)
{
	for (size_t i = 0; i < j->nsuites; i++) {
		struct junit_suite *s = &j->suites[i];

		for (size_t k = 0; k < s->ncases; k++) {
			free(s->cases[k].classname);
			free(s->cases[k].name);
			free(s->cases[k].failure);
			free(s->cases[k].detail);
			free(s->cases[k].out);
			free(s->cases[k].skipped);
		}
		for (size_t k = 0; k < s->nprops; k++) {
			free(s->props[k].name);
			free(s->props[k].value);
		}
		free(s->cases);
		free(s->props);
		free(s->name);
		free(s->type);
	}
	free(j->suites);
	memset(j, 0, sizeof(*j));
}

/* S as XML character data (ATTR: an attribute value in double quotes,
 * where a newline or tab must be a reference to survive normalisation). */
static void put_xml(FILE *f, const char *s, bool attr)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		size_t n = utf8_seq_len(p);

		if (n == 0) {
			putc('?', f);
			p++;
			continue;
		}
		if (n == 3 && p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf)) {
			putc('?', f); /* U+FFFE, U+FFFF: not XML characters */
			p += 3;
			continue;
		}
		if (n > 1) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs(attr ? "&quot;" : "\"", f);
			break;
		case '\n':
			fputs(attr ? "&#10;" : "\n", f);
			break;
		case '\t':
			fputs(attr ? "&#9;" : "\t", f);
			break;
		case '\r':
			fputs("&#13;", f);
			break;
		default:
			putc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
			break;
		}
		p++;
	}
}

static void put_attr(FILE *f, const char *name, const char *value)
{
	fprintf(f, " %s=\"", name);
	put_xml(f, value, true);
	putc('"', f);
}

int junit_write(const struct junit *j, const char *path)
{
	char *buf = NULL, host[GS_HOST_SIZE], stamp[32];
	size_t len = 0, tests = 0, failed = 0;
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;
	int e;

	if (j->err)
		return j->err;
	names_host(host, sizeof(host));
	/* ISO 8601 without a zone, as the schema's timestamp has it: UTC */
	if (!gmtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(stamp, sizeof(stamp), "1970-01-01T00:00:00");
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < j->nsuites; i++) {
		tests += j->suites[i].ncases;
		failed += j->suites[i].nfailed;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", f);
	put_attr(f, "name", "gpuspy");
	/* the schema's testsuites has no skipped: each suite says its own */
	fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"0\">\n", tests, failed);
	for (size_t i = 0; i < j->nsuites; i++) {
		const struct junit_suite *s = &j->suites[i];

		fputs("  <testsuite", f);
		put_attr(f, "name", s->name);
		fprintf(f,
			" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"0\"",
			s->ncases, s->nfailed, s->nskipped);
		put_attr(f, "timestamp", stamp);
		put_attr(f, "hostname", host);
		fputs(">\n    <properties>\n", f);
		fputs("      <property name=\"gpuspy_version\" value=\"" GPUSPY_VERSION "\"/>\n",
		      f);
		for (size_t k = 0; k < s->nprops; k++) {
			fputs("      <property", f);
			put_attr(f, "name", s->props[k].name);
			put_attr(f, "value", s->props[k].value);
			fputs("/>\n", f);
		}
		fputs("    </properties>\n", f);
		for (size_t k = 0; k < s->ncases; k++) {
			const struct junit_case *c = &s->cases[k];

			fputs("    <testcase", f);
			put_attr(f, "classname", c->classname);
			put_attr(f, "name", c->name);
			fputs(" time=\"0\"", f);
			if (!c->failure && !c->out && !c->skipped) {
				fputs("/>\n", f);
				continue;
			}
			fputs(">\n", f);
			if (c->skipped) {
				fputs("      <skipped", f);
				put_attr(f, "message", c->skipped);
				fputs("/>\n", f);
			}
			if (c->failure) {
				fputs("      <failure", f);
				put_attr(f, "message", c->failure);
				put_attr(f, "type", s->type);
				putc('>', f);
				put_xml(f, c->detail ? c->detail : c->failure, false);
				fputs("</failure>\n", f);
			}
			if (c->out) {
				fputs("      <system-out>", f);
				put_xml(f, c->out, false);
				fputs("</system-out>\n", f);
			}
			fputs("    </testcase>\n", f);
		}
		fputs("  </testsuite>\n", f);
	}
	fputs("</testsuites>\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	e = cli_write_file(path, buf, len);
	free(buf);
	return e;
}
