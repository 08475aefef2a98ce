/* SPDX-License-Identifier: MIT */
/*
 * gpuspy commits --format html: one self-contained page.  The page
 * (src/cli/html/commits.*, and the vendored uPlot the report's page uses)
 * is compiled in by embed_assets.py; this file adds the data, one JSON
 * object ("gpuspy-commits/1", docs/format.md) in a <script
 * type="application/json"> element, '<', '>' and '&' written \u00XX so that
 * no string of the input can close it.  The script inserts every string
 * as text, and the page's Content-Security-Policy allows no request.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commits_assets.h"
#include "lineup.h"
#include "merge.h"
#include "print.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *commits_data(const struct commits_view *v)
{
	json_t *root = json_object(), *runs = json_array(), *sites = json_array();
	bool ok = root && runs && sites;

	if (ok)
		ok = json_object_set_new(root, "format", json_string("gpuspy-commits/1")) == 0 &&
		     json_object_set_new(root, "order", json_string(v->order)) == 0;
	for (size_t i = 0; ok && i < v->nruns; i++) {
		const struct lineup_run *r = &v->runs[i];
		json_t *j = json_pack(
			"{s:o, s:o, s:o, s:s, s:o, s:I, s:I, s:I, s:I}", "commit",
			str_or_null(r->commit), "commit_from", str_or_null(r->commit_from), "run",
			str_or_null(r->run_id), "path", r->path, "start_time",
			r->start_time >= 0 ? json_real(r->start_time) : json_null(), "processes",
			(json_int_t)r->nprocs, "leaked", (json_int_t)r->leaked, "pools",
			(json_int_t)r->pools, "peak", (json_int_t)r->peak);

		ok = j && json_array_append_new(runs, j) == 0;
	}
	for (size_t k = 0; ok && k < v->ntop; k++) {
		char digest[MERGE_DIGEST_SIZE];
		json_t *peaks = json_array(), *j;

		for (size_t i = 0; peaks && i < v->nruns; i++) {
			int64_t p = lineup_site_peak(&v->runs[i], v->top[k].key);

			if (json_array_append_new(peaks, p >= 0 ? json_integer(p) : json_null()) <
			    0) {
				json_decref(peaks);
				peaks = NULL;
			}
		}
		j = peaks ? json_pack("{s:s, s:s, s:o}", "key",
				      merge_key_digest(v->top[k].key, digest, sizeof(digest)),
				      "name", v->top[k].name, "peaks", peaks) :
			    NULL;
		ok = j && json_array_append_new(sites, j) == 0;
	}
	if (ok)
		ok = json_object_set(root, "runs", runs) == 0 &&
		     json_object_set(root, "sites", sites) == 0;
	json_decref(runs);
	json_decref(sites);
	if (!ok) {
		json_decref(root);
		return NULL;
	}
	return root;
}

int html_print_commits(const struct commits_view *v, FILE *out)
{
	json_t *root = commits_data(v);
	char *data = root ? json_dumps(root, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;

	json_decref(root);
	if (!data)
		return -ENOMEM;
	return html_write_page(out, html_parts, html_slots, HTML_NPARTS, html_asset, data);
}
