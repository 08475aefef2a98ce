/* SPDX-License-Identifier: MIT */
/*
 * The host name FAKE_HOSTNAME says (bytes as given, %XX decoded, so that
 * a test can ask for '/', control characters or an empty name), for
 * test_hostile_host.py: preloaded before libgpuspy.so, it answers the
 * program's gethostname() and uname(), as kmod's tests fake uname().
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* FAKE_HOSTNAME decoded into BUF; false when it is not set */
static int fake(char *buf, size_t size)
{
	const char *s = getenv("FAKE_HOSTNAME");
	size_t n = 0;

	if (!s)
		return 0;
	for (; *s && n + 1 < size; s++) {
		if (s[0] == '%' && s[1] && s[2]) {
			char hex[3] = { s[1], s[2], 0 };

			buf[n++] = (char)strtol(hex, NULL, 16);
			s += 2;
		} else {
			buf[n++] = *s;
		}
	}
	buf[n] = '\0';
	return 1;
}

int gethostname(char *name, size_t len)
{
	char buf[256];

	if (fake(buf, sizeof(buf))) {
		if (strlen(buf) >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(name, buf, strlen(buf) + 1);
		return 0;
	}
	int (*real)(char *, size_t) = (int (*)(char *, size_t))dlsym(RTLD_NEXT, "gethostname");

	return real(name, len);
}

int uname(struct utsname *u)
{
	int (*real)(struct utsname *) = (int (*)(struct utsname *))dlsym(RTLD_NEXT, "uname");
	int r = real(u);

	if (r == 0)
		fake(u->nodename, sizeof(u->nodename));
	return r;
}
