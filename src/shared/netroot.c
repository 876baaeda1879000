/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* dracut's network root specs (modules.d/74nfs/nfs-lib.sh nfsroot_to_var() and munge_nfs_options(),
 * 74nbd/nbdroot.sh), parsed once in C for every generator that needs to know them. */

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "devspec.h"
#include "macro.h"
#include "mount-options.h"
#include "netroot.h"
#include "strv.h"

static const char *const kind_names[_NETROOT_KIND_MAX] = {
        [NETROOT_NFS] = "nfs",
        [NETROOT_NBD] = "nbd",
        [NETROOT_ISCSI] = "iscsi",
        [NETROOT_DHCP] = "dhcp",
};

const char *netroot_kind_to_string(NetrootKind k) {
        return k > NETROOT_NONE && k < _NETROOT_KIND_MAX ? kind_names[k] : NULL;
}

/* Whether s starts with an address of family followed by end. */
static bool starts_with_address(const char *s, int family, char end) {
        unsigned char buf[16];
        char a[INET6_ADDRSTRLEN];
        const char *e = strchr(s, end);

        if (!e || (size_t) (e - s) >= sizeof(a))
                return false;
        memcpy(a, s, e - s);
        a[e - s] = 0;
        return inet_pton(family, a, buf) == 1;
}

NetrootKind netroot_kind_of_root(const char *root) {
        const char *v6;

        if (!root)
                return NETROOT_NONE;
        if (streq(root, "dhcp") || streq(root, "dhcp6"))
                return NETROOT_DHCP;
        if (startswith(root, "nbd:"))
                return NETROOT_NBD;
        if (startswith(root, "iscsi:"))
                return NETROOT_ISCSI;
        if (path_equal(root, "/dev/nfs") || startswith(root, "nfs:") || startswith(root, "nfs4:"))
                return NETROOT_NFS;
        v6 = startswith(root, "[");
        if ((v6 && starts_with_address(v6, AF_INET6, ']')) || starts_with_address(root, AF_INET, ':'))
                return NETROOT_NFS;
        /* dracut's legacy form: any other absolute path outside /dev is an export (server from DHCP). */
        if (root[0] == '/' && !path_startswith(root, "/dev"))
                return NETROOT_NFS;
        return NETROOT_NONE;
}

NetrootKind netroot_kind_of_netroot(const char *netroot) {
        if (!netroot)
                return NETROOT_NONE;
        if (startswith(netroot, "nbd:"))
                return NETROOT_NBD;
        if (startswith(netroot, "iscsi:"))
                return NETROOT_ISCSI;
        if (streq(netroot, "dhcp") || streq(netroot, "dhcp6"))
                return NETROOT_DHCP;
        return NETROOT_NONE;
}

bool netroot_word_is_safe(const char *s, const char *extra) {
        for (const char *p = s; *p; p++)
                if ((unsigned char) *p <= ' ' || (unsigned char) *p >= 0x7f || strchr("\"'\\%$`", *p) ||
                    (extra && strchr(extra, *p)))
                        return false;
        return true;
}

/* A host name, an IPv4 address or a bracketed IPv6 address. */
static bool server_is_valid(const char *s) {
        const char *v6 = startswith(s, "[");

        if (isempty(s))
                return false;
        if (v6) {
                size_t l = strlen(v6);
                return l > 1 && v6[l - 1] == ']' && starts_with_address(v6, AF_INET6, ']');
        }
        for (const char *p = s; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr(".-_", *p))
                        return false;
        return true;
}

void nfs_root_done(NfsRoot *n) {
        if (!n)
                return;
        free(n->type);
        free(n->server);
        free(n->path);
        free(n->options);
        *n = (NfsRoot) {};
}

static int fail(const char **ret_error, const char *reason) {
        if (ret_error)
                *ret_error = reason;
        return -EINVAL;
}

int nfs_root_parse(const char *root, const char *nfsroot, const char *rootfstype, NfsRoot *ret,
                   const char **ret_error) {
        _cleanup_(nfs_root_done) NfsRoot n = {};
        _cleanup_free_ char *spec = NULL;
        const char *type = "nfs", *arg, *s, *colon, *comma;

        assert(root);
        assert(ret);

        if (path_equal(root, "/dev/nfs")) {
                if (isempty(nfsroot))
                        return fail(ret_error, "root=/dev/nfs needs nfsroot=[SERVER:]/PATH (foyer does not take the root path from DHCP for it)");
                arg = nfsroot;
        } else if ((s = startswith(root, "nfs4:"))) {
                type = "nfs4";
                arg = s;
        } else if ((s = startswith(root, "nfs:")))
                arg = s;
        else {
                /* SERVER:/PATH and /PATH: the version from rootfstype= (systemd's own reading). */
                if (streq_ptr(rootfstype, "nfs4"))
                        type = "nfs4";
                arg = root;
        }
        if (!netroot_word_is_safe(arg, NULL))
                return fail(ret_error, "it holds a blank, a control character, a quote, a backslash, '%' or '$'");

        /* [SERVER:]/PATH[:OPTIONS]: the server ends at the first ":/". */
        s = strstr(arg, ":/");
        if (s) {
                n.server = strndup(arg, s - arg);
                if (!n.server)
                        return -ENOMEM;
                arg = s + 1;
        }
        if (arg[0] != '/')
                return fail(ret_error, "the export must be an absolute path (SERVER:/PATH)");
        colon = strchr(arg, ':');
        n.path = colon ? strndup(arg, colon - arg) : strdup(arg);
        if (!n.path)
                return -ENOMEM;
        if (colon && !isempty(colon + 1) && !(n.options = strdup(colon + 1)))
                return -ENOMEM;
        /* The kernel's nfsroot= separates the options with a ',' (they then replace any after ':'). */
        comma = strchr(n.path, ',');
        if (comma) {
                free(n.options);
                n.options = isempty(comma + 1) ? NULL : strdup(comma + 1);
                if (!isempty(comma + 1) && !n.options)
                        return -ENOMEM;
                n.path[comma - n.path] = 0;
        }
        if (isempty(n.server))
                return fail(ret_error, "no server given (foyer does not take the NFS server from DHCP)");
        if (!server_is_valid(n.server))
                return fail(ret_error, "the server must be a host name, an IPv4 address or an [IPv6] address");
        n.type = strdup(type);
        if (!n.type)
                return -ENOMEM;
        *ret = n;
        n = (NfsRoot) {};
        return 0;
}

/* Appends the options of list to *out, keeping ro/rw and lock/nolock aside. */
static int munge_options(const char *list, char **out, int *rw, const char **lock) {
        _cleanup_free_ char *copy = NULL;
        char *save = NULL;

        if (isempty(list))
                return 0;
        copy = strdup(list);
        if (!copy)
                return -ENOMEM;
        for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
                if (streq(o, "ro") || streq(o, "rw"))
                        *rw = streq(o, "rw");
                else if (streq(o, "lock"))
                        *lock = "lock";
                else if (streq(o, "nolock"))
                        *lock = "nolock";
                else if (strextend_with_separator(out, ",", o) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int nfs_root_options(const NfsRoot *n, const char *rootflags, int rw, char **ret, bool *ret_dropped_lock) {
        _cleanup_free_ char *opts = NULL, *out = NULL;
        const char *lock = NULL;
        int spec_rw = 0;

        assert(n);
        assert(ret);

        if ((n->options && !netroot_word_is_safe(n->options, NULL)) ||
            (rootflags && !netroot_word_is_safe(rootflags, NULL)))
                return -EINVAL;
        if (munge_options(n->options, &opts, &spec_rw, &lock) < 0 ||
            munge_options(rootflags, &opts, &spec_rw, &lock) < 0)
                return -ENOMEM;
        if (rw >= 0)
                spec_rw = rw;
        out = strdup(spec_rw ? "rw" : "ro");
        if (!out || (opts && strextend_with_separator(&out, ",", opts) < 0))
                return -ENOMEM;
        if (streq(n->type, "nfs4")) {
                if (lock && strextend_with_separator(&out, ",", lock) < 0)
                        return -ENOMEM;
        } else if (strextend_with_separator(&out, ",", "nolock") < 0)
                return -ENOMEM;
        if (ret_dropped_lock)
                *ret_dropped_lock = !streq(n->type, "nfs4") && streq_ptr(lock, "lock");
        *ret = TAKE_PTR(out);
        return 0;
}

void nbd_root_done(NbdRoot *n) {
        if (!n)
                return;
        free(n->server);
        free(n->port);
        free(n->export);
        free(n->fstype);
        free(n->options);
        strv_free(n->nbd_opts);
        *n = (NbdRoot) {};
}

static bool all_digits(const char *s) {
        if (isempty(s))
                return false;
        for (; *s; s++)
                if (!isdigit((unsigned char) *s))
                        return false;
        return true;
}

/* The next ':'-separated field of *p (NULL when none is left), a new string; advances *p. */
static int next_field(const char **p, char **ret) {
        const char *e;

        if (!*p) {
                *ret = NULL;
                return 0;
        }
        e = strchr(*p, ':');
        *ret = e ? strndup(*p, e - *p) : strdup(*p);
        if (!*ret)
                return -ENOMEM;
        *p = e ? e + 1 : NULL;
        return 0;
}

int nbd_root_parse(const char *spec, NbdRoot *ret, const char **ret_error) {
        _cleanup_(nbd_root_done) NbdRoot n = {};
        _cleanup_free_ char *port = NULL, *nbdopts = NULL;
        const char *p, *e, *sep;

        assert(spec);
        assert(ret);

        p = startswith(spec, "nbd:");
        if (!p)
                return fail(ret_error, "not an nbd: spec");
        if (!netroot_word_is_safe(p, NULL))
                return fail(ret_error, "it holds a blank, a control character, a quote, a backslash, '%' or '$'");
        /* The server: [IPv6] or up to the next ':'. */
        if (p[0] == '[') {
                e = strstr(p, "]:");
                if (!e)
                        return fail(ret_error, "an [IPv6] server must be followed by ':PORT'");
                n.server = strndup(p, e + 1 - p);
                p = e + 2;
        } else {
                e = strchr(p, ':');
                if (!e)
                        return fail(ret_error, "no port or export name given (nbd:SERVER:PORT)");
                n.server = strndup(p, e - p);
                p = e + 1;
        }
        if (!n.server)
                return -ENOMEM;
        if (!server_is_valid(n.server))
                return fail(ret_error, "the server must be a host name, an IPv4 address or an [IPv6] address");
        if (next_field(&p, &port) < 0 || next_field(&p, &n.fstype) < 0 || next_field(&p, &n.options) < 0)
                return -ENOMEM;
        /* The rest, ':' included, is nbd-client's (dracut: ${nroot#*:}). */
        if (p && !(nbdopts = strdup(p)))
                return -ENOMEM;
        if (isempty(port))
                return fail(ret_error, "no port or export name given (nbd:SERVER:PORT)");
        sep = strpbrk(port, "/|");
        if (sep) {
                n.port = strndup(port, sep - port);
                if (!n.port)
                        return -ENOMEM;
                if (!isempty(sep + 1) && !(n.export = strdup(sep + 1)))
                        return -ENOMEM;
                if (!all_digits(n.port))
                        return fail(ret_error, "the port before the export name must be a number");
        } else if (all_digits(port))
                n.port = TAKE_PTR(port);
        else {
                /* dracut: a port that is not a number is an export name (nbd-client -N). */
                n.export = TAKE_PTR(port);
                n.port = strdup(NBD_DEFAULT_PORT);
                if (!n.port)
                        return -ENOMEM;
        }
        if (atoi(n.port) <= 0 || atoi(n.port) > 65535 || strlen(n.port) > 5)
                return fail(ret_error, "the port must be between 1 and 65535");
        if (n.export && (!netroot_word_is_safe(n.export, "|") || n.export[0] == '-'))
                return fail(ret_error, "the export name cannot go into a command line");
        if (isempty(n.fstype) || streq(n.fstype, "auto")) {
                free(n.fstype);
                n.fstype = NULL;
        }
        else if (!netroot_word_is_safe(n.fstype, ",|/"))
                return fail(ret_error, "the file system type is not a plain word");
        if (isempty(n.options)) {
                free(n.options);
                n.options = NULL;
        }
        if (!isempty(nbdopts)) {
                if (strv_split(nbdopts, ",", &n.nbd_opts) < 0)
                        return -ENOMEM;
                for (char **o = n.nbd_opts; *o; o++)
                        if (!netroot_word_is_safe(*o, ":|"))
                                return fail(ret_error, "an nbd-client option cannot go into a command line");
        }
        *ret = n;
        n = (NbdRoot) {};
        return 0;
}

int dhcp_lease_get(const char *lease, const char *key, char **ret) {
        size_t l;

        assert(lease);
        assert(key);
        assert(ret);

        *ret = NULL;
        l = strlen(key);
        for (const char *p = lease, *end; *p; p = *end ? end + 1 : end) {
                end = strchrnul(p, '\n');
                if (strncmp(p, key, l) != 0 || p[l] != '=')
                        continue;
                p += l + 1;
                if (end == p)
                        return 0;
                *ret = strndup(p, end - p);
                return *ret ? 1 : -ENOMEM;
        }
        return 0;
}

int dhcp_root_path_to_spec(const char *root_path, const char *server, char **ret, NetrootKind *ret_kind) {
        const char *prefix = "", *path = root_path;
        NetrootKind kind = NETROOT_NFS;

        assert(root_path);
        assert(ret);
        assert(ret_kind);

        if (startswith(root_path, "nbd:"))
                kind = NETROOT_NBD;
        else if (startswith(root_path, "iscsi:"))
                kind = NETROOT_ISCSI;
        else if ((path = startswith(root_path, "nfs4:")))
                prefix = "nfs4:";
        else if ((path = startswith(root_path, "nfs:")))
                prefix = "nfs:";
        else
                path = root_path;
        /* dracut: a path alone is an export of the next server (siaddr), else of the DHCP server. */
        if (kind == NETROOT_NFS && path[0] == '/' && !isempty(server))
                *ret = strjoin(prefix, server, ":", path);
        else
                *ret = strdup(root_path);
        if (!*ret)
                return -ENOMEM;
        *ret_kind = kind;
        return 0;
}
