/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vm-run: boot a kernel + initrd + disks in QEMU and drive its serial console by a script.
 *
 *   vm-run --kernel K --initrd I [--drive IMG]... [--append ARGS] [--log FILE]
 *          [--timeout SEC] [--accel auto|kvm|tcg] [--smp N] [--mem MB] [--live]
 *          [--firmware-kernel] SCRIPT
 *
 * SCRIPT is a scenario file; vm-run acts on these lines (others, such as `disk`, belong to the
 * shell runner and are ignored):
 *   append ARGS...        more kernel command line
 *   timeout SEC           overall deadline (default 600)
 *   firmware ovmf|ovmf-secboot
 *                         boot the disks through UEFI firmware (OVMF, pflash code + a private
 *                         copy of the variables; ovmf-secboot: Secure Boot enforced with
 *                         Debian's snakeoil keys enrolled) instead of -kernel/-initrd/-append;
 *                         with --firmware-kernel, the firmware starts K (an EFI kernel image)
 *                         with I and the command line, as QEMU's -kernel does under OVMF
 *   fail REGEX            fail as soon as REGEX shows up on the console
 *   expect SEC REGEX      wait at most SEC seconds for REGEX (POSIX ERE, per line)
 *   send TEXT             type TEXT; C escapes work and \n types Enter
 *   report SEC K=V...     wait for the FOYER-REPORT line and check each field against the
 *                         anchored ERE V
 *   poweroff SEC          wait for the machine to power itself off
 *   sleep SEC             let the console run for SEC seconds (e.g. before typing at a prompt
 *                         that flushes its input first)
 *   secret TEXT           fail if TEXT (C escapes work) ever shows up on the console: checked
 *                         as output arrives and once more over the whole console at the end
 *   forbid REGEX          fail if REGEX shows up on the console before the next expect (or report)
 *                         step matches: only the lines in front of that match count; then it is
 *                         dropped (a step, it becomes active where it stands in the script)
 *   qmp JSON              send a command to QEMU's monitor (QMP, a unix socket per VM) and wait
 *                         up to 30 s for its "return"; an "error" reply fails the run
 *   qmp-event SEC NAME [REGEX]
 *                         wait at most SEC seconds for the QMP event NAME (e.g. DEVICE_DELETED)
 *                         whose JSON line also matches REGEX, if given ("device": "rootdisk");
 *                         events that arrived since the last qmp step count, and a match uses the
 *                         event up
 *   keys KEY...           press keys on the machine's keyboard (the PS/2 one, for the VT: see vga),
 *                         one QMP send-key (and its reply) per word, in order; a word is QEMU's
 *                         qcode (a, z, 1, ret, spc, minus, ...) or several joined by '-', held together
 *                         (shift-z); the keys themselves are not logged (they may type a secret)
 *   qemu-args ARGS...     more QEMU arguments, split at blanks (no quoting), after the others
 *   hostfwd GUESTPORT     a network card (virtio-net-pci on QEMU's user network) whose GUESTPORT
 *                         is forwarded from a loopback TCP port of the run's own, the same on every
 *                         boot (for host steps: @PORT@)
 *   net                   a network card (virtio-net-pci) on QEMU's user network, without any
 *                         forward: the guest is 10.0.2.15 by DHCP and reaches the host's 127.0.0.1
 *                         as 10.0.2.2 (hostfwd and guestfwd lines imply the card; all of them
 *                         together make one card)
 *   server NAME PORTS CMD...
 *                         before the first boot, PORTS (1 to 4) free loopback TCP ports for the
 *                         server NAME (A-Z, 0-9, starting with a letter), then CMD run on the host
 *                         (sh -c, in a process group of its own, stdin /dev/null, output to
 *                         LOG.server-NAME with --log), the run waiting (at most 60 s, or
 *                         $FOYER_VM_SERVER_SECS) until it
 *                         accepts TCP connections on 127.0.0.1 at each port; it failing to start
 *                         fails the run, its output shown. The ports are @PORT_NAME@, @PORT_NAME_2@,
 *                         ... (and $FOYER_VM_PORT_NAME, $FOYER_VM_PORT_NAME_2, ... in the environment
 *                         of the servers, host steps and QEMU), replaced in the kernel command line
 *                         (append), in host steps, in server and guestfwd commands; a placeholder
 *                         needs its server line before it. The guest reaches the server at
 *                         10.0.2.2:PORT (with a network card: net). The server runs for the whole run
 *                         (all boots) and is stopped at its end, however it ends (SIGTERM to its
 *                         group, SIGKILL after 10 s)
 *   guestfwd ADDR:PORT CMD...
 *                         the guest's TCP connections to ADDR:PORT (an address of the user network,
 *                         such as 10.0.2.100) go to CMD, run by QEMU for each connection with the
 *                         connection on its stdin and stdout (user-net guestfwd=tcp:ADDR:PORT-cmd:CMD;
 *                         QEMU splits CMD into words as a shell would, without running one: quotes
 *                         work, $VARIABLES do not; @PORT_NAME@ is replaced). No host port is opened
 *   socket-net PORT       a second network card (virtio-net-pci, MAC 52:54:00:12:34:57) whose Ethernet
 *                         frames QEMU exchanges over a TCP connection to 127.0.0.1:PORT (-netdev
 *                         socket,connect=: each frame as a 4-byte big-endian length and the frame),
 *                         PORT a number or a server's @PORT_NAME@ (e.g. servers/dhcp-rootpath.py's,
 *                         which hands out a root path by DHCP); after the user network's card, if any
 *   tpm                   a TPM 2.0 (tpm-crb, QEMU's emulator backend on a swtpm started for each
 *                         boot, $FOYER_VM_SWTPM overrides the program); its state directory is the
 *                         run's own, kept across boots and removed at the end
 *   vga                   a VGA card (-vga std, nothing displayed): a VT with the PS/2 keyboard
 *                         for QMP's send-key; the console vm-run follows stays ttyS0
 *   host SEC CMD...       run CMD on the host (sh -c, stdin /dev/null, output to stderr), @PORT@
 *                         replaced by hostfwd's port (also in $FOYER_VM_PORT), @PORT_NAME@ by a
 *                         server's (see server); it must exit 0
 *                         within SEC seconds (the console is followed meanwhile). $FOYER_VM_LOG
 *                         is the console log (--log), $FOYER_VM_DISK0, 1, ... the disks as attached
 *                         (with boot lines: the overlays), $FOYER_VM_INITRD the initrd (with boot
 *                         lines: the run's own copy, which a host step may replace for the next boots)
 *   drive-if virtio|none  how the disks are attached: virtio (default, vda, vdb, ...) or none:
 *                         -drive ...,if=none,id=driveN (N from 0, in disk order), for a device of
 *                         the scenario's own (qemu-args -device virtio-blk-pci,drive=drive0,...)
 *   controller NAME...    the QEMU devices that hold the disks: disk i on the i-th NAME's, the disks
 *                         after the last NAME on the last one. NAME is virtio-blk (default, as drive-if
 *                         virtio), nvme (one controller per disk), ahci (q35's own, ports ide.N),
 *                         virtio-scsi, megasas-gen2, mptsas1068, pvscsi (one host adapter, id hba, or
 *                         hba0, hba1, ... by position with several NAMEs; a scsi-hd per disk at
 *                         target N), usb-storage, usb-uas (on a qemu-xhci, one for both); the disks
 *                         are then -drive ...,if=none,id=driveN (not with drive-if none). Each NAME
 *                         once, and at most as many as there are disks (each holds one)
 *   boot [tpm-reset]      the steps after it are one boot of the machine; several boot lines boot it
 *                         several times, one after the other, with the same QEMU command line: the
 *                         disks are then writable qcow2 overlays of the given images, made once per
 *                         run and kept across its boots (so what one boot writes, the next one
 *                         reads; the images themselves are never written), as are the firmware's
 *                         variables and the monitor's socket. The initrd is a copy of the run's
 *                         own too, under the same path on every boot: a host step may replace it
 *                         ($FOYER_VM_INITRD) with an image an earlier boot made, and the next boots
 *                         load that (the given --initrd is never written). A boot whose machine still runs
 *                         after its last step is stopped by the monitor's "quit", which flushes
 *                         the overlays. Without boot lines the script is one boot, on snapshot=on
 *                         disks. With them, every step comes after the first one, each boot has a
 *                         step, and the lines that shape the machine (append, firmware, qemu-args,
 *                         drive-if, controller, serial2, timeout, fail, secret and the shell runner's) come
 *                         before it: they hold for every boot. timeout is for all boots together.
 *                         (hostfwd, net, socket-net, server, guestfwd, tpm and vga too.) "boot tpm-reset" (with tpm) starts that boot
 *                         on an empty TPM state: the earlier boots' is wiped, as if the TPM had been
 *                         cleared or replaced, so that what was sealed to it no longer unseals.
 * Lines for the shell runner (disk, needs, image-args, uki, uki-other-append, esp-files, kernel, root, initrd) are
 * skipped; any other keyword, and a script without steps, is an error.
 * Text matched by one step is consumed: the next step only looks at what came after it.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 256
#define MAX_EXTRA_ARGS 96
#define MAX_FORBIDS 8
#define MAX_EVENTS 64
#define QMP_REPLY_SECS 30
#define QUIT_SECS 60          /* for QEMU to stop after the monitor's quit, between boots */
#define MAX_STEPS 64
#define MAX_FAILS 16
#define MAX_SECRETS 8
#define TAIL_LINES 60
#define MAX_SERVERS 8
#define MAX_SERVER_PORTS 4
#define MAX_SERVER_NAME 16
#define SERVER_LISTEN_SECS 60   /* for a server to accept connections on all its ports */
#define SERVER_STOP_SECS 10     /* for a server to clean up after SIGTERM, before SIGKILL */
#define SERVER_LOG_LINES 40     /* of a server's output, shown when it fails to start */
#define MAX_GUESTFWDS 4

enum step_kind { STEP_EXPECT, STEP_SEND, STEP_REPORT, STEP_POWEROFF, STEP_SLEEP, STEP_EXPECT2, STEP_SEND2,
                 STEP_FORBID, STEP_QMP, STEP_QMP_EVENT, STEP_HOST, STEP_KEYS };

struct step {
        enum step_kind kind;
        double secs;
        char *arg;      /* regex, text, or report fields */
        int line;
        int boot;       /* 1, 2, ...: the boot it belongs to */
};

/* controller NAME...: the QEMU devices that hold the disks of the scenario, the root's among them, so
 * that the guest has to find the root behind those controllers' drivers. Disk i is on the i-th
 * name's controller, the disks after the last name on the last one. Other than with virtio-blk the
 * disks are -drive if=none,id=driveN; each gets a device on its controller (disk_device(), in disk
 * order). */
enum controller { CTL_VIRTIO_BLK, CTL_NVME, CTL_AHCI, CTL_VIRTIO_SCSI, CTL_MEGASAS, CTL_MPTSAS, CTL_PVSCSI,
                  CTL_USB_STORAGE, CTL_USB_UAS, _CTL_MAX };
static const struct {
        const char *name;               /* the scenario's word: QEMU's device name */
        const char *scsi_hba;           /* QEMU's device of a SCSI host adapter that holds all of its disks
                                         * (id hba, or hbaN with several controllers); NULL: none */
        bool usb;                       /* on the scenario's qemu-xhci (id xhci), one for both USB kinds */
        int max_disks;
} controllers[_CTL_MAX] = {
        [CTL_VIRTIO_BLK]  = { "virtio-blk", NULL, false, 8 },
        [CTL_NVME]        = { "nvme", NULL, false, 8 },
        /* q35's own ICH9 AHCI (always there, 00:1f.2) has six ports, ide.0 to ide.5. */
        [CTL_AHCI]        = { "ahci", NULL, false, 6 },
        [CTL_VIRTIO_SCSI] = { "virtio-scsi", "virtio-scsi-pci", false, 8 },
        [CTL_MEGASAS]     = { "megasas-gen2", "megasas-gen2", false, 8 },
        [CTL_MPTSAS]      = { "mptsas1068", "mptsas1068", false, 8 },   /* 8 phys, a disk each */
        [CTL_PVSCSI]      = { "pvscsi", "pvscsi", false, 8 },
        /* qemu-xhci has four USB 2 and four USB 3 ports; QEMU picks a free one for each device (a
         * USB stick per disk, or the one usb-uas device). */
        [CTL_USB_STORAGE] = { "usb-storage", NULL, true, 4 },
        /* One usb-uas device (id uas, a name appears once in a controller line), its disks the LUNs. */
        [CTL_USB_UAS]     = { "usb-uas", NULL, true, 8 },
};
#define MAX_CONTROLLERS 8       /* as many as disks: each named controller holds one at least */

static struct {
        const char *kernel, *initrd, *log_path, *accel, *qemu;
        const char *drives[8];
        int n_drives;
        int n_boots;            /* boot lines in the script (0: none, one boot) */
        unsigned long long tpm_reset_boots; /* bit N-1: boot N starts on an empty TPM state */
        bool boot_lines;        /* the script has boot lines (n_boots counts a script without as one) */
        bool overlays;          /* the drives are qcow2 overlays (boot lines) */
        char append[4096];
        double timeout;
        int smp, mem;
        bool live;
        const char *firmware;   /* NULL (direct kernel boot), "ovmf" or "ovmf-secboot" */
        bool firmware_kernel;   /* --firmware-kernel: the firmware starts --kernel (an EFI image) */
        bool serial2;   /* a second serial port (ttyS1) for expect2/send2 */
        bool drive_if_none;     /* drive-if none: the disks are -drive if=none,id=driveN */
        enum controller controller[MAX_CONTROLLERS];    /* controller NAME... in line order */
        int n_controllers;      /* 0: no controller line, the disks are virtio-blk */
        int controller_line;    /* its script line (0: none) */
        int hostfwd_port;       /* hostfwd GUESTPORT (0: no forward) */
        bool net;               /* net: a network card even without a forward */
        char *socket_net;       /* socket-net PORT: the port (a number or a placeholder), or NULL */
        int socket_net_line;
        bool tpm, vga;
        char *extra_args[MAX_EXTRA_ARGS];       /* qemu-args */
        int n_extra_args;
        struct step steps[MAX_STEPS];
        int n_steps;
        char *fails[MAX_FAILS];
        int n_fails;
        char *secrets[MAX_SECRETS];
        int secret_lines[MAX_SECRETS];
        int n_secrets;
} cfg = {
        .timeout = 600,
        .smp = 1,
        .mem = 1024,
        .qemu = "qemu-system-x86_64",   /* $FOYER_VM_QEMU overrides (the harness self-test) */
};

/* Console text with CRs and escape sequences removed, for matching and the failure tail. */
static char *text;
static size_t text_len, text_cap;
static size_t consumed;         /* everything before this was matched by an earlier step */
static FILE *log_file;
static pid_t qemu_pid = -1;
static int qemu_in = -1, qemu_out = -1;
static bool qemu_exited;
static int qemu_status;
static double t_start;
static int boot_no = 1;         /* the boot running now */
static pid_t host_pid = -1;     /* a host step's command, its own process group */

/* hostfwd: the loopback port QEMU forwards to the guest. It is held (bound, SO_REUSEADDR, never
 * listening) from the start of the run to its end, because QEMU's user network binds the port
 * itself and can be handed no socket: while held, the kernel gives it to no other bind(port 0)
 * (another vm-run's) and to no bind without SO_REUSEADDR, but QEMU's, whose slirp sets
 * SO_REUSEADDR on its listening sockets, may bind and listen on it. So two runs in parallel never
 * pick the same port, and between boots the port stays reserved. (Binding, reading the port and
 * closing would leave a window before QEMU starts, in which another run could pick it.) */
static struct {
        int fd, port;
} net = { .fd = -1 };

/* server NAME PORTS CMD: a host process group serving the guest on loopback ports of the run's own.
 * The ports are picked by binding port 0 (all of the run's at once, so they differ), then released
 * just before the servers start, as the servers bind them themselves (unlike QEMU's hostfwd, not
 * every server sets SO_REUSEADDR, so they cannot be held meanwhile: a bind(0) of another process
 * in that moment could take one, and the server's failing to listen then fails the run). */
static struct server {
        char name[MAX_SERVER_NAME + 1];
        int n_ports;
        int ports[MAX_SERVER_PORTS];
        int port_fds[MAX_SERVER_PORTS]; /* held from the choice until the servers start */
        char *cmd;
        int line;
        pid_t pid;              /* its process group; -1: not running */
        char log[600];
        bool log_temp;          /* a temporary file (no --log), removed at the end */
} servers[MAX_SERVERS];
static int n_servers;

/* guestfwd ADDR:PORT CMD: QEMU's user network hands the guest's connections to ADDR:PORT to CMD. */
static struct {
        char *addr;             /* ADDR:PORT */
        char *cmd;
        int line;
} guestfwds[MAX_GUESTFWDS];
static int n_guestfwds;

/* tpm: swtpm's directory (its state, and its control socket, which QEMU connects to), and the
 * swtpm of the boot running now. */
static struct {
        char dir[256], state[300], sock[300];
        pid_t pid;
} tpm = { .pid = -1 };

/* The second serial port, a QEMU pipe chardev (FIFOs PATH.in and PATH.out); its cleaned output
 * is kept apart from the first's, and only expect2 looks at it. */
static struct {
        char path[256];
        int in, out;
        FILE *log;
        char *text;
        size_t len, cap, consumed;
        int esc_state;
} con2 = { .in = -1, .out = -1 };

/* QEMU's monitor (QMP): a unix socket in a per-run directory, connected at the first qmp step.
 * Each message is one line of JSON; events are kept (names and text) until a qmp-event step uses
 * them up or the next qmp step starts, a command's reply waits in reply until its step takes it. */
static struct {
        char dir[40], path[100];      /* fits sun_path */
        int fd;
        char *buf;
        size_t len, cap;
        char *events[MAX_EVENTS];       /* whole event lines */
        char *event_names[MAX_EVENTS];
        int n_events;
        char *reply;                    /* the last "return" or "error" line not yet taken */
        bool closed;
} qmp = { .fd = -1 };

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("vm-run: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        exit(2);
}

static void *xrealloc(void *p, size_t n) {
        p = realloc(p, n);
        if (!p)
                die("out of memory");
        return p;
}

static void kill_qemu(void) {
        if (qemu_pid > 0 && !qemu_exited) {
                kill(-qemu_pid, SIGKILL);       /* its process group: QEMU, or a fake's children */
                kill(qemu_pid, SIGKILL);
                waitpid(qemu_pid, &qemu_status, 0);
                qemu_exited = true;
        }
}

static void print_tail(void) {
        size_t i = text_len;
        int lines = 0;
        while (i > 0 && lines <= TAIL_LINES)
                if (text[--i] == '\n')
                        lines++;
        if (i > 0)
                i++;
        fprintf(stderr, "---- last %d lines of the console ----\n", TAIL_LINES);
        fwrite(text + i, 1, text_len - i, stderr);
        if (text_len > 0 && text[text_len - 1] != '\n')
                fputc('\n', stderr);
        fprintf(stderr, "---- end of console ----\n");
}

static void report_dead_servers(void);

static void fail(const char *fmt, ...) {
        va_list ap;
        kill_qemu();
        if (host_pid > 0)       /* a host step's command, when the console failed the run meanwhile */
                kill(-host_pid, SIGKILL);
        if (log_file)
                fflush(log_file);
        print_tail();
        report_dead_servers();
        if (cfg.n_boots > 1)
                fprintf(stderr, "FAIL in boot %d of %d after %.1fs: ", boot_no, cfg.n_boots, now() - t_start);
        else
                fprintf(stderr, "FAIL after %.1fs: ", now() - t_start);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        if (cfg.log_path)
                fprintf(stderr, "full console log: %s\n", cfg.log_path);
        exit(1);
}

/* Appends raw console bytes to a cleaned copy (no CRs, no escape sequences) for matching. */
static void clean_append(char **t, size_t *len, size_t *cap, int *esc_state, const char *buf, size_t n) {
        if (*len + n + 1 > *cap) {
                *cap = (*len + n + 1) * 2;
                *t = xrealloc(*t, *cap);
        }
        for (size_t i = 0; i < n; i++) {
                char c = buf[i];
                if (*esc_state == 1) {  /* after ESC */
                        *esc_state = c == '[' ? 2 : 0;
                        continue;
                }
                if (*esc_state == 2) {  /* inside CSI */
                        if (c >= 0x40 && c <= 0x7e)
                                *esc_state = 0;
                        continue;
                }
                if (c == '\033') {
                        *esc_state = 1;
                        continue;
                }
                if (c == '\r' || c == '\0')
                        continue;
                (*t)[(*len)++] = c;
        }
        (*t)[*len] = '\0';
}

/* Append raw console bytes: log them as they are, keep a cleaned copy for matching. */
static void add_output(const char *buf, size_t n) {
        static int esc_state;

        if (log_file) {
                fwrite(buf, 1, n, log_file);
                fflush(log_file);
        }
        if (cfg.live) {
                fwrite(buf, 1, n, stdout);
                fflush(stdout);
        }
        clean_append(&text, &text_len, &text_cap, &esc_state, buf, n);
}

/* Output of the second port goes to its own log, LOG.ttyS1, and its own copy. */
static void add_output2(const char *buf, size_t n) {
        if (con2.log) {
                fwrite(buf, 1, n, con2.log);
                fflush(con2.log);
        }
        clean_append(&con2.text, &con2.len, &con2.cap, &con2.esc_state, buf, n);
}

/* The raw JSON value of a top-level KEY of the object in line (a copy), or NULL. Enough JSON for
 * QMP's replies: strings with escapes, nested objects and arrays. */
static char *json_top_value(const char *line, const char *key) {
        const char *p = line + strspn(line, " \t");
        int depth = 0;
        bool want_key = false;

        if (*p != '{')
                return NULL;
        for (; *p; p++) {
                if (*p == '"') {
                        const char *start = ++p;
                        while (*p && *p != '"')
                                p += p[0] == '\\' && p[1] ? 2 : 1;
                        if (!*p)
                                return NULL;
                        if (depth == 1 && want_key) {
                                bool match = (size_t) (p - start) == strlen(key) && strncmp(start, key, p - start) == 0;
                                const char *v = p + 1 + strspn(p + 1, " \t");
                                if (*v != ':')
                                        return NULL;
                                v++;
                                v += strspn(v, " \t");
                                want_key = false;
                                if (match) {
                                        /* The value runs to the "," or "}" that ends it at this depth. */
                                        const char *e = v;
                                        int d = 0;
                                        for (; *e; e++) {
                                                if (*e == '"') {
                                                        for (e++; *e && *e != '"'; e += e[0] == '\\' && e[1] ? 2 : 1)
                                                                ;
                                                        if (!*e)
                                                                break;
                                                } else if (*e == '{' || *e == '[')
                                                        d++;
                                                else if (*e == '}' || *e == ']') {
                                                        if (d == 0)
                                                                break;
                                                        d--;
                                                } else if (*e == ',' && d == 0)
                                                        break;
                                        }
                                        while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
                                                e--;
                                        return strndup(v, e - v);
                                }
                                p = v - 1;
                        }
                        continue;
                }
                if (*p == '{' || *p == '[') {
                        depth++;
                        want_key = depth == 1;
                } else if (*p == '}' || *p == ']')
                        depth--;
                else if (*p == ',' && depth == 1)
                        want_key = true;
        }
        return NULL;
}

/* A JSON string value without its quotes (escapes left as they are). */
static char *json_unquote(char *v) {
        size_t n = v ? strlen(v) : 0;
        if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
                memmove(v, v + 1, n - 2);
                v[n - 2] = '\0';
        }
        return v;
}

static void qmp_log(const char *dir, const char *line) {
        if (log_file) {
                fprintf(log_file, "\n# qmp %s %s\n", dir, line);
                fflush(log_file);
        }
}

/* Sorts the complete lines read from the monitor into events and replies. */
static void qmp_process(void) {
        char *nl;
        while ((nl = memchr(qmp.buf, '\n', qmp.len))) {
                *nl = '\0';
                char *line = qmp.buf;
                size_t n = nl + 1 - qmp.buf;
                if (n > 1 && line[n - 2] == '\r')
                        line[n - 2] = '\0';
                if (*line) {
                        qmp_log("<-", line);
                        char *event = json_unquote(json_top_value(line, "event"));
                        if (event) {
                                if (qmp.n_events == MAX_EVENTS) {
                                        free(qmp.events[0]);
                                        free(qmp.event_names[0]);
                                        memmove(qmp.events, qmp.events + 1, sizeof qmp.events[0] * (MAX_EVENTS - 1));
                                        memmove(qmp.event_names, qmp.event_names + 1,
                                                sizeof qmp.event_names[0] * (MAX_EVENTS - 1));
                                        qmp.n_events--;
                                }
                                qmp.events[qmp.n_events] = strdup(line);
                                qmp.event_names[qmp.n_events++] = event;
                        } else {
                                char *r = json_top_value(line, "return"), *e = json_top_value(line, "error");
                                if (r || e) {
                                        free(qmp.reply);
                                        qmp.reply = strdup(line);
                                }
                                free(r);
                                free(e);
                        }
                }
                memmove(qmp.buf, qmp.buf + n, qmp.len - n);
                qmp.len -= n;
        }
}

static void qmp_read(void) {
        if (qmp.len + 4096 > qmp.cap) {
                qmp.cap = (qmp.len + 4096) * 2;
                qmp.buf = xrealloc(qmp.buf, qmp.cap);
        }
        ssize_t k = read(qmp.fd, qmp.buf + qmp.len, qmp.cap - qmp.len - 1);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
                return;
        if (k <= 0) {
                close(qmp.fd);
                qmp.fd = -1;
                qmp.closed = true;
                return;
        }
        qmp.len += k;
        qmp_process();
}

/* Read console output (and monitor messages) until the deadline; returns false on timeout or QEMU
 * exit, true after some input. */
static bool pump(double deadline) {
        char buf[4096];
        for (;;) {
                double left = deadline - now();
                if (left <= 0)
                        return false;
                if (qemu_out < 0)
                        return false;
                struct pollfd p[3] = { { .fd = qemu_out, .events = POLLIN },
                                       { .fd = con2.out, .events = POLLIN },
                                       { .fd = qmp.fd, .events = POLLIN } };
                int r = poll(p, 3, (int) (left * 1000) + 1);   /* fds < 0 are skipped */
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        die("poll: %m");
                if (r == 0)
                        continue;
                bool other = false;
                if (con2.out >= 0 && (p[1].revents & POLLIN)) {
                        ssize_t k = read(con2.out, buf, sizeof buf);
                        if (k > 0)
                                add_output2(buf, (size_t) k);
                        other = true;
                }
                if (qmp.fd >= 0 && (p[2].revents & (POLLIN | POLLHUP | POLLERR))) {
                        qmp_read();
                        other = true;
                }
                if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
                        if (other)
                                return true;
                        continue;
                }
                ssize_t k = read(qemu_out, buf, sizeof buf);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        close(qemu_out);
                        qemu_out = -1;
                        waitpid(qemu_pid, &qemu_status, 0);
                        qemu_exited = true;
                        return false;
                }
                add_output(buf, (size_t) k);
                return true;
        }
}

static void compile(regex_t *re, const char *pattern, int line) {
        int r = regcomp(re, pattern, REG_EXTENDED | REG_NEWLINE);
        if (r != 0) {
                char msg[256];
                regerror(r, re, msg, sizeof msg);
                die("script line %d: bad regex '%s': %s", line, pattern, msg);
        }
}

static regex_t fail_re[MAX_FAILS];
static size_t fail_checked;

/* Secrets are never printed: the message names the script line that declared them. */
static void check_secrets(size_t from, size_t to) {
        for (int i = 0; i < cfg.n_secrets; i++)
                if (memmem(text + from, to - from, cfg.secrets[i], strlen(cfg.secrets[i])))
                        fail("console showed the secret of script line %d", cfg.secret_lines[i]);
}

static void check_fail_patterns(void) {
        /* Only complete lines, each looked at once. */
        char *end = memrchr(text + fail_checked, '\n', text_len - fail_checked);
        if (!end)
                return;
        check_secrets(fail_checked, end + 1 - text);
        char saved = end[1];
        end[1] = '\0';
        for (int i = 0; i < cfg.n_fails; i++) {
                regmatch_t m;
                if (regexec(&fail_re[i], text + fail_checked, 1, &m, 0) == 0) {
                        end[1] = saved;
                        fail("console showed forbidden pattern /%s/", cfg.fails[i]);
                }
        }
        end[1] = saved;
        fail_checked = end + 1 - text;
}

/* forbid steps: each pattern holds until the next expect or report step matches; only the console
 * text in front of that match counts. forbid_checked: complete lines before it were looked at. */
static struct {
        regex_t re;
        char *pattern;
        int line;
} forbids[MAX_FORBIDS];
static int n_forbids;
static size_t forbid_checked;

static void add_forbid(const char *pattern, int line) {
        if (n_forbids == 0)
                forbid_checked = consumed;
        if (n_forbids >= MAX_FORBIDS)
                die("script line %d: more than %d forbid steps before an expect", line, MAX_FORBIDS);
        compile(&forbids[n_forbids].re, pattern, line);
        forbids[n_forbids].pattern = (char *) pattern;
        forbids[n_forbids++].line = line;
}

/* Looks at the first port's text from forbid_checked up to limit; until_pattern (the expect that
 * ends the forbids, if it just matched at limit) is for the message. */
static void check_forbids(size_t limit, const char *until_pattern) {
        if (n_forbids == 0 || limit <= forbid_checked)
                return;
        char saved = text[limit];
        text[limit] = '\0';
        for (int i = 0; i < n_forbids; i++)
                if (regexec(&forbids[i].re, text + forbid_checked, 0, NULL, 0) == 0) {
                        text[limit] = saved;
                        if (until_pattern)
                                fail("console showed /%s/ (forbid, script line %d) before /%s/",
                                     forbids[i].pattern, forbids[i].line, until_pattern);
                        fail("console showed /%s/ (forbid, script line %d)", forbids[i].pattern, forbids[i].line);
                }
        text[limit] = saved;
        /* Complete lines need no second look. */
        char *nl = memrchr(text + forbid_checked, '\n', limit - forbid_checked);
        if (nl)
                forbid_checked = nl + 1 - text;
}

static void clear_forbids(void) {
        for (int i = 0; i < n_forbids; i++)
                regfree(&forbids[i].re);
        n_forbids = 0;
}

/* Wait for a regex in the unconsumed text of the first port (or of the second, with port2);
 * returns the match end offset. */
static size_t wait_for_on(bool port2, const char *pattern, double secs, int line, size_t *match_start) {
        regex_t re;
        double deadline = now() + secs;
        double overall = t_start + cfg.timeout;
        size_t scan_from = port2 ? con2.consumed : consumed;

        compile(&re, pattern, line);
        for (;;) {
                regmatch_t m;
                /* (re-read each time: output may move the buffers) */
                const char *t = port2 ? con2.text : text;
                size_t t_len = port2 ? con2.len : text_len;
                bool found = scan_from < t_len && regexec(&re, t + scan_from, 1, &m, 0) == 0;
                const char *nl = t_len > scan_from ? memrchr(t + scan_from, '\n', t_len - scan_from) : NULL;
                /* A forbidden pattern counts only in front of the match that ends it. */
                if (!port2)
                        check_forbids(found ? scan_from + m.rm_so : nl ? (size_t) (nl + 1 - t) : scan_from,
                                      found ? pattern : NULL);
                check_fail_patterns();
                if (found) {
                        regfree(&re);
                        if (!port2)
                                clear_forbids();
                        if (match_start)
                                *match_start = scan_from + m.rm_so;
                        return scan_from + m.rm_eo;
                }
                /* Next time, start at the last incomplete line. */
                if (nl)
                        scan_from = nl + 1 - t;
                double d = deadline < overall ? deadline : overall;
                if (!pump(d)) {
                        if (qemu_exited)
                                fail("QEMU exited (status %d) while waiting for /%s/ (script line %d)",
                                     WIFEXITED(qemu_status) ? WEXITSTATUS(qemu_status) : -1,
                                     pattern, line);
                        if (now() >= overall)
                                fail("overall timeout of %.0fs reached while waiting for /%s/ (script line %d)",
                                     cfg.timeout, pattern, line);
                        fail("no /%s/ within %.0fs (script line %d)", pattern, secs, line);
                }
        }
}

static size_t wait_for(const char *pattern, double secs, int line, size_t *match_start) {
        return wait_for_on(false, pattern, secs, line, match_start);
}

static void remove_qmp_dir(void) {
        if (*qmp.path)
                unlink(qmp.path);
        if (*qmp.dir)
                rmdir(qmp.dir);
}

/* Pump the console until the monitor has a reply for us; fails on an "error" reply. */
static char *qmp_wait_reply(const char *what, int line) {
        double deadline = now() + QMP_REPLY_SECS, overall = t_start + cfg.timeout;
        while (!qmp.reply) {
                check_fail_patterns();
                if (qmp.closed)
                        fail("QEMU's monitor closed the connection while waiting for the reply to %s (script line %d)",
                             what, line);
                if (!pump(deadline < overall ? deadline : overall) && !qmp.reply) {
                        if (qemu_exited)
                                fail("QEMU exited while waiting for the reply to %s (script line %d)", what, line);
                        if (now() >= deadline || now() >= overall)
                                fail("no reply to %s from QEMU's monitor within %ds (script line %d)",
                                     what, QMP_REPLY_SECS, line);
                }
        }
        char *reply = qmp.reply;
        qmp.reply = NULL;
        char *error = json_top_value(reply, "error");
        if (error) {
                char *desc = json_unquote(json_top_value(error, "desc"));
                fail("QEMU's monitor refused %s (script line %d): %s", what, line, desc ? desc : error);
        }
        return reply;
}

static void qmp_send(const char *json) {
        size_t n = strlen(json);
        qmp_log("->", json);
        if (write(qmp.fd, json, n) != (ssize_t) n || write(qmp.fd, "\n", 1) != 1)
                fail("writing to QEMU's monitor: %m");
}

/* Connects to the monitor (QEMU makes the socket while it starts) and leaves the greeting's
 * capabilities negotiation mode. */
static void qmp_connect(int line) {
        double deadline = now() + 20;
        if (qmp.fd >= 0)
                return;
        if (qmp.closed)
                fail("QEMU's monitor has closed the connection (script line %d)", line);
        for (;;) {
                int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                if (fd < 0)
                        die("socket: %m");
                snprintf(sa.sun_path, sizeof sa.sun_path, "%s", qmp.path);
                if (connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0) {
                        qmp.fd = fd;
                        break;
                }
                int e = errno;
                close(fd);
                if (e != ENOENT && e != ECONNREFUSED)
                        fail("cannot connect to QEMU's monitor %s: %s (script line %d)", qmp.path, strerror(e), line);
                if (now() >= deadline)
                        fail("QEMU's monitor %s did not come up within 20s (script line %d)", qmp.path, line);
                pump(now() + 0.1);
                check_fail_patterns();
                if (qemu_exited)
                        fail("QEMU exited before its monitor could be reached (script line %d)", line);
        }
        qmp_send("{\"execute\": \"qmp_capabilities\"}");
        free(qmp_wait_reply("qmp_capabilities", line));
}

static void clear_events(int upto) {
        for (int i = 0; i < upto; i++) {
                free(qmp.events[i]);
                free(qmp.event_names[i]);
        }
        memmove(qmp.events, qmp.events + upto, sizeof qmp.events[0] * (qmp.n_events - upto));
        memmove(qmp.event_names, qmp.event_names + upto, sizeof qmp.event_names[0] * (qmp.n_events - upto));
        qmp.n_events -= upto;
}

/* A qmp step: events from before the command no longer count. Returns the reply line. */
static char *qmp_command(const char *json, int line) {
        qmp_connect(line);
        clear_events(qmp.n_events);
        free(qmp.reply);
        qmp.reply = NULL;
        qmp_send(json);
        return qmp_wait_reply(json, line);
}

/* A qmp-event step (data: a regex for the event's line, or NULL); returns the event's line. */
static char *qmp_wait_event(const char *name, const char *data, double secs, int line) {
        double deadline = now() + secs, overall = t_start + cfg.timeout;
        regex_t re;
        if (data)
                compile(&re, data, line);
        qmp_connect(line);
        for (;;) {
                for (int i = 0; i < qmp.n_events; i++)
                        if (strcmp(qmp.event_names[i], name) == 0 &&
                            (!data || regexec(&re, qmp.events[i], 0, NULL, 0) == 0)) {
                                char *ev = qmp.events[i];
                                qmp.events[i] = NULL;
                                clear_events(i + 1);
                                if (data)
                                        regfree(&re);
                                return ev;
                        }
                check_fail_patterns();
                if (qmp.closed)
                        fail("QEMU's monitor closed the connection while waiting for event %s (script line %d)",
                             name, line);
                if (!pump(deadline < overall ? deadline : overall)) {
                        if (qemu_exited)
                                fail("QEMU exited while waiting for event %s (script line %d)", name, line);
                        if (now() >= deadline || now() >= overall) {
                                fprintf(stderr, "vm-run: QMP events since the last qmp step:%s\n",
                                        qmp.n_events ? "" : " none");
                                for (int i = 0; i < qmp.n_events; i++)
                                        fprintf(stderr, "vm-run:   %s\n", qmp.events[i]);
                                fail("no QMP event %s%s%s%s within %.0fs (script line %d)", name,
                                     data ? " matching /" : "", data ? data : "", data ? "/" : "", secs, line);
                        }
                }
        }
}

static char *unescape(const char *s) {
        char *out = xrealloc(NULL, strlen(s) + 1), *o = out;
        for (; *s; s++) {
                if (*s != '\\' || !s[1]) {
                        *o++ = *s;
                        continue;
                }
                switch (*++s) {
                case 'n': case 'r': *o++ = '\r'; break;
                case 't': *o++ = '\t'; break;
                case 'e': *o++ = '\033'; break;
                case 's': *o++ = ' '; break;
                default: *o++ = *s;
                }
        }
        *o = '\0';
        return out;
}

static void send_text_to(int fd, const char *s) {
        char *t = unescape(s);
        /* Type slowly: the guest's tty may drop a burst while it is busy. */
        for (char *p = t; *p; p++) {
                if (write(fd, p, 1) != 1)
                        fail("writing to the console: %m");
                pump(now() + 0.02);
        }
        free(t);
}

static void send_text(const char *s) {
        send_text_to(qemu_in, s);
}

static void check_report(const char *fields, double secs, int line) {
        size_t start;
        size_t end = wait_for("^FOYER-REPORT [^\n]*\n", secs, line, &start);
        char *report = strndup(text + start, end - start - 1);
        consumed = end;
        printf("%s\n", report);
        fflush(stdout);

        char *want = strdup(fields), *save = NULL;
        bool ok = true;
        for (char *f = strtok_r(want, " \t", &save); f; f = strtok_r(NULL, " \t", &save)) {
                char *eq = strchr(f, '=');
                if (!eq)
                        die("script line %d: report field '%s' is not KEY=REGEX", line, f);
                *eq = '\0';
                char key[128];
                snprintf(key, sizeof key, " %s=", f);
                char *v = strstr(report, key);
                char value[512] = "";
                if (v) {
                        v += strlen(key);
                        size_t n = strcspn(v, " ");
                        snprintf(value, sizeof value, "%.*s", (int) n, v);
                }
                char anchored[600];
                snprintf(anchored, sizeof anchored, "^(%s)$", eq + 1);
                regex_t re;
                compile(&re, anchored, line);
                if (!v || regexec(&re, value, 0, NULL, 0) != 0) {
                        fprintf(stderr, "report field %s: got '%s', want /%s/\n",
                                f, v ? value : "(missing)", eq + 1);
                        ok = false;
                }
                regfree(&re);
        }
        free(want);
        if (!ok)
                fail("report line does not match (script line %d): %s", line, report);
        free(report);
}

static char *trim(char *s) {
        while (*s == ' ' || *s == '\t')
                s++;
        char *e = s + strlen(s);
        while (e > s && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t'))
                *--e = '\0';
        return s;
}

static void add_append(const char *a) {
        size_t n = strlen(cfg.append);
        snprintf(cfg.append + n, sizeof cfg.append - n, "%s%s", n ? " " : "", a);
}

static struct server *find_server(const char *name, size_t len) {
        assert(name);
        for (int i = 0; i < n_servers; i++)
                if (strlen(servers[i].name) == len && strncmp(servers[i].name, name, len) == 0)
                        return &servers[i];
        return NULL;
}

/* A server's port placeholder at p ("@PORT_NAME@" or "@PORT_NAME_N@", N from 2 to its PORTS): its
 * length, with the port in *ret_port (0 while ports are not chosen yet); 0 if p is none of a known
 * server's, with what is wrong in *ret_why. */
static size_t port_placeholder(const char *p, int *ret_port, const char **ret_why) {
        const char *name = p + strlen("@PORT_"), *e = name;
        long n = 1;

        assert(strncmp(p, "@PORT_", 6) == 0);
        while ((*e >= 'A' && *e <= 'Z') || (*e >= '0' && *e <= '9'))
                e++;
        const char *end = e;
        if (*e == '_') {
                char *num_end;
                n = strtol(e + 1, &num_end, 10);
                if (num_end == e + 1 || n < 2) {
                        *ret_why = "not @PORT_NAME@ or @PORT_NAME_N@ (N from 2)";
                        return 0;
                }
                e = num_end;
        }
        if (e == name || *e != '@') {
                *ret_why = "not @PORT_NAME@ or @PORT_NAME_N@ (NAME a server's, A-Z and 0-9)";
                return 0;
        }
        struct server *sv = find_server(name, end - name);
        if (!sv) {
                *ret_why = "no server line of that name before it";
                return 0;
        }
        if (n > sv->n_ports) {
                *ret_why = "beyond the ports of its server line";
                return 0;
        }
        *ret_port = sv->ports[n - 1];
        return e + 1 - p;
}

/* Every @PORT_...@ in s names a port of a server line above it. */
static void check_port_placeholders(const char *s, const char *path, int lineno) {
        assert(s);
        for (const char *p = strstr(s, "@PORT_"); p; p = strstr(p + 1, "@PORT_")) {
                const char *why = NULL;
                int port;
                if (port_placeholder(p, &port, &why) == 0)
                        die("%s:%d: %.*s: %s", path, lineno, (int) strcspn(p + 1, "@ \t") + 2, p, why);
        }
}

/* s with @PORT@ (hostfwd's port) and the servers' @PORT_NAME@, @PORT_NAME_N@ replaced, newly
 * allocated. (The placeholders were checked when the script was read.) */
static char *expand_ports(const char *s) {
        char *r = xrealloc(NULL, strlen(s) * 2 + 16), *o = r;

        assert(s);
        for (const char *p = s; *p;) {
                const char *why;
                size_t len;
                int port;
                if (strncmp(p, "@PORT@", 6) == 0 && net.port) {
                        o += sprintf(o, "%d", net.port);
                        p += 6;
                } else if (strncmp(p, "@PORT_", 6) == 0 && (len = port_placeholder(p, &port, &why)) > 0) {
                        o += sprintf(o, "%d", port);   /* (5 digits at most: no longer than the placeholder) */
                        p += len;
                } else
                        *o++ = *p++;
        }
        *o = '\0';
        return r;
}

/* The lines that shape the machine (or its disks, for the shell runner): with boot lines, they come
 * before the first one, as they hold for every boot. */
static bool is_machine_keyword(const char *s) {
        static const char *const keywords[] = {
                "append", "firmware", "timeout", "fail", "secret", "serial2", "qemu-args", "drive-if",
                "controller", "hostfwd", "net", "socket-net", "server", "guestfwd", "tpm", "vga",
                "disk", "needs", "image-args", "uki", "uki-other-append", "esp-files", "kernel", "root", "initrd",
        };
        for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
                if (strcmp(s, keywords[i]) == 0)
                        return true;
        return false;
}

/* controller NAME...: the controllers, in the order of the disks they take. */
static void parse_controllers(char *names, const char *path, int lineno) {
        char *save = NULL;

        assert(names);
        assert(path);

        if (cfg.controller_line)
                die("%s:%d: only one controller line (the first is line %d)", path, lineno, cfg.controller_line);
        if (!*names)
                die("%s:%d: controller needs a name", path, lineno);
        for (char *w = strtok_r(names, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                enum controller c = 0;
                while (c < _CTL_MAX && strcmp(w, controllers[c].name) != 0)
                        c++;
                if (c == _CTL_MAX)
                        die("%s:%d: controller is virtio-blk, nvme, ahci, virtio-scsi, megasas-gen2, "
                            "mptsas1068, pvscsi, usb-storage or usb-uas, not '%s'", path, lineno, w);
                /* Disk i is the i-th name's: a second mention would mean a second controller of the
                 * kind, which the devices' ids (hba, xhci, uas) do not tell apart. */
                for (int k = 0; k < cfg.n_controllers; k++)
                        if (cfg.controller[k] == c)
                                die("%s:%d: controller %s named twice (name a controller once; the disks "
                                    "after the last name are on the last one)", path, lineno, w);
                if (cfg.n_controllers >= MAX_CONTROLLERS)
                        die("%s:%d: at most %d controllers", path, lineno, MAX_CONTROLLERS);
                cfg.controller[cfg.n_controllers++] = c;
        }
        cfg.controller_line = lineno;
}

/* server NAME PORTS CMD... */
static void parse_server(char *rest, const char *path, int lineno) {
        char *name = rest, *ports = rest + strcspn(rest, " \t"), *cmd, *end;

        assert(rest);
        assert(path);

        if (*ports)
                *ports++ = '\0';
        ports = trim(ports);
        cmd = ports + strcspn(ports, " \t");
        if (*cmd)
                *cmd++ = '\0';
        cmd = trim(cmd);
        if (!*name)
                die("%s:%d: server needs a name, a number of ports and a command (server NFS 2 CMD...)", path, lineno);
        if (!(*name >= 'A' && *name <= 'Z') || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != strlen(name) ||
            strlen(name) > MAX_SERVER_NAME)
                die("%s:%d: server name '%s': A-Z and 0-9, starting with a letter, at most %d (it is in @PORT_%s@)",
                    path, lineno, name, MAX_SERVER_NAME, name);
        struct server *other = find_server(name, strlen(name));
        if (other)
                die("%s:%d: server %s named twice (the first is line %d)", path, lineno, name, other->line);
        long n = strtol(ports, &end, 10);
        if (end == ports || *end || n < 1 || n > MAX_SERVER_PORTS)
                die("%s:%d: server %s needs its number of ports (1 to %d) before the command, not '%s'", path, lineno,
                    name, MAX_SERVER_PORTS, ports);
        if (!*cmd)
                die("%s:%d: server %s needs a command", path, lineno, name);
        if (n_servers >= MAX_SERVERS)
                die("%s:%d: at most %d server lines", path, lineno, MAX_SERVERS);
        struct server *sv = &servers[n_servers++];
        *sv = (struct server) { .n_ports = (int) n, .line = lineno, .pid = -1 };
        snprintf(sv->name, sizeof sv->name, "%s", name);
        for (int i = 0; i < MAX_SERVER_PORTS; i++)
                sv->port_fds[i] = -1;
        sv->cmd = strdup(cmd);
        if (!sv->cmd)
                die("out of memory");
        check_port_placeholders(cmd, path, lineno);     /* its own ports, and those of the servers above */
}

/* guestfwd ADDR:PORT CMD... */
static void parse_guestfwd(char *rest, const char *path, int lineno) {
        char *cmd = rest + strcspn(rest, " \t");
        struct in_addr a;

        assert(rest);
        assert(path);

        if (*cmd)
                *cmd++ = '\0';
        cmd = trim(cmd);
        char *colon = strrchr(rest, ':'), *end;
        if (!colon)
                die("%s:%d: guestfwd needs ADDR:PORT and a command (guestfwd 10.0.2.100:80 CMD...), not '%s'", path,
                    lineno, rest);
        *colon = '\0';
        bool addr_ok = inet_pton(AF_INET, rest, &a) == 1;
        long port = strtol(colon + 1, &end, 10);
        *colon = ':';
        if (!addr_ok || end == colon + 1 || *end || port < 1 || port > 65535)
                die("%s:%d: guestfwd needs an IPv4 ADDR:PORT of the guest's network, not '%s'", path, lineno, rest);
        if (!*cmd)
                die("%s:%d: guestfwd needs a command", path, lineno);
        for (int i = 0; i < n_guestfwds; i++)
                if (strcmp(guestfwds[i].addr, rest) == 0)
                        die("%s:%d: guestfwd %s twice (the first is line %d)", path, lineno, rest, guestfwds[i].line);
        if (n_guestfwds >= MAX_GUESTFWDS)
                die("%s:%d: at most %d guestfwd lines", path, lineno, MAX_GUESTFWDS);
        check_port_placeholders(cmd, path, lineno);
        guestfwds[n_guestfwds].addr = strdup(rest);
        guestfwds[n_guestfwds].cmd = strdup(cmd);
        guestfwds[n_guestfwds].line = lineno;
        if (!guestfwds[n_guestfwds].addr || !guestfwds[n_guestfwds].cmd)
                die("out of memory");
        n_guestfwds++;
}

/* Whether boot n (1, 2, ...) has a step so far. */
static bool boot_has_steps(int n) {
        return cfg.n_steps > 0 && cfg.steps[cfg.n_steps - 1].boot == n;
}

static void parse_script(const char *path) {
        FILE *f = fopen(path, "re");
        char *line = NULL;
        size_t cap = 0;
        int lineno = 0;

        if (!f)
                die("cannot open %s: %m", path);
        while (getline(&line, &cap, f) >= 0) {
                lineno++;
                char *s = trim(line);
                if (!*s || *s == '#')
                        continue;
                char *rest = s + strcspn(s, " \t");
                if (*rest)
                        *rest++ = '\0';
                rest = trim(rest);

                if (cfg.n_boots > 0 && is_machine_keyword(s))
                        die("%s:%d: '%s' belongs before the first boot line: it holds for every boot",
                            path, lineno, s);
                if (strcmp(s, "boot") == 0) {
                        if (*rest && strcmp(rest, "tpm-reset") != 0)
                                die("%s:%d: boot takes no argument but tpm-reset, not '%s'", path, lineno, rest);
                        if (cfg.n_boots == 0 && cfg.n_steps > 0)
                                die("%s:%d: a step (line %d) before the first boot line: with boot lines, each "
                                    "step belongs to a boot", path, lineno, cfg.steps[0].line);
                        if (cfg.n_boots > 0 && !boot_has_steps(cfg.n_boots))
                                die("%s:%d: boot %d has no steps", path, lineno, cfg.n_boots);
                        cfg.n_boots++;
                        if (*rest) {
                                if (cfg.n_boots == 1 || cfg.n_boots > 64)
                                        die("%s:%d: tpm-reset on boot %d: only a later boot (2 to 64) starts on a "
                                            "reset TPM", path, lineno, cfg.n_boots);
                                cfg.tpm_reset_boots |= 1ULL << (cfg.n_boots - 1);
                        }
                        continue;
                }

                struct step st = { .line = lineno, .boot = cfg.n_boots > 0 ? cfg.n_boots : 1 };
                if (strcmp(s, "append") == 0) {
                        check_port_placeholders(rest, path, lineno);
                        add_append(rest);
                        continue;
                } else if (strcmp(s, "firmware") == 0) {
                        if (strcmp(rest, "ovmf") != 0 && strcmp(rest, "ovmf-secboot") != 0)
                                die("%s:%d: firmware is ovmf or ovmf-secboot, not '%s'", path, lineno, rest);
                        cfg.firmware = strdup(rest);
                        continue;
                } else if (strcmp(s, "timeout") == 0) {
                        cfg.timeout = atof(rest);
                        continue;
                } else if (strcmp(s, "fail") == 0) {
                        if (cfg.n_fails >= MAX_FAILS)
                                die("too many fail lines");
                        cfg.fails[cfg.n_fails++] = strdup(rest);
                        continue;
                } else if (strcmp(s, "secret") == 0) {
                        if (cfg.n_secrets >= MAX_SECRETS)
                                die("too many secret lines");
                        if (!*rest)
                                die("%s:%d: secret needs a text", path, lineno);
                        cfg.secret_lines[cfg.n_secrets] = lineno;
                        cfg.secrets[cfg.n_secrets++] = unescape(rest);
                        continue;
                } else if (strcmp(s, "serial2") == 0) {
                        cfg.serial2 = true;
                        continue;
                } else if (strcmp(s, "qemu-args") == 0) {
                        char *save = NULL;
                        if (!*rest)
                                die("%s:%d: qemu-args needs arguments", path, lineno);
                        for (char *a = strtok_r(rest, " \t", &save); a; a = strtok_r(NULL, " \t", &save)) {
                                if (cfg.n_extra_args >= MAX_EXTRA_ARGS)
                                        die("%s:%d: too many qemu-args", path, lineno);
                                cfg.extra_args[cfg.n_extra_args++] = strdup(a);
                        }
                        continue;
                } else if (strcmp(s, "hostfwd") == 0) {
                        char *end;
                        long p = strtol(rest, &end, 10);
                        if (end == rest || *end || p <= 0 || p > 65535)
                                die("%s:%d: hostfwd needs the guest's TCP port, not '%s'", path, lineno, rest);
                        if (cfg.hostfwd_port)
                                die("%s:%d: only one hostfwd line", path, lineno);
                        cfg.hostfwd_port = (int) p;
                        continue;
                } else if (strcmp(s, "net") == 0) {
                        if (*rest)
                                die("%s:%d: net takes no arguments", path, lineno);
                        cfg.net = true;
                        continue;
                } else if (strcmp(s, "socket-net") == 0) {
                        char *end;
                        long p = strtol(rest, &end, 10);
                        if (cfg.socket_net)
                                die("%s:%d: only one socket-net line (the first is line %d)", path, lineno,
                                    cfg.socket_net_line);
                        bool placeholder = strncmp(rest, "@PORT_", 6) == 0 && strchr(rest + 1, '@') == rest + strlen(rest) - 1;
                        if (!placeholder && (end == rest || *end || p <= 0 || p > 65535))
                                die("%s:%d: socket-net needs a loopback TCP port (a number or a server's "
                                    "@PORT_NAME@), not '%s'", path, lineno, rest);
                        check_port_placeholders(rest, path, lineno);
                        cfg.socket_net = strdup(rest);
                        cfg.socket_net_line = lineno;
                        continue;
                } else if (strcmp(s, "server") == 0) {
                        parse_server(rest, path, lineno);
                        continue;
                } else if (strcmp(s, "guestfwd") == 0) {
                        parse_guestfwd(rest, path, lineno);
                        continue;
                } else if (strcmp(s, "tpm") == 0 || strcmp(s, "vga") == 0) {
                        if (*rest)
                                die("%s:%d: %s takes no arguments", path, lineno, s);
                        *(s[0] == 't' ? &cfg.tpm : &cfg.vga) = true;
                        continue;
                } else if (strcmp(s, "host") == 0) {
                        char *end;
                        st.secs = strtod(rest, &end);
                        if (end == rest || st.secs <= 0)
                                die("%s:%d: 'host' needs a number of seconds first", path, lineno);
                        st.kind = STEP_HOST;
                        st.arg = strdup(trim(end));
                        if (!*st.arg)
                                die("%s:%d: host needs a command", path, lineno);
                        if (strstr(st.arg, "@PORT@") && !cfg.hostfwd_port)
                                die("%s:%d: @PORT@ needs a hostfwd line before it", path, lineno);
                        check_port_placeholders(st.arg, path, lineno);
                } else if (strcmp(s, "drive-if") == 0) {
                        if (strcmp(rest, "none") != 0 && strcmp(rest, "virtio") != 0)
                                die("%s:%d: drive-if is virtio or none, not '%s'", path, lineno, rest);
                        cfg.drive_if_none = strcmp(rest, "none") == 0;
                        continue;
                } else if (strcmp(s, "controller") == 0) {
                        parse_controllers(rest, path, lineno);
                        continue;
                } else if (strcmp(s, "forbid") == 0) {
                        if (!*rest)
                                die("%s:%d: forbid needs a regex", path, lineno);
                        regex_t re;
                        compile(&re, rest, lineno);
                        regfree(&re);
                        st.kind = STEP_FORBID;
                        st.arg = strdup(rest);
                } else if (strcmp(s, "qmp") == 0) {
                        if (*rest != '{')
                                die("%s:%d: qmp needs a JSON object, such as {\"execute\":\"query-status\"}",
                                    path, lineno);
                        st.kind = STEP_QMP;
                        st.arg = strdup(rest);
                } else if (strcmp(s, "keys") == 0) {
                        if (!*rest)
                                die("%s:%d: keys needs QEMU key names (qcodes), such as: shift-z ret", path, lineno);
                        for (const char *p = rest, *w = rest; ; p++) {
                                if (*p == ' ' || *p == '\t' || !*p) {
                                        if (p - w > 64)
                                                die("%s:%d: keys: a word of more than 64 characters", path, lineno);
                                        w = p + 1;
                                }
                                if (!*p)
                                        break;
                                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr("_- \t", *p)))
                                        die("%s:%d: keys: '%c' is in no qcode (words of a-z, 0-9 and _, joined by -)",
                                            path, lineno, *p);
                        }
                        st.kind = STEP_KEYS;
                        st.arg = strdup(rest);
                } else if (strcmp(s, "qmp-event") == 0) {
                        char *end;
                        st.secs = strtod(rest, &end);
                        if (end == rest || st.secs <= 0)
                                die("%s:%d: 'qmp-event' needs a number of seconds first", path, lineno);
                        st.kind = STEP_QMP_EVENT;
                        /* (two NULs at the end: an empty regex after the name if none is given) */
                        char *t = trim(end);
                        st.arg = calloc(strlen(t) + 2, 1);
                        if (!st.arg)
                                die("out of memory");
                        memcpy(st.arg, t, strlen(t));
                        if (!*st.arg || st.arg[strcspn(st.arg, " \t")] == '"')
                                die("%s:%d: qmp-event needs an event name, such as DEVICE_DELETED", path, lineno);
                        /* NAME, then the optional regex, apart by a NUL. */
                        char *sp = st.arg + strcspn(st.arg, " \t");
                        if (*sp) {
                                *sp = '\0';
                                memmove(sp + 1, trim(sp + 1), strlen(trim(sp + 1)) + 1);
                                regex_t re;
                                compile(&re, sp + 1, lineno);
                                regfree(&re);
                        }
                } else if (strcmp(s, "send") == 0 || strcmp(s, "send2") == 0) {
                        st.kind = s[4] ? STEP_SEND2 : STEP_SEND;
                        st.arg = strdup(rest);
                } else if (strcmp(s, "expect") == 0 || strcmp(s, "report") == 0 ||
                           strcmp(s, "poweroff") == 0 || strcmp(s, "sleep") == 0 ||
                           strcmp(s, "expect2") == 0) {
                        char *end;
                        st.secs = strtod(rest, &end);
                        if (end == rest || st.secs <= 0)
                                die("%s:%d: '%s' needs a number of seconds first", path, lineno, s);
                        st.kind = s[0] == 'e' ? (s[6] ? STEP_EXPECT2 : STEP_EXPECT) :
                                  s[0] == 'r' ? STEP_REPORT : s[0] == 's' ? STEP_SLEEP : STEP_POWEROFF;
                        st.arg = strdup(trim(end));
                        if ((st.kind == STEP_EXPECT || st.kind == STEP_EXPECT2) && !*st.arg)
                                die("%s:%d: expect needs a regex", path, lineno);
                } else if (strcmp(s, "disk") == 0 || strcmp(s, "needs") == 0 || strcmp(s, "image-args") == 0 ||
                           strcmp(s, "uki") == 0 || strcmp(s, "uki-other-append") == 0 || strcmp(s, "kernel") == 0 ||
                           strcmp(s, "root") == 0 || strcmp(s, "initrd") == 0 || strcmp(s, "esp-files") == 0)
                        continue;       /* a line for the shell runner (run-scenario.sh) */
                else
                        die("%s:%d: unknown keyword '%s'", path, lineno, s);
                if ((st.kind == STEP_EXPECT2 || st.kind == STEP_SEND2) && !cfg.serial2)
                        die("%s:%d: %s needs a serial2 line before it", path, lineno, s);
                if (cfg.n_steps >= MAX_STEPS)
                        die("too many steps");
                cfg.steps[cfg.n_steps++] = st;
        }
        free(line);
        fclose(f);
        if (cfg.n_steps == 0)
                die("%s: no steps (expect, report, poweroff, ...): nothing would be checked", path);
        if (cfg.n_boots > 0 && !boot_has_steps(cfg.n_boots))
                die("%s: boot %d has no steps", path, cfg.n_boots);
        if (cfg.tpm_reset_boots && !cfg.tpm)
                die("%s: boot tpm-reset without a tpm line", path);
        cfg.boot_lines = cfg.n_boots > 0;
        if (cfg.n_boots == 0)
                cfg.n_boots = 1;
        /* drive-if none leaves the disks to the scenario's own devices; a controller line puts them
         * on its controller: both would attach each drive twice. */
        if (cfg.controller_line && cfg.drive_if_none)
                die("%s:%d: controller and drive-if none exclude each other", path, cfg.controller_line);
}

/* UEFI firmware: the code is read-only and shared; the variable store is a per-run copy of the
 * template (firmware writes boot entries into it), removed when vm-run exits. */
static char firmware_code[512], firmware_vars[512];

static void remove_firmware_vars(void) {
        if (*firmware_vars)
                unlink(firmware_vars);
}

static void prepare_firmware(void) {
        const char *dir = getenv("FOYER_VM_OVMF_DIR");
        bool secboot = strcmp(cfg.firmware, "ovmf-secboot") == 0;
        char tmpl[512], buf[65536];
        ssize_t k;

        if (!dir || !*dir)
                dir = "/usr/share/OVMF";
        snprintf(firmware_code, sizeof firmware_code, "%s/%s", dir,
                 secboot ? "OVMF_CODE_4M.secboot.fd" : "OVMF_CODE_4M.fd");
        snprintf(tmpl, sizeof tmpl, "%s/%s", dir, secboot ? "OVMF_VARS_4M.snakeoil.fd" : "OVMF_VARS_4M.fd");
        if (access(firmware_code, R_OK) < 0)
                die("firmware %s: %s: %m (package ovmf)", cfg.firmware, firmware_code);
        int in = open(tmpl, O_RDONLY | O_CLOEXEC);
        if (in < 0)
                die("firmware %s: %s: %m (package ovmf)", cfg.firmware, tmpl);
        snprintf(firmware_vars, sizeof firmware_vars, "%s/vm-run-vars.XXXXXX",
                 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        int out = mkostemp(firmware_vars, O_CLOEXEC);
        if (out < 0) {
                *firmware_vars = '\0';
                die("cannot create a copy of %s: %m", tmpl);
        }
        atexit(remove_firmware_vars);
        while ((k = read(in, buf, sizeof buf)) > 0)
                if (write(out, buf, k) != k)
                        die("cannot copy %s to %s: %m", tmpl, firmware_vars);
        if (k < 0)
                die("cannot read %s: %m", tmpl);
        close(in);
        close(out);
}

/* Several boots: each disk is a qcow2 overlay of its image, made once in a directory of the run's own
 * ($TMPDIR or /tmp) and used by every boot, so a boot finds what the one before wrote, and the
 * (cached, shared) images stay as they are. Removed when vm-run exits. */
static char overlay_dir[512];
static char *overlay_paths[8];
static char initrd_copy[600];   /* the run's own initrd, in overlay_dir */

static void remove_overlays(void) {
        for (int i = 0; i < 8; i++)
                if (overlay_paths[i])
                        unlink(overlay_paths[i]);
        if (*initrd_copy)
                unlink(initrd_copy);
        if (*overlay_dir)
                rmdir(overlay_dir);
}

static void make_overlays(void) {
        const char *tmpdir = getenv("TMPDIR");

        snprintf(overlay_dir, sizeof overlay_dir, "%s/vm-run-disks-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
        if (!mkdtemp(overlay_dir)) {
                *overlay_dir = '\0';
                die("mkdtemp: %m");
        }
        atexit(remove_overlays);
        for (int i = 0; i < cfg.n_drives; i++) {
                /* qemu-img stores the backing file's name as given: it must not depend on the cwd. */
                char *backing = realpath(cfg.drives[i], NULL), path[600];
                int status;
                if (!backing)
                        die("drive %s: %m", cfg.drives[i]);
                snprintf(path, sizeof path, "%s/disk%d.qcow2", overlay_dir, i);
                overlay_paths[i] = strdup(path);
                if (!overlay_paths[i])
                        die("out of memory");
                pid_t pid = fork();
                if (pid < 0)
                        die("fork: %m");
                if (pid == 0) {
                        execlp("qemu-img", "qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", backing,
                               path, (char *) NULL);
                        fprintf(stderr, "vm-run: cannot run qemu-img: %m\n");
                        _exit(127);
                }
                if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        die("cannot make an overlay of %s (qemu-img create)", backing);
                cfg.drives[i] = overlay_paths[i];
                free(backing);
        }
        cfg.overlays = true;

        /* The initrd, copied: a host step may put another image in its place for the next boots (a
         * host-only image the first boot built), while the given one (cached, shared) stays as it is. */
        if (cfg.initrd) {
                char buf[65536];
                ssize_t k;
                int in = open(cfg.initrd, O_RDONLY | O_CLOEXEC), out;

                if (in < 0)
                        die("initrd %s: %m", cfg.initrd);
                snprintf(initrd_copy, sizeof initrd_copy, "%s/initrd", overlay_dir);
                out = open(initrd_copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                if (out < 0) {
                        *initrd_copy = '\0';
                        die("cannot create %s/initrd: %m", overlay_dir);
                }
                while ((k = read(in, buf, sizeof buf)) > 0)
                        if (write(out, buf, k) != k)
                                die("cannot copy %s to %s: %m", cfg.initrd, initrd_copy);
                if (k < 0)
                        die("cannot read %s: %m", cfg.initrd);
                close(in);
                if (close(out) < 0)
                        die("cannot write %s: %m", initrd_copy);
                cfg.initrd = initrd_copy;
        }
}

static void reserve_port(void) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int one = 1;

        net.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (net.fd < 0 || setsockopt(net.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
            bind(net.fd, (struct sockaddr *) &sa, sizeof sa) < 0 || getsockname(net.fd, (struct sockaddr *) &sa, &len) < 0)
                die("cannot reserve a loopback TCP port: %m");
        net.port = ntohs(sa.sin_port);
}

/* A loopback TCP port of its own for each server port (see struct server), all held at once. */
static void choose_server_ports(void) {
        for (int i = 0; i < n_servers; i++)
                for (int k = 0; k < servers[i].n_ports; k++) {
                        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                        socklen_t len = sizeof sa;
                        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 ||
                            getsockname(fd, (struct sockaddr *) &sa, &len) < 0)
                                die("cannot choose a loopback TCP port for server %s: %m", servers[i].name);
                        servers[i].port_fds[k] = fd;
                        servers[i].ports[k] = ntohs(sa.sin_port);
                }
        /* For the servers, the host steps and QEMU (guestfwd commands) alike. */
        for (int i = 0; i < n_servers; i++)
                for (int k = 0; k < servers[i].n_ports; k++) {
                        char name[64], port[16];
                        snprintf(name, sizeof name, k ? "FOYER_VM_PORT_%s_%d" : "FOYER_VM_PORT_%s", servers[i].name, k + 1);
                        snprintf(port, sizeof port, "%d", servers[i].ports[k]);
                        setenv(name, port, 1);
                }
}

/* Whether something accepts a TCP connection on 127.0.0.1:port now. */
static bool port_listens(int port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                die("socket: %m");
        bool ok = connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0;
        close(fd);
        return ok;
}

static void print_server_log(const struct server *sv) {
        char line[1024];
        int n = 0, total = 0;
        FILE *f = fopen(sv->log, "re");

        if (!f) {
                fprintf(stderr, "(no output: %s: %m)\n", sv->log);
                return;
        }
        while (fgets(line, sizeof line, f))
                total++;
        rewind(f);
        fprintf(stderr, "---- server %s's output (%s%s) ----\n", sv->name, total > SERVER_LOG_LINES ? "the end, " : "",
                sv->log_temp ? "not kept" : sv->log);
        while (fgets(line, sizeof line, f))
                if (++n > total - SERVER_LOG_LINES)
                        fputs(line, stderr);
        fclose(f);
        fprintf(stderr, "---- end of server %s's output ----\n", sv->name);
}

/* SIGTERM to each server's group, SERVER_STOP_SECS for them to clean up, then SIGKILL to the groups
 * (what a script left behind of its own goes too). now_kill: on a signal, no waiting. */
static void stop_servers_how(bool now_kill) {
        double deadline = now() + (now_kill ? 0 : SERVER_STOP_SECS);
        int status;

        for (int i = 0; i < n_servers; i++)
                if (servers[i].pid > 0)
                        kill(-servers[i].pid, now_kill ? SIGKILL : SIGTERM);
        for (int i = 0; i < n_servers; i++) {
                struct server *sv = &servers[i];
                if (sv->pid <= 0)
                        continue;
                /* Until the whole group is gone: the shell that leads it may go at once and leave
                 * the server itself still cleaning up. (A group whose leader is gone keeps its id
                 * while a member lives: no other's.) */
                bool reaped = false;
                while (!now_kill && now() < deadline) {
                        pid_t p;
                        /* The leader, and the members that vm-run, their subreaper, inherited. */
                        while ((p = waitpid(-sv->pid, &status, WNOHANG)) > 0)
                                if (p == sv->pid)
                                        reaped = true;
                        if (reaped && kill(-sv->pid, 0) < 0)
                                break;
                        usleep(20000);
                }
                kill(-sv->pid, SIGKILL);
                if (!reaped)
                        waitpid(sv->pid, &status, 0);
                sv->pid = -1;
        }
        for (int i = 0; i < n_servers; i++)
                if (servers[i].log_temp && *servers[i].log) {
                        unlink(servers[i].log);
                        *servers[i].log = '\0';
                }
}

static void stop_servers(void) {
        stop_servers_how(false);
}

/* Each server's command (its placeholders replaced) in a process group of its own, its output in its
 * log; the run goes on when every server accepts connections on all its ports. */
static void start_servers(void) {
        const char *tmpdir = getenv("TMPDIR"), *wait_env = getenv("FOYER_VM_SERVER_SECS");
        /* (The self-test's shorter deadline.) */
        double listen_secs = wait_env && atof(wait_env) > 0 ? atof(wait_env) : SERVER_LISTEN_SECS;

        atexit(stop_servers);
        /* The processes a server's shell leaves when it goes become vm-run's (not PID 1's), so that
         * stopping them can tell when the last is gone (a zombie would still be in the group). */
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        for (int i = 0; i < n_servers; i++)
                for (int k = 0; k < servers[i].n_ports; k++) {
                        close(servers[i].port_fds[k]);
                        servers[i].port_fds[k] = -1;
                }
        for (int i = 0; i < n_servers; i++) {
                struct server *sv = &servers[i];
                char *cmd = expand_ports(sv->cmd);
                int fd;

                if (cfg.log_path) {
                        if (snprintf(sv->log, sizeof sv->log, "%s.server-%s", cfg.log_path, sv->name) >= (int) sizeof sv->log)
                                die("the log path %s is too long", cfg.log_path);
                } else {
                        if (snprintf(sv->log, sizeof sv->log, "%s/vm-run-server-%s-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp",
                                     sv->name) >= (int) sizeof sv->log)
                                die("$TMPDIR is too long");
                        fd = mkstemp(sv->log);
                        if (fd < 0) {
                                *sv->log = '\0';
                                die("mkstemp: %m");
                        }
                        close(fd);
                        sv->log_temp = true;
                }
                fd = open(sv->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0)
                        die("cannot write %s: %m", sv->log);
                fprintf(stderr, "vm-run: %6.1fs server %s:", now() - t_start, sv->name);
                for (int k = 0; k < sv->n_ports; k++)
                        fprintf(stderr, "%s127.0.0.1:%d", k ? "," : " ", sv->ports[k]);
                fprintf(stderr, ": %s\n", cmd);
                sv->pid = fork();
                if (sv->pid < 0)
                        die("fork: %m");
                if (sv->pid == 0) {
                        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
                        setpgid(0, 0);
                        /* Should vm-run itself be killed (SIGKILL): the server's shell is told. */
                        prctl(PR_SET_PDEATHSIG, SIGTERM);
                        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
                            dup2(fd, STDERR_FILENO) < 0)
                                _exit(127);
                        execl("/bin/sh", "sh", "-c", cmd, (char *) NULL);
                        _exit(127);
                }
                setpgid(sv->pid, sv->pid);
                close(fd);
                free(cmd);
        }
        for (int i = 0; i < n_servers; i++) {
                struct server *sv = &servers[i];
                double t0 = now(), deadline = t0 + listen_secs;
                int status;
                for (int k = 0; k < sv->n_ports; k++)
                        while (!port_listens(sv->ports[k])) {
                                if (waitpid(sv->pid, &status, WNOHANG) == sv->pid) {
                                        sv->pid = -1;
                                        print_server_log(sv);
                                        die("server %s (script line %d) %s %d before it listened on 127.0.0.1:%d",
                                            sv->name, sv->line, WIFEXITED(status) ? "exited with status" : "was killed by signal",
                                            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), sv->ports[k]);
                                }
                                if (now() >= deadline) {
                                        print_server_log(sv);
                                        die("server %s (script line %d) did not listen on 127.0.0.1:%d within %.0fs", sv->name,
                                            sv->line, sv->ports[k], listen_secs);
                                }
                                usleep(50000);
                        }
                fprintf(stderr, "vm-run: %6.1fs server %s (pid %d) listening (%.1fs), output: %s\n", now() - t_start,
                        sv->name, (int) sv->pid, now() - t0, sv->log_temp ? "not kept" : sv->log);
        }
}

/* When the run fails: which servers were no longer running (the likely cause). */
static void report_dead_servers(void) {
        int status;
        for (int i = 0; i < n_servers; i++)
                if (servers[i].pid > 0 && waitpid(servers[i].pid, &status, WNOHANG) == servers[i].pid) {
                        servers[i].pid = -1;
                        fprintf(stderr, "vm-run: server %s (script line %d) had %s %d\n", servers[i].name, servers[i].line,
                                WIFEXITED(status) ? "exited with status" : "been killed by signal",
                                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
                        print_server_log(&servers[i]);
                }
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) st;
        (void) type;
        (void) ftw;
        remove(path);
        return 0;
}

/* swtpm is stopped with SIGTERM (it then closes its state cleanly); one that does not go within
 * 5 s, or any on a signal, with SIGKILL. */
static void stop_swtpm(bool now_kill) {
        int status;
        if (tpm.pid <= 0)
                return;
        kill(tpm.pid, now_kill ? SIGKILL : SIGTERM);
        for (double deadline = now() + 5; !now_kill && now() < deadline; usleep(20000))
                if (waitpid(tpm.pid, &status, WNOHANG) == tpm.pid) {
                        tpm.pid = -1;
                        return;
                }
        kill(tpm.pid, SIGKILL);
        waitpid(tpm.pid, &status, 0);
        tpm.pid = -1;
}

static void remove_tpm(void) {
        stop_swtpm(false);
        if (*tpm.dir)
                nftw(tpm.dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

static void make_tpm_dir(void) {
        const char *tmpdir = getenv("TMPDIR");
        struct sockaddr_un sa;

        snprintf(tpm.dir, sizeof tpm.dir, "%s/vm-run-tpm-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
        if (!mkdtemp(tpm.dir)) {
                *tpm.dir = '\0';
                die("mkdtemp: %m");
        }
        atexit(remove_tpm);
        snprintf(tpm.state, sizeof tpm.state, "%s/state", tpm.dir);
        snprintf(tpm.sock, sizeof tpm.sock, "%s/swtpm.sock", tpm.dir);
        if (strlen(tpm.sock) >= sizeof sa.sun_path)
                die("swtpm's socket path %s is too long for a unix socket (a shorter $TMPDIR)", tpm.sock);
        if (mkdir(tpm.state, 0700) < 0)
                die("mkdir %s: %m", tpm.state);
}

/* boot tpm-reset: the state of the earlier boots goes (swtpm is not running between boots), and
 * the next swtpm starts as a new TPM, with new seeds. */
static void reset_tpm_state(void) {
        nftw(tpm.state, remove_one, 8, FTW_DEPTH | FTW_PHYS);
        if (mkdir(tpm.state, 0700) < 0)
                die("mkdir %s: %m", tpm.state);
        fprintf(stderr, "vm-run: %6.1fs TPM state reset for boot %d\n", now() - t_start, boot_no);
}

/* Each boot gets a swtpm of its own on the run's state (a power cycle of the TPM), up before QEMU
 * starts: QEMU's chardev connects at once and does not retry. */
static void start_swtpm(void) {
        const char *prog = getenv("FOYER_VM_SWTPM");
        char state_arg[320], ctrl_arg[340];
        struct stat st;
        int status;

        if (!prog || !*prog)
                prog = "swtpm";
        snprintf(state_arg, sizeof state_arg, "dir=%s", tpm.state);
        snprintf(ctrl_arg, sizeof ctrl_arg, "type=unixio,path=%s", tpm.sock);
        unlink(tpm.sock);       /* the last boot's */
        tpm.pid = fork();
        if (tpm.pid < 0)
                die("fork: %m");
        if (tpm.pid == 0) {
                dup2(STDERR_FILENO, STDOUT_FILENO);
                execlp(prog, prog, "socket", "--tpm2", "--tpmstate", state_arg, "--ctrl", ctrl_arg, (char *) NULL);
                fprintf(stderr, "vm-run: cannot run %s: %m (package swtpm)\n", prog);
                _exit(127);
        }
        for (double deadline = now() + 10;; usleep(20000)) {
                /* swtpm binds, then listens at once: the socket's existence is the sign. */
                if (stat(tpm.sock, &st) == 0 && S_ISSOCK(st.st_mode))
                        break;
                if (waitpid(tpm.pid, &status, WNOHANG) == tpm.pid) {
                        tpm.pid = -1;
                        die("%s exited (status %d) before its socket %s appeared", prog,
                            WIFEXITED(status) ? WEXITSTATUS(status) : -1, tpm.sock);
                }
                if (now() >= deadline)
                        die("%s did not make its socket %s within 10s", prog, tpm.sock);
        }
        fprintf(stderr, "vm-run: %6.1fs swtpm (pid %d) on %s\n", now() - t_start, (int) tpm.pid, tpm.dir);
}

/* The position in the controller line of disk i's controller: the i-th name, the last one for the
 * disks after it. */
static int disk_controller_index(int i) {
        assert(i >= 0);
        assert(cfg.n_controllers > 0);
        return i < cfg.n_controllers ? i : cfg.n_controllers - 1;
}

/* The controller of disk i; virtio-blk without a controller line. */
static enum controller disk_controller(int i) {
        return cfg.n_controllers > 0 ? cfg.controller[disk_controller_index(i)] : CTL_VIRTIO_BLK;
}

/* Which of its controller's disks disk i is (0, 1, ...): its port, target or LUN there. Each name but
 * the last holds one disk; the last holds the rest. */
static int disk_slot(int i) {
        return i - disk_controller_index(i);
}

/* The id of the SCSI host adapter at position k of the controller line: hba alone (as it was before
 * a line could name several), hba0, hba1, ... with several, so that two host adapters (of different
 * kinds: a name appears once) do not share one. */
static const char *scsi_hba_id(int k) {
        static char id[MAX_CONTROLLERS][16];

        assert(k >= 0 && k < cfg.n_controllers);
        assert(controllers[cfg.controller[k]].scsi_hba);
        if (cfg.n_controllers == 1)
                return "hba";
        snprintf(id[k], sizeof id[k], "hba%d", k);
        return id[k];
}

/* The -device that puts disk i (-drive id=drive<i>) on its controller; NULL for virtio-blk, whose
 * disks are if=virtio drives. */
static const char *disk_device(int i) {
        static char dev[8][200];

        assert(i >= 0 && i < 8);
        enum controller c = disk_controller(i);
        if (c == CTL_VIRTIO_BLK)
                return NULL;
        int k = disk_controller_index(i), slot = disk_slot(i);
        switch (c) {
        case CTL_NVME:
                snprintf(dev[i], sizeof dev[i], "nvme,serial=foyer-disk%d,drive=drive%d", i, i);
                break;
        case CTL_AHCI:
                snprintf(dev[i], sizeof dev[i], "ide-hd,drive=drive%d,bus=ide.%d", i, slot);
                break;
        case CTL_MPTSAS:
                /* QEMU's SAS1068 reports a disk's SAS address as its scsi-hd wwn, which is 0 unless
                 * set; Linux's mptsas forms no port for a phy whose attached address is 0
                 * (mptsas_setup_wide_ports), so the disk would never appear. By the disk's number,
                 * the address is unique among all disks. */
                snprintf(dev[i], sizeof dev[i],
                         "scsi-hd,drive=drive%d,bus=%s.0,channel=0,scsi-id=%d,lun=0,wwn=0x5000c50000f0e0%02x", i,
                         scsi_hba_id(k), slot, i + 1);
                break;
        case CTL_VIRTIO_SCSI:
        case CTL_MEGASAS:
        case CTL_PVSCSI:
                snprintf(dev[i], sizeof dev[i], "scsi-hd,drive=drive%d,bus=%s.0,channel=0,scsi-id=%d,lun=0", i,
                         scsi_hba_id(k), slot);
                break;
        case CTL_USB_STORAGE:
                snprintf(dev[i], sizeof dev[i], "usb-storage,drive=drive%d,bus=xhci.0", i);
                break;
        case CTL_USB_UAS:
                /* A UAS device is one SCSI target; its disks are LUNs. */
                snprintf(dev[i], sizeof dev[i], "scsi-hd,drive=drive%d,bus=uas.0,scsi-id=0,lun=%d", i, slot);
                break;
        default:
                assert(false);
        }
        return dev[i];
}

/* The devices of the controllers themselves, in line order, onto argv at *n: a SCSI host adapter; the
 * qemu-xhci, once, before the first USB kind; the usb-uas device. (NVMe, AHCI and virtio-blk have
 * none: a device per disk, q35's own, if=virtio drives.) */
static void add_controller_devices(const char **argv, int *n) {
        static char hba[MAX_CONTROLLERS][64];
        bool xhci = false;

        assert(argv);
        assert(n);
        for (int k = 0; k < cfg.n_controllers; k++) {
                enum controller c = cfg.controller[k];
                if (controllers[c].usb && !xhci) {
                        argv[(*n)++] = "-device";
                        argv[(*n)++] = "qemu-xhci,id=xhci";
                        xhci = true;
                }
                if (c == CTL_USB_UAS) {
                        argv[(*n)++] = "-device";
                        argv[(*n)++] = "usb-uas,id=uas,bus=xhci.0";
                }
                if (controllers[c].scsi_hba) {
                        snprintf(hba[k], sizeof hba[k], "%s,id=%s", controllers[c].scsi_hba, scsi_hba_id(k));
                        argv[(*n)++] = "-device";
                        argv[(*n)++] = hba[k];
                }
        }
}

/* controller NAME...: each name holds a disk at least (a controller without one tests nothing; an
 * NVMe one would not even be there), and the last one's disks fit on it. */
static void check_controllers(const char *path) {
        assert(path);

        if (cfg.n_controllers == 0)
                return;
        if (cfg.n_controllers > cfg.n_drives)
                die("%s:%d: %d controllers but %d disks: disk i goes on the i-th controller, so each needs "
                    "a disk", path, cfg.controller_line, cfg.n_controllers, cfg.n_drives);
        enum controller last = cfg.controller[cfg.n_controllers - 1];
        int on_last = cfg.n_drives - (cfg.n_controllers - 1);
        if (on_last > controllers[last].max_disks)
                die("%s:%d: %d disks on %s, which holds at most %d here", path, cfg.controller_line, on_last,
                    controllers[last].name, controllers[last].max_disks);
}

static pid_t spawn_qemu(const char *accel, bool probe, const char *initrd, const char *append,
                        const char **drives, int n_drives, int *in, int *out) {
        const char *argv[MAX_ARGS];
        char machine[64], smp[16], mem[16], full_append[4600];
        static char drive_args[8][4200];
        int n = 0, pin[2], pout[2];

        /* Secure Boot firmware keeps its variables in SMM-protected flash. */
        snprintf(machine, sizeof machine, "q35,accel=%s%s", accel,
                 *firmware_vars && strcmp(cfg.firmware, "ovmf-secboot") == 0 ? ",smm=on" : "");
        snprintf(smp, sizeof smp, "%d", cfg.smp);
        snprintf(mem, sizeof mem, "%d", cfg.mem);
        snprintf(full_append, sizeof full_append, "console=ttyS0 panic=-1 printk.time=1 %s", append);

        argv[n++] = cfg.qemu;
        argv[n++] = "-machine"; argv[n++] = machine;
        /* Under OVMF and TCG, "max" was seen to make the guest calibrate its TSC at a tenth of
         * the real rate, after which each console write of PID 1 stalled for 30 s; the default
         * model boots normally there. */
        argv[n++] = "-cpu"; argv[n++] = strcmp(accel, "kvm") == 0 ? "host" : *firmware_vars ? "qemu64" : "max";
        argv[n++] = "-smp"; argv[n++] = smp;
        argv[n++] = "-m"; argv[n++] = mem;
        argv[n++] = "-nodefaults"; argv[n++] = "-no-user-config";
        argv[n++] = "-display"; argv[n++] = "none";
        if (!probe && cfg.vga) {
                argv[n++] = "-vga"; argv[n++] = "std";
        }
        argv[n++] = "-serial"; argv[n++] = "stdio";
        char serial2[300];
        if (cfg.serial2 && *con2.path) {
                snprintf(serial2, sizeof serial2, "pipe:%s", con2.path);
                argv[n++] = "-serial"; argv[n++] = serial2;
        }
        argv[n++] = "-no-reboot";
        static char pflash_code[600], pflash_vars[600];
        if (*firmware_vars) {
                snprintf(pflash_code, sizeof pflash_code, "if=pflash,format=raw,unit=0,readonly=on,file=%s",
                         firmware_code);
                snprintf(pflash_vars, sizeof pflash_vars, "if=pflash,format=raw,unit=1,file=%s", firmware_vars);
                if (strcmp(cfg.firmware, "ovmf-secboot") == 0) {
                        argv[n++] = "-global"; argv[n++] = "driver=cfi.pflash01,property=secure,value=on";
                }
                argv[n++] = "-drive"; argv[n++] = pflash_code;
                argv[n++] = "-drive"; argv[n++] = pflash_vars;
        }
        /* Without firmware, QEMU's own loader puts the initrd right below the area it keeps for
         * SeaBIOS's ACPI tables; a TPM's 64 KiB event log makes those tables outgrow that area,
         * and the initrd overwrites them (the guest finds no ACPI, no TPM, and cannot power
         * off). With --firmware-kernel, OVMF starts the kernel's EFI stub, which places the
         * initrd itself. */
        if (!*firmware_vars || cfg.firmware_kernel) {
                argv[n++] = "-kernel"; argv[n++] = cfg.kernel;
                if (initrd) {
                        argv[n++] = "-initrd";
                        argv[n++] = initrd;
                }
                argv[n++] = "-append"; argv[n++] = full_append;
        }
        /* The cached disk images are never written to: snapshot=on for one boot, overlays (which
         * take the writes and keep them for the next boot) for several. */
        const char *format = cfg.overlays ? "qcow2" : "raw", *snapshot = cfg.overlays ? "" : ",snapshot=on";
        for (int i = 0; i < n_drives; i++) {
                if (cfg.drive_if_none || disk_controller(i) != CTL_VIRTIO_BLK)
                        snprintf(drive_args[i], sizeof drive_args[i],
                                 "file=%s,format=%s,if=none,id=drive%d,cache=unsafe%s", drives[i], format, i,
                                 snapshot);
                else
                        snprintf(drive_args[i], sizeof drive_args[i],
                                 "file=%s,format=%s,if=virtio,cache=unsafe%s", drives[i], format, snapshot);
                argv[n++] = "-drive";
                argv[n++] = drive_args[i];
        }
        /* The controllers, then each disk's device on its controller (only when there are disks: the
         * KVM probe has none). */
        if (n_drives > 0) {
                add_controller_devices(argv, &n);
                for (int i = 0; i < n_drives; i++) {
                        const char *d = disk_device(i);
                        if (d) {
                                argv[n++] = "-device";
                                argv[n++] = d;
                        }
                }
        }
        /* Only the scenario's own VM (not the KVM probe) gets the monitor and the extra arguments. */
        static char qmp_arg[200];
        if (!probe && *qmp.path) {
                snprintf(qmp_arg, sizeof qmp_arg, "unix:%s,server=on,wait=off", qmp.path);
                argv[n++] = "-qmp";
                argv[n++] = qmp_arg;
        }
        static char netdev_arg[8192], chardev_arg[340];
        if (!probe && (net.port || cfg.net || n_guestfwds > 0)) {
                int o = snprintf(netdev_arg, sizeof netdev_arg, "user,id=n0");
                if (net.port)
                        o += snprintf(netdev_arg + o, sizeof netdev_arg - o, ",hostfwd=tcp:127.0.0.1:%d-:%d", net.port,
                                      cfg.hostfwd_port);
                for (int i = 0; i < n_guestfwds; i++) {
                        char *cmd = expand_ports(guestfwds[i].cmd);
                        o += snprintf(netdev_arg + o, sizeof netdev_arg - o, ",guestfwd=tcp:%s-cmd:", guestfwds[i].addr);
                        /* QEMU's option syntax: a comma in a value is written twice. */
                        for (const char *c = cmd; *c && o < (int) sizeof netdev_arg - 3; c++) {
                                netdev_arg[o++] = *c;
                                if (*c == ',')
                                        netdev_arg[o++] = ',';
                        }
                        netdev_arg[o] = '\0';
                        free(cmd);
                }
                if (o >= (int) sizeof netdev_arg - 3)
                        die("the -netdev argument is too long (guestfwd commands)");
                argv[n++] = "-netdev"; argv[n++] = netdev_arg;
                argv[n++] = "-device"; argv[n++] = "virtio-net-pci,netdev=n0";
        }
        /* socket-net: QEMU connects to the port (a server's, listening since before QEMU started). */
        static char socket_netdev_arg[100];
        if (!probe && cfg.socket_net) {
                char *port = expand_ports(cfg.socket_net);
                snprintf(socket_netdev_arg, sizeof socket_netdev_arg, "socket,id=n1,connect=127.0.0.1:%s", port);
                free(port);
                argv[n++] = "-netdev"; argv[n++] = socket_netdev_arg;
                argv[n++] = "-device"; argv[n++] = "virtio-net-pci,netdev=n1,mac=52:54:00:12:34:57";
        }
        /* tpm-crb: q35's TPM 2.0 interface (tpm-tis works too; CRB is what TPM 2.0 machines have). */
        if (!probe && *tpm.sock) {
                snprintf(chardev_arg, sizeof chardev_arg, "socket,id=chrtpm,path=%s", tpm.sock);
                argv[n++] = "-chardev"; argv[n++] = chardev_arg;
                argv[n++] = "-tpmdev"; argv[n++] = "emulator,id=tpm0,chardev=chrtpm";
                argv[n++] = "-device"; argv[n++] = "tpm-crb,tpmdev=tpm0";
        }
        if (!probe)
                for (int i = 0; i < cfg.n_extra_args && n < MAX_ARGS - 1; i++)
                        argv[n++] = cfg.extra_args[i];
        argv[n] = NULL;

        if (log_file) {
                fprintf(log_file, "# vm-run:");
                for (int i = 0; i < n; i++)
                        fprintf(log_file, " '%s'", argv[i]);
                fprintf(log_file, "\n");
        }
        if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0)
                die("pipe: %m");
        pid_t pid = fork();
        if (pid < 0)
                die("fork: %m");
        if (pid == 0) {
                dup2(pin[0], STDIN_FILENO);
                dup2(pout[1], STDOUT_FILENO);
                dup2(pout[1], STDERR_FILENO);
                setpgid(0, 0);
                execvp(argv[0], (char **) argv);
                fprintf(stderr, "vm-run: cannot run %s: %m\n", argv[0]);
                _exit(127);
        }
        setpgid(pid, pid);      /* also here: no race with the child's own setpgid() */
        close(pin[0]);
        close(pout[1]);
        *in = pin[1];
        *out = pout[0];
        return pid;
}

/* /dev/kvm may exist and still not work (nested virtualisation): boot the kernel without an
 * initrd under KVM and see whether it gets as far as failing to mount a root in time. */
static const char *probe_accel(void) {
        const char *env = getenv("FOYER_VM_ACCEL");
        if (env && *env)
                return env;
        int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return "tcg";
        close(fd);

        char cache[4096] = "";
        const char *dir = getenv("FOYER_VM_CACHE");
        if (dir) {
                snprintf(cache, sizeof cache, "%s/kvm-probe", dir);
                FILE *f = fopen(cache, "re");
                char result[16] = "";
                if (f) {
                        if (fgets(result, sizeof result, f))
                                result[strcspn(result, "\n")] = '\0';
                        fclose(f);
                        if (strcmp(result, "kvm") == 0)
                                return "kvm";
                        if (strcmp(result, "tcg") == 0)
                                return "tcg";
                }
        }

        int in, out;
        pid_t pid = spawn_qemu("kvm", true, NULL, "", NULL, 0, &in, &out);
        const char *result = "tcg";
        char buf[65536];
        size_t len = 0;
        double deadline = now() + 20;
        while (now() < deadline) {
                struct pollfd p = { .fd = out, .events = POLLIN };
                if (poll(&p, 1, 200) <= 0)
                        continue;
                ssize_t k = read(out, buf + len, sizeof buf - 1 - len);
                if (k <= 0)
                        break;
                len += k;
                buf[len] = '\0';
                if (strstr(buf, "Kernel panic") || strstr(buf, "Unable to mount root")) {
                        result = "kvm";
                        break;
                }
                if (len > sizeof buf - 4096) {
                        memmove(buf, buf + len - 2048, 2048);
                        len = 2048;
                }
        }
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(in);
        close(out);
        if (*cache) {
                FILE *f = fopen(cache, "we");
                if (f) {
                        fprintf(f, "%s\n", result);
                        fclose(f);
                }
        }
        return result;
}

static void on_signal(int sig) {
        if (host_pid > 0)
                kill(-host_pid, SIGKILL);
        /* SIGTERM and the time to clean up (their per-run copies), as at a normal end. */
        stop_servers_how(false);
        stop_swtpm(true);
        remove_tpm();
        remove_firmware_vars();
        remove_qmp_dir();
        remove_overlays();
        if (qemu_pid > 0) {
                kill(-qemu_pid, SIGKILL);
                kill(qemu_pid, SIGKILL);
        }
        signal(sig, SIG_DFL);
        raise(sig);
}

static void remove_fifos(void) {
        char p[300];
        snprintf(p, sizeof p, "%s.in", con2.path);
        unlink(p);
        snprintf(p, sizeof p, "%s.out", con2.path);
        unlink(p);
        *strrchr(con2.path, '/') = '\0';
        rmdir(con2.path);
}

static void usage(void) {
        fprintf(stderr,
                "usage: vm-run --kernel K --initrd I [--drive IMG]... [--append ARGS] [--log FILE]\n"
                "              [--timeout SEC] [--accel auto|kvm|tcg] [--smp N] [--mem MB] [--live]\n"
                "              [--firmware-kernel] SCRIPT\n");
        exit(2);
}

/* A host step: CMD with @PORT@ and the servers' ports replaced, in a process group of its own (killed at the deadline). */
static void run_host(const char *cmd, double secs, int line) {
        char *c = expand_ports(cmd), port[16];
        double deadline = now() + secs, overall = t_start + cfg.timeout;
        int status;

        snprintf(port, sizeof port, "%d", net.port);
        fprintf(stderr, "vm-run: %6.1fs host: %s\n", now() - t_start, c);
        host_pid = fork();
        if (host_pid < 0)
                die("fork: %m");
        if (host_pid == 0) {
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
                setpgid(0, 0);
                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
                        _exit(127);
                if (net.port)
                        setenv("FOYER_VM_PORT", port, 1);
                /* What the command may look at: the console log so far (flushed line by line) and
                 * the disks as QEMU has them (the overlays of a run of several boots, which a step
                 * after a boot's poweroff may read while no QEMU holds them). */
                if (cfg.log_path)
                        setenv("FOYER_VM_LOG", cfg.log_path, 1);
                for (int i = 0; i < cfg.n_drives; i++) {
                        char name[32];

                        snprintf(name, sizeof name, "FOYER_VM_DISK%d", i);
                        setenv(name, cfg.drives[i], 1);
                }
                if (cfg.initrd)
                        setenv("FOYER_VM_INITRD", cfg.initrd, 1);
                execl("/bin/sh", "sh", "-c", c, (char *) NULL);
                _exit(127);
        }
        setpgid(host_pid, host_pid);
        free(c);
        while (waitpid(host_pid, &status, WNOHANG) != host_pid) {
                if (now() >= deadline || now() >= overall) {
                        kill(-host_pid, SIGKILL);
                        waitpid(host_pid, &status, 0);
                        host_pid = -1;
                        fail("the host command of script line %d did not finish within %.0fs", line,
                             now() >= overall ? cfg.timeout : secs);
                }
                /* The console keeps being read (a guest blocked on a full pipe would stall). */
                if (!pump(now() + 0.05) && qemu_out < 0)
                        usleep(50000);
                check_fail_patterns();
        }
        host_pid = -1;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail("the host command of script line %d %s %d", line,
                     WIFEXITED(status) ? "exited with status" : "was killed by signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static void run_step(const struct step *st) {
        double t0 = now();
        switch (st->kind) {
        case STEP_EXPECT:
                consumed = wait_for(st->arg, st->secs, st->line, NULL);
                fprintf(stderr, "vm-run: %6.1fs matched /%s/ (%.1fs)\n",
                        now() - t_start, st->arg, now() - t0);
                break;
        case STEP_SEND:
                send_text(st->arg);
                fprintf(stderr, "vm-run: %6.1fs sent \"%s\"\n", now() - t_start, st->arg);
                break;
        case STEP_EXPECT2:
                con2.consumed = wait_for_on(true, st->arg, st->secs, st->line, NULL);
                fprintf(stderr, "vm-run: %6.1fs matched on ttyS1 /%s/ (%.1fs)\n",
                        now() - t_start, st->arg, now() - t0);
                break;
        case STEP_SEND2:
                send_text_to(con2.in, st->arg);
                fprintf(stderr, "vm-run: %6.1fs sent to ttyS1 \"%s\"\n", now() - t_start, st->arg);
                break;
        case STEP_REPORT:
                check_report(st->arg, st->secs, st->line);
                fprintf(stderr, "vm-run: %6.1fs report ok\n", now() - t_start);
                break;
        case STEP_SLEEP: {
                double deadline = now() + st->secs;
                while (pump(deadline))
                        check_fail_patterns();
                if (qemu_exited)
                        fail("QEMU exited during sleep (script line %d)", st->line);
                break;
        }
        case STEP_FORBID:
                add_forbid(st->arg, st->line);
                break;
        case STEP_QMP: {
                char *reply = qmp_command(st->arg, st->line);
                fprintf(stderr, "vm-run: %6.1fs qmp %s -> %s\n", now() - t_start, st->arg, reply);
                free(reply);
                break;
        }
        case STEP_KEYS: {
                char *words = strdup(st->arg), *save = NULL;
                int n = 0;
                if (!words)
                        die("out of memory");
                for (char *w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                        char json[1024], *ksave = NULL;
                        int o = snprintf(json, sizeof json, "{\"execute\":\"send-key\",\"arguments\":{\"keys\":[");
                        for (char *k = strtok_r(w, "-", &ksave); k; k = strtok_r(NULL, "-", &ksave))
                                o += snprintf(json + o, sizeof json - (size_t) o, "%s{\"type\":\"qcode\",\"data\":\"%s\"}",
                                              json[o - 1] == '[' ? "" : ",", k);
                        snprintf(json + o, sizeof json - (size_t) o, "]}}");
                        free(qmp_command(json, st->line));
                        n++;
                }
                free(words);
                fprintf(stderr, "vm-run: %6.1fs keys: %d sent\n", now() - t_start, n);
                break;
        }
        case STEP_QMP_EVENT: {
                const char *data = st->arg + strlen(st->arg) + 1;
                char *ev = qmp_wait_event(st->arg, *data ? data : NULL, st->secs, st->line);
                fprintf(stderr, "vm-run: %6.1fs qmp event %s (%.1fs): %s\n", now() - t_start, st->arg,
                        now() - t0, ev);
                free(ev);
                break;
        }
        case STEP_HOST:
                run_host(st->arg, st->secs, st->line);
                fprintf(stderr, "vm-run: %6.1fs host command ok (%.1fs)\n", now() - t_start, now() - t0);
                break;
        case STEP_POWEROFF: {
                double deadline = now() + st->secs;
                while (pump(deadline))
                        check_fail_patterns();
                if (!qemu_exited)
                        fail("the machine did not power off within %.0fs (script line %d)",
                             st->secs, st->line);
                fprintf(stderr, "vm-run: %6.1fs powered off\n", now() - t_start);
                break;
        }
        }
}

/* qmp_send() for a machine that may be going away: a failed write is no failure of the run. */
static void qmp_send_quiet(const char *json) {
        char line[256];
        int n = snprintf(line, sizeof line, "%s\n", json);
        qmp_log("->", json);
        if (write(qmp.fd, line, n) != n)
                fprintf(stderr, "vm-run: writing to QEMU's monitor: %m\n");
}

/* Between boots: the machine stops cleanly, by its own poweroff or by the monitor's "quit", after
 * which QEMU writes out what it still holds of the overlays (SIGKILL could leave a qcow2 overlay
 * without its latest metadata; the guest's own unwritten data is the scenario's business: power
 * off, or sync). The console is still checked meanwhile, and forbids that no expect ended hold to
 * the end of the boot. */
static void end_boot(void) {
        double deadline = now() + QUIT_SECS;

        if (!qemu_exited) {
                /* Not qmp_command(): QEMU may well exit before its reply can be read. */
                /* (The socket may not be there yet, if the boot had no qmp step.) */
                while (qmp.fd < 0 && !qmp.closed && !qemu_exited && now() < deadline) {
                        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                        struct sockaddr_un sa = { .sun_family = AF_UNIX };
                        if (fd < 0)
                                die("socket: %m");
                        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", qmp.path);
                        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0) {
                                qmp.fd = fd;
                                qmp_send_quiet("{\"execute\": \"qmp_capabilities\"}");
                                break;
                        }
                        close(fd);
                        pump(now() + 0.1);
                        check_fail_patterns();
                }
                if (qmp.fd >= 0)
                        qmp_send_quiet("{\"execute\": \"quit\"}");
                while (!qemu_exited && pump(deadline))
                        check_fail_patterns();
                if (!qemu_exited)
                        fail("QEMU did not stop within %ds of the monitor's quit", QUIT_SECS);
        }
        /* What QEMU wrote last may end without a newline. */
        if (text_len > 0 && text[text_len - 1] != '\n') {
                int esc_state = 0;
                clean_append(&text, &text_len, &text_cap, &esc_state, "\n", 1);
        }
        check_fail_patterns();
        check_forbids(text_len, NULL);
        clear_forbids();
        fprintf(stderr, "vm-run: %6.1fs boot %d stopped\n", now() - t_start, boot_no);
}

/* The next boot starts on the same command line; nothing of the last boot's console or monitor
 * is left to match. */
static void start_next_boot(void) {
        close(qemu_in);
        qemu_in = -1;
        if (qemu_out >= 0)
                close(qemu_out);
        qemu_out = -1;
        qemu_exited = false;
        if (qmp.fd >= 0)
                close(qmp.fd);
        qmp.fd = -1;
        qmp.closed = false;
        qmp.len = 0;
        clear_events(qmp.n_events);
        free(qmp.reply);
        qmp.reply = NULL;
        /* QEMU makes the socket anew (a stale one would keep a fake from binding). */
        unlink(qmp.path);
        consumed = text_len;
        con2.consumed = con2.len;
        if (log_file) {
                fprintf(log_file, "\n# vm-run: boot %d of %d\n", boot_no, cfg.n_boots);
                fflush(log_file);
        }
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "kernel", required_argument, NULL, 'k' },
                { "initrd", required_argument, NULL, 'i' },
                { "drive", required_argument, NULL, 'd' },
                { "append", required_argument, NULL, 'a' },
                { "log", required_argument, NULL, 'l' },
                { "timeout", required_argument, NULL, 't' },
                { "accel", required_argument, NULL, 'A' },
                { "smp", required_argument, NULL, 's' },
                { "mem", required_argument, NULL, 'm' },
                { "live", no_argument, NULL, 'L' },
                { "firmware-kernel", no_argument, NULL, 'F' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        const char *extra_append = NULL;
        double timeout_override = 0;
        int c;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0)
                switch (c) {
                case 'k': cfg.kernel = optarg; break;
                case 'i': cfg.initrd = optarg; break;
                case 'd':
                        if (cfg.n_drives >= 8)
                                die("too many drives");
                        cfg.drives[cfg.n_drives++] = optarg;
                        break;
                case 'a': extra_append = optarg; break;
                case 'l': cfg.log_path = optarg; break;
                case 't': timeout_override = atof(optarg); break;
                case 'A': cfg.accel = optarg; break;
                case 's': cfg.smp = atoi(optarg); break;
                case 'm': cfg.mem = atoi(optarg); break;
                case 'L': cfg.live = true; break;
                case 'F': cfg.firmware_kernel = true; break;
                default: usage();
                }
        if (optind != argc - 1 || !cfg.kernel)
                usage();

        const char *q = getenv("FOYER_VM_QEMU");
        if (q && *q)
                cfg.qemu = q;
        cfg.fails[cfg.n_fails++] = strdup("Kernel panic - not syncing");
        parse_script(argv[optind]);
        check_controllers(argv[optind]);
        if (extra_append)
                add_append(extra_append);
        if (timeout_override > 0)
                cfg.timeout = timeout_override;
        for (int i = 0; i < cfg.n_fails; i++)
                compile(&fail_re[i], cfg.fails[i], 0);

        if (cfg.log_path) {
                log_file = fopen(cfg.log_path, "we");
                if (!log_file)
                        die("cannot write %s: %m", cfg.log_path);
        }
        signal(SIGPIPE, SIG_IGN);
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);

        const char *accel = cfg.accel && strcmp(cfg.accel, "auto") != 0 ? cfg.accel : probe_accel();
        fprintf(stderr, "vm-run: accel=%s smp=%d mem=%dM append: %s\n", accel, cfg.smp, cfg.mem, cfg.append);
        text = xrealloc(NULL, text_cap = 1 << 16);
        text[0] = '\0';
        if (cfg.serial2) {
                /* O_RDWR: opening a FIFO does not wait for QEMU's end then. */
                char dir[] = "/tmp/vm-run-XXXXXX", fifo[300];
                if (!mkdtemp(dir))
                        die("mkdtemp: %m");
                snprintf(con2.path, sizeof con2.path, "%s/ttyS1", dir);
                for (int i = 0; i < 2; i++) {
                        snprintf(fifo, sizeof fifo, "%s%s", con2.path, i ? ".out" : ".in");
                        if (mkfifo(fifo, 0600) < 0)
                                die("mkfifo %s: %m", fifo);
                        int fd = open(fifo, O_RDWR | O_CLOEXEC | (i ? O_NONBLOCK : 0));
                        if (fd < 0)
                                die("open %s: %m", fifo);
                        *(i ? &con2.out : &con2.in) = fd;
                }
                atexit(remove_fifos);
                if (cfg.log_path) {
                        snprintf(fifo, sizeof fifo, "%s.ttyS1", cfg.log_path);
                        con2.log = fopen(fifo, "we");
                        if (!con2.log)
                                die("cannot write %s: %m", fifo);
                }
                con2.text = xrealloc(NULL, con2.cap = 1 << 12);
                con2.text[0] = '\0';
        }
        /* The monitor's socket, in a directory of its own. */
        snprintf(qmp.dir, sizeof qmp.dir, "/tmp/vm-run-qmp-XXXXXX");
        if (!mkdtemp(qmp.dir))
                die("mkdtemp: %m");
        snprintf(qmp.path, sizeof qmp.path, "%s/qmp.sock", qmp.dir);
        atexit(remove_qmp_dir);
        t_start = now();
        if (cfg.firmware)
                prepare_firmware();     /* after the KVM probe, which boots the kernel directly */
        /* One boot line too: its host steps read the disks after the boot (see the usage above). */
        if (cfg.boot_lines)
                make_overlays();
        if (cfg.hostfwd_port) {
                reserve_port();
                fprintf(stderr, "vm-run: host port %d forwarded to the guest's port %d\n", net.port, cfg.hostfwd_port);
        }
        if (n_servers > 0) {
                choose_server_ports();
                char *a = expand_ports(cfg.append);
                snprintf(cfg.append, sizeof cfg.append, "%s", a);
                free(a);
                fprintf(stderr, "vm-run: append with the servers' ports: %s\n", cfg.append);
                start_servers();
        }
        if (cfg.tpm)
                make_tpm_dir();

        for (boot_no = 1; boot_no <= cfg.n_boots; boot_no++) {
                if (boot_no > 1)
                        start_next_boot();
                if (cfg.n_boots > 1)
                        fprintf(stderr, "vm-run: %6.1fs boot %d of %d\n", now() - t_start, boot_no, cfg.n_boots);
                if (cfg.tpm) {
                        if (cfg.tpm_reset_boots & (1ULL << (boot_no - 1)))
                                reset_tpm_state();
                        start_swtpm();
                }
                qemu_pid = spawn_qemu(accel, false, cfg.initrd, cfg.append, cfg.drives, cfg.n_drives, &qemu_in,
                                      &qemu_out);
                for (int i = 0; i < cfg.n_steps; i++)
                        if (cfg.steps[i].boot == boot_no)
                                run_step(&cfg.steps[i]);
                if (boot_no < cfg.n_boots) {
                        end_boot();
                        stop_swtpm(false);
                }
        }
        kill_qemu();
        stop_swtpm(false);
        stop_servers();
        /* Also what came after the last step, and anything sent mid-line; forbids that no expect
         * ended hold to the end. */
        check_forbids(text_len, NULL);
        check_secrets(0, text_len);
        fprintf(stderr, "vm-run: ok after %.1fs%s%s\n", now() - t_start,
                cfg.log_path ? ", console log: " : "", cfg.log_path ? cfg.log_path : "");
        return 0;
}
