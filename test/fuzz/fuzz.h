/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What every harness in test/fuzz/ defines and may use. A harness is one file fuzz-NAME.c with
 * LLVMFuzzerTestOneInput(); test/fuzz/meson.build links it either with libFuzzer (a clang build with
 * -Dlibfuzzer=true, see run-libfuzzer.sh) or with fuzz-main.c, which replays files (the corpus test). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (NUL bytes inside stay, so C string code sees a prefix);
 * NULL when out of memory. Free with free(). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);
        if (!s)
                return NULL;
        memcpy(s, data, size);
        s[size] = '\0';
        return s;
}

/* The start of every harness: false for an input over max_size bytes (skip it: the limits keep a run
 * fast), otherwise true after quietening the log to LOG_CRIT, so that the warnings the code under test
 * gives for bad input do not drown what matters. */
static inline bool fuzz_setup(size_t size, size_t max_size) {
        if (size > max_size)
                return false;
        log_set_max_level(LOG_CRIT);
        return true;
}

/* A promise of the code under test is broken: names it and the input it broke on (may be NULL), then
 * abort()s so that libFuzzer and the replay test report the input. */
_noreturn_ static inline void fuzz_fail(const char *what, const char *input) {
        if (input)
                fprintf(stderr, "%s: \"%s\"\n", what, input);
        else
                fprintf(stderr, "%s\n", what);
        abort();
}

/* A stream to /dev/null for code under test that prints, opened once per process (abort()s if it
 * cannot be); the log is quietened to LOG_EMERG at the same time. */
static inline FILE *fuzz_null_stream(void) {
        static FILE *null;

        if (!null) {
                null = fopen("/dev/null", "we");
                if (!null)
                        abort();
                log_set_max_level(LOG_EMERG);
        }
        return null;
}
