/* SPDX-License-Identifier: MIT */
/* Small string and path helpers of the readers and the commands. */
#ifndef GPUSPY_READ_UTIL_H
#define GPUSPY_READ_UTIL_H

#include <stdbool.h>
#include <stdint.h>

/* The last component of PATH ("a/b.py" -> "b.py"); PATH when it ends in '/'. */
const char *util_basename(const char *path);
/* *A += B; false (and *A undefined) when the sum overflows 64 bits. */
bool util_add(int64_t *a, int64_t b);
/* *A += B, stopping at INT64_MAX or INT64_MIN rather than wrap: for sums
 * of figures a report need not keep consistent. */
void util_add_sat(int64_t *a, int64_t b);

/* A size as people write it: "1048576", "512K", "1.5M", "2GiB", "64kb"
 * (K, M, G, T are powers of 1024; a trailing "B" or "iB" is allowed).
 * -EINVAL for anything else, negative or beyond INT64_MAX. */
int util_parse_size(const char *s, int64_t *out);
/* A plain decimal count, 0 or more. */
int util_parse_count(const char *s, int64_t *out);

/* "DIR/NAME" without doubling a trailing slash; NULL on out-of-memory. */
char *util_path_join(const char *dir, const char *name);
/* Collapse "//" and "/./" in place, and "dir/../" too when DOTDOT: that is
 * only lexical, so wrong across a symbolic link to a directory; fine for
 * source file names from debug info, not for a directory given by a user. */
void util_path_normalize(char *path, bool dotdot);
/* Whether P starts a C1 control: U+0080..U+009F, in UTF-8 0xC2 0x80..0x9F;
 * some terminals act on them (0x9B is CSI), so they are as dangerous as C0
 * ones. */
bool util_is_c1(const unsigned char *p);
/* Replace control characters (C0, DEL, C1) in place by '?'. */
void util_sanitize(char *s);
/* The length of the UTF-8 character at P (RFC 3629: no overlong form, no
 * surrogate, at most U+10FFFF), 0 when P does not start one (or is the
 * end). */
size_t util_utf8_len(const unsigned char *p);
/* Replace in place each byte of S that starts no UTF-8 character by '?':
 * a name from a module on disk (its symbol table, its DWARF) may be any
 * bytes, and every output format wants UTF-8.  How many were replaced. */
size_t util_utf8_fix(char *s);
/* The most bytes of S, at most MAX, that end on a character: the
 * precision of a "%.*s" that cuts S without splitting a character. */
int util_utf8_prefix(const char *s, size_t max);
/* The directory of FILE ("." when it names none); NULL on out-of-memory. */
char *util_dir_of(const char *file);

/* "1.5 MiB"; BUF of at least 32 bytes. */
const char *util_human_size(int64_t bytes, char *buf, size_t size);

#endif
