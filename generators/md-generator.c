/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-md-generator: dracut's rd.md=, rd.md.uuid= and rd.md.conf= for mdadm's own udev rules.
 *
 * The image runs mdadm's udev rules unchanged: 64-md-raid-assembly.rules runs "mdadm --incremental"
 * for each RAID member that appears, and starts mdadm-last-resort@.timer for an array that is
 * runnable but degraded. The stock rule says how to limit what it assembles: mdadm.conf's AUTO line
 * and its ARRAY lines. Every mdadm in the image reads its mdadm.conf through a symlink to
 * <normal dir>/foyer-md/mdadm.conf (FOYER_MDADM_CONF_TARGET), which this generator writes at every
 * boot:
 *   no parameters   the image's mdadm.conf (FOYER_MDADM_IMAGE_CONF, the tree's) as it is;
 *   rd.md=0         "AUTO -all" and nothing else: no array is assembled (mdadm only assembles
 *                   what an ARRAY line names once auto-assembly is off, and there are none);
 *   rd.md.uuid=U    "AUTO -all" and one "ARRAY UUID=U" per array: only those are assembled; the
 *                   image's ARRAY and AUTO lines are commented out (two ARRAY lines for one array
 *                   would make mdadm refuse it, and the others must not be assembled), the rest of
 *                   it (HOMEHOST, DEVICE, POLICY, ...) stays;
 *   rd.md.conf=0    the image's mdadm.conf is left out.
 * mdadm honours the first AUTO line only, so "AUTO -all" comes before anything copied.
 *
 * rd.md.uuid= takes the array UUID in any of the spellings dracut accepts: 32 hex digits, with '-' or
 * ':' anywhere (mdadm's 8:8:8:8, blkid's 8-4-4-4-12). Anything else is logged and ignored. Unlike
 * dracut, arrays are assembled without rd.auto=1 when no rd.md.uuid= is given (as lvm2 autoactivates
 * here without rd.lvm.*): see docs/kernel-command-line.md. */

#include <ctype.h>
#include <errno.h>
#include <strings.h>

#include "cmdline.h"
#include "fileio.h"
#include "foyer-contract.h"
#include "generator.h"
#include "parse-util.h"
#include "strv.h"
#include "unit-file.h"
#include "unit-name.h"

static bool arg_enabled = true;
static bool arg_use_conf = true;
static char **arg_uuids = NULL;

/* The one place that frees the arg_* state and sets it back to its defaults (run by generator_main()). */
static void reset_args(void) {
        strv_free(arg_uuids);
        arg_uuids = NULL;
        arg_enabled = true;
        arg_use_conf = true;
}

/* Returns the UUID as mdadm writes it (xxxxxxxx:xxxxxxxx:xxxxxxxx:xxxxxxxx, lower case), or -EINVAL
 * if value is not 32 hex digits with '-' and ':' between them. The result holds nothing but hex
 * digits and ':', so it goes into mdadm.conf as it is. */
static int md_uuid_normalize(const char *value, char **ret) {
        char out[32 + 3 + 1];
        size_t n = 0, o = 0;

        assert(value);
        assert(ret);

        for (const char *p = value; *p; p++) {
                if (*p == '-' || *p == ':')
                        continue;
                if (!isxdigit((unsigned char) *p) || n >= 32)
                        return -EINVAL;
                if (n > 0 && n % 8 == 0)
                        out[o++] = ':';
                out[o++] = (char) tolower((unsigned char) *p);
                n++;
        }
        if (n != 32)
                return -EINVAL;
        out[o] = '\0';

        char *s = strdup(out);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static int parse_cmdline_item(const char *key, const char *value, void *data) {
        int r;

        if (streq(key, "md")) {
                r = value ? parse_boolean(value) : 1;
                if (r < 0)
                        log_warning("Failed to parse rd.md=%s, ignoring.", value);
                else
                        arg_enabled = r;
        } else if (streq(key, "md.conf")) {
                r = value ? parse_boolean(value) : 1;
                if (r < 0)
                        log_warning("Failed to parse rd.md.conf=%s, ignoring.", value);
                else
                        arg_use_conf = r;
        } else if (streq(key, "md.uuid")) {
                _cleanup_free_ char *uuid = NULL;

                if (cmdline_value_missing("rd.md.uuid", value))
                        return 0;
                r = md_uuid_normalize(value, &uuid);
                if (r == -ENOMEM)
                        return log_oom();
                if (r < 0) {
                        _cleanup_free_ char *shown = cescape(value);

                        log_warning("Ignoring rd.md.uuid=%s, not an MD array UUID (32 hex digits).", shown ?: "?");
                        return 0;
                }
                if (strv_contains(arg_uuids, uuid)) {
                        log_debug("Skipping duplicate rd.md.uuid=%s.", value);
                        return 0;
                }
                if (strv_consume(&arg_uuids, TAKE_PTR(uuid)) < 0)
                        return log_oom();
        }
        return 0;
}

/* As mdadm reads mdadm.conf (conf_word(), match_keyword()): an entry starts at a line that does not
 * start with white space; its first word is the keyword, matched without case and abbreviated to no
 * less than three letters; lines that start with white space continue it, also after blank and
 * comment lines; '#' starts a comment. */
static bool conf_line_is_keyword(const char *line, const char *keyword) {
        size_t n = strcspn(line, " \t#");

        return n >= 3 && n <= strlen(keyword) && strncasecmp(line, keyword, n) == 0;
}

/* Whether line (n bytes, without its newline) may be copied: the file is checked like a unit when it
 * is committed (no control character but tab, no trailing backslash), and one bad line would make
 * generator_commit_unit_file() refuse all of it, the "AUTO -all" and ARRAY lines of rd.md.uuid= with
 * it. A NUL is a control character too (read_full_file() keeps it). */
static bool conf_line_is_safe(const char *line, size_t n) {
        return unit_file_check_text(line, n, NULL) >= 0;
}

/* Copies the image's mdadm.conf into f. With only_auto_off, the ARRAY and AUTO entries (with their
 * continuation lines) are copied as comments. A missing file is no error: the tree had none. A line
 * that is not safe (above) is left out with a warning naming the file and line (foyer build refuses
 * such a file, so only an image made otherwise has one), and the rest of its entry is copied as
 * comments: without its first line, a continuation line would continue the entry before it, and
 * without a continuation line, the entry would say less than it did. */
static int copy_image_conf(FILE *f, bool only_auto_off) {
        const char *path = secure_getenv("FOYER_MDADM_IMAGE_CONF") ?: FOYER_MDADM_IMAGE_CONF;
        _cleanup_free_ bool *bad_entry = NULL;
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ size_t *entry_of = NULL;
        size_t size = 0, n_lines = 0, n_entries = 0;
        bool commenting = false;
        int r;

        r = read_full_file(path, &text, &size);
        if (r == -ENOENT) {
                log_debug("%s does not exist, the image has no mdadm.conf of its own.", path);
                fprintf(f, "# The image has no mdadm.conf of its own (%s).\n", path);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", path);

        /* The lines, NUL-terminated in place (a NUL inside one shows as a line shorter than its
         * length, which conf_line_is_safe() was given). */
        for (size_t i = 0; i < size; i++)
                if (text[i] == '\n')
                        n_lines++;
        if (size > 0 && text[size - 1] != '\n')
                n_lines++;
        entry_of = calloc(MAX(n_lines, (size_t) 1), sizeof(size_t));
        bad_entry = calloc(n_lines + 1, sizeof(bool));
        if (!entry_of || !bad_entry)
                return log_oom();

        /* First pass: which entry each line belongs to (0: none yet), and which entries hold a bad line. */
        for (size_t i = 0, l = 0; i < size; l++) {
                const char *line = text + i, *nl = memchr(line, '\n', size - i);
                size_t n = nl ? (size_t) (nl - line) : size - i;
                size_t ws = strspn(line, " \t");
                bool blank = ws >= n || line[ws] == '#';

                if (!blank && ws == 0)
                        n_entries++;
                entry_of[l] = n_entries;
                if (!conf_line_is_safe(line, n)) {
                        bad_entry[n_entries] = true;
                        log_warning("%s:%zu: a control character or a trailing backslash; leaving this line out, and the rest of its entry commented out.",
                                    path, l + 1);
                }
                i += n + 1;
        }

        fprintf(f, "# The image's mdadm.conf (%s)%s:\n", path,
                only_auto_off ? ", with its ARRAY and AUTO lines commented out for rd.md.uuid=" : "");
        for (size_t i = 0, l = 0; i < size; l++) {
                char *line = text + i, *nl = memchr(line, '\n', size - i);
                size_t n = nl ? (size_t) (nl - line) : size - i;

                i += n + 1;
                if (!conf_line_is_safe(line, n)) {
                        fprintf(f, "#foyer: line %zu left out: a control character or a trailing backslash\n", l + 1);
                        continue;
                }
                line[n] = '\0';
                bool blank = line[strspn(line, " \t")] == '\0' || line[strspn(line, " \t")] == '#';

                /* A blank or comment line neither starts nor ends an entry, and needs no '#'. */
                if (only_auto_off && !blank && !isspace((unsigned char) *line))
                        commenting = conf_line_is_keyword(line, "ARRAY") || conf_line_is_keyword(line, "AUTO");
                bool left_out = entry_of[l] > 0 && bad_entry[entry_of[l]];
                fprintf(f, "%s%s\n", (commenting || left_out) && !blank ? "#foyer: " : "", line);
        }
        return 0;
}

static int write_mdadm_conf(const char *dest) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        FILE *f;
        int r;

        assert(dest);

        r = generator_open_unit_file(dest, "/proc/cmdline", FOYER_MDADM_CONF, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);

        /* generator_open_unit_file() wrote the "Automatically generated" header. */
        fputs("# mdadm.conf for the initrd, read through " FOYER_MDADM_CONF_LINK ".\n", f);
        if (!arg_enabled) {
                fputs("# rd.md=0: no array is assembled.\nAUTO -all\n", f);
                return generator_commit_unit_file(u, "/proc/cmdline");
        }
        if (!strv_isempty(arg_uuids)) {
                fputs("# rd.md.uuid=: only these arrays are assembled.\nAUTO -all\n", f);
                STRV_FOREACH(uuid, arg_uuids)
                        fprintf(f, "ARRAY UUID=%s\n", *uuid);
        }
        if (!arg_use_conf)
                fputs("# rd.md.conf=0: the image's mdadm.conf is ignored.\n", f);
        else {
                r = copy_image_conf(f, !strv_isempty(arg_uuids));
                if (r < 0)
                        return r;
        }
        return generator_commit_unit_file(u, "/proc/cmdline");
}

static int run(const char *dest, const char *dest_early, const char *dest_late) {
        int r;

        assert(dest);

        r = cmdline_parse(parse_cmdline_item, NULL, CMDLINE_STRIP_RD_PREFIX | CMDLINE_RD_STRICT);
        if (r < 0)
                log_warning_errno(r, "Failed to parse the kernel command line, ignoring: %m");

        return write_mdadm_conf(dest);
}

FOYER_DEFINE_MAIN_GENERATOR(run, reset_args);
