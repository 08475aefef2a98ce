/* SPDX-License-Identifier: MIT */
/*
 * site_names.c: each call site's one name (src/common/sitename.h), inside
 * the process: the name `gpuspy report` gives it, for what the process
 * prints itself (the growth line, the exit summary and report.txt, the
 * /metrics labels).  Sites of one key (calls from several lines of one
 * function) share one name and one key digest, the report's.
 *
 * The naming thread only, as symbols.h says of its state: the snapshot
 * thread, then the exit path once that thread is joined.  Another thread
 * (the public API's, query.c) reads the names and groups below holding
 * gs_names_lock, which the naming thread holds through each pass.
 */
#ifndef GPUSPY_SITE_NAMES_H
#define GPUSPY_SITE_NAMES_H

#include <stdbool.h>

#include "site_walk.h"

/* Names the sites of W again when sites or growth verdicts are new since
 * the last pass (FORCE: now), after symbols_name() named their frames. */
void site_names_refresh(const struct site_walk *w, bool force);

/* S's one name, or NULL: not named yet (the callers then name it by its
 * headline frame).  Valid until the next refresh. */
const char *site_names_of(const struct gs_site *s);

/* Passes done so far, each naming every site then known: any thread. */
unsigned long long site_names_passes(void);

/* The digest of S's key, the report's for the same site, or NULL. */
const char *site_names_digest(const struct gs_site *s);

/* The group of sites S is one of (one key: one site of the report), as an
 * index below site_names_groups(), or -1: not named yet.  A group's name
 * and key digest.  Valid until the next refresh. */
int site_names_group(const struct gs_site *s);
unsigned site_names_groups(void);
const char *site_names_group_name(unsigned g);
const char *site_names_group_digest(unsigned g);

#endif /* GPUSPY_SITE_NAMES_H */
