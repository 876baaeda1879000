/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The image's systemd, as the builder recorded it in FOYER_SYSTEMD_VERSION_PATH (foyer-contract.h):
 * its version, which the generators follow where that version's own generators write something
 * else, and the paths its units name. Read once, on first use. Without the file (an image of an
 * older foyer, or a generator run by hand) the values are those of systemd 252 as foyer was built
 * for it (meson's rootlibexecdir). $FOYER_SYSTEMD_VERSION_FILE names another file (for tests). */

/* Forgets what was read, so that the next call reads the file again (the generators' fuzz harness runs
 * one input as 252 and the next as 257, in one process). */
void systemd_version_forget(void);

/* The version number, e.g. 252 or 257. */
unsigned systemd_version(void);

/* systemd's libexec directory as its units spell it: "/lib/systemd" (Debian 12) or
 * "/usr/lib/systemd" (Debian 13). Unit files are under its "system/" subdirectory. */
const char *systemd_libexec_dir(void);

/* systemd-cryptsetup: LIBEXECDIR/systemd-cryptsetup, or /usr/bin/systemd-cryptsetup from 256 on. */
const char *systemd_cryptsetup_path(void);

/* umount as the version's units name it: ROOTBINDIR/umount (252: "/bin/umount"), "/usr/bin/umount"
 * from 255 on (upstream dropped split-usr, so UMOUNT_PATH is always under /usr). */
const char *systemd_umount_path(void);

/* Whether a key or header file that may fail gets WantsMountsFor= instead of RequiresMountsFor=
 * and nofail counts as "may fail" (systemd-cryptsetup-generator from 256 on). */
static inline int systemd_wants_mounts_for(void) {
        return systemd_version() >= 256;
}

/* Whether the image's systemd ships systemd-growfs@.service, systemd-growfs-root.service and the
 * systemd-pcrfs units, which its generators link instead of writing a growfs unit (257; 252 has none). */
static inline int systemd_ships_growfs_units(void) {
        return systemd_version() >= 257;
}

/* The value that means "no timeout" in TimeoutSec= and JobTimeoutSec=: "0" (252), "infinity" (257). */
const char *systemd_timeout_infinity(void);

/* Whether the version writes an empty line before the dependencies of the units it generates
 * (257's generator_write_fsck_deps, cryptsetup units): the line breaks of its output follow it. */
static inline int systemd_writes_dependency_gap(void) {
        return systemd_version() >= 257;
}
