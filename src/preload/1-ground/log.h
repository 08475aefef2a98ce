/* SPDX-License-Identifier: MIT */
/* log.c: one-line warnings, and gpuspy's own failure */
#ifndef GPUSPY_LOG_H
#define GPUSPY_LOG_H

#include <stdbool.h>

void gs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* gpuspy's own failure: one line, once, and tracking stops for good. */
void gs_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What gs_problem() says once per process, whatever the errno. */
enum gs_problem {
	GS_PROBLEM_DIR,	     /* the run or process directory */
	GS_PROBLEM_REPORT,   /* report.json, report.txt */
	GS_PROBLEM_SNAPSHOT, /* snapshot.json */
	GS_PROBLEM_ONDEMAND, /* snapshot-N.json */
	GS_PROBLEM_OOM,	     /* oom-N.json */
	GS_PROBLEM_REQUEST,  /* .request */
	GS_PROBLEM_HISTORY,  /* history.jsonl */
};
/* A warning said once per (ID, ERR) per process: a failure that repeats
 * every interval is one line.  gs_problem_new() only answers whether it
 * is new (and marks it said). */
void gs_problem(enum gs_problem id, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool gs_problem_new(enum gs_problem id, int err);

#endif /* GPUSPY_LOG_H */
