/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-vconsole-generator: the console keymap, loaded before any passphrase prompt.
 *
 * systemd's vconsole.keymap= and dracut's rd.vconsole.keymap= name the keymap (the last one given
 * counts); without either, KEYMAP= of the image's vconsole.conf (FOYER_VCONSOLE_CONF, the build's
 * layout) does. The keymap must be one the image holds, compiled at build time
 * (FOYER_KEYMAP_DIR/NAME.map, foyer build --add-keymap=NAME): one it does not hold is logged and the
 * image's own layout is loaded instead, so that a typo on the command line does not leave a user with
 * a layout they did not ask for. The chosen keymap gets FOYER_KEYMAP_SERVICE, in sysinit.target's
 * wants, which runs loadkeys before systemd's password agents and cryptsetup-pre.target, so before
 * any prompt. Debian's systemd (252 and 257) has no systemd-vconsole-setup to do this.
 *
 * Only the keymap is handled: vconsole.keymap_toggle=, vconsole.font= and the rest are ignored. */

#include <unistd.h>

#include "cmdline.h"
#include "fileio.h"
#include "foyer-contract.h"
#include "generator.h"
#include "keymap-name.h"
#include "strv.h"
#include "unit-name.h"

static char *arg_keymap = NULL;

/* The one place that frees the arg_* state and sets it back to its defaults (run by generator_main()). */
static void reset_args(void) {
        free(arg_keymap);
        arg_keymap = NULL;
}

static int parse_cmdline_item(const char *key, const char *value, void *data) {
        if (!streq(key, "vconsole.keymap"))
                return 0;
        if (cmdline_value_missing(key, value))
                return 0;
        return free_and_strdup(&arg_keymap, value) < 0 ? log_oom() : 0;
}

/* The path of keymap name in the image, or NULL (with *ret 0) if the image does not hold it. Only
 * names the builder could have compiled a keymap for are looked up (keymap_name_is_valid(), the same
 * rule), so the path stays in the directory and is one word of ExecStart= that needs no quoting. */
static int keymap_path(const char *name, char **ret) {
        const char *dir = secure_getenv("FOYER_KEYMAP_DIR") ?: FOYER_KEYMAP_DIR;
        _cleanup_free_ char *path = NULL;

        *ret = NULL;
        if (!keymap_name_is_valid(name))
                return 0;
        path = strjoin(dir, "/", name, FOYER_KEYMAP_SUFFIX);
        if (!path)
                return log_oom();
        if (access(path, R_OK) < 0)
                return 0;
        *ret = TAKE_PTR(path);
        return 0;
}

/* KEYMAP= of the image's vconsole.conf (NULL: none). */
static int image_keymap(char **ret) {
        const char *path = secure_getenv("FOYER_VCONSOLE_CONF") ?: FOYER_VCONSOLE_CONF;
        _cleanup_free_ char *text = NULL;
        char *value = NULL;
        int r;

        *ret = NULL;
        r = read_full_file(path, &text, NULL);
        if (r == -ENOENT) {
                log_debug("%s does not exist: the image has no console layout of its own.", path);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", path);
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (startswith(line, "KEYMAP=") && free_and_strdup(&value, line + strlen("KEYMAP=")) < 0)
                        return log_oom();
        }
        *ret = value;
        return 0;
}

static int write_keymap_service(const char *dest, const char *name, const char *path) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        FILE *f;
        int r;

        r = generator_open_unit_file(dest, "/proc/cmdline", FOYER_KEYMAP_SERVICE, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);
        fprintf(f,
                "[Unit]\n"
                "Description=Console keymap %s\n"
                "Documentation=man:foyer-kernel-command-line(7)\n"
                "DefaultDependencies=no\n"
                "ConditionPathExists=/dev/tty1\n"
                "Before=sysinit.target cryptsetup-pre.target\n"
                "Before=systemd-ask-password-console.service systemd-ask-password-wall.service\n"
                "\n[Service]\n"
                "Type=oneshot\n"
                "RemainAfterExit=yes\n"
                "ExecStart=" FOYER_LOADKEYS " -q -C /dev/tty1 -u %s\n",
                name, path);
        r = generator_commit_unit_file(u, "/proc/cmdline");
        if (r < 0)
                return r;
        return generator_add_symlink(dest, "sysinit.target", "wants", FOYER_KEYMAP_SERVICE);
}

static int run(const char *dest, const char *dest_early, const char *dest_late) {
        _cleanup_free_ char *fallback = NULL, *path = NULL;
        const char *name = NULL;
        int r;

        assert(dest);

        r = cmdline_parse(parse_cmdline_item, NULL, CMDLINE_STRIP_RD_PREFIX);
        if (r < 0)
                log_warning_errno(r, "Failed to parse the kernel command line, ignoring: %m");
        r = image_keymap(&fallback);
        if (r < 0)
                return r;

        if (arg_keymap) {
                r = keymap_path(arg_keymap, &path);
                if (r < 0)
                        return r;
                if (path)
                        name = arg_keymap;
                else {
                        _cleanup_free_ char *shown = cescape(arg_keymap);

                        log_warning("vconsole.keymap=%s: the image holds no such keymap (foyer build "
                                    "--add-keymap adds one); %s%s.", shown ?: "?",
                                    fallback ? "loading the image's own, " : "keeping the kernel's keymap",
                                    strempty(fallback));
                }
        }
        if (!name && fallback) {
                r = keymap_path(fallback, &path);
                if (r < 0)
                        return r;
                if (!path) {
                        log_warning("The keymap %s of %s is not in the image, keeping the kernel's keymap.",
                                    fallback, FOYER_VCONSOLE_CONF);
                        return 0;
                }
                name = fallback;
        }
        if (!name) {
                log_debug("No keymap to load.");
                return 0;
        }
        return write_keymap_service(dest, name, path);
}

FOYER_DEFINE_MAIN_GENERATOR(run, reset_args);
