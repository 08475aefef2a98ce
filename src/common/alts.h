/* SPDX-License-Identifier: MIT */
/*
 * Matching a name against a rule's '|'-separated alternatives
 * ("cuda|__cudart"), the way the tables of frame_rules.c and pools.c say.
 */
#ifndef GPUSPY_ALTS_H
#define GPUSPY_ALTS_H

#include <stdbool.h>

/* How a rule's names match a string. */
enum alts_how {
	ALTS_ANY,     /* whatever the function, named or not (the caller's) */
	ALTS_UNKNOWN, /* only a frame whose function has no name (the caller's) */
	ALTS_EXACT,
	ALTS_PREFIX,
	ALTS_CONTAINS,
	ALTS_CONTAINS_MANGLED, /* also in a mangled C++ name: "a::b" as "a1b" */
};

/* Whether S matches one of the '|'-separated ALTS as HOW says (ANY and
 * UNKNOWN: never; the caller decides on them). */
bool alts_match(const char *s, const char *alts, enum alts_how how);

#endif
