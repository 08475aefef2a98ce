/* SPDX-License-Identifier: MIT */
/*
 * For tests/cli/test_hostile_names.py: call sites whose function names,
 * as the module's symbol table and the process give them, are not what a
 * printer expects (asm labels, so the ELF symbol is the name itself), and
 * whose source file name in the debug information is hostile too:
 *  - bytes that are not UTF-8 (0xff 0xfe, a sequence cut short, an
 *    overlong form, a surrogate, a code point past U+10FFFF);
 *  - names made of 2-, 3- and 4-byte characters only, after 0 to 3 ASCII
 *    bytes: any cut at any byte limit splits a character in some of them;
 *  - control characters (ESC, BEL, TAB, DEL, C1 CSI), ';', spaces and
 *    parentheses; a name of 5,000 bytes.
 * Each leaks STEPS x its own size (1 + its index KiB).  With "wait" the
 * program then prints "ready" and waits for its standard input to close.
 * Usage: hostile_names STEPS [wait]
 */
#include <time.h>
#include <unistd.h>

#include "prog.h"

#define R2(x)	 x x
#define R3(x)	 x x x
#define R5(x)	 x x x x x
#define R10(x)	 R2(R5(x))
#define R100(x)	 R10(R10(x))
#define R1000(x) R10(R100(x))

#define E_ACUTE "\xc3\xa9"	   /* U+00E9, 2 bytes */
#define EURO	"\xe2\x82\xac"	   /* U+20AC, 3 bytes */
#define GRIN	"\xf0\x9f\x98\x80" /* U+1F600, 4 bytes */

/* GAS takes a quoted symbol name of any bytes but NUL, '"' and newline */
#define Q(s) "\"" s "\""

#line 1 "hostile\xff\x1b[2J\xe2\x82.c"
#define SITE(fn, name)                                                                             \
	__attribute__((noinline)) void fn(size_t bytes) __asm__(Q(name));                          \
	__attribute__((noinline)) void fn(size_t bytes)                                            \
	{                                                                                          \
		void *p;                                                                           \
		rt_ok(cudaMalloc(&p, bytes), "cudaMalloc");                                        \
	}

SITE(s_invalid, "bad\xff\xfe; name (x)\x1b[31m\x07")
SITE(s_two, R100(R3(E_ACUTE)))
SITE(s_three, "x" R100(R2(EURO)))
SITE(s_four, "xy" R100(GRIN) R10(R5(GRIN)))
SITE(s_shift, "xyz" R100(E_ACUTE) R10(R5(E_ACUTE)))
SITE(s_incomplete, "cut\xe2\x82tail")
SITE(s_overlong, "over\xc0\xafx sur\xed\xa0\x80x big\xf4\x90\x80\x80x")
SITE(s_huge, R1000(R5("h")) E_ACUTE)
SITE(s_c1, "c1\xc2\x9b[2J tab\tdel\x7f")

static void (*const sites[])(size_t) = {
	s_invalid, s_two, s_three, s_four, s_shift, s_incomplete, s_overlong, s_huge, s_c1,
};

int main(int argc, char **argv)
{
	int steps = (int)arg_size(argc, argv, 1);
	struct timespec ts = { 0, 60 * 1000000L };
	char c;

	for (int i = 0; i < steps; i++) {
		for (size_t k = 0; k < sizeof(sites) / sizeof(sites[0]); k++)
			sites[k]((k + 1) * 1024);
		nanosleep(&ts, NULL);
	}
	if (argc > 2 && strcmp(argv[2], "wait") == 0) {
		printf("ready\n");
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	}
	return 0;
}
