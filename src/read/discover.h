/* SPDX-License-Identifier: MIT */
/* What a PATH given to a command holds: reports, process and run directories. */
#ifndef GPUSPY_READ_DISCOVER_H
#define GPUSPY_READ_DISCOVER_H

#include "model.h"

/* PATH is a report file (report.json, oom-N.json, snapshot.json,
 * snapshot-N.json), a process directory or a run directory.  A process
 * directory without report.json (a process killed, or crashed) is read
 * from the newer, by their own end_time, of its snapshot.json and its
 * highest-numbered oom-N.json (snapshot.json on a tie, or when either time
 * is unknown).  Appends every process found (run directories in version
 * order of their entries), each with its snapshots. */
int discover_path(struct rd_process_list *list, const char *path, struct rd_error *err);

/* Whether DIR directly holds at least one <process>/report.json,
 * <process>/snapshot.json or <process>/oom-N.json. */
bool discover_has_reports(const char *dir);

#endif
