/*
 * What the C unit tests (fcunit, seappunit, engineunit) share: CHECK prints an "ok   " or
 * "FAIL " line, as the shell tests do, and counts checks and failures; main returns
 * failures != 0.
 */
#ifndef TESTS_UNIT_H
#define TESTS_UNIT_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		checks++;                                                                          \
		if (cond) {                                                                        \
			printf("ok   ");                                                           \
		} else {                                                                           \
			printf("FAIL ");                                                           \
			failures++;                                                                \
		}                                                                                  \
		printf(__VA_ARGS__);                                                               \
		putchar('\n');                                                                     \
	} while (0)

#endif
