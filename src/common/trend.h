/* SPDX-License-Identifier: MIT */
/*
 * The growth rule (libgpuspy(7), OVER TIME): is a series of samples
 * of one call site's live bytes growing, since when, and how fast.
 *
 * One state per series.  It has a fixed size (at most TREND_STATE_MAX
 * bytes), needs no allocation and no library but libc's headers, keeps no
 * global state and takes no lock: the caller serialises the calls on one
 * state; distinct states are independent.  So the snapshot thread can keep
 * one per site, and Python can keep one per PyTorch-view line in a ctypes
 * buffer of trend_state_size() bytes and call these functions through
 * their addresses: every one takes only pointers, integers and doubles.
 *
 * Marks: to judge growth between marks (gpuspy_mark("epoch")), push the
 * live bytes at each mark into a second state of its own; the rule is the
 * same, its samples are the marks.
 */
#ifndef GPUSPY_TREND_H
#define GPUSPY_TREND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A rise counts when it is at least the larger of these two. */
#define TREND_MIN_RISE	(64LL * 1024) /* bytes */
#define TREND_FRAC_LOG2 5	      /* 1/32 of the level below it */
#define TREND_RISES	5	      /* counted rises of the floor that make growth */
#define TREND_BANDS	32	      /* floor levels kept; the closest two merge */
#define TREND_WINDOW	256	      /* the steady climb's longest window */
#define TREND_STATE_MAX 1472	      /* bytes: sizeof(struct gs_trend) is at most this */
/* Grew, then stopped: the floor has stood at its level for at least this
 * many times its longest level during the growth, and at least ... */
#define TREND_STOP_HOLDS 4
#define TREND_STOP_MIN	 8 /* ... this many samples */

/* The verdict on a series after its latest sample (trend_state). */
enum trend_state {
	TREND_NEVER = 0,   /* never found growing */
	TREND_GROWING = 1, /* found growing, and still rising */
	TREND_STOPPED = 2, /* grew, then stopped: flat since for long (trend.c) */
};

enum trend_shape {
	TREND_NONE = 0,
	TREND_PER_SAMPLE = 1, /* higher at (nearly) every sample */
	TREND_STAIRCASE = 2,  /* the floor rises by steps, each held */
	TREND_DRIFT = 3,      /* the floor creeps up, under cycles or by small rises */
};

/* One level of the running floor: the lowest sample from here to now. */
struct trend_band {
	long long lo;	/* the lowest sample in the band */
	long long fhi;	/* the highest that landed in it falling or flat */
	uint64_t first; /* index of the first sample the floor stood at this level */
	double t;	/* that sample's time */
	uint32_t hits;	/* samples that landed in it (saturating) */
	uint16_t rises; /* rises of the floor it stands for: more than one once merged */
	uint8_t back;	/* returns to it from above (saturating) */
	uint8_t flags;	/* BAND_* (trend.c) */
};

struct gs_trend {
	struct trend_band band[TREND_BANDS]; /* [0] the lowest, [nb - 1] holds the latest */
	uint64_t highs[TREND_WINDOW / 64];   /* bit i % 256: sample i was a new high */
	uint64_t n;			     /* samples pushed */
	long long last;			     /* the latest sample */
	long long max;			     /* the highest sample */
	long long roof;			     /* highest level held, then left (trend.c) */
	double t0, t_last;		     /* times of the first and latest sample */
	double since, rate;		     /* of the latest growing verdict */
	double fired;			     /* time of the first growing verdict */
	double rise_t;			     /* time of the latest counted rise */
	uint64_t rise_at;		     /* its sample index */
	uint64_t hold;			     /* samples: the longest level between two rises */
	uint32_t nb;
	uint8_t growing; /* verdict after the latest sample */
	uint8_t ever;	 /* some sample was found growing */
	uint8_t shape;	 /* enum trend_shape of the first growing verdict */
	uint8_t risen;	 /* some counted rise was seen (rise_at is one) */
	uint8_t stopped; /* grew, then stopped (trend.c) */
};

/* sizeof(struct gs_trend), for callers that only hold a buffer. */
size_t trend_state_size(void);

void trend_init(struct gs_trend *t);

/* One sample: its time in seconds (any origin, not decreasing) and the live
 * bytes then (negative counts as 0).  Judges the series; O(TREND_BANDS). */
void trend_push(struct gs_trend *t, double time_s, long long live);

/* The verdict after the latest sample.  It falls back when the floor does
 * (a program's teardown frees what leaked), and while stopped: callers
 * that name a site once keep their own flag, or read trend_ever() and
 * trend_state(). */
bool trend_growing(const struct gs_trend *t);
bool trend_ever(const struct gs_trend *t);

/*
 * The verdict every surface says (enum trend_state): TREND_NEVER, or, once
 * found growing, TREND_STOPPED while the floor has not risen for at least
 * TREND_STOP_HOLDS times the longest level it held between two counted
 * rises and at least TREND_STOP_MIN samples (a warm-up, a cache filled to
 * its bound, a pool that doubled and stays), else TREND_GROWING - also
 * after a teardown frees what leaked, which is a fall, not a stop.  A
 * stopped series that rises again is growing again.  *UNTIL_S (may be
 * NULL): the time of the latest counted rise, when a stopped series
 * stopped; 0 while never growing.
 */
int trend_state(const struct gs_trend *t, double *until_s);

/*
 * The latest growing verdict, kept after it falls back: the time of the
 * first counted rise (since), bytes per second over the counted rises, from
 * the first counted floor to the highest (rate), and the shape - the one
 * of the first growing verdict, kept, so that what was said when the
 * series was first found growing and what is said at the end are one
 * word.  Returns trend_growing(); each pointer may be NULL; all zero while
 * never growing.
 */
int trend_query(const struct gs_trend *t, double *since_s, double *rate_bps, int *shape);

/*
 * What is recorded of a series once found growing, and read back: the
 * file documents' "growth" (docs/format.md), the same members wherever
 * they are written (sites, the PyTorch view's lines, the frameworks'
 * counters).  STATE is enum trend_state (TREND_NEVER: the rest is 0).
 */
struct trend_verdict {
	int state;
	int shape;
	double since, rate, until; /* seconds, bytes per second, seconds */
};

void trend_verdict(const struct gs_trend *t, struct trend_verdict *v);

/* The verdict's members as JSON, without braces, into BUF of SIZE:
 * "shape": "staircase", "since_s": 12.000, "rate_bytes_per_s": 1398101.3,
 * "stopped": false, "until_s": 60.000.  Returns snprintf's. */
int trend_verdict_json(char *buf, size_t size, const struct trend_verdict *v);

/* "growing", "grew, then stopped", or "" (never): what every surface says. */
const char *trend_state_words(int state);

/* "per-sample", "staircase", "drift" or "none". */
const char *trend_shape_name(int shape);
/* The shape of NAME (trend_shape_name's words), or -1. */
int trend_shape_parse(const char *name);

#ifdef __cplusplus
}
#endif

#endif
