/* SPDX-License-Identifier: MIT */
/*
 * The names both sides spell (names.h): the library builds its process
 * directory and file paths with these, the command finds and reads them.
 * No allocation, no state: the preload library calls them from its writer
 * thread and from the report written at exit.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "names.h"

const char *const names_kinds[GS_KIND_COUNT] = {
	[GS_KIND_DEVICE] = "device",
	[GS_KIND_MANAGED] = "managed",
	[GS_KIND_VMM] = "vmm",
	[GS_KIND_PINNED] = "pinned",
};

const char *const names_commit_env[GS_COMMIT_ENV_COUNT] = {
	"GIT_COMMIT",
	"CI_COMMIT_SHA",
	"GITHUB_SHA",
};

bool names_commit_valid(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (s[n] <= ' ' || s[n] > '~' || n >= GS_COMMIT_MAX)
			return false;
	return n > 0;
}

const char *names_kind(int kind)
{
	return kind >= 0 && kind < GS_KIND_COUNT ? names_kinds[kind] : "?";
}

int names_kind_parse(const char *s)
{
	for (int k = 0; k < GS_KIND_COUNT; k++)
		if (strcmp(s, names_kinds[k]) == 0)
			return k;
	return -EINVAL;
}

const char *const names_fw[GS_FW_COUNT] = {
	[GS_FW_PYTORCH] = "pytorch",
	[GS_FW_PADDLE] = "paddle",
	[GS_FW_JAX] = "jax",
	[GS_FW_CUPY] = "cupy",
};

const char *const names_fw_counter[GS_FWC_COUNT] = {
	[GS_FWC_ALLOCATED] = "allocated",
	[GS_FWC_RESERVED] = "reserved",
	[GS_FWC_PEAK_ALLOCATED] = "peak_allocated",
	[GS_FWC_PEAK_RESERVED] = "peak_reserved",
	[GS_FWC_LIMIT] = "limit",
	[GS_FWC_FREE_BLOCKS] = "free_blocks",
};

static int names_find(const char *const *names, int n, const char *s)
{
	for (int k = 0; k < n; k++)
		if (strcmp(s, names[k]) == 0)
			return k;
	return -EINVAL;
}

int names_fw_parse(const char *s)
{
	return names_find(names_fw, GS_FW_COUNT, s);
}

int names_fw_counter_parse(const char *s)
{
	return names_find(names_fw_counter, GS_FWC_COUNT, s);
}

void names_host(char *buf, size_t size)
{
	/* POSIX leaves unsaid whether a name that fits exactly is
	 * terminated: hence the last byte, always */
	if (gethostname(buf, size) != 0)
		snprintf(buf, size, "unknown");
	buf[size - 1] = '\0';
	/* a name all the same: readers refuse an empty one */
	if (!buf[0])
		snprintf(buf, size, "unknown");
}

/* snprintf's count as 0 or -ENAMETOOLONG */
static int fit(int n, size_t size)
{
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

void names_host_component(char *buf, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	char host[GS_HOST_SIZE];
	size_t n = 0;

	names_host(host, sizeof(host));
	for (const unsigned char *p = (const unsigned char *)host; *p; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' ||
			     (*p == '.' && p != (const unsigned char *)host);

		if (n + (plain ? 1 : 3) >= size)
			break;
		if (plain) {
			buf[n++] = (char)*p;
		} else {
			buf[n++] = '%';
			buf[n++] = hex[*p >> 4];
			buf[n++] = hex[*p & 15];
		}
	}
	buf[n] = '\0';
	/* nothing left (no name, or no room): a name all the same */
	if (n == 0)
		snprintf(buf, size, "unknown");
}

int names_process_dir(char *buf, size_t size, pid_t pid)
{
	char host[GS_HOST_SIZE];

	names_host_component(host, sizeof(host));
	return fit(snprintf(buf, size, "%s-%d", host, (int)pid), size);
}

int names_process_path(char *buf, size_t size, const char *run_dir, pid_t pid)
{
	char host[GS_HOST_SIZE];

	names_host_component(host, sizeof(host));
	return fit(snprintf(buf, size, "%s/%s-%d", run_dir, host, (int)pid), size);
}

int names_join(char *buf, size_t size, const char *dir, const char *name)
{
	return fit(snprintf(buf, size, "%s/%s", dir, name), size);
}

int names_tmp(char *buf, size_t size, const char *dir, const char *name)
{
	return fit(snprintf(buf, size, "%s/.%s.tmp", dir, name), size);
}

int names_image_path(char *buf, size_t size, const char *dir, unsigned k)
{
	return fit(snprintf(buf, size, "%s" GS_PROCESS_IMAGE_SUFFIX "%u", dir, k), size);
}

/* The decimal number at S, 1 to MAX without a leading zero, in *X; where
 * its digits end, or NULL. */
static const char *number(const char *s, long long max, long long *x)
{
	*x = 0;
	if (*s < '1' || *s > '9')
		return NULL;
	for (; *s >= '0' && *s <= '9'; s++) {
		*x = *x * 10 + (*s - '0');
		if (*x > max)
			return NULL;
	}
	return s;
}

int names_parse_process_image(const char *name, pid_t *pid, size_t *host_len, unsigned *image)
{
	const char *dash = strrchr(name, '-'), *d;
	long long x, k = 0;

	if (!dash || dash == name)
		return -EINVAL;
	d = number(dash + 1, INT_MAX, &x);
	if (!d)
		return -EINVAL;
	if (*d && (strncmp(d, GS_PROCESS_IMAGE_SUFFIX, strlen(GS_PROCESS_IMAGE_SUFFIX)) != 0 ||
		   !(d = number(d + strlen(GS_PROCESS_IMAGE_SUFFIX), 999999999, &k)) || *d))
		return -EINVAL;
	*pid = (pid_t)x;
	if (host_len)
		*host_len = (size_t)(dash - name);
	if (image)
		*image = (unsigned)k;
	return 0;
}

int names_parse_process_dir(const char *name, pid_t *pid, size_t *host_len)
{
	return names_parse_process_image(name, pid, host_len, NULL);
}

int names_parse_numbered(const char *name, const char *prefix, unsigned *n)
{
	size_t plen = strlen(prefix), len = 0;
	const char *d;
	unsigned x = 0;

	if (strncmp(name, prefix, plen) != 0)
		return -EINVAL;
	for (d = name + plen; *d >= '0' && *d <= '9'; d++, len++) {
		if (len == 9)
			return -EINVAL;
		x = x * 10 + (unsigned)(*d - '0');
	}
	if (len == 0 || strcmp(d, GS_FILE_NUMBERED_SUFFIX) != 0)
		return -EINVAL;
	*n = x;
	return 0;
}
