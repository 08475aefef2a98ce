/* SPDX-License-Identifier: MIT */
/*
 * The HTTP server of http.h over a dlopen()ed libmicrohttpd.  Its header
 * gives only types and constants here: every function is reached through
 * a pointer looked up at start, so that nothing links the library.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "http.h"

struct mhd_api {
	struct MHD_Daemon *(*start)(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
				    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...);
	void (*stop)(struct MHD_Daemon *d);
	struct MHD_Response *(*from_buffer)(size_t size, void *buffer,
					    enum MHD_ResponseMemoryMode mode);
	enum MHD_Result (*add_header)(struct MHD_Response *r, const char *header,
				      const char *content);
	enum MHD_Result (*queue)(struct MHD_Connection *c, unsigned int status,
				 struct MHD_Response *r);
	void (*destroy)(struct MHD_Response *r);
};

struct http_server {
	struct mhd_api api;
	struct MHD_Daemon *daemon;
	int fd;
	int port;
	http_handler_fn handler;
	void *ctx;
	char bound[HTTP_ADDR_MAX];
};

static void http_err(char *err, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void http_err(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (!err || !n)
		return;
	va_start(ap, fmt);
	/* started just above: the analyzer loses it through the early return */
	vsnprintf(err, n, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
}

static int http_parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;

	if (!*s || strlen(s) > 5)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int http_parse_addr(const char *addr, struct sockaddr_storage *ss, socklen_t *len, bool *explicit)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *port_s;
	uint16_t port;
	size_t hl;

	if (!addr || !*addr)
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	*explicit = false;
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		if (!close || close[1] != ':')
			return -EINVAL;
		hl = (size_t)(close - addr - 1);
		if (!hl || hl >= sizeof(host))
			return -EINVAL;
		memcpy(host, addr + 1, hl);
		host[hl] = 0;
		if (http_parse_port(close + 2, &port) < 0 ||
		    inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return -EINVAL;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
		*explicit = true;
		return 0;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	colon = strrchr(addr, ':');
	if (!colon) {
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		port_s = addr;
	} else {
		hl = (size_t)(colon - addr);
		if (!hl || hl >= sizeof(host) || memchr(addr, ':', hl))
			return -EINVAL;
		memcpy(host, addr, hl);
		host[hl] = 0;
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return -EINVAL;
		port_s = colon + 1;
		*explicit = true;
	}
	if (http_parse_port(port_s, &port) < 0)
		return -EINVAL;
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	*len = sizeof(*s4);
	return 0;
}

bool http_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		const uint8_t *b = s6->sin6_addr.s6_addr;

		if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
			return true;
		return IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) && b[12] == 127;
	}
	return false;
}

void http_format_addr(const struct sockaddr_storage *ss, char *out, size_t n, int *port)
{
	char host[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		*port = ntohs(s6->sin6_port);
		snprintf(out, n, "[%s]:%d", host, *port);
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		*port = ntohs(s4->sin_port);
		snprintf(out, n, "%s:%d", host, *port);
	}
}

static int http_load(const struct http_opts *o, struct mhd_api *api, char *err, size_t errlen)
{
	const char *lib = o->lib ? o->lib : HTTP_LIB_SONAME;
	void *(*sym)(void *, const char *) = o->sym ? o->sym : dlsym;
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		http_err(err, errlen, "%s cannot be loaded (install %s)", lib, HTTP_LIB_PACKAGE);
		return -ELIBACC;
	}
	/* The casts go through void * as POSIX allows for dlsym's result. */
	*(void **)&api->start = sym(h, "MHD_start_daemon");
	*(void **)&api->stop = sym(h, "MHD_stop_daemon");
	*(void **)&api->from_buffer = sym(h, "MHD_create_response_from_buffer");
	*(void **)&api->add_header = sym(h, "MHD_add_response_header");
	*(void **)&api->queue = sym(h, "MHD_queue_response");
	*(void **)&api->destroy = sym(h, "MHD_destroy_response");
	if (!api->start || !api->stop || !api->from_buffer || !api->add_header || !api->queue ||
	    !api->destroy) {
		/* the handle stays: what it loaded may already run constructors */
		http_err(err, errlen, "%s lacks the functions needed (install %s)", lib,
			 HTTP_LIB_PACKAGE);
		return -ELIBACC;
	}
	return 0;
}

static const char *http_status_text(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 503:
		return "Service Unavailable";
	default:
		return "Error";
	}
}

static enum MHD_Result http_send(struct http_server *s, struct MHD_Connection *c,
				 struct http_reply *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ok;

	if (!r->body) {
		char line[64];
		int n = snprintf(line, sizeof(line), "%d %s\n", r->status,
				 http_status_text(r->status));

		r->body = strdup(line);
		r->len = r->body ? (size_t)n : 0;
		r->type = NULL;
	}
	/* MHD_RESPMEM_MUST_FREE: libmicrohttpd free()s the body after sending */
	resp = s->api.from_buffer(r->len, r->body ? r->body : (void *)"",
				  r->body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		free(r->body);
		return MHD_NO; /* libmicrohttpd closes the connection */
	}
	s->api.add_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
			  r->type ? r->type : "text/plain; charset=utf-8");
	if (r->status == MHD_HTTP_METHOD_NOT_ALLOWED)
		s->api.add_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	s->api.add_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ok = s->api.queue(c, (unsigned int)r->status, resp);
	s->api.destroy(resp);
	return ok;
}

static enum MHD_Result http_access(void *cls, struct MHD_Connection *c, const char *url,
				   const char *method, const char *version, const char *upload_data,
				   size_t *upload_size, void **req_cls)
{
	struct http_server *s = cls;
	struct http_reply r = { .status = MHD_HTTP_NOT_FOUND };

	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		/* answered at once, before any body: libmicrohttpd then closes
		 * the connection rather than read what was not wanted */
		r.status = MHD_HTTP_METHOD_NOT_ALLOWED;
		return http_send(s, c, &r);
	}
	s->handler(s->ctx, url, &r);
	if (r.status < 100 || r.status > 599) {
		free(r.body);
		r.body = NULL;
		r.status = MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
	return http_send(s, c, &r);
}

static int http_listen(const struct sockaddr_storage *ss, socklen_t len, char *err, size_t errlen,
		       const char *addr)
{
	int one = 1;
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int e;

	if (fd < 0) {
		e = errno;
		http_err(err, errlen, "%s: socket: %s", addr, strerror(e));
		return -e;
	}
	/* a restarted job may find its port in TIME_WAIT: take it anyway */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) < 0 || listen(fd, 64) < 0) {
		e = errno;
		http_err(err, errlen, "%s: %s", addr, strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

int http_start(const struct http_opts *o, struct http_server **out, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct http_server *s;
	sigset_t all, old;
	bool explicit;
	int fd, rc;

	*out = NULL;
	if (!o->handler || http_parse_addr(o->addr, &ss, &len, &explicit) < 0) {
		http_err(err, errlen, "%s: not PORT, IPV4:PORT or [IPV6]:PORT",
			 o->addr ? o->addr : "(null)");
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		http_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->handler = o->handler;
	s->ctx = o->ctx;
	rc = http_load(o, &s->api, err, errlen);
	if (rc < 0)
		goto fail;
	fd = http_listen(&ss, len, err, errlen, o->addr);
	if (fd < 0) {
		rc = fd;
		goto fail;
	}
	s->fd = fd;
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		rc = -errno;
		http_err(err, errlen, "%s: getsockname: %s", o->addr, strerror(-rc));
		goto fail_fd;
	}
	http_format_addr(&ss, s->bound, sizeof(s->bound), &s->port);

	/* The server's thread inherits this mask: the program's signals are
	 * never delivered there, in the middle of libmicrohttpd. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* MHD_USE_ITC: at the connection limit libmicrohttpd stops polling
	 * the listening socket, so shutting it down (its default wake-up on
	 * Linux) no longer wakes the thread, and a stop would wait for the
	 * poll's timeout, the connection timeout, with every idle client */
	s->daemon =
		s->api.start(MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC |
				     (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
			     0, NULL, NULL, http_access, s, MHD_OPTION_LISTEN_SOCKET,
			     (MHD_socket)fd, MHD_OPTION_CONNECTION_LIMIT,
			     (unsigned int)(o->max_conn ? o->max_conn : HTTP_DEFAULT_CONN),
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT,
			     (unsigned int)(o->per_ip ? o->per_ip : HTTP_DEFAULT_PER_IP),
			     MHD_OPTION_CONNECTION_TIMEOUT,
			     (unsigned int)(o->timeout_s ? o->timeout_s : HTTP_DEFAULT_TIMEOUT_S),
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT,
			     (size_t)(o->memory ? o->memory : HTTP_DEFAULT_MEMORY), MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!s->daemon) {
		rc = -EIO;
		http_err(err, errlen, "%s: libmicrohttpd did not start", o->addr);
		goto fail_fd;
	}
	*out = s;
	return 0;

fail_fd:
	close(s->fd);
fail:
	free(s);
	return rc;
}

const char *http_bound(const struct http_server *s)
{
	return s->bound;
}

int http_port(const struct http_server *s)
{
	return s->port;
}

/* The stop, in a thread of its own so that its caller can stop waiting.
 * STATE says who frees: the stopper when the caller has left, else the
 * caller, once the stopper is joined. */
enum { STOP_RUNNING, STOP_DONE, STOP_LEFT };
struct http_stopper {
	struct http_server *s;
	atomic_int state;
};

static void *http_stopper_main(void *arg)
{
	struct http_stopper *st = arg;

	st->s->api.stop(st->s->daemon);
	if (atomic_exchange(&st->state, STOP_DONE) == STOP_LEFT) {
		free(st->s);
		free(st);
	}
	return NULL;
}

void http_stop(struct http_server *s)
{
	struct http_stopper *st;
	struct timespec until;
	sigset_t all, old;
	pthread_t t;
	int e;

	if (!s)
		return;
	st = calloc(1, sizeof(*st));
	if (st) {
		st->s = s;
		atomic_init(&st->state, STOP_RUNNING);
		/* no signal of the program in a thread inside libmicrohttpd */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		e = pthread_create(&t, NULL, http_stopper_main, st);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (!st || e != 0) {
		/* no thread for the deadline: the stop itself, which the
		 * inter-thread channel keeps short */
		free(st);
		s->api.stop(s->daemon);
		free(s);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += (long)HTTP_STOP_DEADLINE_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	if (pthread_clockjoin_np(t, NULL, CLOCK_MONOTONIC, &until) != 0)
		pthread_detach(t);
	/* past the deadline: the stopper frees both when (if) the stop
	 * returns; done (joined or not), they are ours.  The exchange is
	 * also what orders the stopper's last reads before the frees below
	 * for a reader that does not know pthread_clockjoin_np (TSan). */
	if (atomic_exchange(&st->state, STOP_LEFT) == STOP_RUNNING)
		return;
	/* a socket passed with MHD_OPTION_LISTEN_SOCKET is closed by MHD_stop_daemon */
	free(st);
	free(s);
}

void http_abandon(struct http_server *s)
{
	if (s && s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
}
