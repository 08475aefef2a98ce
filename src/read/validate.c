/* SPDX-License-Identifier: MIT */
/*
 * The validation kit of the loaders (load_process.c, load_torch.c).
 *
 * Every value is checked for presence, JSON type and range before it is
 * used: the files come from processes that may have been killed half-way,
 * from another version of gpuspy, or from anywhere, and a report that is
 * wrong must cost the user one line naming the file, never a crash or a
 * silently wrong total.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "names.h"
#include "schema.h"
#include "trend.h"
#include "validate.h"

const char *validate_type_name(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "unknown";
}

int validate_bad(const struct vctx *v, const char *key, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (v->where && key)
		rd_error_set(v->err, v->file, "%s.%s: %s", v->where, key, what);
	else if (v->where || key)
		rd_error_set(v->err, v->file, "%s: %s", v->where ? v->where : key, what);
	else
		rd_error_set(v->err, v->file, "%s", what);
	return -EINVAL;
}

/* Element J of an array: SUB's path becomes the one FMT names (formatted
 * into BUF, which must outlive SUB's use), and J must be an object. */
int validate_element(struct vctx *sub, json_t *j, char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	sub->where = buf;
	if (!json_is_object(j))
		return validate_bad(sub, NULL, "expected an object, got %s", validate_type_name(j));
	return 0;
}

/* The member KEY of OBJ, which must exist when REQUIRED; *OUT is NULL when
 * it is absent and optional. */
int validate_member(const struct vctx *v, json_t *obj, const char *key, bool required,
		    json_type type, json_t **out)
{
	json_t *j = json_object_get(obj, key);
	const char *want;

	*out = NULL;
	if (!j) {
		if (required)
			return validate_bad(v, key, "missing");
		return 0;
	}
	if (json_typeof(j) == type || (type == JSON_TRUE && json_typeof(j) == JSON_FALSE)) {
		*out = j;
		return 0;
	}
	switch (type) {
	case JSON_OBJECT:
		want = "an object";
		break;
	case JSON_ARRAY:
		want = "an array";
		break;
	case JSON_STRING:
		want = "a string";
		break;
	case JSON_INTEGER:
		want = "an integer";
		break;
	case JSON_TRUE:
		want = "a boolean";
		break;
	default:
		want = "a number";
		break;
	}
	return validate_bad(v, key, "expected %s, got %s", want, validate_type_name(j));
}

int validate_int(const struct vctx *v, json_t *obj, const char *key, bool required, int64_t min,
		 int64_t max, int64_t *out)
{
	json_t *j;
	int64_t x;
	int r = validate_member(v, obj, key, required, JSON_INTEGER, &j);

	if (r < 0 || !j)
		return r;
	x = json_integer_value(j);
	if (x < min || x > max) {
		if (x < 0 && min == 0)
			return validate_bad(v, key, "%" PRId64 " is negative", x);
		return validate_bad(v, key,
				    "%" PRId64 " is out of range [%" PRId64 ", %" PRId64 "]", x,
				    min, max);
	}
	*out = x;
	return 0;
}

int validate_count(const struct vctx *v, json_t *obj, const char *key, int64_t *out)
{
	return validate_int(v, obj, key, true, 0, INT64_MAX, out);
}

/* A copy of string member KEY in *OUT (left untouched when absent). */
int validate_str(const struct vctx *v, json_t *obj, const char *key, bool required, bool nonempty,
		 char **out)
{
	json_t *j;
	char *s;
	int r = validate_member(v, obj, key, required, JSON_STRING, &j);

	if (r < 0 || !j)
		return r;
	if (nonempty && json_string_length(j) == 0)
		return validate_bad(v, key, "empty string");
	s = strdup(json_string_value(j));
	if (!s)
		return -ENOMEM;
	*out = s;
	return 0;
}

int validate_number(const struct vctx *v, json_t *obj, const char *key)
{
	json_t *j = json_object_get(obj, key);

	if (j && !json_is_number(j))
		return validate_bad(v, key, "expected a number, got %s", validate_type_name(j));
	if (j && json_number_value(j) < 0)
		return validate_bad(v, key, "negative time");
	return 0;
}

/* A time in seconds since the epoch, in *OUT (left untouched when absent). */
int validate_time(const struct vctx *v, json_t *obj, const char *key, bool required, double *out)
{
	json_t *j = json_object_get(obj, key);
	int r;

	if (!j && required)
		return validate_bad(v, key, "missing");
	r = validate_number(v, obj, key);
	if (r < 0 || !j)
		return r;
	*out = json_number_value(j);
	return 0;
}

/* An optional object whose members must all be non-negative integers
 * ("doors", "vmm_address_space"). */
int validate_counts_object(const struct vctx *v, json_t *root, const char *key)
{
	struct vctx sub = *v;
	const char *name;
	json_t *obj, *val;
	int r = validate_member(v, root, key, false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	sub.where = key;
	json_object_foreach(obj, name, val)
	{
		int64_t x;

		r = validate_count(&sub, obj, name, &x);
		if (r < 0)
			return r;
	}
	return 0;
}

const char *validate_json_what(const json_error_t *jerr)
{
	/* jansson's own text quotes the token at fault: never print it, the
	 * file may be anything (a link to a file the user may not read) */
	switch (json_error_code(jerr)) {
	case json_error_out_of_memory:
		return "out of memory";
	case json_error_stack_overflow:
		return "nested too deeply";
	case json_error_invalid_utf8:
		return "not valid UTF-8";
	case json_error_premature_end_of_input:
		return "the text ends before the document does (cut short?)";
	case json_error_end_of_input_expected:
		return "more text after the end of the document";
	case json_error_null_character:
	case json_error_null_byte_in_key:
		return "a NUL character in a string";
	case json_error_duplicate_key:
		return "a key twice in one object";
	case json_error_numeric_overflow:
		return "a number out of range";
	default:
		return "a syntax error";
	}
}

void validate_json_error(struct rd_error *err, const char *file, const json_error_t *jerr)
{
	/* what a full disk or a killed writer leaves: said as such */
	if (json_error_code(jerr) == json_error_premature_end_of_input)
		rd_error_set(err, file,
			     "cut short at byte %d (line %d): the text ends before the "
			     "document does",
			     jerr->position, jerr->line);
	else
		rd_error_set(err, file, "invalid JSON at line %d, column %d (byte %d): %s",
			     jerr->line, jerr->column, jerr->position, validate_json_what(jerr));
}

/* O_NONBLOCK so that a FIFO named by mistake fails instead of hanging; it
 * is refused below as not a regular file. */
int validate_read_file(const char *file, char **bufp, size_t *lenp, struct stat *st,
		       struct rd_error *err)
{
	size_t cap, len = 0;
	char *buf, *nul;
	int fd, r;

	fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		rd_error_set(err, file, "%s", strerror(-r));
		return r;
	}
	if (fstat(fd, st) < 0) {
		r = -errno;
		rd_error_set(err, file, "%s", strerror(-r));
		goto out_close;
	}
	if (S_ISDIR(st->st_mode)) {
		r = -EISDIR;
		rd_error_set(err, file, "is a directory, not a report");
		goto out_close;
	}
	if (!S_ISREG(st->st_mode)) {
		r = -EINVAL;
		rd_error_set(err, file, "not a regular file");
		goto out_close;
	}
	if (st->st_size > MAX_REPORT_SIZE) {
		r = -EFBIG;
		rd_error_set(err, file, "too large for a gpuspy report (%lld bytes)",
			     (long long)st->st_size);
		goto out_close;
	}
	cap = (size_t)st->st_size + 1;
	buf = malloc(cap);
	if (!buf) {
		r = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb;

			/* the file grew since fstat */
			if (cap > MAX_REPORT_SIZE) {
				r = -EFBIG;
				rd_error_set(err, file, "too large for a gpuspy report");
				goto out_free;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				r = -ENOMEM;
				goto out_free;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			rd_error_set(err, file, "%s", strerror(-r));
			goto out_free;
		}
		if (n == 0)
			break;
		len += n;
	}
	/* JSON text holds no NUL byte, and jansson, given one, may stop
	 * reading there and accept what came before as the whole document */
	nul = memchr(buf, '\0', len);
	if (nul) {
		r = -EINVAL;
		rd_error_set(err, file, "a NUL byte at offset %zu: not JSON text",
			     (size_t)(nul - buf));
		goto out_free;
	}
	close(fd);
	*bufp = buf;
	*lenp = len;
	return 0;

out_free:
	free(buf);
out_close:
	close(fd);
	return r;
}

bool validate_newer_format(const char *got, const char *want)
{
	const char *slash = strrchr(want, '/');
	size_t n = slash ? (size_t)(slash - want) + 1 : 0;
	char *end;
	long a, b;

	if (!slash || strncmp(got, want, n) != 0 || !got[n] || got[n] < '0' || got[n] > '9')
		return false;
	a = strtol(got + n, &end, 10);
	if (*end)
		return false;
	b = strtol(want + n, NULL, 10);
	return a > b;
}

int validate_format(const struct vctx *v, json_t *root, const char *what, const char *format)
{
	json_t *j;
	int r;

	if (!json_is_object(root))
		return validate_bad(v, NULL, "not a gpuspy %s (the top level is %s)", what,
				    validate_type_name(root));
	if ((r = validate_member(v, root, "format", true, JSON_STRING, &j)) < 0)
		return r;
	if (strcmp(json_string_value(j), format) != 0)
		return validate_bad(v, NULL,
				    "unsupported format \"%.64s\" (this gpuspy reads \"%s\"%s)",
				    json_string_value(j), format,
				    validate_newer_format(json_string_value(j), format) ?
					    "; a newer gpuspy wrote it" :
					    "");
	return 0;
}

int validate_growth(const struct vctx *v, json_t *obj, const char *key, bool with_by,
		    struct rd_verdict *out)
{
	/* the model's order of "by" is schema.h's */
	_Static_assert((int)RD_BY_SAMPLES == (int)SB_SAMPLES && (int)RD_BY_MARKS == (int)SB_MARKS &&
			       (int)RD_BY_FRAMEWORK == (int)SB_FRAMEWORK,
		       "rd_verdict.by follows SCHEMA_BY");
	const char *const *k = schema_growth_key;
	struct vctx sub = *v;
	char where[160], *shape = NULL, *by = NULL, *fw = NULL, *place = NULL;
	json_t *g, *stopped;
	int r = validate_member(v, obj, key, false, JSON_OBJECT, &g);

	memset(out, 0, sizeof(*out));
	if (r < 0 || !g)
		return r;
	snprintf(where, sizeof(where), "%s%s%s", v->where ? v->where : "",
		 v->where && v->where[0] ? "." : "", key);
	sub.where = where;
	if ((r = validate_str(&sub, g, k[SG_SHAPE], true, true, &shape)) < 0)
		return r;
	if (!shape)
		return -EINVAL;
	out->shape = trend_shape_parse(shape);
	free(shape);
	if (out->shape <= TREND_NONE)
		return validate_bad(&sub, k[SG_SHAPE], "not per-sample, staircase nor drift");
	if ((r = validate_time(&sub, g, k[SG_SINCE_S], true, &out->since_s)) < 0 ||
	    (r = validate_time(&sub, g, k[SG_UNTIL_S], true, &out->until_s)) < 0 ||
	    (r = validate_member(&sub, g, k[SG_STOPPED], true, JSON_TRUE, &stopped)) < 0)
		return r;
	if (!json_is_number(json_object_get(g, k[SG_RATE_BYTES_PER_S])) ||
	    json_number_value(json_object_get(g, k[SG_RATE_BYTES_PER_S])) < 0)
		return validate_bad(&sub, k[SG_RATE_BYTES_PER_S], "expected a number, 0 or more");
	out->rate_bps = json_number_value(json_object_get(g, k[SG_RATE_BYTES_PER_S]));
	out->state = json_is_true(stopped) ? TREND_STOPPED : TREND_GROWING;
	out->by = RD_BY_SAMPLES;
	out->fw = out->place = -1;
	out->present = true;
	if (!with_by)
		return 0;
	if ((r = validate_str(&sub, g, k[SG_BY], true, true, &by)) < 0)
		return r;
	if (!by) /* required: validate_str said so already */
		return -EINVAL;
	for (out->by = 0; out->by < SB_COUNT && strcmp(by, schema_by_name[out->by]) != 0; out->by++)
		;
	free(by);
	if (out->by == SB_COUNT)
		return validate_bad(&sub, k[SG_BY], "not samples, marks nor framework");
	if (out->by != RD_BY_FRAMEWORK)
		return 0;
	if ((r = validate_str(&sub, g, k[SG_FRAMEWORK], true, true, &fw)) < 0 ||
	    (r = validate_str(&sub, g, k[SG_PLACE], true, true, &place)) < 0 || !fw || !place) {
		free(fw);
		free(place);
		return r < 0 ? r : -EINVAL;
	}
	out->fw = names_fw_parse(fw);
	out->place = validate_fw_place(place);
	free(fw);
	free(place);
	if (out->fw < 0)
		return validate_bad(&sub, k[SG_FRAMEWORK], "unknown framework");
	if (out->place < 0)
		return validate_bad(&sub, k[SG_PLACE], "not a device ordinal (0 to %d) nor \"%s\"",
				    GS_FW_DEVICES - 1, schema_frameworks_key[SW_HOST]);
	return 0;
}

int validate_fw_place(const char *pk)
{
	if (strcmp(pk, schema_frameworks_key[SW_HOST]) == 0)
		return GS_FW_HOST;
	if (pk[0] >= '0' && pk[0] <= '9' && !pk[1])
		return pk[0] - '0';
	/* 10 to 15: GS_FW_DEVICES is 16 */
	if (pk[0] == '1' && pk[1] >= '0' && pk[1] <= '5' && !pk[2])
		return 10 + pk[1] - '0';
	return -1;
}
