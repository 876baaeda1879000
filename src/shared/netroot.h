/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* dracut's network roots: which root=/netroot= values name one, and the parsers of the NFS, NBD and
 * iSCSI specs. Used by foyer-netroot-generator (which mounts them), foyer-network-generator (which brings
 * the network up for them) and foyer-root-generator (which leaves them alone), so that the three
 * agree on every form. No logging: a bad spec gives -EINVAL and a static reason for the caller's one
 * log line. */

#include <errno.h>
#include <stdbool.h>

typedef enum NetrootKind {
        NETROOT_NONE,   /* no network root: a device, a special form, or nothing */
        NETROOT_NFS,    /* root=nfs:, nfs4:, /dev/nfs, SERVER:/PATH, [V6]:/PATH, /PATH outside /dev */
        NETROOT_NBD,    /* root=nbd:, netroot=nbd: */
        NETROOT_ISCSI,  /* root=iscsi:, netroot=iscsi: */
        NETROOT_DHCP,   /* root=dhcp, root=dhcp6, netroot=dhcp: the root path comes from the DHCP lease */
        _NETROOT_KIND_MAX,
        _NETROOT_KIND_INVALID = -EINVAL,
} NetrootKind;

/* The kind of network root a root= value names (NETROOT_NONE for NULL or anything else). */
NetrootKind netroot_kind_of_root(const char *root);
/* The kind a netroot= value names: only nbd:, iscsi: and dhcp count (dracut ignores netroot= for NFS). */
NetrootKind netroot_kind_of_netroot(const char *netroot);
/* The network root of a command line with these root= and netroot= values (either may be NULL): root='s
 * kind if it names one, else netroot='s, as dracut reads them. *ret_key and *ret_value (each may be
 * NULL) name the parameter it came from: "root" or "netroot", and that parameter's value. */
NetrootKind netroot_kind_of(const char *root, const char *netroot, const char **ret_key, const char **ret_value);
/* "nfs", "nbd", "iscsi", "dhcp" (NULL for NETROOT_NONE). */
const char *netroot_kind_to_string(NetrootKind k);

/* Whether s may go into a unit as part of What=, an option list or an argv word: printable ASCII
 * without blanks, quotes, backslashes, '%' or '$'. extra names more bytes to refuse (may be NULL). */
bool netroot_word_is_safe(const char *s, const char *extra);

typedef struct NfsRoot {
        char *type;     /* "nfs" (v3, dracut's default) or "nfs4" */
        char *server;   /* host name, IPv4 address or [IPv6] address, as mount.nfs takes it */
        char *path;     /* the export, absolute */
        char *options;  /* the spec's options as given (may be NULL) */
} NfsRoot;

/* Parses root= (and nfsroot= for root=/dev/nfs, else NULL) with dracut's rules:
 *   nfs:[SERVER:]/PATH[:OPTIONS]  nfs4:[SERVER:]/PATH[:OPTIONS]  SERVER:/PATH  /dev/nfs + nfsroot=[SERVER:]/PATH[,OPTIONS]
 * (a ',' in the path also starts the options, the kernel's form). rootfstype= nfs4 (or nfs) picks the
 * version of a form without a prefix. Returns 0 and fills *ret (free with nfs_root_done()), -EINVAL with
 * a reason in *ret_error (no server: foyer does not take it from DHCP; no absolute path; a byte that
 * cannot go into a unit), or -ENOMEM. */
int nfs_root_parse(const char *root, const char *nfsroot, const char *rootfstype, NfsRoot *ret,
                   const char **ret_error);
void nfs_root_done(NfsRoot *n);

/* The mount options of an NFS root, dracut's munge_nfs_options(): the spec's options and rootflags=
 * without ro/rw/lock/nolock, then ro (the default) or rw (the spec's, overridden by the command line's
 * ro/rw: rw > 0, ro = 0, none < 0), then for NFSv3 "nolock" (the initrd has no rpc.statd to hand its
 * state over; *ret_dropped_lock is set when a "lock" was dropped), for NFSv4 the lock option given.
 * Returns 0 with a new string, -EINVAL if an option cannot go into a unit, or -ENOMEM. */
int nfs_root_options(const NfsRoot *n, const char *rootflags, int rw, char **ret, bool *ret_dropped_lock);

#define NBD_DEFAULT_PORT "10809"

typedef struct NbdRoot {
        char *server;   /* host name, IPv4 address or [IPv6] address */
        char *port;     /* digits; NBD_DEFAULT_PORT when only an export name is given */
        char *export;   /* the export name (may be NULL: the server's default export) */
        char *fstype;   /* may be NULL: the kernel (and udev's blkid) decide */
        char *options;  /* mount options (may be NULL) */
        char **nbd_opts; /* nbd-client options, one per element (may be NULL) */
} NbdRoot;

/* Parses nbd:SERVER:PORT[:FSTYPE[:OPTIONS[:NBDOPTS]]] (dracut's 74nbd), where PORT may also be an export
 * name (the default port then), PORT/EXPORT or PORT|EXPORT; SERVER may be [IPv6]. Returns as
 * nfs_root_parse(). */
int nbd_root_parse(const char *spec, NbdRoot *ret, const char **ret_error);
void nbd_root_done(NbdRoot *n);

#define ISCSI_DEFAULT_PORT "3260"
/* RFC 3720: an iSCSI name is at most 223 bytes. */
#define ISCSI_TARGET_NAME_MAX 223

typedef struct IscsiRoot {
        char *username, *password;       /* CHAP: the initiator's credentials (both or neither) */
        char *in_username, *in_password; /* mutual CHAP: the target's (both or neither; only with the above) */
        char *server;   /* host name, IPv4 address or [IPv6] address */
        char *port;     /* digits; ISCSI_DEFAULT_PORT when not given */
        char *iface;    /* dracut's iSCSI interface name (may be NULL) */
        char *netdev;   /* dracut's network device (may be NULL) */
        char *lun;      /* digits; "0" when not given */
        char *target;   /* the target name */
} IscsiRoot;

/* Parses dracut's iscsi:[USER:PASS[:RUSER:RPASS]@]SERVER:[PROTOCOL]:[PORT]:[[IFACE:]NETDEV:][LUN]:TARGET
 * (modules.d/95iscsi, net-lib.sh's parse_iscsi_root()): a target name starting with iqn., eui. or naa.
 * is found by that prefix (it may hold ':'); any other is what follows the LUN. The protocol is
 * ignored (TCP), as dracut does. Every field must be safe for a unit (netroot_word_is_safe()), so a
 * CHAP secret cannot hold a blank, a quote, a backslash, '%' or '$' (nor ':' or '@', by the syntax).
 * Returns as nfs_root_parse(). */
int iscsi_root_parse(const char *spec, IscsiRoot *ret, const char **ret_error);
void iscsi_root_done(IscsiRoot *n);
/* --- root=dhcp: the root path from DHCP option 17 ------------------------------------------------ */

/* The value of key in the text of a systemd-networkd DHCPv4 lease file (FOYER_DHCP_LEASES_DIR/IFINDEX:
 * "KEY=VALUE" lines as sd-dhcp-lease's dhcp_lease_save() writes them, ROOT_PATH= from option 17,
 * NEXT_SERVER= from siaddr, SERVER_ADDRESS= from option 54). The first such line counts; the value runs
 * to the end of its line, unquoted. Returns 1 and a new string in *ret, 0 (*ret NULL) when there is no
 * such line or its value is empty, or -ENOMEM. */
int dhcp_lease_get(const char *lease, const char *key, char **ret);

/* The root spec of a DHCP root path, as dracut's netroot.sh reads it: nbd:... and iscsi:... as given,
 * nfs:/nfs4: as given, anything else an NFS SERVER:/PATH (the version from rootfstype=, as for root=).
 * A path without its server (/PATH, nfs:/PATH, nfs4:/PATH) gets server (the lease's next server, else
 * its DHCP server; may be NULL, then it stays without one and nfs_root_parse() refuses it). Returns 0
 * with the spec in *ret and its kind in *ret_kind (NETROOT_NFS, NBD or ISCSI), or -ENOMEM. */
int dhcp_root_path_to_spec(const char *root_path, const char *server, char **ret, NetrootKind *ret_kind);
