/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Resume from hibernation (resume=, resume_offset=, resumeflags=, noresume), with the tree's own
 * systemd pieces rather than a generator of foyer's: systemd-hibernate-resume-generator, the unit it
 * pulls in, and systemd-hibernate-resume, which that unit runs (plan_unit_programs adds it from the
 * unit's ExecStart=, and the closure check fails the build if the tree lacks it). The image follows
 * its tree, whose generator and unit belong together:
 *
 *  - systemd 252 (bookworm): the generator links sysinit.target.wants/
 *    systemd-hibernate-resume@<device>.service to the template, which runs
 *    "systemd-hibernate-resume <device>"; that writes only MAJ:MIN to /sys/power/resume. A swap
 *    file's resume_offset= reaches the kernel without it: the kernel reads resume_offset= from its
 *    own command line, and uses it when /sys/power/resume is written.
 *  - newer systemd (trixie's 257): the generator enables the one systemd-hibernate-resume.service,
 *    with a drop-in that binds it to the device; the program reads resume= and resume_offset= (and
 *    the HibernateLocation EFI variable) itself and writes /sys/power/resume_offset before
 *    /sys/power/resume.
 *
 * Both generators do nothing for "noresume", and give the device no job timeout: systemd waits for
 * a resume device as long as it takes. Both units are Before=local-fs-pre.target, and every fsck
 * and mount of the root is after it (systemd-fsck-root.service as the root generator writes it,
 * sysroot.mount by its default dependencies), so the image is loaded, or found not to be there,
 * before the root is touched. A resume device inside LUKS or on an LV needs nothing more: the
 * device unit the resume unit binds to is the one foyer-crypt-generator's unit or LVM's udev
 * activation makes appear. The compressor of an image written with hibernate.compressor=lz4 is a
 * module, in plan_default_modules. */

#include <assert.h>

#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "util.h"

#define RESUME_GENERATOR "/usr/lib/systemd/system-generators/systemd-hibernate-resume-generator"

/* The resume units of the two generations, in the order they are looked for. */
static const char *const resume_units[] = {
        "systemd-hibernate-resume.service",     /* newer systemd: one unit, a drop-in names the device */
        "systemd-hibernate-resume@.service",    /* systemd 252: one instance per device */
};

int plan_resume(Manifest *m, const BuildConfig *c) {
        _cleanup_free_ char *generator = NULL;
        int r;

        assert(m);
        assert(c);

        r = path_in_root(m->root, RESUME_GENERATOR, false, &generator);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0 || access(generator, X_OK) < 0) {
                /* A systemd built without hibernation support (-Dhibernate=false) has none. */
                log_info("%s%s is not there: the image will not resume from hibernation.",
                         streq(m->root, "/") ? "" : m->root, RESUME_GENERATOR);
                return 0;
        }

        for (size_t i = 0; i < ELEMENTSOF(resume_units); i++) {
                _cleanup_free_ char *unit = strjoin(UNITDIR "/", resume_units[i]), *in_tree = NULL;

                if (!unit)
                        return log_oom();
                r = path_in_root(m->root, unit, false, &in_tree);
                if (r == -ENOMEM)
                        return log_oom();
                if (r < 0 || access(in_tree, F_OK) < 0)
                        continue;

                r = plan_add_item(m, RESUME_GENERATOR, NEED_REQUIRED, "resume=");
                if (r < 0)
                        return r;
                return plan_add_item(m, unit, NEED_REQUIRED, "resume= (systemd-hibernate-resume-generator)");
        }

        /* A generator whose unit is missing would enable a unit that does not exist: resume= would
         * be ignored at boot without a word. */
        return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                               "%s%s is there, but neither %s nor %s is in %s%s: the tree's systemd is incomplete.",
                               streq(m->root, "/") ? "" : m->root, RESUME_GENERATOR,
                               resume_units[0], resume_units[1], streq(m->root, "/") ? "" : m->root, UNITDIR);
}
