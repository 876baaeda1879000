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

/* Whether the fsck units the fstab generator writes import the fsck.mode/fsck.repair credentials
 * (ImportCredential=fsck.*, systemd 258). */
static inline int systemd_fsck_imports_credentials(void) {
        return systemd_version() >= 258;
}

/* Whether the root and /usr mounts from the kernel command line are ordered after imports.target,
 * where systemd-importd's downloads of the root image finish (systemd 258). */
static inline int systemd_orders_after_imports(void) {
        return systemd_version() >= 258;
}

/* Whether cryptsetup units are ordered after systemd-udevd.service as well as its kernel socket
 * (the first version after 257 foyer follows; 262 writes it, 257 does not). */
static inline int systemd_cryptsetup_after_udevd(void) {
        return systemd_version() >= 258;
}

/* Whether root=bind: adds suid, dev and exec to the bind mount's options unless rootflags= names them
 * (first version after 257 foyer follows; 262 writes them). */
static inline int systemd_root_bind_clears_flags(void) {
        return systemd_version() >= 258;
}

/* Whether mount.usr=gpt-auto leaves initrd-usr-fs.target to sysroot.mount, as no mount.usr= does
 * (first version after 257 foyer follows; 262 does, 257 writes no link). */
static inline int systemd_usr_gpt_auto_is_no_mount(void) {
        return systemd_version() >= 258;
}

/* Whether a key or header file option without a path ("header") gets no RequiresMountsFor= line
 * (first version after 257 foyer follows; 262 writes none, 257 an empty one). */
static inline int systemd_skips_empty_file_dependency(void) {
        return systemd_version() >= 258;
}

/* Whether systemd-gpt-auto-generator follows the last root= (root=gpt-auto after another root=
 * discovers the root) rather than giving up at the first other one (first version after 257 foyer
 * follows; 262 does). */
static inline int systemd_gpt_auto_last_root_wins(void) {
        return systemd_version() >= 258;
}

/* Whether the fstab generator knows x-systemd.validatefs (systemd 258: systemd-validatefs@.service
 * checks the file system's user.validatefs.* attributes against where it is mounted). */
static inline int systemd_knows_validatefs(void) {
        return systemd_version() >= 258;
}
