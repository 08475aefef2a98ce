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

#include "merge_site.h"
#include "model.h"
#include "oom_rule.h"

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
/* How many of the sites live at an out-of-memory event a report shows. */
#define REPORT_OOM_TOP 5

/* An out-of-memory event, with what the reports say of its moment. */
struct rd_report_oom {
	const struct rd_process *proc; /* the process whose report holds it */
	size_t proc_index;	       /* in report.procs */
	const struct rd_oom *ev;
	int64_t untracked_bytes; /* total - free - live, >= 0; -1: unknown */
	/* The site that made the request, symbolized (key, kind, api, frames,
	 * library, pool; its counters are those of the report it comes from);
	 * NULL when the report is not at hand. */
	struct rd_report_site *requested;
	/* The sites (merged by key) with most live bytes of the event's kind
	 * of memory (pinned host memory for a pinned request, else device,
	 * managed and VMM) in the event's oom-N.json, most first; none when
	 * that file was not read. */
	struct rd_report_site **top;
	size_t ntop;
	/* why it failed (oom_verdict.h), decided once the sites are named */
	struct rd_oom_verdict verdict;
};

int oom_verdict_build(struct rd_report_oom *ro);
void oom_verdict_clear(struct rd_oom_verdict *v);

#endif
