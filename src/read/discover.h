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
 * order of their entries), each with its snapshots.  A process whose
 * report, or a file the report names, is refused (cut short, of another
 * format, not readable) is appended to LIST's unreadable instead, with why,
 * and the others are read: 0 then, even when no process of PATH could be
 * read (the caller decides what is left).  -errno with ERR set: PATH
 * missing, a run directory that cannot be listed or holds no report at
 * all, a run.json refused, -ENOMEM. */
int discover_path(struct rd_process_list *list, const char *path, struct rd_error *err);

/*
 * Process directory DIR read as discover_path reads it, for a reader that
 * reads a run again and again (gpuspy exporter) and must tell a process
 * that has written nothing yet from one whose report is refused: 1 with
 * the process appended to LIST, 0 when DIR holds no report yet (nothing
 * appended; DIR missing or no directory included), -errno with ERR set
 * (-EINVAL: a report that is refused).  DIR is never read as a run
 * directory.
 */
int discover_process_dir(struct rd_process_list *list, const char *dir, struct rd_error *err);

/*
 * Whether PATH is an output directory (the default ./gpuspy-out): one
 * that holds run directories, named as run ids (rundir.h), or a "latest".
 * 1 with *RUNP (to free) the run directory to read: the one "latest"
 * points at, else the newest by name, or the one BACK runs before it, and
 * *NRUNSP the number of runs there; 0 when PATH is no such directory (it
 * is read as it is); -errno with ERR set: a "latest" that is not a link
 * to a run directory there (-ENOLINK, -EXDEV, -ENOTDIR), no run BACK runs
 * back (-ENOENT).
 */
int discover_output_dir(const char *path, unsigned back, char **runp, size_t *nrunsp,
			struct rd_error *err);

/* Whether DIR directly holds at least one <process>/report.json,
 * <process>/snapshot.json or <process>/oom-N.json. */
bool discover_has_reports(const char *dir);
/* The same, of reports written at SINCE (seconds since the epoch) or
 * later: those of a run that started then, in a directory that may hold
 * earlier runs.  SINCE < 0: any. */
bool discover_has_reports_since(const char *dir, double since);

#endif
