/* SPDX-License-Identifier: MIT */
/*
 * A small HTTP server for read-only pages (/metrics), shared by the
 * preloaded library (GPUSPY_PROMETHEUS) and the command (gpuspy
 * exporter).  Built on libmicrohttpd, which is dlopen()ed the first time a
 * server starts and never linked, so that libgpuspy.so needs only libc.
 *
 * What a client can do is bounded: a connection limit, one per client
 * address, a per-connection timeout, a request memory limit (a request line or headers larger than
 * it get 414/431 or a closed socket), GET and HEAD only (405 with Allow
 * otherwise); malformed requests get 400 from libmicrohttpd.  The server
 * runs in one thread of its own, started with every signal blocked, so the
 * caller never waits on a client: the handler is expected to copy a page
 * prepared elsewhere, not to compute it.
 */
#ifndef GPUSPY_COMMON_HTTP_H
#define GPUSPY_COMMON_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* the soname dlopen()ed when http_opts.lib is NULL, and its Debian package */
#define HTTP_LIB_SONAME	       "libmicrohttpd.so.12"
#define HTTP_LIB_PACKAGE       "libmicrohttpd12"
#define HTTP_DEFAULT_CONN      32
#define HTTP_DEFAULT_TIMEOUT_S 5
#define HTTP_DEFAULT_MEMORY    ((size_t)32 * 1024)
/* connections of one client address at once: a scraper needs one, a few
 * scrapers of one host a few; one address never holds every slot */
#define HTTP_DEFAULT_PER_IP 8
/* how long http_stop waits for the server's thread before it leaves it:
 * a process exiting is never held by its clients */
#define HTTP_STOP_DEADLINE_MS 200

/* "[::1]:65535" and the like, with the terminating NUL */
#define HTTP_ADDR_MAX 64

/*
 * What the handler answers.  BODY is malloc()ed and handed over: the
 * server frees it, whatever happens.  BODY NULL with a status: a one-line
 * text body naming the status is sent.  TYPE NULL: text/plain.
 */
struct http_reply {
	int status;
	const char *type;
	char *body;
	size_t len;
};

/*
 * Called in the server's thread for each GET or HEAD request, with the
 * path without its query string; REPLY's status is preset to 404.  It must
 * not block: it runs while other clients wait.
 */
typedef void (*http_handler_fn)(void *ctx, const char *path, struct http_reply *reply);

struct http_opts {
	const char *addr; /* see http_parse_addr() */
	http_handler_fn handler;
	void *ctx;
	unsigned max_conn;  /* 0: HTTP_DEFAULT_CONN */
	unsigned per_ip;    /* of one client address; 0: HTTP_DEFAULT_PER_IP */
	unsigned timeout_s; /* 0: HTTP_DEFAULT_TIMEOUT_S */
	size_t memory;	    /* per connection; 0: HTTP_DEFAULT_MEMORY */
	const char *lib;    /* the library to dlopen; NULL: HTTP_LIB_SONAME */
	/* how to look its symbols up; NULL: dlsym (libgpuspy.so passes its
	 * own real_dlsym, since it exports a dlsym of its own) */
	void *(*sym)(void *handle, const char *name);
};

struct http_server;

/*
 * ADDR as "PORT" (loopback, 127.0.0.1), "IPV4:PORT" or "[IPV6]:PORT",
 * numeric only (no name lookup: the library must not block on DNS),
 * PORT 0 to 65535 (0: the kernel picks).  *EXPLICIT is set when ADDR named
 * the host.  0, or -EINVAL.
 */
int http_parse_addr(const char *addr, struct sockaddr_storage *ss, socklen_t *len, bool *explicit);

/* SS as http_parse_addr() reads it ("127.0.0.1:9464", "[::1]:9464") into
 * OUT (HTTP_ADDR_MAX); its port in *PORT. */
void http_format_addr(const struct sockaddr_storage *ss, char *out, size_t n, int *port);

/* Whether SS is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x). */
bool http_is_loopback(const struct sockaddr_storage *ss);

/*
 * Binds and listens on O->addr with a socket of its own (SOCK_CLOEXEC,
 * so that an exec'd child does not inherit it) and starts serving.  0 with
 * *OUT set, or -errno (-EINVAL: a bad address; -EADDRINUSE; -ELIBACC:
 * libmicrohttpd could not be loaded), with a one-line reason in ERR (no
 * trailing newline) for the caller to print.
 */
int http_start(const struct http_opts *o, struct http_server **out, char *err, size_t errlen);

/* The address bound, as "127.0.0.1:PORT" or "[::1]:PORT", and its port. */
const char *http_bound(const struct http_server *s);
int http_port(const struct http_server *s);

/*
 * Stops serving and frees S; NULL is fine.  Every connection is closed at
 * once, idle or halfway through a request: the server's thread is woken
 * through libmicrohttpd's inter-thread channel, not by its poll timeout.
 * Waits at most HTTP_STOP_DEADLINE_MS for that thread; past it (a
 * libmicrohttpd that does not wake) it returns and leaves the server, its
 * thread and S as they are, for the process's exit to end.
 */
void http_stop(struct http_server *s);

/*
 * In a child of fork() that did not exec: the server's thread does not
 * exist there, so nothing may wait for it.  Closes the listening socket,
 * so that the child does not hold the parent's port, and leaves the rest,
 * owned by a thread the child does not have, as it is.
 */
void http_abandon(struct http_server *s);

#endif
