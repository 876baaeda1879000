/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* foyer-explain's blocks for a root on the network (src/shared/netroot.h says which roots are): why the
 * NFS mount or the NBD connection failed, from what mount.nfs or nbd-client logged, and why the network
 * did not come up, from systemd-networkd's state files. Only the shared library is used here, so that
 * the parsers can be fuzzed on their own (test/fuzz/fuzz-netexplain.c). */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "netroot.h"

/* What the log of a failed network-root client says went wrong. */
typedef enum NetrootCause {
        NETROOT_CAUSE_UNKNOWN,          /* nothing this knows: the log is quoted as it is */
        NETROOT_CAUSE_EXPORT,           /* the server answered and refused the export (missing, not exported to us) */
        NETROOT_CAUSE_REFUSED,          /* nothing listens on the server's port */
        NETROOT_CAUSE_UNREACHABLE,      /* no answer: the server or the route to it is not there */
        NETROOT_CAUSE_NO_NETWORK,       /* this machine has no address or route to send from */
        NETROOT_CAUSE_VERSION,          /* the server does not speak this NFS version or transport */
        _NETROOT_CAUSE_MAX,
} NetrootCause;

/* The cause named by one line of mount.nfs's or nbd-client's output (as journalctl -o cat prints it):
 * "mount.nfs4: mounting 10.0.2.2:/srv/missing failed, reason given by server: No such file or directory",
 * "mount.nfs: access denied by server while mounting 10.0.2.2:/missing", "mount.nfs4: Connection refused",
 * "Error: Unknown export name", "Error: Socket failed: Connection timed out", ...: NETROOT_CAUSE_UNKNOWN
 * for any other line. */
NetrootCause netroot_cause_of_line(const char *line);

/* The cause in a log (an array of lines, log_tail_parse()'s), from its last line that names one; with
 * *ret_line (may be NULL) set to that line's index, or to the number of lines if none does. */
NetrootCause netroot_cause_of_log(char * const *log, size_t *ret_line);

/* One failed network root, as the kernel command line gave it. */
typedef struct NetrootFailure {
        NetrootKind kind;       /* NETROOT_NFS or NETROOT_NBD */
        const char *given;      /* "root=nfs4:10.0.2.2:/srv/root:port=2049", as written */
        const char *server;     /* "10.0.2.2" */
        const char *port;       /* NBD: the port; NFS: NULL (part of options) */
        const char *export;     /* NFS: the path; NBD: the export name (NULL: the server's default) */
        const char *options;    /* NFS: the spec's options (may be NULL) */
        const char *unit;       /* the unit that failed: sysroot.mount, foyer-nbd-root.service */
        const char *result;     /* its Result= ("exit-code", "timeout"; may be NULL) */
        bool network_down;      /* the network block was written before this one */
} NetrootFailure;

/* Writes the block for a failed network root: the server and what was asked of it, the end of the
 * client's log (its lines as log_tail_parse() made them; may be NULL or empty), what the cause found in
 * it means, and where to read more. Returns 0 or a negative errno. */
int explain_netroot_failure(FILE *f, const NetrootFailure *n, char * const *log);

/* One network interface and what systemd-networkd made of it. */
typedef struct NetLink {
        char *name;             /* "enp0s2" */
        int ifindex;
        char *admin_state;      /* networkd's ADMIN_STATE= (configuring, configured, unmanaged, failed, ...);
                                 * NULL if networkd wrote no state for it */
        char *oper_state;       /* OPER_STATE= (no-carrier, carrier, degraded, routable, ...); NULL as above */
        char *address;          /* the DHCPv4 lease's address, or NULL */
        bool has_lease;         /* networkd holds a DHCPv4 lease for it (DHCP_LEASE= in its state) */
} NetLink;

void net_link_done(NetLink *l);
/* Frees an array of n links and the array itself; NULL-safe. */
void net_links_free(NetLink *l, size_t n);

/* Parses networkd's state file of one link (/run/systemd/netif/links/IFINDEX: "KEY=VALUE" lines, '#'
 * comments) into l's admin_state, oper_state and has_lease; values with unprintable bytes are taken
 * escaped (string_escape_unprintable()). Returns 0 or -ENOMEM. */
int net_link_state_parse(const char *text, NetLink *l);
/* The ADDRESS= of a DHCP lease file (/run/systemd/netif/leases/IFINDEX): 0 and a new string (NULL if
 * there is none), or -ENOMEM. */
int net_lease_address_parse(const char *text, char **ret);

/* Lists the interfaces in sys_net (normally /sys/class/net) but the loopback, in name order, each with
 * what netif_dir (normally /run/systemd/netif) holds for it (links/IFINDEX, leases/IFINDEX). Returns 0
 * and a new array, or a negative errno (sys_net could not be read, out of memory). */
int net_links_list(const char *sys_net, const char *netif_dir, NetLink **ret, size_t *ret_n);

/* Whether a link got what a network root needs: an address networkd configured (ADMIN_STATE=configured
 * with OPER_STATE=routable or degraded). */
bool net_link_is_up(const NetLink *l);

/* Writes the block for a network that did not come up for a network root: unit is the unit that says so
 * (systemd-networkd-wait-online.service, or NULL when none failed and the links say it), result its
 * Result=, given the root as written, then each link with its state and what that means. Returns 0 or a
 * negative errno. */
int explain_no_network(FILE *f, const char *unit, const char *result, const char *given, const NetLink *links,
                       size_t n);
