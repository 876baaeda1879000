/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The image follows the tree: from the units plan-base.c and foyer put in, the units they need
 * and the programs they run are read from the tree itself, so a tree of another systemd version
 * gets that version's units and helpers (systemd-executor from 255 on, systemd-cryptsetup in
 * /usr/bin from 256 on) instead of a list written for 252.
 *
 * Hard dependencies (Requires=, Requisite=, BindsTo=, OnFailure=, OnSuccess=, Upholds=, .requires/)
 * are followed always: a unit without them fails. Soft ones (Wants=, .wants/) only into units that
 * declare themselves for the initrd (ConditionPathExists=/etc/initrd-release): sysinit.target
 * wants some thirty units of the real root (ldconfig, sysusers, firstboot, random-seed, ...), and an
 * image that took them all would be a copy of the host's boot. What systemd finds missing of a
 * Wants= it skips. */

#include <assert.h>

#include "log.h"
#include "plan.h"
#include "plan-shell.h"
#include "plan-util.h"
#include "unit-info.h"
#include "util.h"

/* Unit names of the image: the files and links directly in UNITDIR. */
static int image_units(Manifest *m, char ***ret) {
        for (size_t i = 0; i < m->n_entries; i++) {
                const char *name = startswith(m->entries[i]->path, UNITDIR "/");

                if (!name || strchr(name, '/') || m->entries[i]->type == ENTRY_DIRECTORY)
                        continue;
                if (strv_extend(ret, name) < 0)
                        return log_oom();
        }
        return 0;
}

static int add_unit(Manifest *m, const char *name, const char *why, char ***queue) {
        _cleanup_free_ char *file = NULL, *path = NULL, *reason = NULL;
        const char *at = strchr(name, '@'), *dot = strrchr(name, '.');
        int r;

        if (at && dot && dot > at + 1) {
                _cleanup_free_ char *prefix = strndup(name, at - name + 1);

                file = prefix ? strjoin(prefix, dot) : NULL;
        } else
                file = strdup(name);
        path = file ? strjoin(UNITDIR "/", file) : NULL;
        reason = strjoin("stock unit, ", why);
        if (!path || !reason)
                return log_oom();
        r = manifest_add_from_root(m, path, reason, NULL);
        if (r < 0 && r != -EEXIST)
                return log_error_errno(r, "Failed to add %s: %m", path);
        log_debug("Added %s (%s).", path, why);
        return strv_extend(queue, name) < 0 ? log_oom() : 0;
}

int plan_pid1(Manifest *m, const BuildConfig *c) {
        assert(m);
        assert(c);

        /* First of all: a tree without systemd is named as such, not by the first unit it lacks. */
        return plan_add_item(m, "/usr/lib/systemd/systemd", NEED_REQUIRED, "PID 1");
}

/* Adds the units name depends on (deps) that the image lacks and the tree has. A hard dependency
 * always comes in; a soft one (Wants=) only when it is an initrd unit, which keeps the host's
 * sysinit.target.wants out of the image. What the tree lacks is left to the closure check. */
static int follow_dependencies(Manifest *m, const char *name, char * const *deps, bool soft, char ***queue) {
        int r;

        assert(m);
        assert(name);
        assert(queue);

        STRV_FOREACH(d, deps) {
                _cleanup_(unit_info_done) UnitInfo dep = {};
                _cleanup_free_ char *why = NULL;

                if (strchr(*d, '%') || unit_in_image(m, *d))
                        continue;
                r = unit_info_read(m, *d, &dep);
                if (r < 0)
                        return r;
                if (!dep.found)
                        continue;       /* the closure check names it */
                if (soft && !dep.initrd_only) {
                        log_debug("%s wants %s, which is not an initrd unit; left out.", name, *d);
                        continue;
                }
                why = strjoin(soft ? "initrd unit wanted by " : "required by ", name);
                if (!why)
                        return log_oom();
                r = add_unit(m, *d, why, queue);
                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_unit_deps(Manifest *m, const BuildConfig *c) {
        _cleanup_strv_free_ char **queue = NULL, **seen = NULL;
        int r;

        assert(m);
        assert(c);

        r = image_units(m, &queue);
        if (r < 0)
                return r;

        for (size_t i = 0; queue && queue[i]; i++) {
                _cleanup_(unit_info_done) UnitInfo u = {};
                _cleanup_free_ char *name = strdup(queue[i]);

                if (!name)
                        return log_oom();
                if (strv_contains(seen, name))
                        continue;
                if (strv_extend(&seen, name) < 0)
                        return log_oom();
                r = unit_info_read(m, name, &u);
                if (r < 0)
                        return r;

                r = follow_dependencies(m, name, u.hard, false, &queue);
                if (r < 0)
                        return r;
                r = follow_dependencies(m, name, u.soft, true, &queue);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The programs of every unit in the image, whoever put the unit there. What is missing is left to
 * the closure check, which names the unit. */
int plan_unit_programs(Manifest *m, const BuildConfig *c) {
        _cleanup_strv_free_ char **units = NULL;
        int r;

        assert(m);
        assert(c);

        r = image_units(m, &units);
        if (r < 0)
                return r;
        STRV_FOREACH(n, units) {
                _cleanup_(unit_info_done) UnitInfo u = {};

                r = unit_info_read(m, *n, &u);
                if (r < 0)
                        return r;
                STRV_FOREACH(x, u.exec) {
                        const char *prog = strchr(*x, '=') + 1;

                        prog += *prog == '-';
                        _cleanup_free_ char *path = NULL, *why = NULL;

                        if (unit_program_find(m, prog, &path) < 0)
                                continue;
                        /* --no-shell: emergency.service's sulogin shell stays out; the debug
                         * generator turns the shell units off at boot. */
                        if (plan_shell_excludes(c, path))
                                continue;
                        if (manifest_resolve(m, path))
                                continue;       /* foyer's own programs, already in */
                        why = strjoin(*n, " ", *x);
                        if (!why)
                                return log_oom();
                        r = plan_add_item(m, path, NEED_OPTIONAL, why);
                        if (r < 0)
                                return r;
                }
        }

        /* From systemd 255 on PID 1 starts every service through it; older trees have none. */
        return plan_add_item(m, "/usr/lib/systemd/systemd-executor", NEED_OPTIONAL, "service execution (systemd >= 255)");
}
