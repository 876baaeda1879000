/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What every foyer generator shares: the main() wrapper, and the units and drop-ins systemd 252's
 * src/shared/generator.c writes. Unlike the rest of src/shared these helpers log their errors (once),
 * so callers only propagate the returned negative errno. */

#include <stdio.h>
#include <sys/stat.h>

#include "log.h"
#include "macro.h"
#include "unit-file.h"

/* Set by the main wrapper to the three output directories (all equal when given one). */
extern const char *generator_dest, *generator_dest_early, *generator_dest_late;

/* Runs main() for a generator: accepts one or three directory arguments (else logs "This program takes
 * one or three arguments." and exits 1), sets umask 022, logs to /dev/kmsg at boot and stderr otherwise,
 * honours $SYSTEMD_LOG_LEVEL/$SYSTEMD_LOG_TARGET, and exits 0 iff run() returned >= 0. Then reset()
 * frees the generator's arg_* state and sets it back to its defaults, so that the generator can run
 * again in the same process (the fuzz harness does that). */
int generator_main(int argc, char *argv[],
                   int (*run)(const char *dest, const char *dest_early, const char *dest_late),
                   void (*reset)(void));

/* The program's entry point f(argc, argv): main(), or, when the file is compiled into a fuzz harness
 * with -DFOYER_FUZZ_GENERATOR=NAME, a function NAME so that several generators fit in one program. */
#ifdef FOYER_FUZZ_GENERATOR
int FOYER_FUZZ_GENERATOR(int argc, char *argv[]);
#  define FOYER_DEFINE_MAIN(f)                              \
        int FOYER_FUZZ_GENERATOR(int argc, char *argv[]) { \
                return f(argc, argv);                      \
        }
#else
#  define FOYER_DEFINE_MAIN(f)                 \
        int main(int argc, char *argv[]) {     \
                return f(argc, argv);          \
        }
#endif
#define FOYER_DEFINE_MAIN_GENERATOR(run, reset)                            \
        static int generator_main_wrapper(int argc, char *argv[]) {        \
                return generator_main(argc, argv, (run), (reset));         \
        }                                                                  \
        FOYER_DEFINE_MAIN(generator_main_wrapper)

/* Opens unit name in dir (see unit_file_open()); source (may be NULL) names the input in messages; a duplicate logs "Failed to create unit file ..., as
 * it already exists. Duplicate entry in '<source>'?". */
int generator_open_unit_file(const char *dir, const char *source, const char *name, UnitFile **ret);
/* Opens the unit named after path with suffix (e.g. "/sysroot/home" + ".mount") in dir and returns its
 * name in ret_name as well; logs once on failure. */
int generator_open_unit_for_path(const char *dir, const char *source, const char *path, const char *suffix,
                                 char **ret_name, UnitFile **ret);
/* Commits u (see unit_file_commit()), logging failures with the same duplicate message. */
int generator_commit_unit_file(UnitFile *u, const char *source);
/* unit_file_add_symlink() with logging. */
int generator_add_symlink(const char *dir, const char *target, const char *dep_type, const char *src);
/* Writes "After=blockdev@<escaped what>.target" if what is below /dev/. */
int generator_write_blockdev_dependency(FILE *f, const char *what);
/* Writes the fsck dependencies of a mount of what on where as systemd 252 does: nothing in the initrd
 * for / and /usr, nothing if what is not a device or fsck/fsck.<fstype> is not in $PATH; in the initrd
 * systemd-fsck-root.service (for /sysroot) or systemd-fsck-usr.service (for /sysusr/usr) is written
 * into dir; otherwise systemd-fsck@<what>.service. Adds the Requires=/After= lines to f. */
int generator_write_fsck_deps(FILE *f, const char *dir, const char *what, const char *where,
                              const char *fstype);
/* Handles x-systemd.device-timeout= (and comment=systemd.device-timeout=) in opts: returns the options
 * without them in *ret_filtered and writes <what>.device.d/50-device-timeout.conf if what is a device.
 * Returns 1 if such a drop-in was written, 0 if not, or a negative errno. */
int generator_write_timeouts(const char *dir, const char *what, const char *where, const char *opts,
                             char **ret_filtered);
/* Writes a drop-in <what>.device.d/<level>-<name>.conf setting JobRunningTimeoutSec=<timeout> (used for
 * foyer's rd.timeout=); what must be a device path. */
int generator_write_device_timeout(const char *dir, const char *what, unsigned level, const char *name,
                                   const char *timeout);
/* Writes initrd-root-device.target.d/50-root-device.conf requiring and ordering after what's device. */
int generator_write_initrd_root_device_deps(const char *dir, const char *what);
/* Writes systemd-makefs@<what>.service (format what as type before where's mount) and hooks it into
 * <where>.mount.requires/. A missing or "auto" type is logged and ignored. */
int generator_hook_up_mkfs(const char *dir, const char *what, const char *where, const char *type);
/* Writes systemd-growfs@<where>.service ordered before target (may be NULL) and hooks it into
 * <where>.mount.wants/. */
int generator_hook_up_growfs(const char *dir, const char *where, const char *target);
