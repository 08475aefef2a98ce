/* SPDX-License-Identifier: MIT */
/* endpoint.c: the Prometheus endpoint (GPUSPY_PROMETHEUS) */
#ifndef GPUSPY_ENDPOINT_H
#define GPUSPY_ENDPOINT_H

#include <stdbool.h>

/* On the snapshot thread, as it starts: binds and serves, or says in one
 * line why not.  Publishes a first page. */
void endpoint_start(void);
/* On the snapshot thread, after each sample: the page the endpoint
 * serves from now on. */
void endpoint_publish(void);
/* At exit, after the snapshot thread is joined. */
void endpoint_stop(void);
/* fork(), in the child: the server's thread is not there. */
void endpoint_forget(void);
/* The address served ("127.0.0.1:9464"), or NULL; any thread, at exit
 * too. */
const char *endpoint_address(void);

#endif /* GPUSPY_ENDPOINT_H */
