/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <inttypes.h>

#include "explain.h"
#include "fileio.h"
#include "macro.h"
#include "strv.h"

/* Unit names as they can be typed into the shell: escaped names (systemd-cryptsetup@luks\x2d….service)
 * in single quotes, which unit names never contain (callers check other words for them). */
static const char *shell_word(const char *unit, char buf[static 512]) {
        if (strpbrk(unit, "\\$`\"'!*?[]{}()<>|&;~# ") && strlen(unit) < 510) {
                snprintf(buf, 512, "'%s'", unit);
                return buf;
        }
        return unit;
}

static void print_details(FILE *f, const char *unit) {
        char buf[512];
        const char *w = shell_word(unit, buf);

        fprintf(f, "  Details: journalctl -b -u %s; systemctl status %s\n", w, w);
}

/* The spec and the path come from the kernel command line or fstab: C0 and C1 controls and bytes of
 * no valid UTF-8 sequence are shown as \xNN, never sent to the console as they are. */
static int escape_spec(const MissingDevice *m, char **ret_given, char **ret_path) {
        _cleanup_free_ char *given = string_escape_unprintable(m->given, 0),
                            *path = string_escape_unprintable(m->path, 0);

        if (!given || !path)
                return -ENOMEM;
        *ret_given = TAKE_PTR(given);
        *ret_path = TAKE_PTR(path);
        return 0;
}

int explain_missing_device(FILE *f, const MissingDevice *m, const BlockDevice *devs, size_t n) {
        _cleanup_free_ char *given = NULL, *path = NULL;

        assert(f);
        assert(m);

        if (escape_spec(m, &given, &path) < 0)
                return -ENOMEM;
        if (m->vanished)
                fprintf(f, "The %s device disappeared: %s (%s)\n", m->role, given, m->source);
        else
                fprintf(f, "The %s device did not appear: %s (%s)\n", m->role, given, m->source);
        fprintf(f, "  Waited for: %s\n", path);
        if (n == 0)
                fprintf(f, "  Block devices present: none\n");
        else
                fprintf(f, "  Block devices present (%zu):\n", n);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *line = NULL;

                if (block_device_format(&devs[i], &line) < 0)
                        return -ENOMEM;
                fprintf(f, "    %s\n", line);
        }
        if (m->vanished)
                fprintf(f, "  It was there earlier in this boot (%s was plugged) and went away before it was\n"
                           "  used: its disk was removed, or failed (see journalctl -b -k).\n", m->vanished);
        else
                fprintf(f, "  If the device is listed under other identifiers, correct %.*s= on the kernel command line;\n"
                           "  if it is not listed, its disk or driver is missing (foyer build --add-module MODULE).\n",
                        (int) strcspn(given, "="), given);
        print_details(f, m->unit);
        return fflush_and_check(f);
}

int explain_late_device(FILE *f, const MissingDevice *m, uint64_t appeared_usec, const char *timeout) {
        _cleanup_free_ char *given = NULL, *path = NULL;

        assert(f);
        assert(m);

        if (escape_spec(m, &given, &path) < 0)
                return -ENOMEM;
        fprintf(f, "The %s device appeared too late: %s (%s)\n", m->role, given, m->source);
        fprintf(f, "  Waited for: %s", path);
        if (!isempty(timeout))
                fprintf(f, " for %s", timeout);
        if (appeared_usec > 0)
                fprintf(f, "; it came %" PRIu64 ".%01" PRIu64 " s after the kernel started",
                        appeared_usec / 1000000, appeared_usec / 100000 % 10);
        fprintf(f, ".\n"
                   "  The boot gave up on it before it came. Allow more time with rd.timeout=SECONDS on the\n"
                   "  kernel command line (or x-systemd.device-timeout= in fstab), or see what delayed it.\n");
        print_details(f, m->unit);
        return fflush_and_check(f);
}

int explain_corrupted_device(FILE *f, const MissingDevice *m, const char *volume) {
        _cleanup_free_ char *given = NULL, *path = NULL, *v = NULL;

        assert(f);
        assert(m);
        assert(volume);

        if (escape_spec(m, &given, &path) < 0 || !(v = string_escape_unprintable(volume, 0)))
                return -ENOMEM;
        fprintf(f, "The %s device is there, but its data is corrupted: %s (%s)\n", m->role, given, m->source);
        fprintf(f, "  It is the dm-verity volume /dev/mapper/%s, whose blocks do not match the root hash (below):\n"
                   "  its file system cannot be read, so the device never became ready for the mount. Waiting\n"
                   "  longer will not help.\n", v);
        print_details(f, m->unit);
        return fflush_and_check(f);
}

/* The end of a unit's own log, already made printable (log_tail_parse()). */
static void print_log(FILE *f, const char *unit, const char *who, char * const *log) {
        size_t n = strv_length(log);

        if (n == 0)
                return;
        fprintf(f, "  %s said (the last %zu line%s of %s's log):\n", who, n, n == 1 ? "" : "s", unit);
        for (char * const *l = log; *l; l++)
                fprintf(f, "    %s\n", *l);
}

int explain_failed_unit(FILE *f, const char *unit, FailureKind kind, const char *result, const char *what,
                        char * const *log) {
        _cleanup_free_ char *suffix = NULL, *shown = NULL;

        assert(f);
        assert(unit);

        /* what is a mount's What=, from the command line or fstab: printed as escape_spec() does. */
        if (what) {
                shown = string_escape_unprintable(what, 0);
                if (!shown)
                        return -ENOMEM;
                what = shown;
        }
        if (!isempty(what) && !isempty(result))
                suffix = strjoin(" (", what, ", result: ", result, ")");
        else if (!isempty(what) || !isempty(result))
                suffix = strjoin(" (", !isempty(what) ? "" : "result: ", !isempty(what) ? what : result, ")");
        else
                suffix = strdup("");
        if (!suffix)
                return -ENOMEM;

        switch (kind) {
        case FAILURE_FSCK:
                fprintf(f, "The file system check failed: %s%s\n", unit, suffix);
                print_log(f, unit, "fsck", log);
                fprintf(f, "  The file system has errors fsck did not repair on its own: run fsck %s\n"
                           "  from this shell, then leave the shell to retry the boot.\n",
                        !isempty(what) ? what : "on it");
                break;
        case FAILURE_UNLOCK: {
                _cleanup_free_ char *volume = NULL;
                char buf[512];
                const char *name = NULL;

                fprintf(f, "Unlocking an encrypted volume failed: %s%s\n", unit, suffix);
                /* The mapping name is the one the unit would have made; if it cannot be said safely,
                 * the placeholder stays. */
                if (cryptsetup_unit_volume(unit, &volume) >= 0 && !isempty(volume) && !strchr(volume, '\'') &&
                    string_is_printable(volume))
                        name = shell_word(volume, buf);
                /* Not "systemctl restart": the console's password agent is stopped in emergency mode,
                 * while cryptsetup asks on the terminal itself. */
                fprintf(f, "  A wrong passphrase, a missing key file or a missing cipher module.\n"
                           "  Unlock by hand: cryptsetup open %s %s, then exit to resume the boot.\n",
                        !isempty(what) ? what : "DEVICE", name ?: "NAME");
                break;
        }
        case FAILURE_MOUNT:
                fprintf(f, "Mounting failed: %s%s\n", unit, suffix);
                fprintf(f, "  Check the file system type and options (rootfstype=, rootflags=, /etc/fstab).\n");
                break;
        default:
                fprintf(f, "A unit failed: %s%s\n", unit, suffix);
                break;
        }
        print_details(f, unit);
        return fflush_and_check(f);
}

int verity_message_parse(const char *message, char **ret_devnum, char **ret_what) {
        _cleanup_free_ char *devnum = NULL, *what = NULL;
        const char *p;
        unsigned maj, min;
        unsigned long long block;
        int n = 0;

        assert(message);
        assert(ret_devnum);
        assert(ret_what);

        p = startswith(message, "device-mapper: verity: ");
        if (!p)
                return 0;
        /* The data device, as format_dev_t() writes it. */
        if (sscanf(p, "%u:%u%n", &maj, &min, &n) != 2 || p[n] != ':' || p[n + 1] != ' ')
                return 0;
        devnum = strndup(p, n);
        p += n + 2;
        if (!devnum)
                return -ENOMEM;
        /* Only the corruption messages: not "Invalid root digest", table errors and the like, which
         * fail the setup (a unit failure of its own) rather than reads. */
        n = 0;
        if ((sscanf(p, "data block %llu is corrupted%n", &block, &n) == 1 ||
             sscanf(p, "metadata block %llu is corrupted%n", &block, &n) == 1) && n > 0 && p[n] == 0)
                what = strdup(p);
        else if (streq(p, "reached maximum errors"))
                what = strdup(p);
        else
                return 0;
        if (!what)
                return -ENOMEM;
        *ret_devnum = TAKE_PTR(devnum);
        *ret_what = TAKE_PTR(what);
        return 1;
}

int explain_verity_corruption(FILE *f, const char *volume, const char *node, const char *devnum, const char *what) {
        _cleanup_free_ char *v = NULL, *d = NULL;

        assert(f);
        assert(devnum);
        assert(what);

        /* Names from sysfs, printed as the other blocks print what they did not write themselves. */
        if (volume && !(v = string_escape_unprintable(volume, 0)))
                return -ENOMEM;
        if (node && !(d = string_escape_unprintable(node, 0)))
                return -ENOMEM;
        fprintf(f, "dm-verity found corrupted data: %s%s (data device %s%s%s%s): %s\n",
                v ? "/dev/mapper/" : "", v ?: "a verity device",
                d ? "/dev/" : "", d ?: devnum, d ? ", " : "", d ? devnum : "", what);
        fprintf(f, "  The device's blocks do not match its root hash: the disk was changed or is damaged, or the\n"
                   "  root hash is not this disk's. Reads of those blocks fail; rewrite the image, or check it with\n"
                   "  veritysetup verify DATA HASH ROOTHASH.\n"
                   "  Details: dmesg | grep 'device-mapper: verity'\n");
        return fflush_and_check(f);
}
