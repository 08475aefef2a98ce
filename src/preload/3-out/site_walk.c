/* SPDX-License-Identifier: MIT */
/* The call sites as an array by id (see site_walk.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "site_walk.h"

int site_walk_refresh(struct site_walk *w)
{
	/* the head first: every site reachable from it has an id below the
	 * count read after (ids are taken before sites are pushed) */
	struct gs_site *head = site_list();
	unsigned count = site_count();

	if (count > w->cap) {
		unsigned cap = count + count / 2 + 1024;
		struct gs_site **m = realloc(w->by_id, (size_t)cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		memset(m + w->cap, 0, (size_t)(cap - w->cap) * sizeof(*m));
		w->by_id = m;
		w->cap = cap;
	}
	for (struct gs_site *s = head; s && s != w->head; s = s->next_all)
		w->by_id[s->id] = s;
	w->head = head;
	if (count > w->n)
		w->n = count;
	return 0;
}
