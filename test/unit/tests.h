/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Minimal test harness: TEST(name) registers a case, the ASSERT_* macros print both values and abort the
 * run (exit 1) on the first failure, main() runs every case in file order. */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "macro.h"
#include <string.h>

typedef void (*test_func_t)(void);
struct test_case {
        const char *name;
        test_func_t func;
};

#define TEST(n)                                                                                  \
        static void test_##n(void);                                                              \
        static const struct test_case test_case_##n                                              \
                __attribute__((used, section("foyer_tests"), aligned(sizeof(void *)))) = {       \
                        #n, test_##n                                                             \
                };                                                                               \
        static void test_##n(void)

#define ASSERT_TRUE(expr)                                                                       \
        do {                                                                                    \
                if (!(expr)) {                                                                  \
                        fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #expr); \
                        exit(EXIT_FAILURE);                                                     \
                }                                                                               \
        } while (0)

#define ASSERT_OK(expr)                                                                         \
        do {                                                                                    \
                int _r = (expr);                                                                \
                if (_r < 0) {                                                                   \
                        fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,   \
                                strerror(-_r));                                                 \
                        exit(EXIT_FAILURE);                                                     \
                }                                                                               \
        } while (0)

#define ASSERT_STREQ(a, b)                                                                      \
        do {                                                                                    \
                const char *_a = (a), *_b = (b);                                                \
                if (!((!_a && !_b) || (_a && _b && strcmp(_a, _b) == 0))) {                     \
                        fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
                                #a, #b, _a ?: "(null)", _b ?: "(null)");                       \
                        exit(EXIT_FAILURE);                                                     \
                }                                                                               \
        } while (0)

#define ASSERT_EQ(a, b)                                                                         \
        do {                                                                                    \
                intmax_t _a = (intmax_t) (a), _b = (intmax_t) (b);                              \
                if (_a != _b) {                                                                 \
                        fprintf(stderr, "%s:%d: %s == %s failed: %jd != %jd\n", __FILE__, __LINE__, \
                                #a, #b, _a, _b);                                                \
                        exit(EXIT_FAILURE);                                                     \
                }                                                                               \
        } while (0)

extern const struct test_case __start_foyer_tests[], __stop_foyer_tests[];

#define TEST_MAIN()                                                                             \
        int main(void) {                                                                        \
                unsigned n = 0;                                                                 \
                for (const struct test_case *t = __start_foyer_tests; t < __stop_foyer_tests; t++) { \
                        fprintf(stderr, "/* %s */\n", t->name);                                 \
                        t->func();                                                              \
                        n++;                                                                    \
                }                                                                               \
                fprintf(stderr, "%u test cases passed\n", n);                                   \
                return n > 0 ? EXIT_SUCCESS : EXIT_FAILURE;                                     \
        }
