/* SPDX-License-Identifier: MIT */
/*
 * Per-site budgets (gpuspy diff --budget FILE, gpuspy-diff(1), BUDGETS):
 * a file of lines "PATTERN SIZE", a shell glob (fnmatch(3), no flags) over
 * a call site's one name (sitename.h) and the most that site may hold;
 * the first line whose PATTERN matches a name is that site's budget, and
 * "*" matches every name (a last "* SIZE" line is the default).  Blank
 * lines and lines whose first non-blank character is '#' are comments.
 * SIZE is the line's last word, or its last two when the last is a unit
 * alone ("1.5 GB"), as util_parse_size reads sizes; PATTERN is all before
 * it, blanks around it dropped (site names hold blanks).
 *
 * The file is untrusted input: anything else refuses it, with one line
 * naming the file and the line.
 */
#ifndef GPUSPY_READ_BUDGET_H
#define GPUSPY_READ_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* The largest budget file read, and the longest line. */
#define BUDGET_FILE_MAX (1 << 20)
#define BUDGET_LINE_MAX 4096

struct budget_rule {
	char *pattern;
	int64_t bytes;
	size_t line; /* 1-based, in the file */
};

struct budget_file {
	char *file; /* the path as given */
	struct budget_rule *rules;
	size_t nrules;
};

/* Parse TEXT (LEN bytes, what FILE holds) into *B: 0, -EINVAL with the
 * line said in ERR ("FILE: line N: ..."), -ENOMEM. */
int budget_parse(const char *file, const char *text, size_t len, struct budget_file *b,
		 struct rd_error *err);
/* Read FILE (a regular file of at most BUDGET_FILE_MAX bytes) and parse
 * it: 0, or -errno with ERR set. */
int budget_load(const char *file, struct budget_file *b, struct rd_error *err);
/* The first rule of B whose pattern matches NAME, or NULL. */
const struct budget_rule *budget_match(const struct budget_file *b, const char *name);
void budget_clear(struct budget_file *b);

#endif
