/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Network roots: the tools and kernel modules that mount a root over NFS, attach one over NBD, or
 * log in to the iSCSI target that holds it, taken from the tree at Debian's paths. foyer's
 * generators (foyer-netroot-generator) run them; the network itself is plan-network.c's, which puts
 * it in whenever one of these tools is in (Network=auto).
 *
 *   NFS    nfs-common    FOYER_NFS_MOUNT, FOYER_NFS4_MOUNT (its link), /etc/netconfig (libtirpc,
 *                        for NFSv3's portmapper), /etc/protocols (NFSv3's MOUNT call); modules sunrpc, nfs, nfsv3, nfsv4
 *   NBD    nbd-client    FOYER_NBD_CLIENT; module nbd
 *   iSCSI  open-iscsi    FOYER_ISCSISTART; modules iscsi_tcp (libiscsi_tcp, libiscsi,
 *                        scsi_transport_iscsi come with it), iscsi_ibft (iBFT), sd_mod
 *
 * A generic image takes each kind whose tool the tree has, as dracut's generic image takes its
 * network modules: a system with nfs-common installed gets an image that boots an NFS root. A
 * host-only image takes only the kind the host's root (or /usr) is on (hostonly.c found it and
 * required its modules), and then the tool is required, as is the network (Network=no is refused),
 * and the host's iSCSI initiator name comes along. Without the network (Network=no) a generic image
 * takes none. */

#include <assert.h>
#include <unistd.h>

#include "foyer-contract.h"
#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "util.h"

typedef enum NetRootKind {
        NETROOT_NFS,
        NETROOT_NBD,
        NETROOT_ISCSI,
        _NETROOT_KIND_MAX,
} NetRootKind;

typedef struct NetRoot {
        const char *name;
        const char *tool;               /* in the tree: the kind goes in (generic image) */
        const char *package;
        const Item *items;              /* beyond the tool */
        size_t n_items;
        const char *const *modules;
} NetRoot;

static const Item nfs_items[] = {
        { FOYER_NFS4_MOUNT,     NEED_OPTIONAL, "NFSv4 roots (mount -t nfs4)" },
        { "/etc/netconfig",     NEED_OPTIONAL, "libtirpc's transports (NFSv3's portmapper)" },
        /* mount.nfs looks the transport up by name (getprotobyname("tcp")) for NFSv3's MOUNT call:
         * without the file it fails with "Failed to find 'tcp' protocol". */
        { "/etc/protocols",     NEED_OPTIONAL, "mount.nfs's protocol names (NFSv3)" },
};
static const char *const nfs_modules[] = { "sunrpc", "nfs", "nfsv3", "nfsv4", NULL };
static const char *const nbd_modules[] = { "nbd", NULL };
static const char *const iscsi_modules[] = { "iscsi_tcp", "iscsi_ibft", "sd_mod", NULL };

static const NetRoot netroots[_NETROOT_KIND_MAX] = {
        [NETROOT_NFS]   = { "NFS",   FOYER_NFS_MOUNT,   "nfs-common", nfs_items, ELEMENTSOF(nfs_items), nfs_modules },
        [NETROOT_NBD]   = { "NBD",   FOYER_NBD_CLIENT,  "nbd-client", NULL, 0, nbd_modules },
        [NETROOT_ISCSI] = { "iSCSI", FOYER_ISCSISTART,  "open-iscsi", NULL, 0, iscsi_modules },
};

static bool host_needs(const HostStack *host, NetRootKind k) {
        return k == NETROOT_NFS ? host->nfs : k == NETROOT_NBD ? host->nbd : host->iscsi;
}

static int add_netroot(Manifest *m, const NetRoot *n, const char *why) {
        int r;

        r = plan_add_item(m, n->tool, NEED_REQUIRED, why);
        if (r < 0)
                return r;
        return plan_add_items(m, n->items, n->n_items);
}

int plan_netroot(Manifest *m, const BuildConfig *c, const Probe *p) {
        int r;

        assert(m);
        assert(c);
        assert(p);

        for (NetRootKind k = 0; k < _NETROOT_KIND_MAX; k++) {
                const NetRoot *n = &netroots[k];
                _cleanup_free_ char *why = NULL;

                if (p->host) {
                        if (!host_needs(p->host, k)) {
                                log_debug("Host-only: the root is not on %s, leaving out %s.", n->name, n->tool);
                                continue;
                        }
                        if (c->network == NETWORK_NO)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Host-only: this host's root is on %s, "
                                                       "which needs the network, and Network=no (--network=no) "
                                                       "leaves it out.", n->name);
                        if (!plan_tree_has(m, n->tool, X_OK))
                                return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "Host-only: this host's root is on %s, "
                                                       "which needs %s%s, which is not there (Debian package %s).",
                                                       n->name, streq(m->root, "/") ? "" : m->root, n->tool, n->package);
                        why = strjoin("the host's root on ", n->name);
                } else {
                        if (!plan_tree_has(m, n->tool, X_OK)) {
                                log_debug("No %s in the tree (Debian package %s): no %s roots.", n->tool, n->package, n->name);
                                continue;
                        }
                        if (c->network == NETWORK_NO) {
                                log_debug("Network=no: leaving out %s, no %s roots.", n->tool, n->name);
                                continue;
                        }
                        why = strjoin(n->name, " roots (", n->package, " in the tree)");
                }
                if (!why)
                        return log_oom();
                r = add_netroot(m, n, why);
                if (r < 0)
                        return r;
        }
        /* The target's ACL knows this host by its initiator name: the default for rd.iscsi.initiator=. */
        if (p->host && p->host->iscsi && c->network != NETWORK_NO)
                return plan_add_item(m, FOYER_ISCSI_INITIATORNAME, NEED_OPTIONAL, "the host's iSCSI initiator name");
        return 0;
}

int plan_netroot_modules(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted) {
        assert(m);
        assert(c);
        assert(p);
        assert(wanted);

        /* A host-only image: hostonly.c required the root's modules; the rest of the kind's come along
         * (nfsv4 beside nfsv3, iscsi_ibft), as in the generic image. */
        for (NetRootKind k = 0; k < _NETROOT_KIND_MAX; k++) {
                if (!manifest_find(m, netroots[k].tool))
                        continue;
                for (const char *const *mod = netroots[k].modules; *mod; mod++)
                        if (!strv_contains(*wanted, *mod) && strv_extend(wanted, *mod) < 0)
                                return log_oom();
        }
        return 0;
}
