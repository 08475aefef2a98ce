/* SPDX-License-Identifier: MIT */
/*
 * What happens to a process that gpuspy writes a file about (events.c).
 * Each call is made with none of gpuspy's locks held.
 */
#ifndef GPUSPY_EVENTS_H
#define GPUSPY_EVENTS_H

struct gs_oom;
struct gs_mark;

/* The library destructor: report.json, report.txt, the stderr lines. */
void events_exit(void);
/* An allocation failed for lack of memory: oom-N.json, now. */
void events_oom(struct gs_oom *e);
/* The same from the hook, on the failing thread, once record_oom() filled
 * E: the facts its verdict is judged on gathered, the trace told, then
 * events_oom(). */
void events_postmortem(struct gs_oom *e);
/*
 * PyTorch raised OutOfMemoryError (torch_view.py's observer, through
 * ctypes, holding the GIL): its figures on DEVICE then -- the block it
 * looked for, what its tensors held, what it reserved, its largest free
 * block (-1 unknown), LINES (JSON text, an object of its "lines" and
 * "holders"; NULL: none), the first of the lines pinning its segments and
 * the first of its holders, by name, with their bytes -- join the latest
 * out-of-memory event, this device's, whose oom-N.json is written again
 * with them and whose verdict is said again.  0; -ENOENT when there is no
 * such event (PyTorch refused it without asking CUDA: its memory
 * fraction), -EINVAL, -ENOMEM, or the write's -errno.
 */
int events_torch_oom(int device, long long request, long long allocated, long long reserved,
		     long long largest_free, const char *lines, const char *pinner,
		     long long pinner_bytes, const char *holder, long long holder_bytes);
/* The snapshot thread's periodic snapshot.json: 0, or -errno when it was
 * not written (to be tried again at the next interval). */
int events_periodic(unsigned long long samples);
/* An on-demand snapshot (gpuspy_snapshot): snapshot-N.json.  0 or -1. */
int events_snapshot(const char *label);
/* The signal asked for one: its label is in <process dir>/.request. */
void events_requested(void);
/* gpuspy_mark: a label, the time, and what each site holds live then. */
void events_mark(const char *label);
/*
 * The marks from number FROM on (counted from 0), oldest first, to
 * FN with gs_events_lock held (FN takes no gpuspy lock; the last GS_MARKS
 * only).  Returns the count of marks made, the next FROM.
 */
unsigned events_marks_since(unsigned from,
			    void (*fn)(const struct gs_mark *m, unsigned number, void *arg),
			    void *arg);

#endif /* GPUSPY_EVENTS_H */
