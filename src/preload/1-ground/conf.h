/* SPDX-License-Identifier: MIT */
/* config.c: GPUSPY_* read once */
#ifndef GPUSPY_CONF_H
#define GPUSPY_CONF_H

#include "core.h"

/* GPUSPY_MAX_SITES: the sites a file lists per ranking (view.h). */
#define GS_MAX_SITES_DEFAULT 2000
#define GS_MAX_SITES_MAX     (1u << 24)

/* GPUSPY_MAX_DISTINCT_SITES: the call sites kept apart (sites.c); 0 = no
 * cap.  About 1.3 KiB each (a 16-frame stack): 100,000 are 130 MiB. */
#define GS_MAX_DISTINCT_SITES_DEFAULT 100000
#define GS_MAX_DISTINCT_SITES_MAX     (1u << 30)

struct gs_config {
	const char *output_dir;		/* as given, GS_OUTPUT_DIR_DEFAULT when unset */
	const char *output_given;	/* GPUSPY_OUTPUT_DIR, NULL when unset or empty */
	const char *run_id;		/* GPUSPY_RUN_ID, inherited: NULL when unset */
	const char *run_dir;		/* GPUSPY_RUN_DIR, inherited: NULL when unset */
	unsigned depth;			/* native frames kept per call site */
	unsigned py_depth;		/* Python frames kept per call site, 0 = none */
	unsigned long long interval_us; /* GPUSPY_INTERVAL, 0 = no snapshots */
	int signal;			/* GPUSPY_SIGNAL: on-demand snapshots, 0 = off */
	unsigned max_sites;		/* GPUSPY_MAX_SITES: listed per ranking, 0 = all */
	unsigned max_distinct_sites;	/* GPUSPY_MAX_DISTINCT_SITES: kept apart, 0 = all */
	bool nvml;			/* GPUSPY_NVML: the outside view in snapshots */
	bool torch;	    /* GPUSPY_TORCH: PyTorch's live blocks by Python line (torch_probe.c) */
	bool frameworks;    /* GPUSPY_FRAMEWORKS: the frameworks' own counters (fw_view.py) */
	const char *unwind; /* GPUSPY_UNWIND: backtrace, libunwind or fp; NULL: the default */
	const char *libunwind;	   /* GPUSPY_LIBUNWIND: where to dlopen it from */
	const char *prometheus;	   /* GPUSPY_PROMETHEUS: the endpoint's address, NULL: none */
	unsigned prometheus_top;   /* GPUSPY_PROMETHEUS_TOP: sites named in the metrics */
	const char *libmicrohttpd; /* GPUSPY_LIBMICROHTTPD: where to dlopen it from */
	bool symbols;	   /* GPUSPY_SYMBOLS: the modules' symbol tables read in the process */
	const char *libdw; /* GPUSPY_LIBDW: where to dlopen it from, for source lines */
	unsigned long long limit; /* GPUSPY_LIMIT: bytes per device, 0 = none (limit.h) */
	unsigned trace;		  /* GPUSPY_TRACE: the events the trace keeps, 0 = off (trace.h) */
	bool quiet;		  /* no summary on stderr */
	bool disabled;		  /* GPUSPY_DISABLE: pass every call straight through */
};
extern struct gs_config gs_config;
/* Reads every GPUSPY_*, from gs_init: before the first allocation is
 * recorded, whichever constructor (or .preinit_array) makes it. */
void config_load(void);
/* What config_load() refused, each line given to SAY once (at activation:
 * the log is above the configuration, which it reads). */
void config_warnings(void (*say)(const char *line));

#endif /* GPUSPY_CONF_H */
