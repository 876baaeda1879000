/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Parsers for the value syntaxes systemd uses on the kernel command line and in fstab options. */

#include <stddef.h>
#include <stdint.h>

typedef uint64_t usec_t;
#define USEC_INFINITY ((usec_t) UINT64_MAX)
#define USEC_PER_SEC ((usec_t) 1000000ULL)
#define FORMAT_TIMESPAN_MAX 64

/* Parses 1/yes/y/true/t/on and 0/no/n/false/f/off (case-insensitive); returns 1, 0 or -EINVAL. */
int parse_boolean(const char *v);
/* Parses a systemd time span ("90", "5min", "1h 30s", "infinity"; seconds by default) into *ret. */
int parse_sec(const char *t, usec_t *ret);
/* Like parse_sec(), but 0 means infinity (as for x-systemd.*-timeout=). */
int parse_sec_fix_0(const char *t, usec_t *ret);
/* Formats a span the way systemd's format_timespan(..., 0) does ("1min 30s", "infinity"); returns buf. */
char *format_timespan(char *buf, size_t l, usec_t t);
/* Parses a non-negative decimal integer that fits in unsigned; returns 0 or -EINVAL/-ERANGE. */
int safe_atou(const char *s, unsigned *ret);
/* The same for a 64-bit value (timestamps in µs). */
int safe_atou64(const char *s, uint64_t *ret);

/* The value of one hexadecimal digit, or -EINVAL. */
int unhexchar(char c);
/* One C escape after a backslash at *p, as systemd's cunescape_one() reads it (\a \b \f \n \r \t \v
 * \\ \" \' \s, \xNN, \ooo, \uNNNN and \UNNNNNNNN as UTF-8; none may be NUL): appends its bytes (at most
 * four) to buf at *n and advances *p past it. Returns 0, or -EINVAL for an escape it does not know. */
int cunescape_one(const char **p, char *buf, size_t *n);
