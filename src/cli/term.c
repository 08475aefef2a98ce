/* SPDX-License-Identifier: MIT */
/* What the terminal can do, for gpuspy top: terminfo's capabilities for
 * $TERM (ncurses' libtinfo), kept apart because <term.h> defines every
 * capability's name as a macro. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* before <term.h>, whose capability macros (lines, columns, ...) would
 * rename the members of its structures */
#include "cli.h"

#ifdef HAVE_TINFO
#include <term.h>
#endif

#ifdef HAVE_TINFO
/* Capability NAME of the terminal set up, or NULL when it has none. */
static const char *term_str(const char *name)
{
	const char *s = tigetstr(name);

	return s == (const char *)-1 || !s || !*s ? NULL : s;
}
#endif

/* Whether standard output is a terminal that the view can be redrawn on
 * in place, and with which sequences: terminfo's for $TERM.  A terminal
 * without them (TERM=dumb, unset, or unknown) gets the plain blocks of a
 * pipe. */
bool cli_term_caps(struct term_caps *tc)
{
#ifdef HAVE_TINFO
	int err;
#endif

	memset(tc, 0, sizeof(*tc));
	if (!isatty(STDOUT_FILENO))
		return false;
#ifdef HAVE_TINFO
	if (setupterm(NULL, STDOUT_FILENO, &err) != 0)
		return false;
	tc->home = term_str("home");
	if (!tc->home && term_str("cup")) {
		const char *s = tiparm(term_str("cup"), 0, 0);

		if (s && strlen(s) < sizeof(tc->home_buf)) {
			strcpy(tc->home_buf, s);
			tc->home = tc->home_buf;
		}
	}
	tc->el = term_str("el");
	tc->ed = term_str("ed");
	tc->smcup = term_str("smcup");
	tc->rmcup = term_str("rmcup");
	tc->civis = term_str("civis");
	tc->cnorm = term_str("cnorm");
	tc->nlines = tigetnum("lines");
	tc->ncols = tigetnum("cols");
#else
	/* without terminfo: the ANSI sequences every terminal emulator
	 * has, but not for a terminal that says it has none */
	const char *term = getenv("TERM");

	if (!term || !*term || strcmp(term, "dumb") == 0)
		return false;
	tc->home = "\033[H";
	tc->el = "\033[K";
	tc->ed = "\033[J";
	tc->smcup = "\033[?1049h";
	tc->rmcup = "\033[?1049l";
	tc->civis = "\033[?25l";
	tc->cnorm = "\033[?25h";
#endif
	return tc->home && tc->el && tc->ed;
}

/* S, a terminfo string, with its padding. */
void cli_term_put(const char *s)
{
	if (!s)
		return;
#ifdef HAVE_TINFO
	tputs(s, 1, putchar);
#else
	fputs(s, stdout);
#endif
}
