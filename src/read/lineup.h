/* SPDX-License-Identifier: MIT */
/*
 * Runs lined up, one per commit (gpuspy commits): each run is read and
 * merged as `gpuspy report` reads it, and kept as a few figures -- what
 * its program left live at exit, what its frameworks' pools held, its
 * peak, and each call site's peak by key -- so that any number of runs
 * fit in memory; the sites are matched across runs on their keys, never
 * addresses, as gpuspy diff matches them.
 *
 * A run's commit is what run.json says (gpuspy run recorded it), else
 * what its processes' environment says (GIT_COMMIT, CI_COMMIT_SHA,
 * GITHUB_SHA: names_commit_env, recorded by the library).
 */
#ifndef GPUSPY_READ_LINEUP_H
#define GPUSPY_READ_LINEUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct lineup_site_peak {
	char *key;
	char *name; /* its one name in that run */
	int64_t peak;
};

struct lineup_run {
	char *path;			/* as read */
	char *commit;			/* NULL: none recorded */
	char *commit_from;		/* "run.json", or the variable of the environment */
	bool commit_mixed;		/* its processes name more than one commit */
	char *run_id;			/* NULL: none */
	double start_time;		/* run.json's, else its earliest process's; -1 */
	size_t nprocs;			/* processes read */
	size_t nunreadable;		/* processes left out */
	int64_t leaked;			/* the program's own, live at exit (--fail-on-leak's) */
	int64_t pools;			/* held by the frameworks' pools at exit */
	int64_t peak;			/* gpuspy report's peak */
	struct lineup_site_peak *sites; /* by key */
	size_t nsites;
	size_t given; /* its place among the paths given, from 0 */
};

/* A site among the top: its key, the name of the latest run that has it,
 * its highest peak in any run. */
struct lineup_site {
	const char *key, *name;
	int64_t max_peak;
};

/* Read PATH (borrowed: a run directory, a process directory or a report
 * file) into *R: 0, or -errno with ERR set; processes that cannot be read
 * are left out and counted (R->nunreadable); with none left, -EINVAL and
 * ERR says why. */
int lineup_load(const char *path, struct lineup_run *r, struct rd_error *err);
void lineup_clear(struct lineup_run *r);

/* The peak of the site KEY in R, or -1 when R lacks it. */
int64_t lineup_site_peak(const struct lineup_run *r, const char *key);

/* The TOP sites (0: all) with the highest peak in any of RUNS[0..N-1],
 * highest first, then by key; names from the last run (in RUNS' order)
 * that has each.  *OUT to free (its strings are the runs'); -ENOMEM. */
int lineup_top(const struct lineup_run *runs, size_t n, size_t top, struct lineup_site **out,
	       size_t *nout);

#endif
