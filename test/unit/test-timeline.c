/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The boot timeline (src/timeline): its parsers on recorded output of systemctl show, udevadm info
 * --export-db and tracefs (test/unit/timeline/), the table it is kept as, and the SVG chart. */

#include "fileio.h"
#include "macro.h"
#include "strv.h"
#include "tests.h"
#include "timeline.h"

static char *data(const char *name) {
        _cleanup_free_ char *p = strjoin(TIMELINE_DATA_DIR "/", name);
        char *text = NULL;

        ASSERT_TRUE(p);
        ASSERT_OK(read_full_file(p, &text, NULL));
        return text;
}

static const TimelineEvent *find(const Timeline *t, TimelineKind kind, const char *name) {
        for (size_t i = 0; i < t->n_events; i++)
                if (t->events[i].kind == kind && streq(t->events[i].name, name))
                        return t->events + i;
        return NULL;
}

static void assert_event(const Timeline *t, TimelineKind kind, const char *name, uint64_t start, uint64_t end) {
        const TimelineEvent *e = find(t, kind, name);

        if (!e)
                fprintf(stderr, "missing: %s %s\n", timeline_kind_to_string(kind), name);
        ASSERT_TRUE(e);
        ASSERT_EQ(e->start_us, start);
        ASSERT_TRUE(e->end_us == end);
}

static size_t count(const Timeline *t, TimelineKind kind) {
        size_t n = 0;

        for (size_t i = 0; i < t->n_events; i++)
                n += t->events[i].kind == kind;
        return n;
}

TEST(units) {
        _cleanup_(timeline_done) Timeline t = { .recorded_us = TIMELINE_NONE };
        _cleanup_free_ char *text = data("systemctl-show.txt");

        ASSERT_OK(timeline_parse_units(&t, text));
        /* initrd-cleanup.service never left "inactive": not in the timeline. */
        ASSERT_EQ(t.n_events, 5);
        ASSERT_TRUE(!find(&t, TIMELINE_UNIT, "initrd-cleanup.service"));
        assert_event(&t, TIMELINE_UNIT, "systemd-journald.service", 2105001, 2310456);
        assert_event(&t, TIMELINE_UNIT, "sysroot.mount", 4002000, 4123000);
        /* Failed: it ends when it became inactive again. */
        assert_event(&t, TIMELINE_UNIT, "systemd-fsck-root.service", 3800000, 3990000);
        /* Still activating when the record was made. */
        assert_event(&t, TIMELINE_UNIT, "foyer-timeline-record.service", 5000000, TIMELINE_NONE);
        /* A block that follows without an empty line between. */
        assert_event(&t, TIMELINE_UNIT, "dev-vda.device", 3460000, 3460000);
}

TEST(units_odd_input) {
        _cleanup_(timeline_done) Timeline t = { .recorded_us = TIMELINE_NONE };

        /* An end before the start, a bad number, a name with a tab, no Id: all left out. */
        ASSERT_OK(timeline_parse_units(&t, "Id=a.service\nInactiveExitTimestampMonotonic=500\n"
                                           "ActiveEnterTimestampMonotonic=400\n\n"
                                           "Id=b.service\nInactiveExitTimestampMonotonic=x5\n\n"
                                           "Id=c\t.service\nInactiveExitTimestampMonotonic=5\n\n"
                                           "InactiveExitTimestampMonotonic=7\n"));
        ASSERT_EQ(t.n_events, 1);
        /* An ActiveEnter before the last InactiveExit is an earlier run: the end is not known. */
        assert_event(&t, TIMELINE_UNIT, "a.service", 500, TIMELINE_NONE);
}

TEST(devices) {
        _cleanup_(timeline_done) Timeline t = { .recorded_us = TIMELINE_NONE };
        _cleanup_free_ char *text = data("udev-db.txt");

        ASSERT_OK(timeline_parse_udev_db(&t, text));
        ASSERT_EQ(t.n_events, 3);
        assert_event(&t, TIMELINE_DEVICE, "/dev/vda", 3456789, TIMELINE_NONE);
        assert_event(&t, TIMELINE_DEVICE, "/dev/ttyS0", 2950000, TIMELINE_NONE);
        /* No device node, but systemd's: named by its sysfs path. */
        assert_event(&t, TIMELINE_DEVICE, "/sys/devices/virtual/net/lo", 3001002, TIMELINE_NONE);
        /* The power button (neither) and the device udev has not finished with are left out. */
        ASSERT_TRUE(!find(&t, TIMELINE_DEVICE, "/dev/not-yet"));
}

/* The rule of timeline_add_device(), which the recorder applies to udev's database files. */
TEST(add_device) {
        _cleanup_(timeline_done) Timeline t = { .recorded_us = TIMELINE_NONE };

        ASSERT_OK(timeline_add_device(&t, "/devices/pci0000:00/0000:00:01.0/virtio0/block/vda", "vda", false, 9203493));
        ASSERT_OK(timeline_add_device(&t, "/devices/platform/serial8250/tty/ttyS2", NULL, true, 7977223));
        /* Neither a node nor the systemd tag; not initialized; a name with a tab: left out. */
        ASSERT_OK(timeline_add_device(&t, "/devices/system/cpu/cpu0", NULL, false, 100));
        ASSERT_OK(timeline_add_device(&t, "/devices/virtual/misc/x", "x", true, 0));
        ASSERT_OK(timeline_add_device(&t, "/devices/virtual/misc/y", "y\tz", false, 100));
        ASSERT_EQ(t.n_events, 2u);
        assert_event(&t, TIMELINE_DEVICE, "/dev/vda", 9203493, TIMELINE_NONE);
        assert_event(&t, TIMELINE_DEVICE, "/sys/devices/platform/serial8250/tty/ttyS2", 7977223, TIMELINE_NONE);
}

TEST(modules) {
        _cleanup_(timeline_done) Timeline t = { .recorded_us = TIMELINE_NONE };
        _cleanup_free_ char *text = data("trace.txt");

        ASSERT_OK(timeline_parse_trace(&t, text));
        ASSERT_EQ(t.n_events, 5);
        assert_event(&t, TIMELINE_MODULE, "virtio_blk", 3210987, TIMELINE_NONE);
        assert_event(&t, TIMELINE_MODULE, "dm_mod", 2500000, TIMELINE_NONE);
        /* Taint flags after the name, and a task name with parentheses. */
        assert_event(&t, TIMELINE_MODULE, "some_vendor_module", 12000001, TIMELINE_NONE);
        assert_event(&t, TIMELINE_MODULE, "ext4", 4100000, TIMELINE_NONE);
        /* Fewer than six decimals (another trace clock's format). */
        assert_event(&t, TIMELINE_MODULE, "crc32c_generic", 5500000, TIMELINE_NONE);
}

TEST(ms) {
        char buf[TIMELINE_MS_MAX];
        uint64_t v;

        ASSERT_STREQ(timeline_format_ms(buf, 0), "0.000");
        ASSERT_STREQ(timeline_format_ms(buf, 2105001), "2105.001");
        ASSERT_STREQ(timeline_format_ms(buf, TIMELINE_NONE), "-");
        ASSERT_STREQ(timeline_format_ms(buf, TIMELINE_NONE - 1), "18446744073709551.614");
        ASSERT_OK(timeline_parse_ms("2105.001", &v));
        ASSERT_EQ(v, 2105001);
        ASSERT_OK(timeline_parse_ms("1.5", &v));
        ASSERT_EQ(v, 1500);
        ASSERT_OK(timeline_parse_ms("7", &v));
        ASSERT_EQ(v, 7000);
        ASSERT_OK(timeline_parse_ms("-", &v));
        ASSERT_TRUE(v == TIMELINE_NONE);
        ASSERT_OK(timeline_parse_ms("18446744073709551.614", &v));
        ASSERT_TRUE(v == TIMELINE_NONE - 1);
        /* TIMELINE_NONE itself, and beyond, are not times. */
        ASSERT_TRUE(timeline_parse_ms("18446744073709551.615", &v) < 0);
        ASSERT_TRUE(timeline_parse_ms("18446744073709552", &v) < 0);
        ASSERT_TRUE(timeline_parse_ms("1.2345", &v) < 0);
        ASSERT_TRUE(timeline_parse_ms("1.", &v) < 0);
        ASSERT_TRUE(timeline_parse_ms(".5", &v) < 0);
        ASSERT_TRUE(timeline_parse_ms("", &v) < 0);
        ASSERT_TRUE(timeline_parse_ms("+1", &v) < 0);
        ASSERT_TRUE(timeline_parse_ms("-1", &v) < 0);
        ASSERT_TRUE(timeline_parse_ms("1.-5", &v) < 0);
}

/* All three recorded sources, sorted, written as the table and read back: the same table. */
TEST(table_round_trip) {
        _cleanup_(timeline_done) Timeline t = { .recorded_us = 5000123 }, back = { .recorded_us = TIMELINE_NONE };
        _cleanup_free_ char *units = data("systemctl-show.txt"), *db = data("udev-db.txt"), *trace = data("trace.txt");
        _cleanup_free_ char *text = NULL, *again = NULL;
        size_t size = 0;
        FILE *f;

        ASSERT_OK(timeline_parse_units(&t, units));
        ASSERT_OK(timeline_parse_udev_db(&t, db));
        ASSERT_OK(timeline_parse_trace(&t, trace));
        timeline_sort(&t);
        ASSERT_EQ(t.n_events, 13);
        ASSERT_EQ(count(&t, TIMELINE_UNIT), 5);
        ASSERT_EQ(count(&t, TIMELINE_DEVICE), 3);
        ASSERT_EQ(count(&t, TIMELINE_MODULE), 5);
        for (size_t i = 1; i < t.n_events; i++)
                ASSERT_TRUE(t.events[i - 1].start_us <= t.events[i].start_us);
        ASSERT_STREQ(t.events[0].name, "systemd-journald.service");

        f = open_memstream(&text, &size);
        ASSERT_TRUE(f);
        ASSERT_OK(timeline_write_table(&t, f));
        fclose(f);
        ASSERT_TRUE(startswith(text, "# foyer boot timeline: ms since the kernel started; recorded at 5000.123\n"
                                     "kind\tname\tstart_ms\tend_ms\n"
                                     "unit\tsystemd-journald.service\t2105.001\t2310.456\n"
                                     "module\tdm_mod\t2500.000\t-\n"));
        ASSERT_TRUE(strstr(text, "\nunit\tfoyer-timeline-record.service\t5000.000\t-\n"));

        ASSERT_OK(timeline_parse_table(&back, text));
        ASSERT_TRUE(back.recorded_us == 5000123);
        ASSERT_EQ(back.n_events, t.n_events);
        f = open_memstream(&again, &size);
        ASSERT_TRUE(f);
        ASSERT_OK(timeline_write_table(&back, f));
        fclose(f);
        ASSERT_STREQ(again, text);
}

/* A VM boot's record (failure-initrd-journal): PID 1's answer, and the table foyer-timeline made
 * from it; the units' rows of the one are the other's. */
TEST(units_recorded_in_a_vm) {
        _cleanup_(timeline_done) Timeline units = { .recorded_us = TIMELINE_NONE }, table = { .recorded_us = TIMELINE_NONE };
        _cleanup_free_ char *show = data("systemctl-show-vm.txt"), *text = data("table-vm.tsv");
        size_t n = 0;

        ASSERT_OK(timeline_parse_units(&units, show));
        ASSERT_OK(timeline_parse_table(&table, text));
        ASSERT_TRUE(table.recorded_us == 116004275);
        timeline_sort(&units);
        ASSERT_EQ(units.n_events, count(&table, TIMELINE_UNIT));
        ASSERT_TRUE(units.n_events >= 50);
        for (size_t i = 0; i < table.n_events; i++) {
                const TimelineEvent *e = table.events + i;

                if (e->kind != TIMELINE_UNIT)
                        continue;
                ASSERT_STREQ(units.events[n].name, e->name);
                ASSERT_TRUE(units.events[n].start_us == e->start_us);
                ASSERT_TRUE(units.events[n].end_us == e->end_us);
                n++;
        }
        assert_event(&units, TIMELINE_UNIT, "sysroot.mount", 102998773, 112243748);
        /* The recorder itself was still running. */
        assert_event(&units, TIMELINE_UNIT, "foyer-timeline-record.service", 115671162, TIMELINE_NONE);
}

TEST(table_odd_rows) {
        _cleanup_(timeline_done) Timeline t = { .recorded_us = TIMELINE_NONE };

        ASSERT_OK(timeline_parse_table(&t, "kind\tname\tstart_ms\tend_ms\n"
                                           "unit\ta.service\t2.000\t1.000\n"      /* ends before it starts */
                                           "socket\tb.socket\t1.000\t2.000\n"     /* no such kind */
                                           "unit\tc.service\t1.000\n"             /* three fields */
                                           "unit\td.service\t-\t1.000\n"          /* no start */
                                           "module\te\t1.5\t-\t\n"                /* a trailing tab */
                                           "device\t/dev/vda\t3.25\t3.25\n"));
        ASSERT_EQ(t.n_events, 2);
        assert_event(&t, TIMELINE_MODULE, "e", 1500, TIMELINE_NONE);
        assert_event(&t, TIMELINE_DEVICE, "/dev/vda", 3250, 3250);
        ASSERT_TRUE(t.recorded_us == TIMELINE_NONE);
        ASSERT_EQ(timeline_add(&t, TIMELINE_UNIT, "x.service", 5, 4), -EINVAL);
        ASSERT_EQ(timeline_add(&t, _TIMELINE_KIND_MAX, "x.service", 5, 6), -EINVAL);
}

/* What may reach a terminal as it is (src/shared/strv.c, used by the timeline and foyer-explain):
 * printable ASCII and valid UTF-8 text; never a C0 or C1 control or a byte of no valid sequence. */
TEST(printable) {
        static const struct {
                const char *in, *escaped, *replaced;
        } cases[] = {
                { "sysroot.mount", "sysroot.mount", "sysroot.mount" },
                { "systemd-cryptsetup@luks\\x2dab.service", "systemd-cryptsetup@luks\\x2dab.service",
                  "systemd-cryptsetup@luks\\x2dab.service" },                     /* a backslash stays */
                { "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x92\xbe", "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x92\xbe",
                  "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x92\xbe" },                  /* é → 💾 */
                { "\xc2\xa0nbsp \xc2\xbf", "\xc2\xa0nbsp \xc2\xbf", "\xc2\xa0nbsp \xc2\xbf" }, /* U+00A0, U+00BF */
                { "a\x1b[2Jb\x7f\t", "a\\x1b[2Jb\\x7f\\x09", "a [2Jb  " },         /* C0 and DEL */
                { "a\xc2\x9b" "31m", "a\\xc2\\x9b31m", "a  31m" },                  /* U+009B, CSI */
                { "\xc2\x80\xc2\x85\xc2\x9f", "\\xc2\\x80\\xc2\\x85\\xc2\\x9f", "      " }, /* U+0080, NEL, U+009F */
                { "a\x9b" "31mb\x80\x9f", "a\\x9b31mb\\x80\\x9f", "a 31mb  " },     /* raw C1 bytes */
                { "\xc3", "\\xc3", " " },                                           /* cut short by the end */
                { "\xe2\x86", "\\xe2\\x86", "  " },
                { "\xf0\x9f\x92 x", "\\xf0\\x9f\\x92 x", "    x" },
                { "\xc0\xaf\xc1\x9b\xe0\x80\xaf\xf0\x80\x80\xaf", "\\xc0\\xaf\\xc1\\x9b\\xe0\\x80\\xaf\\xf0\\x80\\x80\\xaf",
                  "           " },                                                  /* overlong '/', CSI, '/', '/' */
                { "\xed\xa0\x80\xf4\x90\x80\x80\xf8\xff", "\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80\\xf8\\xff",
                  "         " },                                                    /* surrogate, > U+10FFFF, 0xf8, 0xff */
                { "", "", "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *e = string_escape_unprintable(cases[i].in, 0),
                                    *r = string_escape_unprintable(cases[i].in, ' ');

                ASSERT_STREQ(e, cases[i].escaped);
                ASSERT_STREQ(r, cases[i].replaced);
                ASSERT_TRUE(string_is_printable(e));
                ASSERT_TRUE(string_is_printable(cases[i].in) == streq(cases[i].in, cases[i].escaped));
        }
        ASSERT_EQ(utf8_printable_len("\xc2\x9f"), 0);
        ASSERT_EQ(utf8_printable_len("\xc2\xa0"), 2);
        ASSERT_EQ(utf8_printable_len("\xe2\x86\x92"), 3);
        ASSERT_EQ(utf8_printable_len(""), 0);
}

/* Text of printable characters, newlines and tabs. */
static void assert_printable(const char *text) {
        for (const char *p = text; *p;) {
                size_t n = *p == '\n' || *p == '\t' ? 1 : utf8_printable_len(p);

                if (n == 0)
                        fprintf(stderr, "unprintable byte 0x%02x at %zu\n", (unsigned char) *p, (size_t) (p - text));
                ASSERT_TRUE(n > 0);
                p += n;
        }
}

/* Names with C0 or C1 controls or bytes of no valid UTF-8 sequence, from the initrd's systemctl,
 * udevadm and tracefs or a record file: "foyer timeline" prints none of them raw, in the table or
 * the SVG; valid UTF-8 text stays as it is. */
TEST(unprintable_names) {
        _cleanup_(timeline_done) Timeline t = { .recorded_us = TIMELINE_NONE }, back = { .recorded_us = TIMELINE_NONE };
        _cleanup_free_ char *table = NULL, *svg = NULL, *again = NULL;
        size_t size = 0;
        FILE *f;

        ASSERT_OK(timeline_parse_units(&t, "Id=a\xc2\x9b" "2J.service\nInactiveExitTimestampMonotonic=1000\n"
                                            "ActiveEnterTimestampMonotonic=2000\nInactiveEnterTimestampMonotonic=0\n"));
        ASSERT_OK(timeline_parse_trace(&t, "modprobe-1 [000] ..... 1.500000: module_load: m\x9b" "31m\n"));
        ASSERT_OK(timeline_parse_table(&t, "kind\tname\tstart_ms\tend_ms\n"
                                           "device\t/dev/disk/by-label/caf\xc3\xa9\xe2\x86\x92\t3.000\t-\n"
                                           "device\t/dev/disk/by-label/x\xc0\xaf\xe2\x86\t4.000\t-\n"
                                           "unit\tb\xc2\x85" "c.service\t5.000\t6.000\n"));
        ASSERT_OK(timeline_add(&t, TIMELINE_UNIT, "c\x1b]0;x\x07.service", 7000, TIMELINE_NONE));
        timeline_sort(&t);
        ASSERT_EQ(t.n_events, 6);
        assert_event(&t, TIMELINE_UNIT, "a\\xc2\\x9b2J.service", 1000, 2000);
        assert_event(&t, TIMELINE_MODULE, "m\\x9b31m", 1500000, TIMELINE_NONE);
        assert_event(&t, TIMELINE_DEVICE, "/dev/disk/by-label/caf\xc3\xa9\xe2\x86\x92", 3000, TIMELINE_NONE);
        assert_event(&t, TIMELINE_DEVICE, "/dev/disk/by-label/x\\xc0\\xaf\\xe2\\x86", 4000, TIMELINE_NONE);
        assert_event(&t, TIMELINE_UNIT, "b\\xc2\\x85c.service", 5000, 6000);
        assert_event(&t, TIMELINE_UNIT, "c\\x1b]0;x\\x07.service", 7000, TIMELINE_NONE);

        f = open_memstream(&table, &size);
        ASSERT_TRUE(f);
        ASSERT_OK(timeline_write_table(&t, f));
        fclose(f);
        assert_printable(table);
        ASSERT_TRUE(strstr(table, "\ndevice\t/dev/disk/by-label/caf\xc3\xa9\xe2\x86\x92\t3.000\t-\n"));
        /* The table reads back to itself. */
        ASSERT_OK(timeline_parse_table(&back, table));
        timeline_sort(&back);
        f = open_memstream(&again, &size);
        ASSERT_TRUE(f);
        ASSERT_OK(timeline_write_table(&back, f));
        fclose(f);
        ASSERT_STREQ(again, table);

        f = open_memstream(&svg, &size);
        ASSERT_TRUE(f);
        ASSERT_OK(timeline_write_svg(&t, f));
        fclose(f);
        assert_printable(svg);
        ASSERT_TRUE(strstr(svg, "data-name=\"m\\x9b31m\""));
}

/* The value of attribute name in the element that starts at p ("name=\"VALUE\""), or NULL. */
static char *attr(const char *p, const char *name) {
        _cleanup_free_ char *key = strjoin(" ", name, "=\"");
        const char *end = strchr(p, '>'), *v;

        ASSERT_TRUE(key && end);
        v = strstr(p, key);
        if (!v || v > end)
                return NULL;
        v += strlen(key);
        return strndup(v, strcspn(v, "\""));
}

/* Each bar carries its row's values and sits where the scale puts them. */
TEST(svg) {
        _cleanup_(timeline_done) Timeline t = { .recorded_us = 5000123 };
        _cleanup_free_ char *svg = NULL;
        size_t size = 0, i = 0;
        FILE *f;

        ASSERT_OK(timeline_add(&t, TIMELINE_UNIT, "systemd-journald.service", 2105001, 2310456));
        ASSERT_OK(timeline_add(&t, TIMELINE_DEVICE, "/dev/vda", 3456789, TIMELINE_NONE));
        ASSERT_OK(timeline_add(&t, TIMELINE_UNIT, "a<b>&\"c\".service", 3500000, 3500000));
        ASSERT_OK(timeline_add(&t, TIMELINE_MODULE, "ext4", 4100000, TIMELINE_NONE));
        f = open_memstream(&svg, &size);
        ASSERT_TRUE(f);
        ASSERT_OK(timeline_write_svg(&t, f));
        fclose(f);

        ASSERT_TRUE(startswith(svg, "<?xml"));
        ASSERT_TRUE(endswith(svg, "</svg>\n"));
        ASSERT_TRUE(strstr(svg, "data-px-per-s=\"200\" data-left=\"20\""));
        /* No name goes out unescaped. */
        ASSERT_TRUE(!strstr(svg, "a<b>"));
        ASSERT_TRUE(strstr(svg, "data-name=\"a&lt;b&gt;&amp;&quot;c&quot;.service\""));
        for (const char *p = strstr(svg, "<rect class=\""); p; p = strstr(p + 1, "<rect class=\""), i++) {
                _cleanup_free_ char *kind = attr(p, "data-kind"), *x = attr(p, "x"), *w = attr(p, "width"),
                                    *start = attr(p, "data-start-ms"), *end = attr(p, "data-end-ms");
                char buf[TIMELINE_MS_MAX], want[64];
                const TimelineEvent *e = t.events + i;

                ASSERT_TRUE(i < t.n_events);
                ASSERT_STREQ(kind, timeline_kind_to_string(e->kind));
                ASSERT_STREQ(start, timeline_format_ms(buf, e->start_us));
                ASSERT_STREQ(end, timeline_format_ms(buf, e->end_us));
                snprintf(want, sizeof want, "%.3f", 20 + e->start_us * 200 / 1e6);
                ASSERT_STREQ(x, want);
                snprintf(want, sizeof want, "%.3f",
                         e->end_us == TIMELINE_NONE || (e->end_us - e->start_us) * 200 / 1e6 < 2 ? 2.0 :
                         (e->end_us - e->start_us) * 200 / 1e6);
                ASSERT_STREQ(w, want);
        }
        ASSERT_EQ(i, t.n_events);
}

TEST_MAIN()
