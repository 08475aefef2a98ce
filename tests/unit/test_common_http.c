/* SPDX-License-Identifier: MIT */
/*
 * The HTTP server (src/common/http.c) over the installed libmicrohttpd,
 * spoken to with raw sockets: addresses, GET/HEAD/POST/unknown path, the
 * listening socket's close-on-exec, a library that cannot be loaded, and
 * a port already taken.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "http.h"

static void handler(void *ctx, const char *path, struct http_reply *r)
{
	(*(int *)ctx)++;
	if (strcmp(path, "/metrics") == 0) {
		r->status = 200;
		r->type = "text/plain; version=0.0.4";
		r->body = strdup("x 1\n");
		r->len = 4;
	}
}

/* Sends REQ to 127.0.0.1:PORT and returns all that came back until the
 * server closed (every request here asks it to). */
static char *ask(int port, const char *req)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	static char buf[65536];
	size_t n = 0;
	ssize_t r;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = 0;
	close(fd);
	return buf;
}

static void test_parse(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	bool ex;

	assert_int_equal(http_parse_addr("9464", &ss, &len, &ex), 0);
	assert_false(ex);
	assert_true(http_is_loopback(&ss));
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9464);
	assert_int_equal(http_parse_addr("0.0.0.0:1", &ss, &len, &ex), 0);
	assert_true(ex);
	assert_false(http_is_loopback(&ss));
	assert_int_equal(http_parse_addr("[::1]:0", &ss, &len, &ex), 0);
	assert_true(ex);
	assert_true(http_is_loopback(&ss));
	assert_int_equal(http_parse_addr("127.1.2.3:80", &ss, &len, &ex), 0);
	assert_true(http_is_loopback(&ss));
	assert_int_equal(http_parse_addr("[::]:80", &ss, &len, &ex), 0);
	assert_false(http_is_loopback(&ss));
	const char *bad[] = { "",      ":9464",	   "65536",  "localhost:80", "1.2.3.4:",
			      "[::1]", "[::1]80",  "::1:80", "1.2.3.4:-1",   "9464 ",
			      "+9464", "1.2.3:80", "[zz]:1", "123456" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(http_parse_addr(bad[i], &ss, &len, &ex), -EINVAL);
}

static void test_serve(void **state)
{
	int calls = 0;
	struct http_opts o = { .addr = "127.0.0.1:0", .handler = handler, .ctx = &calls };
	struct http_server *s;
	char err[256], *r;
	int port;

	assert_int_equal(http_start(&o, &s, err, sizeof(err)), 0);
	port = http_port(s);
	assert_true(port > 0);
	char want[64];
	snprintf(want, sizeof(want), "127.0.0.1:%d", port);
	assert_string_equal(http_bound(s), want);

	r = ask(port, "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
	assert_true(strncmp(r, "HTTP/1.1 200", 12) == 0);
	assert_non_null(strstr(r, "text/plain; version=0.0.4"));
	assert_non_null(strstr(r, "\r\n\r\nx 1\n"));

	r = ask(port, "HEAD /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
	assert_true(strncmp(r, "HTTP/1.1 200", 12) == 0);
	assert_null(strstr(r, "x 1"));

	r = ask(port, "GET /nope HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
	assert_true(strncmp(r, "HTTP/1.1 404", 12) == 0);

	int before = calls;
	r = ask(port, "POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n"
		      "Connection: close\r\n\r\nabc");
	assert_true(strncmp(r, "HTTP/1.1 405", 12) == 0);
	assert_non_null(strstr(r, "\r\nAllow: GET, HEAD\r\n"));
	assert_int_equal(calls, before); /* the handler never saw it */

	r = ask(port, "\x01\x02garbage\r\n\r\n");
	assert_true(r[0] == 0 || strncmp(r, "HTTP/1.1 400", 12) == 0);

	/* a second server on the same port: one line, no server */
	struct http_opts o2 = o;
	struct http_server *s2;
	o2.addr = want;
	assert_int_equal(http_start(&o2, &s2, err, sizeof(err)), -EADDRINUSE);
	assert_null(s2);
	assert_non_null(strstr(err, want));
	assert_null(strchr(err, '\n'));
	http_stop(s);
}

/* The listening socket is close-on-exec; after http_stop it is gone. */
static void test_cloexec(void **state)
{
	int calls = 0;
	struct http_opts o = { .addr = "0", .handler = handler, .ctx = &calls };
	struct http_server *s;
	char err[256];
	int fd, port, found = 0;

	assert_int_equal(http_start(&o, &s, err, sizeof(err)), 0);
	for (fd = 3; fd < 1024; fd++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);

		if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_INET &&
		    ntohs(((struct sockaddr_in *)&ss)->sin_port) == http_port(s)) {
			assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
			found++;
		}
	}
	assert_int_equal(found, 1);
	port = http_port(s);
	http_stop(s);
	/* libmicrohttpd closed the socket it was given */
	for (fd = 3; fd < 1024; fd++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);

		assert_false(getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
			     ss.ss_family == AF_INET &&
			     ntohs(((struct sockaddr_in *)&ss)->sin_port) == port);
	}
}

/* [::1]: served on IPv6 loopback, where the machine has it. */
static void test_ipv6(void **state)
{
	int calls = 0;
	struct http_opts o = { .addr = "[::1]:0", .handler = handler, .ctx = &calls };
	struct http_server *s;
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	char err[256], buf[4096];
	ssize_t n;
	int fd, rc = http_start(&o, &s, err, sizeof(err));

	if (rc == -EADDRNOTAVAIL || rc == -EAFNOSUPPORT)
		skip();
	assert_int_equal(rc, 0);
	assert_true(strncmp(http_bound(s), "[::1]:", 6) == 0);
	a.sin6_port = htons((uint16_t)http_port(s));
	fd = socket(AF_INET6, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	assert_int_equal(write(fd, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n > 12);
	buf[n] = 0;
	assert_true(strncmp(buf, "HTTP/1.0 200", 12) == 0 || strncmp(buf, "HTTP/1.1 200", 12) == 0);
	close(fd);
	http_stop(s);
}

static void test_no_library(void **state)
{
	int calls = 0;
	struct http_opts o = { .addr = "0",
			       .handler = handler,
			       .ctx = &calls,
			       .lib = "/nonexistent/libmicrohttpd.so.12" };
	struct http_server *s;
	char err[256];

	assert_int_equal(http_start(&o, &s, err, sizeof(err)), -ELIBACC);
	assert_null(s);
	assert_non_null(strstr(err, "/nonexistent/libmicrohttpd.so.12"));
	assert_non_null(strstr(err, HTTP_LIB_PACKAGE));
	o.addr = "nope";
	assert_int_equal(http_start(&o, &s, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),	   cmocka_unit_test(test_serve),
		cmocka_unit_test(test_cloexec),	   cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_no_library),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
