/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What every foyer generator shares: the main() wrapper, and the units and drop-ins systemd 252's
 * src/shared/generator.c writes. Unlike the rest of src/shared these helpers log their errors (once),
 * so callers only propagate the returned negative errno. */

#include <stdio.h>
#include <sys/stat.h>

#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "unit-file.h"

/* Set by the main wrapper to the three output directories (all equal when given one). */
extern const char *generator_dest, *generator_dest_early, *generator_dest_late;

/* Runs main() for a generator: accepts one or three directory arguments (else logs "This program takes
 * one or three arguments." and exits 1), sets umask 022, logs to /dev/kmsg at boot and stderr otherwise,
 * honours $SYSTEMD_LOG_LEVEL/$SYSTEMD_LOG_TARGET, calls run() only in the initrd (in_initrd(); elsewhere
 * it logs at debug level and exits 0), and exits 0 iff run() returned >= 0. Then reset()
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

/* Opens unit name in dir (see unit_file_open()); source (may be NULL, then "n/a") names the input in
 * messages: a duplicate logs "Failed to create unit file ..., as it already exists. Duplicate entry in
 * '<source>'?". */
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
/* Writes the fsck dependencies of a mount of what on where as systemd 252 does. Nothing in the initrd
 * for / and /usr, nothing if what is not a device or fsck or fsck.<fstype> is not in $PATH (or is a
 * link to true or /dev/null). Outside the initrd, / only gets the link
 * local-fs.target.wants/systemd-fsck-root.service in dir and no lines in f. Otherwise f gets
 * "Requires=" ("Wants=" for /usr outside the initrd) and "After=" the check: in the initrd
 * systemd-fsck-root.service (for /sysroot) or systemd-fsck-usr.service (for /sysusr/usr), written
 * into dir here; else the stock systemd-fsck@<what>.service. */
int generator_write_fsck_deps(FILE *f, const char *dir, const char *what, const char *where,
                              const char *fstype);
/* The options that set how long a device may take to appear, in the order systemd 252 looks for them. */
#define DEVICE_TIMEOUT_OPTIONS "comment=systemd.device-timeout\0x-systemd.device-timeout\0"

/* The one parser of timeout options (x-systemd.device-timeout=, x-systemd.mount-timeout=): looks up
 * the options named in filter (NUL-separated, see mount_options_filter()) in opts. Returns 1 with the
 * last value as written in *ret_value and parsed by parse_sec_fix_0() in *ret_usec (both may be NULL);
 * 0 if no such option is there, or if its value does not parse (logged as 252 does: "Failed to parse
 * timeout for <where>, ignoring: <value>"); -ENOMEM (logged). ret_filtered (may be NULL) receives opts
 * without those options whenever the return value is not negative. */
int generator_parse_timeout_option(const char *opts, const char *filter, const char *where,
                                   char **ret_value, usec_t *ret_usec, char **ret_filtered);
/* The one writer of timeout drop-ins: <unit>.d/<level>-<name>.conf holding "# Automatically generated
 * by <program>", header_tail (may be NULL) at the end of that line, an empty line, "[Unit]" and
 * "<key>=<value>". header_tail is there for systemd 252's own headers, which foyer's output matches
 * byte for byte: a second comment line naming the fstab options, or the lone trailing space of the
 * keyfile-timeout= drop-in. Logs failures. */
int generator_write_timeout_dropin(const char *dir, const char *unit, unsigned level, const char *name,
                                   const char *header_tail, const char *key, const char *value);
/* Handles DEVICE_TIMEOUT_OPTIONS in opts: returns the options without them in *ret_filtered (may be
 * NULL) and writes <what>.device.d/50-device-timeout.conf (JobRunningTimeoutSec=) if what is a device.
 * Returns 1 if such a drop-in was written, 0 if not, or a negative errno. */
int generator_write_timeouts(const char *dir, const char *what, const char *where, const char *opts,
                             char **ret_filtered);
/* Writes initrd-root-device.target.d/50-root-device.conf requiring and ordering after what's device. */
int generator_write_initrd_root_device_deps(const char *dir, const char *what);
/* Writes systemd-makefs@<what>.service (format what as type before where's mount) and hooks it into
 * <where>.mount.requires/. A missing or "auto" type is logged and ignored. */
int generator_hook_up_mkfs(const char *dir, const char *what, const char *where, const char *type);
/* Writes systemd-growfs@<where>.service ordered before target (may be NULL) and hooks it into
 * <where>.mount.wants/ (252); from 257 on links the image's systemd-growfs@.service instance (for /:
 * systemd-growfs-root.service) there instead, with a drop-in ordering target after it. */
int generator_hook_up_growfs(const char *dir, const char *where, const char *target);
/* 257's measurement of a mounted file system: the image's systemd-pcrfs@.service instance (for /:
 * systemd-pcrfs-root.service) in <where>.mount.wants/, target (may be NULL) ordered after it. */
int generator_hook_up_pcrfs(const char *dir, const char *where, const char *target);
/* 258's x-systemd.validatefs: the image's systemd-validatefs@.service instance for where in
 * <where>.mount.wants/, target (may be NULL) ordered after it. */
int generator_hook_up_validatefs(const char *dir, const char *where, const char *target);

/* Runs systemctl (or $FOYER_SYSTEMCTL, for the tests) with args (a NULL-terminated list of at most 6)
 * and waits for it, for a generator's second mode that runs as a unit (systemd-sysroot-fstab-check,
 * foyer-dhcp-root): 0, or an error logged naming the command. */
int generator_systemctl(const char *const *args);
