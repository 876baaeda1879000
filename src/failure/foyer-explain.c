/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-explain: run by foyer-failure-report.service when the initrd gives up (emergency.target), it
 * says on the console and in the journal why: a root or /usr device that never appeared (with the
 * devices that did), a network that did not come up for a network root (with each link's state), and
 * each failed unit (fsck, unlock, mount, an NFS or NBD root with its client's words, other) with where
 * to read more; then
 * the boot timeline so far (src/timeline), which it also leaves in FOYER_TIMELINE_PATH. */

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cmdline.h"
#include "devspec.h"
#include "explain.h"
#include "fileio.h"
#include "path-util.h"
#include "foyer-contract.h"
#include "log.h"
#include "netroot-explain.h"
#include "parse-util.h"
#include "strv.h"
#include "timeline-collect.h"
#include "unit-name.h"

typedef struct Target {
        const char *role, *key, *mount_unit;
} Target;

/* How much of a failed file system check's log the report quotes. */
#define FSCK_LOG_LINES 6
/* ... and of mount.nfs's or nbd-client's: their verdict is the last line or two. */
#define NETROOT_LOG_LINES 4
#define WAIT_ONLINE_SERVICE "systemd-networkd-wait-online.service"

static const Target targets[] = {
        { "root", "root", "sysroot.mount" },
        { "/usr", "mount.usr", "sysusr-usr.mount" },
};

/* One data device dm-verity found corrupted blocks on, from the kernel's log. */
typedef struct VerityError {
        char *devnum;   /* the data device, as the kernel names it: "254:1" */
        char *node;     /* its name in /dev ("vda1"), or NULL */
        char *volume;   /* the verity volume on it (its /dev/mapper name), or NULL */
        char *what;     /* what the kernel said: "data block 0 is corrupted" */
} VerityError;

/* The network root of the kernel command line, read as the generators read it (netroot.h). */
typedef struct Netroot {
        NetrootKind kind;       /* NETROOT_NONE: not a network root */
        char *given;            /* "root=nfs4:…" or "netroot=nbd:…", as written */
        bool is_root;           /* root= itself is the network root: there is no device to wait for */
        bool parsed;            /* nfs or nbd below holds the parsed spec */
        NfsRoot nfs;
        NbdRoot nbd;
} Netroot;

/* What one run has found out; the device list is made only when a device is missing. */
typedef struct Context {
        char **failed_units;    /* systemctl's list, without foyer-failure-report.service */
        bool failed_units_known;
        BlockDevice *devices;
        size_t n_devices;
        bool devices_listed;
        VerityError *verity;    /* read from the kernel's log before anything is explained */
        size_t n_verity;
        Netroot netroot;
        bool network_down;      /* the block for a network that did not come up was written */
        unsigned n_explained;
} Context;

static void verity_errors_free(VerityError *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(v[i].devnum);
                free(v[i].node);
                free(v[i].volume);
                free(v[i].what);
        }
        free(v);
}

/* The verity volume with corrupted blocks that path is (the mapped device itself, not its data
 * device): its name, owned by c, or NULL. */
static const char *corrupted_volume_of(const Context *c, const char *path) {
        _cleanup_free_ char *namefile = NULL, *name = NULL;
        struct stat st;

        if (c->n_verity == 0 || stat(path, &st) < 0 || !S_ISBLK(st.st_mode))
                return NULL;
        if (asprintf(&namefile, "%s/dev/block/%u:%u/dm/name", sysfs_dir(), major(st.st_rdev), minor(st.st_rdev)) < 0) {
                namefile = NULL;
                return NULL;
        }
        if (read_full_file(namefile, &name, NULL) < 0)
                return NULL;
        name[strcspn(name, "\n")] = 0;
        for (size_t i = 0; i < c->n_verity; i++)
                if (c->verity[i].volume && streq(c->verity[i].volume, name))
                        return c->verity[i].volume;
        return NULL;
}

static void list_devices_once(Context *c) {
        char *settle[] = { (char *) "udevadm", (char *) "settle", (char *) "--timeout=30", NULL };
        _cleanup_free_ char *out = NULL;
        int r;

        if (c->devices_listed)
                return;
        c->devices_listed = true;
        /* On a slow machine the disk may still be on its way (its driver loading) when the wait for
         * the root device ends: list what udev has finished with, not a half-done coldplug. */
        r = run_capture(settle, &out);
        if (r < 0)
                log_debug_errno(r, "udevadm settle failed, listing the devices anyway: %m");
        r = block_devices_list("/sys/class/block", "/dev", &c->devices, &c->n_devices);
        if (r < 0)
                log_warning_errno(r, "Failed to list block devices: %m");
}

/* The spec of one target as the user wrote it: the command line first, else the mount unit's What=
 * (set from /etc/fstab or by another generator). Returns 1 if there is a device to check. */
static int find_spec(const Target *t, char **ret_given, const char **ret_source, char **ret_path) {
        _cleanup_free_ char *value = NULL, *given = NULL, *path = NULL;
        const char *source = "kernel command line";
        int r;

        r = cmdline_get_key(t->key, 0, &value);
        if (r < 0)
                return log_warning_errno(r, "Failed to read the kernel command line: %m");
        if (r > 0 && value) {
                given = strjoin(t->key, "=", value);
                if (!given || devspec_to_node(value, 0, &path) < 0)
                        return log_oom();
        }
        if (!path || !is_device_path(path)) {
                free(given);
                free(path);
                given = path = NULL;
                if (unit_get_property(t->mount_unit, "What", &path) < 0 || isempty(path))
                        return 0;
                given = strjoin("What=", path);
                if (!given)
                        return log_oom();
                source = t->mount_unit;
        }
        if (!is_device_path(path))
                return 0;
        *ret_given = TAKE_PTR(given);
        *ret_source = source;
        *ret_path = TAKE_PTR(path);
        return 1;
}

/* Whether the device unit of path was plugged at some point of this boot (and is gone now, as the caller
 * found): PID 1 keeps the time a unit last became active. Returns the unit name then, else NULL. */
static char *device_vanished(const char *path) {
        _cleanup_free_ char *unit = NULL, *since = NULL;

        if (unit_name_from_path(path, ".device", &unit) < 0 ||
            unit_get_property(unit, "ActiveEnterTimestampMonotonic", &since) < 0)
                return NULL;
        if (isempty(since) || streq(since, "0"))
                return NULL;
        return TAKE_PTR(unit);
}

/* A device that is present while nothing failed and its mount never ran: the wait for it ran out
 * before it came (a device timeout fails only jobs, no unit). Says so, with when it came; unless it
 * is a verity volume the kernel found corrupted blocks on, which udev could not read, so that it was
 * never ready: then that is what the block says. */
static int explain_if_late(Context *c, const Target *t, const char *given, const char *source, const char *path) {
        _cleanup_free_ char *state = NULL, *unit = NULL, *since = NULL, *timeout = NULL;
        MissingDevice m = { .role = t->role, .given = given, .source = source, .path = path, .unit = t->mount_unit };
        const char *corrupted;
        uint64_t appeared = 0;
        int r;

        if (!c->failed_units_known || !strv_isempty(c->failed_units))
                return 0;
        if (unit_get_property(t->mount_unit, "ActiveState", &state) < 0 || streq(state, "active") ||
            streq(state, "activating"))
                return 0;
        corrupted = corrupted_volume_of(c, path);
        if (corrupted) {
                r = explain_corrupted_device(stdout, &m, corrupted);
                if (r < 0)
                        return log_error_errno(r, "Failed to write the message: %m");
                c->n_explained++;
                return 0;
        }
        if (unit_name_from_path(path, ".device", &unit) >= 0) {
                if (unit_get_property(unit, "ActiveEnterTimestampMonotonic", &since) >= 0 && since)
                        (void) safe_atou64(since, &appeared);
                (void) unit_get_property(unit, "JobRunningTimeoutUSec", &timeout);
                if (timeout && (streq(timeout, "infinity") || streq(timeout, "0"))) {
                        free(timeout);
                        timeout = NULL;
                }
        }
        r = explain_late_device(stdout, &m, appeared, timeout);
        if (r < 0)
                return log_error_errno(r, "Failed to write the message: %m");
        c->n_explained++;
        return 0;
}

static int explain_missing_devices(Context *c) {
        int r;

        for (size_t i = 0; i < ELEMENTSOF(targets); i++) {
                _cleanup_free_ char *given = NULL, *path = NULL, *vanished = NULL;
                const char *source = NULL;

                /* root=/dev/nfs, root=nbd:…: no device of that name is waited for. */
                if (c->netroot.is_root && streq(targets[i].key, "root"))
                        continue;
                r = find_spec(&targets[i], &given, &source, &path);
                if (r <= 0)
                        continue;
                if (access(path, F_OK) >= 0) {
                        log_debug("The %s device %s is present.", targets[i].role, path);
                        r = explain_if_late(c, &targets[i], given, source, path);
                        if (r < 0)
                                return r;
                        continue;
                }
                vanished = device_vanished(path);
                list_devices_once(c);
                r = explain_missing_device(stdout, &(MissingDevice) { .role = targets[i].role, .given = given,
                                                                      .source = source, .path = path,
                                                                      .unit = targets[i].mount_unit,
                                                                      .vanished = vanished },
                                           c->devices, c->n_devices);
                if (r < 0)
                        return log_error_errno(r, "Failed to write the message: %m");
                c->n_explained++;
        }
        return 0;
}

/* The device a systemd-fsck unit checks, from its description: systemd-fsck@.service and the
 * generators' systemd-fsck-root.service both say "File System Check on <device>". */
static int fsck_unit_device(const char *unit, char **ret) {
        _cleanup_free_ char *description = NULL;
        const char *device;
        int r;

        r = unit_get_property(unit, "Description", &description);
        if (r < 0)
                return r;
        device = startswith(description, "File System Check on ");
        if (!device || !is_device_path(device))
                return -ENODATA;
        *ret = strdup(device);
        return *ret ? 0 : -ENOMEM;
}

/* The verity volume whose data device is node: the dm device that has node among its slaves (its
 * dm/name, a new string), or NULL. */
static char *verity_volume_of(const char *node) {
        _cleanup_free_ char *dir = strjoin(sysfs_dir(), "/class/block");
        char *found = NULL;
        struct dirent *de;
        DIR *d;

        if (!dir || !(d = opendir(dir)))
                return NULL;
        while (!found && (de = readdir(d))) {
                _cleanup_free_ char *slave = NULL, *namefile = NULL, *name = NULL;

                if (!startswith(de->d_name, "dm-"))
                        continue;
                slave = strjoin(dir, "/", de->d_name, "/slaves/", node);
                namefile = strjoin(dir, "/", de->d_name, "/dm/name");
                if (!slave || !namefile)
                        break;
                if (access(slave, F_OK) < 0 || read_full_file(namefile, &name, NULL) < 0)
                        continue;
                name[strcspn(name, "\n")] = 0;
                found = TAKE_PTR(name);
        }
        closedir(d);
        return found;
}

/* dm-verity's corruption messages in the kernel's log (/dev/kmsg, from its start): one entry for each
 * data device, with the verity volume on it. Read before the missing devices are looked at, whose
 * blocks they change. */
static int collect_verity(Context *c) {
        _cleanup_strv_free_ char **seen = NULL;
        _cleanup_close_ int fd = -EBADF;
        char buf[8192];
        int r;

        fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                log_debug_errno(errno, "Failed to open /dev/kmsg, not looking for dm-verity errors: %m");
                return 0;
        }
        for (;;) {
                _cleanup_free_ char *devnum = NULL, *what = NULL, *node = NULL, *volume = NULL, *link = NULL;
                ssize_t n = read(fd, buf, sizeof(buf) - 1);
                const char *message;

                if (n < 0 && errno == EPIPE)
                        continue;       /* records overwritten while reading: go on with the next */
                if (n <= 0)
                        break;          /* EAGAIN: the end */
                buf[n] = 0;
                /* "PRIORITY,SEQUENCE,TIMESTAMP,FLAGS;MESSAGE\n", then " KEY=VALUE" lines. */
                message = strchr(buf, ';');
                if (!message)
                        continue;
                buf[strcspn(buf, "\n")] = 0;
                r = verity_message_parse(message + 1, &devnum, &what);
                if (r < 0)
                        return log_oom();
                if (r == 0 || strv_contains(seen, devnum))
                        continue;
                if (strv_extend(&seen, devnum) < 0)
                        return log_oom();
                link = strjoin(sysfs_dir(), "/dev/block/", devnum);
                if (!link)
                        return log_oom();
                char target[PATH_MAX];
                ssize_t l = readlink(link, target, sizeof(target) - 1);
                if (l > 0) {
                        target[l] = 0;
                        node = strdup(path_basename(target));
                        if (node)
                                volume = verity_volume_of(node);
                }
                VerityError *v = reallocarray(c->verity, c->n_verity + 1, sizeof(VerityError));
                if (!v)
                        return log_oom();
                c->verity = v;
                c->verity[c->n_verity++] = (VerityError) {
                        .devnum = TAKE_PTR(devnum), .node = TAKE_PTR(node),
                        .volume = TAKE_PTR(volume), .what = TAKE_PTR(what),
                };
        }
        return 0;
}

/* A block for each data device dm-verity found corrupted, naming the verity volume. Without them a
 * corrupted root ends in "Mounting failed" and a file system type to check, which is not what is
 * wrong. */
static int explain_verity(Context *c) {
        int r;

        for (size_t i = 0; i < c->n_verity; i++) {
                const VerityError *v = &c->verity[i];

                r = explain_verity_corruption(stdout, v->volume, v->node, v->devnum, v->what);
                if (r < 0)
                        return log_error_errno(r, "Failed to write the message: %m");
                c->n_explained++;
        }
        return 0;
}

/* The failed units, once: both the late-device check and the per-unit blocks need them. */
static int list_failed_units(Context *c) {
        _cleanup_strv_free_ char **units = NULL;
        int r;

        r = failed_units_get(&units);
        if (r < 0)
                return log_warning_errno(r, "Failed to list the failed units (systemctl list-units --failed): %s",
                                         r == -EPROTO ? "systemctl exited with an error" : strerror(-r));
        STRV_FOREACH(u, units)
                /* This unit fails only if the report itself could not be written. */
                if (!streq(*u, FOYER_FAILURE_REPORT_SERVICE) && strv_extend(&c->failed_units, *u) < 0)
                        return log_oom();
        c->failed_units_known = true;
        return 0;
}

/* The network root on the command line, if any: root= first, then netroot= (as
 * foyer-netroot-generator reads them), parsed with the generator's parsers so that the report names
 * the same server and export as the units. */
static int read_netroot(Context *c) {
        _cleanup_free_ char *root = NULL, *netroot = NULL, *nfsroot = NULL, *rootfstype = NULL;
        Netroot *n = &c->netroot;
        const char *error = NULL, *key, *value;
        int r;

        if (cmdline_get_key("root", 0, &root) < 0 || cmdline_get_key("netroot", 0, &netroot) < 0 ||
            cmdline_get_key("nfsroot", 0, &nfsroot) < 0 || cmdline_get_key("rootfstype", 0, &rootfstype) < 0)
                return log_oom();
        n->kind = netroot_kind_of(root, netroot, &key, &value);
        if (n->kind == NETROOT_NONE)
                return 0;
        n->is_root = streq(key, "root");
        n->given = strjoin(key, "=", value);
        if (!n->given)
                return log_oom();
        if (n->kind == NETROOT_NFS)
                r = nfs_root_parse(root, nfsroot, rootfstype, &n->nfs, &error);
        else if (n->kind == NETROOT_NBD)
                r = nbd_root_parse(n->is_root ? root : netroot, &n->nbd, &error);
        else
                return 0;
        if (r == -ENOMEM)
                return log_oom();
        /* The generator refused it and said why; the report still says the network did not come up. */
        n->parsed = r >= 0;
        return 0;
}

static void netroot_done(Netroot *n) {
        free(n->given);
        if (n->kind == NETROOT_NFS)
                nfs_root_done(&n->nfs);
        else if (n->kind == NETROOT_NBD)
                nbd_root_done(&n->nbd);
}

/* Whether the unit that brings the network root failed: its mount (NFS) or its client service (NBD). */
static bool netroot_unit_failed(const Context *c) {
        return strv_contains(c->failed_units, c->netroot.kind == NETROOT_NBD ? FOYER_NBD_ROOT_SERVICE : "sysroot.mount");
}

/* For a network root: if systemd-networkd-wait-online failed, or the root's unit failed and no link is
 * up, one block saying the network did not come up, with each link's state. First, since it is the
 * cause of the rest. wait-online is taken out of the failed units then, not to be named twice. */
static int explain_network(Context *c) {
        _cleanup_free_ char *result = NULL;
        NetLink *links = NULL;
        size_t n = 0;
        bool wait_failed, any_up = false;
        int r;

        if (c->netroot.kind == NETROOT_NONE || !c->failed_units_known)
                return 0;
        wait_failed = strv_contains(c->failed_units, WAIT_ONLINE_SERVICE);
        if (!wait_failed && !netroot_unit_failed(c))
                return 0;
        r = net_links_list("/sys/class/net", "/run/systemd/netif", &links, &n);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                log_warning_errno(r, "Failed to list the network links: %m");
        for (size_t i = 0; i < n; i++)
                any_up = any_up || net_link_is_up(&links[i]);
        if (!wait_failed && any_up) {
                net_links_free(links, n);
                return 0;
        }
        if (wait_failed)
                (void) unit_get_property(WAIT_ONLINE_SERVICE, "Result", &result);
        r = explain_no_network(stdout, wait_failed ? WAIT_ONLINE_SERVICE : NULL, result, c->netroot.given, links, n);
        net_links_free(links, n);
        if (r < 0)
                return log_error_errno(r, "Failed to write the message: %m");
        if (wait_failed) {
                char **l = c->failed_units, **w = l;

                /* Drop it from the list, in place. */
                for (; *l; l++)
                        if (streq(*l, WAIT_ONLINE_SERVICE))
                                free(*l);
                        else
                                *w++ = *l;
                *w = NULL;
        }
        c->network_down = true;
        c->n_explained++;
        return 0;
}

/* The block for a network root's failed unit, in place of the generic one; 0 if unit is not its unit
 * (or the spec could not be parsed: the generic block then), 1 if written. */
static int explain_netroot_unit(Context *c, const char *unit) {
        const Netroot *n = &c->netroot;
        _cleanup_free_ char *result = NULL;
        _cleanup_strv_free_ char **log = NULL;
        NetrootFailure f = { .kind = n->kind, .given = n->given, .unit = unit, .network_down = c->network_down };
        int r;

        if (!n->parsed)
                return 0;
        if (n->kind == NETROOT_NFS && n->is_root && streq(unit, "sysroot.mount")) {
                f.server = n->nfs.server;
                f.export = n->nfs.path;
                f.options = n->nfs.options;
        } else if (n->kind == NETROOT_NBD && streq(unit, FOYER_NBD_ROOT_SERVICE)) {
                f.server = n->nbd.server;
                f.port = n->nbd.port;
                f.export = n->nbd.export;
        } else
                return 0;
        (void) unit_get_property(unit, "Result", &result);
        f.result = result;
        /* mount.nfs's or nbd-client's own words: the server's refusal, or the connection's error. */
        r = unit_log_tail(unit, NETROOT_LOG_LINES, &log);
        if (r < 0)
                log_debug_errno(r, "Failed to read the log of %s, not quoting it: %m", unit);
        r = explain_netroot_failure(stdout, &f, log);
        if (r < 0)
                return log_error_errno(r, "Failed to write the message: %m");
        c->n_explained++;
        return 1;
}

static int explain_failed_units(Context *c) {
        int r;

        STRV_FOREACH(u, c->failed_units) {
                FailureKind kind = failure_kind_from_unit(*u);
                _cleanup_free_ char *result = NULL, *what = NULL;
                _cleanup_strv_free_ char **log = NULL;

                r = explain_netroot_unit(c, *u);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                (void) unit_get_property(*u, "Result", &result);
                if (kind == FAILURE_MOUNT)
                        (void) unit_get_property(*u, "What", &what);
                else if (kind == FAILURE_FSCK) {
                        (void) fsck_unit_device(*u, &what);
                        /* fsck's verdict ("UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.") and
                         * systemd-fsck's exit status: the report says what to run and why. */
                        r = unit_log_tail(*u, FSCK_LOG_LINES, &log);
                        if (r < 0)
                                log_debug_errno(r, "Failed to read the log of %s, not quoting it: %m", *u);
                }
                else if (kind == FAILURE_UNLOCK) {
                        _cleanup_free_ char *exec_start = NULL;

                        /* Unparsable: the message keeps its DEVICE placeholder. */
                        if (unit_get_property(*u, "ExecStart", &exec_start) >= 0)
                                (void) cryptsetup_exec_start_device(exec_start, &what);
                }
                r = explain_failed_unit(stdout, *u, kind, result, what, log);
                if (r < 0)
                        return log_error_errno(r, "Failed to write the message: %m");
                c->n_explained++;
        }
        return 0;
}

/* What the boot did until it gave up: when each unit started and finished, each device appeared and
 * each module loaded. After the explanations, which matter more; left in /run as well, where it is
 * after "exit" from the shell too, until foyer-timeline-record.service replaces it. */
static int report_timeline(void) {
        _cleanup_(timeline_done) Timeline t = { .recorded_us = TIMELINE_NONE };
        int r;

        r = timeline_collect(&t, NULL, NULL);
        if (r < 0)
                return log_oom();
        (void) timeline_save(&t);
        printf("\nThe boot so far (also in %s; \"foyer timeline --svg FILE\" draws it):\n", FOYER_TIMELINE_PATH);
        r = timeline_write_table(&t, stdout);
        if (r >= 0)
                r = fflush(stdout) == 0 ? 0 : -EIO;
        if (r < 0)
                return log_error_errno(r, "Failed to write the timeline: %m");
        return 0;
}

int main(int argc, char *argv[]) {
        Context c = {};
        int r, r2;

        log_set_target(LOG_TARGET_CONSOLE);
        log_parse_environment();
        log_open();
        if (argc > 1) {
                log_error("This program takes no arguments.");
                return EXIT_FAILURE;
        }

        /* Without the list of failed units the missing devices are still worth a word. */
        r = list_failed_units(&c);
        r2 = collect_verity(&c);
        if (r2 >= 0)
                r2 = read_netroot(&c);
        /* The network first: without it a network root cannot be reached, whatever its unit says. */
        if (r2 >= 0)
                r2 = explain_network(&c);
        if (r2 >= 0)
                r2 = explain_missing_devices(&c);
        /* Before the failed units: a mount that failed on corrupted blocks is explained by this. */
        if (r2 >= 0)
                r2 = explain_verity(&c);
        if (r2 >= 0 && c.failed_units_known)
                r2 = explain_failed_units(&c);
        if (r >= 0)
                r = r2;
        if (c.n_explained == 0)
                log_debug("No missing device and no failed unit found.");
        r2 = report_timeline();
        if (r >= 0)
                r = r2;

        block_devices_free(c.devices, c.n_devices);
        verity_errors_free(c.verity, c.n_verity);
        netroot_done(&c.netroot);
        strv_free(c.failed_units);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
