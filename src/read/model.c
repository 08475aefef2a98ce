/* SPDX-License-Identifier: MIT */
/* The model of what was read: freeing it. */
#include <stdlib.h>

#include "model.h"

static void torch_lines_clear(struct rd_oom_torch_line *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < l[i].nframes; j++) {
			free(l[i].frames[j].file);
			free(l[i].frames[j].function);
		}
		free(l[i].frames);
		free(l[i].role);
	}
	free(l);
}

static void oom_clear(const struct rd_process *p, struct rd_oom *o)
{
	free(o->api);
	free(o->file);
	free(o->pool);
	free(o->library);
	for (size_t i = 0; i < o->nothers; i++)
		free(o->others[i].name);
	free(o->others);
	if (o->torch) {
		torch_lines_clear(o->torch->lines, o->torch->nlines);
		torch_lines_clear(o->torch->holders, o->torch->nholders);
		free(o->torch);
	}
	if (o->snapshot != p)
		rd_process_free(o->snapshot);
}

void rd_device_set_add(int64_t *devs, size_t *n, size_t max, int64_t d)
{
	size_t i;

	if (d < 0 || *n >= max)
		return;
	for (i = 0; i < *n; i++)
		if (devs[i] == d)
			return;
	for (i = *n; i > 0 && devs[i - 1] > d; i--)
		devs[i] = devs[i - 1];
	devs[i] = d;
	(*n)++;
}

int64_t rd_process_nvml(const struct rd_process *p, int64_t device)
{
	for (size_t i = 0; i < p->outside.ngpus; i++)
		if (p->outside.gpus[i].index == device)
			for (size_t k = 0; k < p->outside.gpus[i].nprocs; k++)
				if (p->outside.gpus[i].procs[k].pid == p->pid)
					return p->outside.gpus[i].procs[k].used_bytes;
	return -1;
}

void rd_process_free(struct rd_process *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->noom; i++)
		oom_clear(p, &p->oom[i]);
	free(p->oom);
	oom_clear(p, &p->event);
	free(p->path);
	free(p->file);
	free(p->host);
	free(p->exe);
	free(p->run_id);
	free(p->python.version);
	free(p->python.note);
	free(p->snapshot.label);
	for (size_t i = 0; i < p->ncommand; i++)
		free(p->command[i]);
	free(p->command);
	for (size_t i = 0; i < p->nmodules; i++) {
		free(p->modules[i].path);
		free(p->modules[i].build_id);
	}
	free(p->modules);
	for (size_t i = 0; i < p->nsites; i++) {
		struct rd_site *s = &p->sites[i];

		free(s->api);
		for (size_t j = 0; j < s->nframes; j++)
			free(s->frames[j].symbol);
		free(s->frames);
		for (size_t j = 0; j < s->npython; j++) {
			free(s->python[j].file);
			free(s->python[j].function);
		}
		free(s->python);
	}
	free(p->sites);
	for (size_t i = 0; i < p->outside.ngpus; i++)
		free(p->outside.gpus[i].procs);
	free(p->outside.gpus);
	for (size_t i = 0; i < p->ncalls; i++)
		free(p->calls[i].name);
	free(p->calls);
	free(p->graph.devices);
	free(p->at_peak.devices);
	free(p->at_peak.sites);
	free(p->devices);
	free(p->version);
	for (size_t i = 0; i < p->nenv; i++) {
		free(p->env[i].name);
		free(p->env[i].value);
	}
	free(p->env);
	for (size_t i = 0; i < p->ngpus; i++)
		free(p->gpus[i].name);
	free(p->gpus);
	for (size_t i = 0; i < p->nmarks; i++) {
		free(p->marks[i].label);
		free(p->marks[i].sites);
	}
	free(p->marks);
	for (size_t i = 0; i < p->torch.nsites; i++) {
		for (size_t j = 0; j < p->torch.sites[i].nframes; j++) {
			free(p->torch.sites[i].frames[j].file);
			free(p->torch.sites[i].frames[j].function);
		}
		free(p->torch.sites[i].frames);
	}
	free(p->torch.sites);
	free(p->torch.devices);
	free(p);
}

void rd_process_list_clear(struct rd_process_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		rd_process_free(list->items[i]);
	free(list->items);
	list->items = NULL;
	list->n = list->cap = 0;
	for (size_t i = 0; i < list->nunreported; i++) {
		free(list->unreported[i].path);
		free(list->unreported[i].host);
	}
	free(list->unreported);
	list->unreported = NULL;
	list->nunreported = 0;
	for (size_t i = 0; i < list->nunreadable; i++) {
		free(list->unreadable[i].path);
		free(list->unreadable[i].msg);
	}
	free(list->unreadable);
	list->unreadable = NULL;
	list->nunreadable = 0;
}
