/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What every harness in test/fuzz/ defines and may use. A harness is one file fuzz-NAME.c with
 * LLVMFuzzerTestOneInput(); test/fuzz/meson.build links it either with libFuzzer (a clang build with
 * -Dlibfuzzer=true, see run-libfuzzer.sh) or with fuzz-main.c, which replays files (the corpus test). */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
