/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fileio.h"
#include "macro.h"
#include "netroot-explain.h"
#include "parse-util.h"
#include "strv.h"

/* What mount.nfs (nfs-utils' mount_error() and the kernel's errno text) and nbd-client print, matched
 * without case, most specific first: "Network is unreachable" before "unreachable". */
static const struct {
        const char *phrase;
        NetrootCause cause;
} cause_phrases[] = {
        /* ENOENT for NFSv4 ("reason given by server: No such file or directory"), EACCES for v3 and
         * v4 ("access denied by server while mounting"), EPERM from an export that refuses us. */
        { "reason given by server",                     NETROOT_CAUSE_EXPORT },
        { "access denied by server",                    NETROOT_CAUSE_EXPORT },
        { "No such file or directory",                  NETROOT_CAUSE_EXPORT },
        { "Permission denied",                          NETROOT_CAUSE_EXPORT },
        { "Operation not permitted",                    NETROOT_CAUSE_EXPORT },
        /* nbd-client: NBD_REP_ERR_UNKNOWN ("Export not found"), or an old server's "unknown export". */
        { "Export not found",                           NETROOT_CAUSE_EXPORT },
        { "unknown export",                             NETROOT_CAUSE_EXPORT },
        { "export unknown",                             NETROOT_CAUSE_EXPORT },
        { "Connection refused",                         NETROOT_CAUSE_REFUSED },
        { "Network is unreachable",                     NETROOT_CAUSE_NO_NETWORK },
        { "Cannot assign requested address",            NETROOT_CAUSE_NO_NETWORK },
        { "Connection timed out",                       NETROOT_CAUSE_UNREACHABLE },
        { "timed out",                                  NETROOT_CAUSE_UNREACHABLE },
        { "No route to host",                           NETROOT_CAUSE_UNREACHABLE },
        { "Host is unreachable",                        NETROOT_CAUSE_UNREACHABLE },
        { "Name or service not known",                  NETROOT_CAUSE_UNREACHABLE },
        { "Protocol not supported",                     NETROOT_CAUSE_VERSION },
        { "requested NFS version or transport protocol is not supported", NETROOT_CAUSE_VERSION },
        { "Program not registered",                     NETROOT_CAUSE_VERSION },
};

NetrootCause netroot_cause_of_line(const char *line) {
        if (!line)
                return NETROOT_CAUSE_UNKNOWN;
        for (size_t i = 0; i < ELEMENTSOF(cause_phrases); i++)
                if (strcasestr(line, cause_phrases[i].phrase))
                        return cause_phrases[i].cause;
        return NETROOT_CAUSE_UNKNOWN;
}

NetrootCause netroot_cause_of_log(char * const *log, size_t *ret_line) {
        size_t n = strv_length(log);

        /* The last word is the one that counts: mount.nfs retries temporary errors and says the
         * final one last. */
        for (size_t i = n; i > 0; i--) {
                NetrootCause c = netroot_cause_of_line(log[i - 1]);

                if (c != NETROOT_CAUSE_UNKNOWN) {
                        if (ret_line)
                                *ret_line = i - 1;
                        return c;
                }
        }
        if (ret_line)
                *ret_line = n;
        return NETROOT_CAUSE_UNKNOWN;
}

/* What a cause means, for each kind of root: one or more lines, each starting with two blanks. export and
 * given are the escaped ones (given's parameter name is quoted from it). */
static void print_cause(FILE *f, const NetrootFailure *n, NetrootCause cause, const char *export, const char *given) {
        bool nfs = n->kind == NETROOT_NFS;

        switch (cause) {
        case NETROOT_CAUSE_EXPORT:
                if (nfs)
                        fprintf(f, "  The server answered and refused the export: %s does not exist there, or is not\n"
                                   "  exported to this machine. Check the path in %.*s= against the server's exports\n"
                                   "  (exportfs -v on the server, or its nfs-ganesha EXPORT blocks).\n",
                                export, (int) strcspn(given, "="), given);
                else
                        fprintf(f, "  The server answered and has no %s%s. Check the name in %.*s=\n"
                                   "  against the server's exports (nbd-client -l SERVER lists them).\n",
                                isempty(export) ? "default export" : "export named ", export,
                                (int) strcspn(given, "="), given);
                break;
        case NETROOT_CAUSE_REFUSED:
                fprintf(f, "  The server's address answered, but nothing listens on the %s port: the %s server is\n"
                           "  not running there, or the port in %.*s= is not its port.\n",
                        nfs ? "NFS" : "NBD", nfs ? "NFS" : "NBD", (int) strcspn(given, "="), given);
                break;
        case NETROOT_CAUSE_UNREACHABLE:
                fprintf(f, "  The server did not answer: it is down, its address is wrong, or the network does not\n"
                           "  reach it (a missing route or gateway, a firewall that drops the packets).\n");
                break;
        case NETROOT_CAUSE_NO_NETWORK:
                fprintf(f, "  This machine had no address or route to reach the server from: the network did\n"
                           "  not come up%s.\n", n->network_down ? " (above)" : "");
                break;
        case NETROOT_CAUSE_VERSION:
                fprintf(f, "  The server does not offer this NFS version or transport: try nfs: (NFSv3) or\n"
                           "  nfs4: in root=, or vers= among its options.\n");
                break;
        default:
                if (streq_ptr(n->result, "timeout"))
                        /* mount.nfs retries a refused or unanswered connection for two minutes, and
                         * says nothing when systemd stops it first. */
                        fprintf(f, "  No answer came before the time limit ran out: the server is unreachable, or\n"
                                   "  does not answer on its port (%s retries until it is stopped).\n",
                                nfs ? "mount.nfs" : "nbd-client");
                else if (n->network_down)
                        fprintf(f, "  The network did not come up (above): that comes first.\n");
                else
                        fprintf(f, "  Check the server, the %s and the options in %.*s=.\n",
                                nfs ? "export" : "port and export name", (int) strcspn(given, "="), given);
                break;
        }
}

static void print_details(FILE *f, const char *unit) {
        /* The units named here are plain (sysroot.mount, foyer-nbd-root.service): no quoting. */
        fprintf(f, "  Details: journalctl -b -u %s; systemctl status %s\n", unit, unit);
}

int explain_netroot_failure(FILE *f, const NetrootFailure *n, char * const *log) {
        _cleanup_free_ char *given = NULL, *server = NULL, *port = NULL, *export = NULL, *options = NULL;
        const char *tool = n->kind == NETROOT_NFS ? "mount.nfs" : "nbd-client";
        size_t nlog = strv_length(log);
        NetrootCause cause;

        assert(f);
        assert(n);
        assert(n->kind == NETROOT_NFS || n->kind == NETROOT_NBD);
        assert(n->given);
        assert(n->server);
        assert(n->unit);

        /* All of it from the command line: shown escaped, as the other blocks show specs. */
        given = string_escape_unprintable(n->given, 0);
        server = string_escape_unprintable(n->server, 0);
        port = n->port ? string_escape_unprintable(n->port, 0) : strdup("");
        export = n->export ? string_escape_unprintable(n->export, 0) : strdup("");
        options = n->options ? string_escape_unprintable(n->options, 0) : strdup("");
        if (!given || !server || !port || !export || !options)
                return -ENOMEM;

        if (n->kind == NETROOT_NFS) {
                fprintf(f, "The root is on NFS and mounting it failed: %s (%s:%s", n->unit, server, export);
                if (!isempty(n->result))
                        fprintf(f, ", result: %s", n->result);
                fprintf(f, ")\n"
                           "  Server: %s, export: %s%s%s (%s, kernel command line)\n",
                        server, export, isempty(options) ? "" : ", options: ", options, given);
        } else {
                fprintf(f, "The root is on NBD and connecting to it failed: %s (%s:%s", n->unit, server, port);
                if (!isempty(n->result))
                        fprintf(f, ", result: %s", n->result);
                fprintf(f, ")\n"
                           "  Server: %s, port: %s, export: %s (%s, kernel command line)\n",
                        server, port, isempty(export) ? "the server's default" : export, given);
        }

        cause = netroot_cause_of_log(log, NULL);
        if (nlog > 0) {
                fprintf(f, "  %s said (the last %zu line%s of %s's log):\n", tool, nlog, nlog == 1 ? "" : "s", n->unit);
                for (char * const *l = log; *l; l++)
                        fprintf(f, "    %s\n", *l);
        } else
                fprintf(f, "  %s logged nothing.\n", tool);
        print_cause(f, n, cause, export, given);
        print_details(f, n->unit);
        return fflush_and_check(f);
}

void net_link_done(NetLink *l) {
        if (!l)
                return;
        free(l->name);
        free(l->admin_state);
        free(l->oper_state);
        free(l->address);
        *l = (NetLink) {};
}

void net_links_free(NetLink *l, size_t n) {
        for (size_t i = 0; l && i < n; i++)
                net_link_done(&l[i]);
        free(l);
}

/* The value of KEY= on one line of a state file, made printable; NULL if the line is not KEY=. */
static int env_line_value(const char *line, size_t len, const char *key, char **ret) {
        size_t kl = strlen(key);
        _cleanup_free_ char *raw = NULL;

        if (len <= kl || strncmp(line, key, kl) != 0 || line[kl] != '=')
                return 0;
        raw = strndup(line + kl + 1, len - kl - 1);
        if (!raw)
                return -ENOMEM;
        free(*ret);
        *ret = string_escape_unprintable(raw, 0);
        return *ret ? 1 : -ENOMEM;
}

int net_link_state_parse(const char *text, NetLink *l) {
        assert(text);
        assert(l);

        for (const char *p = text; *p;) {
                size_t len = strcspn(p, "\n");
                _cleanup_free_ char *lease = NULL;
                int r;

                if (p[0] != '#') {
                        r = env_line_value(p, len, "ADMIN_STATE", &l->admin_state);
                        if (r == 0)
                                r = env_line_value(p, len, "OPER_STATE", &l->oper_state);
                        if (r == 0)
                                r = env_line_value(p, len, "DHCP_LEASE", &lease);
                        if (r < 0)
                                return r;
                        if (lease && !isempty(lease))
                                l->has_lease = true;
                }
                p += len;
                if (*p == '\n')
                        p++;
        }
        return 0;
}

int net_lease_address_parse(const char *text, char **ret) {
        _cleanup_free_ char *address = NULL;

        assert(text);
        assert(ret);

        for (const char *p = text; *p;) {
                size_t len = strcspn(p, "\n");

                if (p[0] != '#' && env_line_value(p, len, "ADDRESS", &address) < 0)
                        return -ENOMEM;
                p += len;
                if (*p == '\n')
                        p++;
        }
        *ret = isempty(address) ? NULL : TAKE_PTR(address);
        return 0;
}

static int link_cmp(const void *a, const void *b) {
        return strcmp(((const NetLink *) a)->name, ((const NetLink *) b)->name);
}

/* Reads DIR/NAME/LEAF into a new string: 0, or a negative errno (-ENOENT: no such file). */
static int read_file3(const char *dir, const char *name, const char *leaf, char **ret) {
        _cleanup_free_ char *path = strjoin(dir, "/", name, "/", leaf);

        if (!path)
                return -ENOMEM;
        return read_full_file(path, ret, NULL);
}

/* The state networkd keeps for one interface; what is missing stays NULL. */
static int link_read_state(const char *sys_net, const char *netif_dir, NetLink *l) {
        _cleanup_free_ char *text = NULL, *state = NULL, *lease = NULL;
        char index[16];
        unsigned ifindex;
        int r;

        r = read_file3(sys_net, l->name, "ifindex", &text);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        text[strcspn(text, "\n")] = 0;
        if (safe_atou(text, &ifindex) < 0 || ifindex == 0 || ifindex > INT32_MAX)
                return 0;
        l->ifindex = (int) ifindex;
        snprintf(index, sizeof(index), "%u", ifindex);

        r = read_file3(netif_dir, "links", index, &state);
        if (r == -ENOMEM)
                return r;
        if (r >= 0) {
                r = net_link_state_parse(state, l);
                if (r < 0)
                        return r;
        }
        r = read_file3(netif_dir, "leases", index, &lease);
        if (r == -ENOMEM)
                return r;
        if (r >= 0)
                return net_lease_address_parse(lease, &l->address);
        return 0;
}

int net_links_list(const char *sys_net, const char *netif_dir, NetLink **ret, size_t *ret_n) {
        NetLink *links = NULL;
        size_t n = 0;
        struct dirent *de;
        DIR *d;
        int r = 0;

        assert(sys_net);
        assert(netif_dir);
        assert(ret);
        assert(ret_n);

        d = opendir(sys_net);
        if (!d)
                return negative_errno();
        while ((de = readdir(d))) {
                NetLink *grown;

                if (de->d_name[0] == '.' || streq(de->d_name, "lo"))
                        continue;
                grown = reallocarray(links, n + 1, sizeof(NetLink));
                if (!grown) {
                        r = -ENOMEM;
                        break;
                }
                links = grown;
                links[n] = (NetLink) { .name = strdup(de->d_name) };
                if (!links[n].name) {
                        r = -ENOMEM;
                        break;
                }
                n++;
                /* The name as read makes the paths; the one kept is made printable for the console. */
                r = link_read_state(sys_net, netif_dir, &links[n - 1]);
                if (r >= 0) {
                        char *escaped = string_escape_unprintable(links[n - 1].name, 0);

                        if (!escaped)
                                r = -ENOMEM;
                        else {
                                free(links[n - 1].name);
                                links[n - 1].name = escaped;
                        }
                }
                if (r < 0)
                        break;
        }
        closedir(d);
        if (r < 0) {
                net_links_free(links, n);
                return r;
        }
        if (n > 0)
                qsort(links, n, sizeof(NetLink), link_cmp);
        *ret = links;
        *ret_n = n;
        return 0;
}

bool net_link_is_up(const NetLink *l) {
        assert(l);

        return streq_ptr(l->admin_state, "configured") &&
               (streq_ptr(l->oper_state, "routable") || streq_ptr(l->oper_state, "degraded"));
}

/* One link's line: its state and what that means for the boot. */
static void print_link(FILE *f, const NetLink *l) {
        const char *meaning;

        if (!l->admin_state && !l->oper_state)
                meaning = "systemd-networkd has no state for it (not running, or it never saw the link)";
        else if (streq_ptr(l->oper_state, "off") || streq_ptr(l->oper_state, "no-carrier"))
                meaning = "no carrier: no cable, or nothing at the other end";
        else if (streq_ptr(l->admin_state, "unmanaged"))
                meaning = "no .network file matches it, so nothing configures it (ip= for this interface?)";
        else if (streq_ptr(l->admin_state, "failed"))
                meaning = "systemd-networkd failed to configure it";
        else if (net_link_is_up(l))
                meaning = l->address ? "configured" : "configured (static address or IPv6)";
        else if (!l->has_lease)
                meaning = "no DHCP lease: no DHCP server answered on this link";
        else
                meaning = "configuring";
        fprintf(f, "    %s  %s, %s%s%s: %s\n", l->name, l->oper_state ?: "-", l->admin_state ?: "-",
                l->address ? ", address " : "", strempty(l->address), meaning);
}

int explain_no_network(FILE *f, const char *unit, const char *result, const char *given, const NetLink *links,
                       size_t n) {
        _cleanup_free_ char *shown = NULL;

        assert(f);
        assert(given);

        shown = string_escape_unprintable(given, 0);
        if (!shown)
                return -ENOMEM;
        fprintf(f, "The network did not come up for the network root: %s", unit ?: "no link is configured");
        if (unit && !isempty(result))
                fprintf(f, " (result: %s)", result);
        fprintf(f, "\n"
                   "  The root is on the network (%s, kernel command line), and no link got an address\n"
                   "  to reach its server from.\n", shown);
        if (n == 0)
                fprintf(f, "  Network links: none but the loopback: the network card's driver is missing\n"
                           "  (foyer build --add-module MODULE), or the machine has no network card.\n");
        else {
                fprintf(f, "  Network links (%zu; systemd-networkd's state):\n", n);
                for (size_t i = 0; i < n; i++)
                        print_link(f, &links[i]);
                fprintf(f, "  No DHCP lease means no DHCP server answered: check the network the link is on, or\n"
                           "  give a static address with ip= on the kernel command line.\n");
        }
        fprintf(f, "  Details: journalctl -b -u systemd-networkd.service -u systemd-networkd-wait-online.service; networkctl list\n");
        return fflush_and_check(f);
}
