/* SPDX-License-Identifier: MIT */
/* Reading run.json, how the command of gpuspy run ended (docs/format.md,
 * "gpuspy-run/1"). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "load.h"
#include "names.h"
#include "rundir.h"
#include "util.h"
#include "validate.h"

/* Later than any run of this gpuspy: a time beyond it is no time at all. */
#define RUN_TIME_MAX 1e11

static int load_run_root(const struct vctx *v, json_t *root, struct rd_run *run)
{
	json_t *j, *cmd, *val;
	size_t i;
	int r;

	if ((r = validate_format(v, root, "run record", GS_FORMAT_RUN)) < 0)
		return r;
	if ((r = validate_member(v, root, "gpuspy_version", false, JSON_STRING, &j)) < 0 ||
	    (r = validate_member(v, root, "command", true, JSON_ARRAY, &cmd)) < 0)
		return r;
	if (json_array_size(cmd) == 0)
		return validate_bad(v, "command", "empty");
	run->command = calloc(json_array_size(cmd), sizeof(*run->command));
	if (!run->command)
		return -ENOMEM;
	json_array_foreach(cmd, i, val)
	{
		if (!json_is_string(val))
			return validate_bad(v, NULL, "command[%zu]: expected a string, got %s", i,
					    validate_type_name(val));
		run->command[i] = strdup(json_string_value(val));
		if (!run->command[i])
			return -ENOMEM;
		run->ncommand = i + 1;
	}
	if ((r = load_run_id(v, root, &run->id)) < 0)
		return r;
	if ((r = validate_str(v, root, "host", true, true, &run->host)) < 0 ||
	    (r = validate_int(v, root, "pid", true, 1, INT32_MAX, &run->pid)) < 0 ||
	    (r = validate_time(v, root, "start_time", true, &run->start_time)) < 0 ||
	    (r = validate_time(v, root, "end_time", true, &run->end_time)) < 0)
		return r;
	if (run->start_time > RUN_TIME_MAX)
		return validate_bad(v, "start_time", "%g is no time of a run", run->start_time);
	if (run->end_time < run->start_time || run->end_time > RUN_TIME_MAX)
		return validate_bad(v, "end_time", "%g is not after start_time (%g)", run->end_time,
				    run->start_time);
	if ((r = validate_int(v, root, "exit_status", false, 0, 255, &run->exit_status)) < 0 ||
	    (r = validate_int(v, root, "signal", false, 1, 64, &run->signal)) < 0)
		return r;
	if ((r = validate_str(v, root, "commit", false, true, &run->commit)) < 0 ||
	    (r = validate_str(v, root, "commit_from", false, true, &run->commit_from)) < 0)
		return r;
	if (run->commit && !names_commit_valid(run->commit))
		return validate_bad(
			v, "commit",
			"not a commit (printable ASCII without a blank, at most %d bytes)",
			GS_COMMIT_MAX);
	if (run->commit_from) {
		bool known = strcmp(run->commit_from, "git") == 0;

		for (size_t k = 0; k < GS_COMMIT_ENV_COUNT && !known; k++)
			known = strcmp(run->commit_from, names_commit_env[k]) == 0;
		if (!known || !run->commit)
			return validate_bad(
				v, "commit_from",
				known ? "without a commit" :
					"\"%.32s\" is neither git nor a commit variable",
				run->commit_from);
	}
	if ((run->exit_status >= 0) == (run->signal > 0))
		return validate_bad(v, NULL,
				    run->signal > 0 ? "both exit_status and signal" :
						      "neither exit_status nor signal");
	run->present = true;
	return 0;
}

int load_run(const char *dir, struct rd_run *run, struct rd_error *err)
{
	char *file = util_path_join(dir, GS_FILE_RUN);
	struct vctx v = { .file = file, .err = err };
	json_error_t jerr;
	json_t *root = NULL;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int r;

	memset(run, 0, sizeof(*run));
	run->exit_status = -1;
	if (!file) {
		rd_error_set(err, dir, "out of memory");
		return -ENOMEM;
	}
	if (lstat(file, &st) < 0 && errno == ENOENT) {
		free(file);
		return 0;
	}
	r = validate_read_file(file, &buf, &len, &st, err);
	if (r < 0)
		goto out;
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		if (len)
			validate_json_error(err, file, &jerr);
		else
			rd_error_set(err, file, "empty file");
		r = -EINVAL;
		goto out;
	}
	r = load_run_root(&v, root, run);
	if (r == -ENOMEM)
		rd_error_set(err, file, "out of memory");
out:
	if (r < 0)
		rd_run_clear(run);
	json_decref(root);
	free(buf);
	free(file);
	return r;
}

int load_run_id(const struct vctx *v, json_t *root, char **out)
{
	int r = validate_str(v, root, "run", false, true, out);

	if (r == 0 && *out && !rundir_id_valid(*out)) {
		r = validate_bad(v, "run", "\"%.64s\" is not a run id", *out);
		free(*out);
		*out = NULL;
	}
	return r;
}

void rd_run_clear(struct rd_run *run)
{
	free(run->id);
	for (size_t i = 0; i < run->ncommand; i++)
		free(run->command[i]);
	free(run->command);
	free(run->host);
	free(run->commit);
	free(run->commit_from);
	memset(run, 0, sizeof(*run));
	run->exit_status = -1;
}
