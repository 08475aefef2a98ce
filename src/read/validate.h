/* SPDX-License-Identifier: MIT */
/*
 * The validation kit of the loaders: each function checks one member of a
 * JSON object for presence, type and range, and on failure fills the
 * context's rd_error with "FILE: PATH.KEY: what is wrong" and returns
 * -EINVAL (-ENOMEM when a copy fails).
 */
#ifndef GPUSPY_READ_VALIDATE_H
#define GPUSPY_READ_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <jansson.h>

#include "model.h"

/* A report of a day-long run with deep stacks stays far below this; a
 * bigger file is not one of ours, and reading it would only exhaust memory. */
#define MAX_REPORT_SIZE (1024L * 1024 * 1024)

/* Validation context: the file for messages, and the JSON path of the
 * object being read ("sites[3].frames[0]"), so that a message says where. */
struct vctx {
	const char *file;
	struct rd_error *err;
	const char *where;
};

/* "an object", "an array", ...: J's JSON type for a message. */
const char *validate_type_name(const json_t *j);

/* Fill V's error for KEY (NULL: the object itself) of V's path; -EINVAL. */
__attribute__((format(printf, 3, 4))) int validate_bad(const struct vctx *v, const char *key,
						       const char *fmt, ...);

/* ROOT is a document of FORMAT: an object (else "not a gpuspy WHAT")
 * whose "format" member is FORMAT.  0 or -EINVAL. */
int validate_format(const struct vctx *v, json_t *root, const char *what, const char *format);

/* Whether format id GOT is a later version of WANT ("gpuspy-process/2"
 * of "gpuspy-process/1"): said in the refusal, the file is not broken. */
bool validate_newer_format(const char *got, const char *want);

/* Element J of an array: SUB's path becomes the one FMT names (formatted
 * into BUF, which must outlive SUB's use), and J must be an object. */
__attribute__((format(printf, 5, 6))) int validate_element(struct vctx *sub, json_t *j, char *buf,
							   size_t size, const char *fmt, ...);

/* The member KEY of OBJ, which must exist when REQUIRED; *OUT is NULL when
 * it is absent and optional.  JSON_TRUE stands for either boolean. */
int validate_member(const struct vctx *v, json_t *obj, const char *key, bool required,
		    json_type type, json_t **out);

/* An integer in [MIN, MAX] in *OUT (left untouched when absent). */
int validate_int(const struct vctx *v, json_t *obj, const char *key, bool required, int64_t min,
		 int64_t max, int64_t *out);
/* A required integer, 0 or more. */
int validate_count(const struct vctx *v, json_t *obj, const char *key, int64_t *out);

/* A copy of string member KEY in *OUT (left untouched when absent). */
int validate_str(const struct vctx *v, json_t *obj, const char *key, bool required, bool nonempty,
		 char **out);

/* KEY, when present, is a number of seconds, 0 or more. */
int validate_number(const struct vctx *v, json_t *obj, const char *key);
/* A time in seconds since the epoch, in *OUT (left untouched when absent). */
int validate_time(const struct vctx *v, json_t *obj, const char *key, bool required, double *out);

/* OBJ's optional member KEY, a "growth" (docs/format.md), into *OUT
 * (OUT->present when there): shape, since_s, rate_bytes_per_s, stopped,
 * until_s; with WITH_BY also "by" (samples, marks, framework; for
 * framework, "framework" and "place").  V's path is OBJ's. */
int validate_growth(const struct vctx *v, json_t *obj, const char *key, bool with_by,
		    struct rd_verdict *out);
/* A framework counter's place, "0" to "15" or "host": the ordinal, or
 * GS_FW_HOST; -1 for anything else. */
int validate_fw_place(const char *pk);

/* An optional object whose members must all be non-negative integers
 * ("doors", "vmm_address_space"). */
int validate_counts_object(const struct vctx *v, json_t *root, const char *key);

/* "FILE: invalid JSON at line L, column C (byte B): what" for JERR, a
 * failure of json_loadb: where, and a fixed description, never the text. */
void validate_json_error(struct rd_error *err, const char *file, const json_error_t *jerr);

/* JERR's kind of error in a few fixed words ("a syntax error"). */
const char *validate_json_what(const json_error_t *jerr);

/* The whole of FILE in memory (*BUFP, *LENP; *ST its stat): a regular file
 * of at most MAX_REPORT_SIZE bytes, without a NUL byte.  -errno, with ERR
 * filled. */
int validate_read_file(const char *file, char **bufp, size_t *lenp, struct stat *st,
		       struct rd_error *err);

#endif
