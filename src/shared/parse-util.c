/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <ctype.h>
#include <limits.h>
#include <strings.h>

#include "macro.h"
#include "parse-util.h"

#define USEC_PER_MSEC ((usec_t) 1000ULL)
#define USEC_PER_MINUTE (60ULL * USEC_PER_SEC)
#define USEC_PER_HOUR (60ULL * USEC_PER_MINUTE)
#define USEC_PER_DAY (24ULL * USEC_PER_HOUR)
#define USEC_PER_WEEK (7ULL * USEC_PER_DAY)
#define USEC_PER_MONTH (2629800ULL * USEC_PER_SEC)
#define USEC_PER_YEAR (31557600ULL * USEC_PER_SEC)

int parse_boolean(const char *v) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        if (!v)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(v, yes[i]) == 0)
                        return 1;
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcasecmp(v, no[i]) == 0)
                        return 0;
        return -EINVAL;
}

int safe_atou64(const char *s, uint64_t *ret) {
        unsigned long long l;
        char *e;

        if (isempty(s) || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        l = strtoull(s, &e, 10);
        if (*e)
                return -EINVAL;
        if (errno == ERANGE)
                return -ERANGE;
        *ret = (uint64_t) l;
        return 0;
}

int safe_atou(const char *s, unsigned *ret) {
        uint64_t v;
        int r;

        r = safe_atou64(s, &v);
        if (r < 0)
                return r;
        if (v > UINT_MAX)
                return -ERANGE;
        *ret = (unsigned) v;
        return 0;
}

static const struct {
        const char *suffix;
        usec_t usec;
} time_units[] = {
        { "seconds", USEC_PER_SEC },    { "second", USEC_PER_SEC },     { "sec", USEC_PER_SEC },
        { "s", USEC_PER_SEC },          { "minutes", USEC_PER_MINUTE }, { "minute", USEC_PER_MINUTE },
        { "min", USEC_PER_MINUTE },     { "months", USEC_PER_MONTH },   { "month", USEC_PER_MONTH },
        { "M", USEC_PER_MONTH },        { "msec", USEC_PER_MSEC },      { "ms", USEC_PER_MSEC },
        { "m", USEC_PER_MINUTE },       { "hours", USEC_PER_HOUR },     { "hour", USEC_PER_HOUR },
        { "hr", USEC_PER_HOUR },        { "h", USEC_PER_HOUR },         { "days", USEC_PER_DAY },
        { "day", USEC_PER_DAY },        { "d", USEC_PER_DAY },          { "weeks", USEC_PER_WEEK },
        { "week", USEC_PER_WEEK },      { "w", USEC_PER_WEEK },         { "years", USEC_PER_YEAR },
        { "year", USEC_PER_YEAR },      { "y", USEC_PER_YEAR },         { "usec", 1 },
        { "us", 1 },                    { "μs", 1 },                    { "µs", 1 },
};

int parse_sec(const char *t, usec_t *ret) {
        const char *p = t;
        usec_t r = 0;
        bool something = false;

        if (!t)
                return -EINVAL;
        p += strspn(p, " \t\n");
        if (streq(p, "infinity")) {
                *ret = USEC_INFINITY;
                return 0;
        }

        for (;;) {
                unsigned long long l, frac = 0, fdiv = 1;
                usec_t mult = USEC_PER_SEC;
                char *e;

                p += strspn(p, " \t\n");
                if (*p == 0) {
                        if (!something)
                                return -EINVAL;
                        break;
                }
                if (!isdigit((unsigned char) *p) && *p != '.')
                        return -EINVAL;
                errno = 0;
                l = strtoull(p, &e, 10);
                if (errno != 0)
                        return -ERANGE;
                if (*e == '.') {
                        e++;
                        while (isdigit((unsigned char) *e)) {
                                if (fdiv < 1000000000ULL) {
                                        frac = frac * 10 + (unsigned long long) (*e - '0');
                                        fdiv *= 10;
                                }
                                e++;
                        }
                }
                if (e == p)
                        return -EINVAL;
                p = e;
                p += strspn(p, " \t\n");

                for (size_t i = 0; i < ELEMENTSOF(time_units); i++) {
                        const char *s = startswith(p, time_units[i].suffix);
                        if (s && !isalpha((unsigned char) *s)) {
                                mult = time_units[i].usec;
                                p = s;
                                break;
                        }
                }
                if (l > UINT64_MAX / mult)
                        return -ERANGE;
                r += l * mult + frac * mult / fdiv;
                something = true;
        }

        *ret = r;
        return 0;
}

int parse_sec_fix_0(const char *t, usec_t *ret) {
        usec_t k;
        int r;

        r = parse_sec(t, &k);
        if (r < 0)
                return r;
        *ret = k == 0 ? USEC_INFINITY : k;
        return 0;
}

char *format_timespan(char *buf, size_t l, usec_t t) {
        static const struct {
                const char *suffix;
                usec_t usec;
        } table[] = {
                { "y", USEC_PER_YEAR }, { "month", USEC_PER_MONTH }, { "w", USEC_PER_WEEK },
                { "d", USEC_PER_DAY },  { "h", USEC_PER_HOUR },      { "min", USEC_PER_MINUTE },
                { "s", USEC_PER_SEC },  { "ms", USEC_PER_MSEC },     { "us", 1 },
        };
        char *p = buf;

        if (t == USEC_INFINITY) {
                snprintf(buf, l, "infinity");
                return buf;
        }
        if (t == 0) {
                snprintf(buf, l, "0");
                return buf;
        }

        *p = 0;
        for (size_t i = 0; i < ELEMENTSOF(table) && t > 0 && l > 1; i++) {
                usec_t a, b;
                int k = 0;
                bool done = false;

                if (t < table[i].usec)
                        continue;
                a = t / table[i].usec;
                b = t % table[i].usec;

                /* Below a minute a remainder is shown as a decimal fraction of this unit. */
                if (t < USEC_PER_MINUTE && b > 0) {
                        int j = 0;
                        for (usec_t cc = table[i].usec; cc > 1; cc /= 10)
                                j++;
                        if (j > 0) {
                                k = snprintf(p, l, "%s%llu.%0*llu%s", p > buf ? " " : "",
                                             (unsigned long long) a, j, (unsigned long long) b, table[i].suffix);
                                t = 0;
                                done = true;
                        }
                }
                if (!done) {
                        k = snprintf(p, l, "%s%llu%s", p > buf ? " " : "", (unsigned long long) a,
                                     table[i].suffix);
                        t = b;
                }
                if (k < 0)
                        break;
                size_t n = MIN((size_t) k, l - 1);
                l -= n;
                p += n;
        }
        return buf;
}

int unhexchar(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -EINVAL;
}

int cunescape_one(const char **p, char *buf, size_t *n) {
        static const char simple[] = "a\ab\bf\fn\nr\rt\tv\v\\\\\"\"''s ";
        const char *s = *p;
        unsigned long u = 0;
        int digits;

        for (size_t i = 0; simple[i]; i += 2)
                if (*s == simple[i]) {
                        buf[(*n)++] = simple[i + 1];
                        *p = s + 1;
                        return 0;
                }
        if (*s == 'x') {
                if (unhexchar(s[1]) < 0 || unhexchar(s[2]) < 0 || (unhexchar(s[1]) | unhexchar(s[2])) == 0)
                        return -EINVAL;
                buf[(*n)++] = (char) (unhexchar(s[1]) << 4 | unhexchar(s[2]));
                *p = s + 3;
                return 0;
        }
        if (*s >= '0' && *s <= '7') {
                for (int i = 0; i < 3; i++) {
                        if (s[i] < '0' || s[i] > '7')
                                return -EINVAL;
                        u = u * 8 + (unsigned long) (s[i] - '0');
                }
                if (u == 0 || u > 255)
                        return -EINVAL;
                buf[(*n)++] = (char) u;
                *p = s + 3;
                return 0;
        }
        if (*s != 'u' && *s != 'U')
                return -EINVAL;
        digits = *s == 'u' ? 4 : 8;
        for (int i = 1; i <= digits; i++) {
                if (unhexchar(s[i]) < 0)
                        return -EINVAL;
                u = u << 4 | (unsigned long) unhexchar(s[i]);
        }
        if (u == 0 || u > 0x10FFFF || (u >= 0xD800 && u <= 0xDFFF))
                return -EINVAL;
        /* UTF-8 */
        if (u < 0x80)
                buf[(*n)++] = (char) u;
        else if (u < 0x800) {
                buf[(*n)++] = (char) (0xC0 | u >> 6);
                buf[(*n)++] = (char) (0x80 | (u & 0x3F));
        } else if (u < 0x10000) {
                buf[(*n)++] = (char) (0xE0 | u >> 12);
                buf[(*n)++] = (char) (0x80 | ((u >> 6) & 0x3F));
                buf[(*n)++] = (char) (0x80 | (u & 0x3F));
        } else {
                buf[(*n)++] = (char) (0xF0 | u >> 18);
                buf[(*n)++] = (char) (0x80 | ((u >> 12) & 0x3F));
                buf[(*n)++] = (char) (0x80 | ((u >> 6) & 0x3F));
                buf[(*n)++] = (char) (0x80 | (u & 0x3F));
        }
        *p = s + 1 + digits;
        return 0;
}
