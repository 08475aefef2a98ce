/* SPDX-License-Identifier: MIT */
/*
 * An out-of-memory event's verdict, decided once here from what the
 * reports recorded (the figures of its oom-N.json's "event", the event as
 * the report lists it when that file is gone), by the rule libgpuspy
 * applied at the failure (src/common/oom_rule.h).  The printers print it;
 * none decides anything.
 */
#ifndef GPUSPY_READ_OOM_VERDICT_H
#define GPUSPY_READ_OOM_VERDICT_H

#include <stddef.h>

#include "oom_rule.h"

struct rd_report_oom;

struct rd_oom_verdict {
	struct oom_facts facts;
	struct oom_verdict v;
	char *line;   /* oom_verdict_line() */
	char *holder; /* the largest holder's name (facts.holder points here), NULL none */
	/* PyTorch's lines pinning its segments (the event's torch.lines),
	 * each by its one name among them, in the file's order; and its
	 * lines holding most (torch.holders), the same way, with their role
	 * (" [weights]") when their stacks tell it */
	char **pin_names;
	size_t npins;
	char **holder_names;
	size_t nholders;
};

/* RO's verdict into RO->verdict, once RO's sites are named (merge.c).
 * 0 or -ENOMEM. */
int oom_verdict_build(struct rd_report_oom *ro);
void oom_verdict_clear(struct rd_oom_verdict *v);

#endif
