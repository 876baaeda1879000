/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Host-only images: what the running system boots from, read from the kernel's own view of it.
 * The root, /usr and the swaps (/proc/self/mountinfo and /proc/swaps, through libmount) are
 * followed through sysfs: a partition to its disk, a dm or md device through its slaves/ to the
 * devices below, and each device up its parents to the root of /sys/devices, collecting the driver
 * bound to each (its module link) and the modalias of each. dm devices say what they are in
 * dm/uuid (CRYPT-LUKS*, CRYPT-VERITY-*, LVM-), md arrays in md/level; a LUKS volume's ciphers come from its
 * header. A root (or /usr) on the network is recognised: an NFS mount (its file system type), an NBD
 * device (nbdN), a disk below an iSCSI session (sysfs' iscsi_session). With a LUKS volume, the keyboards (input devices that can send Enter) are followed the
 * same way, for the passphrase prompt.
 *
 * $FOYER_SYSFS, $FOYER_PROCFS and $FOYER_DEVFS replace /sys, /proc and /dev for tests. */

#include <stdbool.h>

typedef struct HostStack {
        /* Modules that must exist for the kernel of the image (as module or built in), by name or
         * alias, each with what needs it: needed[i] names what needs required[i]. */
        char **required;
        char **needed;
        /* Names and aliases that are taken when the kernel has them (modaliases, drivers whose
         * module is not known, the swap's drivers, keyboards, dm targets). */
        char **wanted;
        char **filesystems;     /* file system types of the root and /usr */
        char **devices;         /* the block devices visited, for the log */
        bool usr;               /* /usr is a mount of its own */
        bool dm, lvm, crypt, md;
        bool verity;            /* a dm-verity volume (dm/uuid CRYPT-VERITY-*) */
        bool keyboard;          /* a keyboard's drivers are in wanted */
        /* The root or /usr is on network storage: an NFS mount, an NBD device, a disk of an iSCSI
         * session. Its modules are in required; plan-netroot.c adds the tool, plan-network.c the network
         * and the drivers of the host's network interfaces. */
        bool nfs, nbd, iscsi;
        char **luks_tokens;     /* the systemd token types of the LUKS2 headers ("systemd-tpm2") */
} HostStack;

/* Reads the host's storage stack. Returns 1 with *ret filled, or 0 when the devices are not
 * those of this host or not present (root is not "/", /proc/self/mountinfo has no "/", the root
 * is on no block device sysfs knows): the reason is logged at notice level, and the caller builds
 * the generic image. < 0 on errors. */
int hostonly_probe(const char *root, HostStack *ret);
void host_stack_done(HostStack *s);

/* The kernel crypto API names of a dm-crypt cipher specification ("aes-xts-plain64",
 * "aes-cbc-essiv:sha256", "capi:xts(aes)-plain64"), as module aliases ("crypto-aes", "crypto-xts",
 * "crypto-xts(aes)", "crypto-essiv", "crypto-sha256"), appended to *l. */
int hostonly_cipher_aliases(const char *spec, char ***l);

/* The "encryption" values of a LUKS1 or LUKS2 header (the data segments' and the keyslots' areas,
 * which libcryptsetup decrypts through the kernel's AF_ALG), appended to *l. Returns 0, or
 * -EMEDIUMTYPE if the data is not a LUKS header. */
int hostonly_luks_ciphers(const char *header, size_t size, char ***l);

/* The systemd token types ("systemd-tpm2", "systemd-fido2", "systemd-pkcs11") of a LUKS2 header's
 * "tokens", appended to *l without duplicates: the unlocking the volume was enrolled for. Returns 0
 * (LUKS1 has no tokens), or -EMEDIUMTYPE if the data is not a LUKS header. */
int hostonly_luks_tokens(const char *header, size_t size, char ***l);
