/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The timeline's model, the parsers of what the initrd's systemctl, udevadm and tracefs print, and
 * the table it is kept as. */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "parse-util.h"
#include "strv.h"
#include "timeline.h"

static const char *const kind_names[_TIMELINE_KIND_MAX] = {
        [TIMELINE_UNIT] = "unit",
        [TIMELINE_DEVICE] = "device",
        [TIMELINE_MODULE] = "module",
};

const char *timeline_kind_to_string(TimelineKind k) {
        return k >= 0 && k < _TIMELINE_KIND_MAX ? kind_names[k] : NULL;
}

TimelineKind timeline_kind_from_string(const char *s) {
        for (TimelineKind k = 0; k < _TIMELINE_KIND_MAX; k++)
                if (s && streq(s, kind_names[k]))
                        return k;
        return _TIMELINE_KIND_INVALID;
}

void timeline_done(Timeline *t) {
        assert(t);
        for (size_t i = 0; i < t->n_events; i++)
                free(t->events[i].name);
        free(t->events);
        t->events = NULL;
        t->n_events = 0;
}

int timeline_add(Timeline *t, TimelineKind kind, const char *name, uint64_t start_us, uint64_t end_us) {
        TimelineEvent *e;
        char *copy;

        assert(t);
        assert(name);
        if (kind < 0 || kind >= _TIMELINE_KIND_MAX || start_us == TIMELINE_NONE ||
            (end_us != TIMELINE_NONE && end_us < start_us))
                return -EINVAL;
        /* Names come from the initrd's systemctl, udevadm and tracefs, or from a record file: a C1
         * control or a stray byte (a raw 0x9b is CSI on some terminals) would reach the terminal of
         * "foyer timeline" and the SVG as it is. Escaped here, the model holds printable names only,
         * and the table, which sorts and reads back by name, is the same wherever it is written. */
        copy = string_escape_unprintable(name, 0);
        if (!copy)
                return -ENOMEM;
        e = reallocarray(t->events, t->n_events + 1, sizeof(TimelineEvent));
        if (!e) {
                free(copy);
                return -ENOMEM;
        }
        t->events = e;
        t->events[t->n_events++] = (TimelineEvent) { kind, copy, start_us, end_us };
        return 0;
}

static int event_compare(const void *a, const void *b) {
        const TimelineEvent *x = a, *y = b;

        if (x->start_us != y->start_us)
                return x->start_us < y->start_us ? -1 : 1;
        if (x->kind != y->kind)
                return x->kind < y->kind ? -1 : 1;
        /* Down to the end, so that equal rows are the only ones whose order is left to qsort(). */
        if (strcmp(x->name, y->name) != 0)
                return strcmp(x->name, y->name);
        if (x->end_us != y->end_us)
                return x->end_us < y->end_us ? -1 : 1;
        return 0;
}

void timeline_sort(Timeline *t) {
        assert(t);
        if (t->n_events > 1)
                qsort(t->events, t->n_events, sizeof(TimelineEvent), event_compare);
}

char *timeline_format_ms(char buf[static TIMELINE_MS_MAX], uint64_t us) {
        if (us == TIMELINE_NONE)
                strcpy(buf, "-");
        else
                snprintf(buf, TIMELINE_MS_MAX, "%" PRIu64 ".%03" PRIu64, us / 1000, us % 1000);
        return buf;
}

int timeline_parse_ms(const char *s, uint64_t *ret) {
        uint64_t ms, frac = 0;
        const char *dot;
        int r;

        assert(s);
        assert(ret);
        if (streq(s, "-")) {
                *ret = TIMELINE_NONE;
                return 0;
        }
        dot = strchr(s, '.');
        if (dot) {
                _cleanup_free_ char *whole = strndup(s, dot - s);
                size_t n = strlen(dot + 1);

                if (!whole)
                        return -ENOMEM;
                if (n < 1 || n > 3 || strspn(dot + 1, "0123456789") != n)
                        return -EINVAL;
                r = safe_atou64(whole, &ms);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < 3; i++)
                        frac = frac * 10 + (i < n ? (uint64_t) (dot[1 + i] - '0') : 0);
        } else {
                r = safe_atou64(s, &ms);
                if (r < 0)
                        return r;
        }
        /* Digits only (safe_atou64 takes no sign here, but say so), and no overflow to or past
         * TIMELINE_NONE. */
        if (!*s || strchr("+- ", *s) || ms > (TIMELINE_NONE - 1 - frac) / 1000)
                return -ERANGE;
        *ret = ms * 1000 + frac;
        return 0;
}

/* Calls f(line, userdata) for each line of text (without its newline), in a copy. */
static int foreach_line(const char *text, int (*f)(char *line, void *userdata), void *userdata) {
        _cleanup_free_ char *copy = strdup(text);
        char *p, *next;
        int r;

        if (!copy)
                return -ENOMEM;
        for (p = copy; p && *p; p = next) {
                next = strchr(p, '\n');
                if (next)
                        *next++ = '\0';
                r = f(p, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* --- systemctl show ------------------------------------------------------------------------------ */

typedef struct UnitBlock {
        Timeline *t;
        char *id;
        uint64_t inactive_exit, active_enter, inactive_enter;
} UnitBlock;

static int unit_block_flush(UnitBlock *b) {
        uint64_t end = TIMELINE_NONE;
        int r = 0;

        if (b->id && b->inactive_exit > 0 && b->inactive_exit != TIMELINE_NONE) {
                if (b->active_enter >= b->inactive_exit && b->active_enter != TIMELINE_NONE)
                        end = b->active_enter;
                else if (b->inactive_enter >= b->inactive_exit && b->inactive_enter != TIMELINE_NONE)
                        end = b->inactive_enter;
                r = timeline_add(b->t, TIMELINE_UNIT, b->id, b->inactive_exit, end);
                if (r == -EINVAL)
                        r = 0;
        }
        free(b->id);
        b->id = NULL;
        b->inactive_exit = b->active_enter = b->inactive_enter = 0;
        return r;
}

static int unit_line(char *line, void *userdata) {
        UnitBlock *b = userdata;
        char *eq = strchr(line, '=');
        uint64_t *field = NULL;

        if (isempty(line))
                return unit_block_flush(b);
        if (!eq)
                return 0;
        *eq = '\0';
        if (streq(line, "Id")) {
                /* A new block without the empty line between: systemctl prints one, but say what
                 * was read so far belongs to the unit before. */
                if (b->id) {
                        int r = unit_block_flush(b);
                        if (r < 0)
                                return r;
                }
                if (isempty(eq + 1) || string_has_cc(eq + 1) || strchr(eq + 1, '\t'))
                        return 0;
                b->id = strdup(eq + 1);
                return b->id ? 0 : -ENOMEM;
        }
        if (streq(line, "InactiveExitTimestampMonotonic"))
                field = &b->inactive_exit;
        else if (streq(line, "ActiveEnterTimestampMonotonic"))
                field = &b->active_enter;
        else if (streq(line, "InactiveEnterTimestampMonotonic"))
                field = &b->inactive_enter;
        if (field && safe_atou64(eq + 1, field) < 0)
                *field = 0;
        return 0;
}

int timeline_parse_units(Timeline *t, const char *text) {
        UnitBlock b = { .t = t };
        int r;

        assert(t);
        assert(text);
        r = foreach_line(text, unit_line, &b);
        if (r >= 0)
                r = unit_block_flush(&b);
        free(b.id);
        return r;
}

/* --- udevadm info --export-db -------------------------------------------------------------------- */

typedef struct DeviceBlock {
        Timeline *t;
        char *path, *node;
        uint64_t initialized;
        bool systemd;
} DeviceBlock;

int timeline_add_device(Timeline *t, const char *devpath, const char *node, bool systemd, uint64_t initialized_us) {
        _cleanup_free_ char *name = NULL;
        int r;

        assert(t);
        if (!(node || (devpath && systemd)) || initialized_us == 0)
                return 0;
        name = node ? strjoin("/dev/", node) : strjoin("/sys", devpath);
        if (!name)
                return -ENOMEM;
        if (string_has_cc(name) || strchr(name, '\t'))
                return 0;
        r = timeline_add(t, TIMELINE_DEVICE, name, initialized_us, TIMELINE_NONE);
        return r == -EINVAL ? 0 : r;
}

static int device_block_flush(DeviceBlock *b) {
        int r = timeline_add_device(b->t, b->path, b->node, b->systemd, b->initialized);

        free(b->path);
        free(b->node);
        b->path = b->node = NULL;
        b->initialized = 0;
        b->systemd = false;
        return r;
}

static int device_line(char *line, void *userdata) {
        DeviceBlock *b = userdata;
        const char *v;

        if (isempty(line))
                return device_block_flush(b);
        if ((v = startswith(line, "P: "))) {
                if (b->path) {
                        int r = device_block_flush(b);
                        if (r < 0)
                                return r;
                }
                return free_and_strdup(&b->path, v);
        }
        if ((v = startswith(line, "N: ")))
                return free_and_strdup(&b->node, v);
        if ((v = startswith(line, "G: ")) && streq(v, "systemd"))
                b->systemd = true;
        else if ((v = startswith(line, "E: USEC_INITIALIZED=")) && safe_atou64(v, &b->initialized) < 0)
                b->initialized = 0;
        /* Older udevadm has no G: lines, only the TAGS= property. */
        else if ((v = startswith(line, "E: TAGS=")) && strstr(v, ":systemd:"))
                b->systemd = true;
        return 0;
}

int timeline_parse_udev_db(Timeline *t, const char *text) {
        DeviceBlock b = { .t = t };
        int r;

        assert(t);
        assert(text);
        r = foreach_line(text, device_line, &b);
        if (r >= 0)
                r = device_block_flush(&b);
        free(b.path);
        free(b.node);
        return r;
}

/* --- tracefs ------------------------------------------------------------------------------------- */

static int trace_line(char *line, void *userdata) {
        Timeline *t = userdata;
        char *event, *stamp, *name, *end, *dot;
        uint64_t sec, usec = 0;
        size_t n;
        int r;

        if (line[0] == '#')
                return 0;
        event = strstr(line, ": module_load: ");
        if (!event)
                return 0;
        /* The timestamp is the last word before the event name: "... 1.234567: module_load: ext4". */
        *event = '\0';
        stamp = strrchr(line, ' ');
        stamp = stamp ? stamp + 1 : line;
        dot = strchr(stamp, '.');
        if (!dot)
                return 0;
        *dot = '\0';
        n = strlen(dot + 1);
        if (n == 0 || n > 9 || strspn(dot + 1, "0123456789") != n || isempty(stamp) ||
            strspn(stamp, "0123456789") != strlen(stamp) || safe_atou64(stamp, &sec) < 0 ||
            sec > UINT32_MAX)
                return 0;
        for (size_t i = 0; i < 6; i++)
                usec = usec * 10 + (i < n ? (uint64_t) (dot[1 + i] - '0') : 0);
        name = event + strlen(": module_load: ");
        /* The name, then the taint flags if any ("ext4 " or "foo [OE]"). */
        end = name + strcspn(name, " \t[");
        *end = '\0';
        if (isempty(name) || string_has_cc(name))
                return 0;
        r = timeline_add(t, TIMELINE_MODULE, name, sec * 1000000 + usec, TIMELINE_NONE);
        return r == -EINVAL ? 0 : r;
}

int timeline_parse_trace(Timeline *t, const char *text) {
        assert(t);
        assert(text);
        return foreach_line(text, trace_line, t);
}

/* --- the table ----------------------------------------------------------------------------------- */

#define TABLE_TITLE "# foyer boot timeline: ms since the kernel started"
#define TABLE_RECORDED "; recorded at "
#define TABLE_HEADER "kind\tname\tstart_ms\tend_ms"

static int table_line(char *line, void *userdata) {
        Timeline *t = userdata;
        _cleanup_strv_free_ char **fields = NULL;
        uint64_t start, end;
        TimelineKind kind;
        const char *v;
        int r;

        if ((v = startswith(line, TABLE_TITLE TABLE_RECORDED))) {
                if (timeline_parse_ms(v, &t->recorded_us) < 0)
                        t->recorded_us = TIMELINE_NONE;
                return 0;
        }
        if (line[0] == '#' || streq(line, TABLE_HEADER))
                return 0;
        r = strv_split(line, "\t", &fields);
        if (r < 0)
                return r;
        if (strv_length(fields) != 4)
                return 0;
        kind = timeline_kind_from_string(fields[0]);
        if (kind < 0 || isempty(fields[1]) || string_has_cc(fields[1]) ||
            timeline_parse_ms(fields[2], &start) < 0 || start == TIMELINE_NONE ||
            timeline_parse_ms(fields[3], &end) < 0)
                return 0;
        r = timeline_add(t, kind, fields[1], start, end);
        return r == -EINVAL ? 0 : r;
}

int timeline_parse_table(Timeline *t, const char *text) {
        assert(t);
        assert(text);
        return foreach_line(text, table_line, t);
}

int timeline_write_table(const Timeline *t, FILE *f) {
        char a[TIMELINE_MS_MAX], b[TIMELINE_MS_MAX];

        assert(t);
        assert(f);
        fputs(TABLE_TITLE, f);
        if (t->recorded_us != TIMELINE_NONE)
                fprintf(f, TABLE_RECORDED "%s", timeline_format_ms(a, t->recorded_us));
        fputs("\n" TABLE_HEADER "\n", f);
        for (size_t i = 0; i < t->n_events; i++)
                fprintf(f, "%s\t%s\t%s\t%s\n", timeline_kind_to_string(t->events[i].kind), t->events[i].name,
                        timeline_format_ms(a, t->events[i].start_us), timeline_format_ms(b, t->events[i].end_us));
        return ferror(f) ? -EIO : 0;
}
