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

NetrootKind netroot_kind_of(const char *root, const char *netroot, const char **ret_key, const char **ret_value) {
        NetrootKind k = netroot_kind_of_root(root);
        bool from_netroot = k == NETROOT_NONE && netroot;

        if (from_netroot)
                k = netroot_kind_of_netroot(netroot);
        if (ret_key)
                *ret_key = from_netroot ? "netroot" : "root";
        if (ret_value)
                *ret_value = from_netroot ? netroot : root;
        return k;
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

void iscsi_root_done(IscsiRoot *n) {
        if (!n)
                return;
        free(n->username);
        free(n->password);
        free(n->in_username);
        free(n->in_password);
        free(n->server);
        free(n->port);
        free(n->iface);
        free(n->netdev);
        free(n->lun);
        free(n->target);
        *n = (IscsiRoot) {};
}

/* s split at every ':' as the shell's IFS=: splits it: empty fields kept, but a trailing ':' ends the
 * last field rather than starting an empty one ("a::" gives "a" and "", "" gives nothing). */
static int split_fields(const char *s, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        const char *p = s;

        while (*p) {
                const char *e = strchrnul(p, ':');
                char *w = strndup(p, e - p);

                if (!w || strv_consume(&l, w) < 0)
                        return -ENOMEM;
                if (!*e)
                        break;
                p = e + 1;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* A copy of value into *field; an empty (or missing, NULL) one leaves it NULL. */
static int set_field(char **field, const char *value) {
        if (isempty(value))
                return 0;
        return free_and_strdup(field, value);
}

/* f[*i] and *i advanced, or NULL when all k fields are used. */
static const char *next_of(char **f, size_t k, size_t *i) {
        return *i < k ? f[(*i)++] : NULL;
}

/* dracut's authentication part USER:PASS[:RUSER:RPASS]: at most four fields, each pair complete. */
static int iscsi_parse_auth(const char *auth, IscsiRoot *n, const char **ret_error) {
        _cleanup_(strv_freep) char **f = NULL;
        size_t k;

        if (split_fields(auth, &f) < 0)
                return -ENOMEM;
        k = strv_length(f);
        if (k > 4)
                return fail(ret_error, "the authentication part has more than USER:PASS:RUSER:RPASS");
        for (size_t i = 0; i < k; i++) {
                char **field[] = { &n->username, &n->password, &n->in_username, &n->in_password };

                if (set_field(field[i], f[i]) < 0)
                        return -ENOMEM;
        }
        if (!n->username != !n->password || !n->in_username != !n->in_password)
                return fail(ret_error, "CHAP needs a user name and a password (USER:PASS, RUSER:RPASS)");
        if (n->in_username && !n->username)
                return fail(ret_error, "the target's credentials (RUSER:RPASS) need the initiator's (USER:PASS) first");
        return 0;
}

/* The target name at the end of v: dracut looks for the last ":iqn.", ":eui." or ":naa." (in that
 * order), so that a name with ':' in it is kept whole. Returns the offset of that ':', or -1. */
static ssize_t iscsi_find_target(const char *v) {
        static const char *const prefixes[] = { ":iqn.", ":eui.", ":naa." };

        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++) {
                const char *last = NULL;

                for (const char *p = strstr(v, prefixes[i]); p; p = strstr(p + 1, prefixes[i]))
                        last = p;
                if (last)
                        return last - v;
        }
        return -1;
}

int iscsi_root_parse(const char *spec, IscsiRoot *ret, const char **ret_error) {
        _cleanup_(iscsi_root_done) IscsiRoot n = {};
        _cleanup_(strv_freep) char **f = NULL;
        _cleanup_free_ char *rest = NULL;
        const char *v, *at, *e;
        size_t k, i = 0;
        unsigned colons = 0;
        ssize_t t;
        int r;

        assert(spec);
        assert(ret);

        v = startswith(spec, "iscsi:");
        if (!v)
                return fail(ret_error, "not an iscsi: spec");
        if (!netroot_word_is_safe(v, NULL))
                return fail(ret_error, "it holds a blank, a control character, a quote, a backslash, '%' or '$'");
        /* dracut's check (parse-iscsiroot.sh): four ':' at least, and a last field. */
        for (const char *p = v; *p; p++)
                colons += *p == ':';
        if (colons < 4 || endswith(v, ":"))
                return fail(ret_error, "no target name given (iscsi:SERVER:[PROTOCOL]:[PORT]:[LUN]:TARGET)");
        /* USER:PASS[:RUSER:RPASS]@ when four ':' follow the first '@' (dracut's *@*:*:*:*:*); an empty
         * one lets a target name hold an '@' (iscsi:@SERVER::::iqn...:a@b). */
        at = strchr(v, '@');
        if (at) {
                colons = 0;
                for (const char *p = at; *p; p++)
                        colons += *p == ':';
                if (colons >= 4) {
                        _cleanup_free_ char *auth = strndup(v, at - v);

                        if (!auth)
                                return -ENOMEM;
                        r = iscsi_parse_auth(auth, &n, ret_error);
                        if (r < 0)
                                return r;
                        v = at + 1;
                }
        }
        /* The server: [IPv6] or up to the next ':'. */
        if (v[0] == '[') {
                e = strstr(v, "]:");
                if (!e)
                        return fail(ret_error, "an [IPv6] server must be followed by ':'");
                n.server = strndup(v, e + 1 - v);
                v = e + 2;
        } else {
                e = strchrnul(v, ':');
                n.server = strndup(v, e - v);
                v = *e ? e + 1 : e;
        }
        if (!n.server)
                return -ENOMEM;
        if (isempty(n.server))
                return fail(ret_error, "no server given (foyer does not take it from DHCP)");
        if (!server_is_valid(n.server))
                return fail(ret_error, "the server must be a host name, an IPv4 address or an [IPv6] address");

        t = iscsi_find_target(v - 1);
        if (t >= 0) {
                /* (v - 1 is the ':' after the server, so that "SERVER:iqn..." finds the name too.) */
                n.target = strdup(v + t);
                /* What precedes the name, with the ':' before it kept: every field counts, an
                 * empty last one too (dracut appends ':' before splitting). */
                rest = strndup(v, t);
                if (!n.target || !rest)
                        return -ENOMEM;
                if (split_fields(rest, &f) < 0)
                        return -ENOMEM;
                k = strv_length(f);
                /* PROTOCOL:PORT, then [IFACE:]NETDEV:LUN, NETDEV:LUN or LUN. */
                if (k > 5)
                        return fail(ret_error, "too many fields before the target name");
                (void) next_of(f, k, &i); /* the protocol: dracut ignores it too (TCP) */
                if (set_field(&n.port, next_of(f, k, &i)) < 0 ||
                    (k - i == 3 && set_field(&n.iface, next_of(f, k, &i)) < 0) ||
                    (k - i == 2 && set_field(&n.netdev, next_of(f, k, &i)) < 0) ||
                    set_field(&n.lun, next_of(f, k, &i)) < 0)
                        return -ENOMEM;
        } else {
                /* No iqn./eui./naa. name: the target name is whatever follows the LUN. */
                if (split_fields(v, &f) < 0)
                        return -ENOMEM;
                k = strv_length(f);
                (void) next_of(f, k, &i);
                if (set_field(&n.port, next_of(f, k, &i)) < 0)
                        return -ENOMEM;
                /* dracut: IFACE:NETDEV when more than three fields follow, one of them is set and the
                 * third (the LUN) is empty or a number. */
                if (k - i > 3 && (!isempty(f[i]) || !isempty(f[i + 1])) && (isempty(f[i + 2]) || all_digits(f[i + 2])) &&
                    (set_field(&n.iface, next_of(f, k, &i)) < 0 || set_field(&n.netdev, next_of(f, k, &i)) < 0))
                        return -ENOMEM;
                if (set_field(&n.lun, next_of(f, k, &i)) < 0)
                        return -ENOMEM;
                if (i < k && !(n.target = strv_join(f + i, ":")))
                        return -ENOMEM;
        }
        if (isempty(n.target))
                return fail(ret_error, "no target name given (iscsi:SERVER:[PROTOCOL]:[PORT]:[LUN]:TARGET)");
        if (strlen(n.target) > ISCSI_TARGET_NAME_MAX || n.target[0] == '-')
                return fail(ret_error, "the target name is not a valid iSCSI name");
        if (!n.port && !(n.port = strdup(ISCSI_DEFAULT_PORT)))
                return -ENOMEM;
        if (!all_digits(n.port) || strlen(n.port) > 5 || atoi(n.port) <= 0 || atoi(n.port) > 65535)
                return fail(ret_error, "the port must be between 1 and 65535");
        if (!n.lun && !(n.lun = strdup("0")))
                return -ENOMEM;
        if (!all_digits(n.lun) || strlen(n.lun) > 5)
                return fail(ret_error, "the LUN must be a number");
        if ((n.username && n.username[0] == '-') || (n.in_username && n.in_username[0] == '-'))
                return fail(ret_error, "a CHAP user name cannot start with '-'");
        *ret = n;
        n = (IscsiRoot) {};
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
