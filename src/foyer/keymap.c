/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Console keymaps: the target's layout, and compiling one with ckbcomp (keymap.h). */

#include <assert.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "keymap.h"
#include "keymap-name.h"
#include "log.h"
#include "process-util.h"
#include "unit-name.h"
#include "util.h"

#define VCONSOLE_CONF "/etc/vconsole.conf"
#define DEFAULT_KEYBOARD "/etc/default/keyboard"
/* systemd's table of console keymaps and their XKB layouts (keymap layout model variant options). */
#define KBD_MODEL_MAP "/usr/share/systemd/kbd-model-map"

void keymap_spec_done(KeymapSpec *s) {
        free(s->name);
        free(s->layout);
        free(s->variant);
        free(s->model);
        free(s->options);
        free(s->source);
        *s = (KeymapSpec) {};
}

/* The last "KEY=value" of key in an environment-like file (vconsole.conf, default/keyboard: a
 * shell fragment of plain assignments), with one level of quotes removed. Returns 1 with a new
 * string (NULL when the value is empty), 0 if the key is not set, -ENOMEM. */
static int assignment_get(const char *text, const char *key, char **ret) {
        _cleanup_free_ char *value = NULL;
        bool found = false;
        size_t kl = strlen(key);

        for (const char *line = text; line && *line; ) {
                const char *end = strchrnul(line, '\n'), *v = line + strspn(line, " \t");

                if (startswith(v, "export "))
                        v += strlen("export ") + strspn(v + strlen("export "), " \t");
                if (strncmp(v, key, kl) == 0 && v[kl] == '=') {
                        size_t l;

                        v += kl + 1;
                        l = (size_t) (end - v);
                        if (l > 0 && (v[0] == '"' || v[0] == '\'')) {
                                const char *close = memchr(v + 1, v[0], l - 1);

                                l = close ? (size_t) (close - v - 1) : l - 1;
                                v++;
                        } else
                                l = strcspn(v, " \t#\n");
                        free(value);
                        value = l > 0 ? strndup(v, l) : NULL;
                        if (l > 0 && !value)
                                return -ENOMEM;
                        found = true;
                }
                line = *end ? end + 1 : NULL;
        }
        if (!found)
                return 0;
        *ret = TAKE_PTR(value);
        return 1;
}

/* The XKB settings of a file (XKBLAYOUT= and the rest) into s, the name made from the first layout
 * and variant. Returns 1 if a layout is set, 0 if not, -ENOMEM. */
static int spec_from_xkb(const char *text, const char *source, KeymapSpec *ret) {
        _cleanup_(keymap_spec_done) KeymapSpec s = {};
        size_t l, v;

        if (assignment_get(text, "XKBLAYOUT", &s.layout) < 0 ||
            assignment_get(text, "XKBVARIANT", &s.variant) < 0 ||
            assignment_get(text, "XKBMODEL", &s.model) < 0 ||
            assignment_get(text, "XKBOPTIONS", &s.options) < 0)
                return -ENOMEM;
        if (isempty(s.layout))
                return 0;
        l = strcspn(s.layout, ",");
        v = s.variant ? strcspn(s.variant, ",") : 0;
        s.name = malloc(l + 1 + v + 1);
        s.source = strdup(source);
        if (!s.name || !s.source)
                return -ENOMEM;
        memcpy(s.name, s.layout, l);
        s.name[l] = '\0';
        if (v > 0) {
                s.name[l] = '-';
                memcpy(s.name + l + 1, s.variant, v);
                s.name[l + 1 + v] = '\0';
        }
        *ret = s;
        s = (KeymapSpec) {};
        return 1;
}

/* A field of kbd-model-map: "-" stands for none. */
static int model_map_field(const char *f, char **ret) {
        if (streq(f, "-")) {
                *ret = NULL;
                return 0;
        }
        *ret = strdup(f);
        return *ret ? 0 : -ENOMEM;
}

int keymap_spec_from_name(const char *root, const char *name, const char *source, KeymapSpec *ret) {
        _cleanup_(keymap_spec_done) KeymapSpec s = {};
        _cleanup_free_ char *map = NULL;
        int r;

        assert(root);
        assert(source);
        assert(ret);

        /* The generator looks up only names of this form (the same function): build no other. */
        if (!keymap_name_is_valid(name)) {
                _cleanup_free_ char *shown = name ? cescape(name) : NULL;

                log_warning("%s: keymap \"%s\" is no keymap name (letters, digits and -_.+), leaving it out.",
                            source, shown ?: "");
                return -EINVAL;
        }
        s.name = strdup(name);
        s.source = strdup(source);
        if (!s.name || !s.source)
                return log_oom();

        r = read_tree_file(root, KBD_MODEL_MAP, &map, NULL);
        if (r < 0)
                return r;
        for (char *line = map, *next; line && *line; line = next) {
                _cleanup_strv_free_ char **f = NULL;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (line[0] == '#')
                        continue;
                r = strv_split(line, " \t", &f);
                if (r < 0)
                        return log_oom();
                if (strv_length(f) < 5 || !streq(f[0], name))
                        continue;
                if (model_map_field(f[1], &s.layout) < 0 || model_map_field(f[2], &s.model) < 0 ||
                    model_map_field(f[3], &s.variant) < 0 || model_map_field(f[4], &s.options) < 0)
                        return log_oom();
                log_debug("Keymap %s is XKB layout %s%s%s (%s).", name, strempty(s.layout),
                          s.variant ? " variant " : "", strempty(s.variant), KBD_MODEL_MAP);
                break;
        }
        if (!s.layout) {
                s.layout = strdup(name);
                if (!s.layout)
                        return log_oom();
        }
        *ret = s;
        s = (KeymapSpec) {};
        return 0;
}

int keymap_target_read(const char *root, KeymapSpec *ret) {
        _cleanup_free_ char *vconsole = NULL, *keyboard = NULL, *keymap = NULL;
        int r;

        assert(root);
        assert(ret);

        r = read_tree_file(root, VCONSOLE_CONF, &vconsole, NULL);
        if (r < 0)
                return r;
        if (vconsole) {
                if (assignment_get(vconsole, "KEYMAP", &keymap) < 0)
                        return log_oom();
                if (!isempty(keymap)) {
                        r = keymap_spec_from_name(root, keymap, VCONSOLE_CONF, ret);
                        if (r == -EINVAL)
                                return 0;       /* warned */
                        return r < 0 ? r : 1;
                }
                r = spec_from_xkb(vconsole, VCONSOLE_CONF, ret);
                if (r != 0)
                        return r < 0 ? log_oom() : 1;
        }
        r = read_tree_file(root, DEFAULT_KEYBOARD, &keyboard, NULL);
        if (r < 0)
                return r;
        if (keyboard) {
                r = spec_from_xkb(keyboard, DEFAULT_KEYBOARD, ret);
                if (r != 0)
                        return r < 0 ? log_oom() : 1;
        }
        log_debug("Neither %s nor %s sets a console layout.", VCONSOLE_CONF, DEFAULT_KEYBOARD);
        return 0;
}

/* The first line of a file descriptor's content that contains what, as a new string; NULL if none. */
static char *fd_find_line(int fd, const char *what) {
        _cleanup_free_ char *text = NULL;
        const char *hit, *start, *end;

        if (read_full_fd_from_start(fd, &text, NULL) < 0)
                return NULL;
        hit = strstr(text, what);
        if (!hit)
                return NULL;
        for (start = hit; start > text && start[-1] != '\n'; start--)
                ;
        end = strchrnul(hit, '\n');
        return strndup(start, (size_t) (end - start));
}

int keymap_compile(const KeymapSpec *s, char **ret_text, char **ret_reason) {
        _cleanup_free_ char *ckbcomp = NULL, *text = NULL, *unknown = NULL;
        _cleanup_close_ int out = -EBADF, err = -EBADF;
        const char *argv[16];
        size_t n = 0, size;
        int r, status;

        assert(s);
        assert(s->layout);
        assert(ret_text);
        assert(ret_reason);

        *ret_reason = NULL;
        r = find_executable("ckbcomp", &ckbcomp);
        if (r < 0) {
                *ret_reason = strdup("ckbcomp is not installed (Debian package console-setup)");
                return r;
        }
        out = memfd_create("ckbcomp-keymap", MFD_CLOEXEC);
        err = memfd_create("ckbcomp-messages", MFD_CLOEXEC);
        if (out < 0 || err < 0)
                return log_error_errno(errno, "Failed to create a memory file for ckbcomp: %m");

        /* -compact: only the modifier combinations the layout uses (a tenth of the full table). */
        argv[n++] = "ckbcomp";
        argv[n++] = "-compact";
        argv[n++] = "-layout";
        argv[n++] = s->layout;
        if (s->variant) {
                argv[n++] = "-variant";
                argv[n++] = s->variant;
        }
        if (s->model) {
                argv[n++] = "-model";
                argv[n++] = s->model;
        }
        if (s->options) {
                argv[n++] = "-option";
                argv[n++] = s->options;
        }
        argv[n] = NULL;

        r = spawn_and_wait(ckbcomp, (char **) argv, &(SpawnOptions) { .stdout_fd = out, .stderr_fd = err },
                           &status);
        if (r < 0)
                return log_error_errno(r, "Failed to run %s: %m", ckbcomp);
        /* An unknown layout fails; an unknown variant only gives a warning and the plain layout. */
        unknown = fd_find_line(err, "Can not find");
        if (!wait_status_ok(status) || unknown) {
                *ret_reason = unknown ? TAKE_PTR(unknown) : strdup("ckbcomp failed");
                return -EINVAL;
        }
        r = read_full_fd_from_start(out, &text, &size);
        if (r < 0)
                return log_error_errno(r, "Failed to read ckbcomp's output: %m");
        if (size == 0 || !strstr(text, "keycode")) {
                *ret_reason = strdup("ckbcomp printed no keymap");
                return -EINVAL;
        }
        *ret_text = TAKE_PTR(text);
        return 0;
}
