/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <getopt.h>

#include "build.h"
#include "cli.h"
#include "foyer-config.h"
#include "log.h"
#include "ls.h"
#include "preview.h"
#include "show-timeline.h"
#include "uki.h"
#include "util.h"

static void help_main(void) {
        printf("%s [OPTIONS...] COMMAND ...\n\n"
               "Build and inspect foyer initrd images.\n\n"
               "Commands:\n"
               "  build [OPTIONS...] [OUTPUT [KVER]]\n"
               "                       Build an initrd image\n"
               "  ls IMAGE [PATH...]   List the contents of an image (or of a UKI), or print\n"
               "                       files of it\n"
               "  timeline [--svg]     Show the initrd's boot timeline (table or SVG)\n"
               "  uki -o OUT.efi ...   Build a unified kernel image\n"
               "  preview [OPTIONS...] Show the units foyer's generators would write at boot\n"
               "  help [COMMAND]       Show this help, or the help of COMMAND\n"
               "  version              Show the version\n\n"
               "Options:\n"
               "  -h --help            Show this help\n"
               "     --version         Show the version\n\n"
               "See foyer(1) and \"%s COMMAND --help\".\n",
               program_invocation_short_name, program_invocation_short_name);
}

static void help_build(void) {
        printf("%s build [OPTIONS...] [OUTPUT [KVER]]\n\n"
               "Build a systemd-based initrd from the host (or --root). OUTPUT and KVER may\n"
               "also be given as arguments, as with dracut.\n\n"
               "  -o --output=PATH          Output file (default: ./initrd-VERSION.img); %%k is the\n"
               "                            kernel version, %%%% a %%. A symlink is followed to the\n"
               "                            file it names, which is replaced\n"
               "  -k --kver=VERSION         Kernel version (default: the running kernel if its\n"
               "                            modules exist, else the only one installed)\n"
               "  -r --root=DIR             Take binaries, units and modules from DIR (default: /)\n"
               "  -c --compress=FORMAT      zstd (default), xz, gzip, lz4 or none\n"
               "     --compress-level=N     Compression level (default depends on the format)\n"
               "  -m --add-module=NAME      Add a kernel module (error if it does not exist)\n"
               "  -a --add-file=SRC[:DEST]  Add a file or directory tree from the build host\n"
               "     --cmdline=ARGS         Kernel command line defaults stored in the image\n"
               "     --crypttab=FILE        Install FILE as /etc/crypttab in the image, instead\n"
               "                            of the lines the tree's own /etc/crypttab needs\n"
               "     --no-target-settings   Read nothing of the tree's /etc/crypttab and\n"
               "                            /etc/fstab (by default: the volumes under the root,\n"
               "                            /usr and resume device, and root= when none is given)\n"
               "     --add-key-file=SRC[:DEST]\n"
               "                            Add a key file (mode 0400; the image becomes 0600)\n"
               "     --no-shell             No shell in the image: rd.shell, rd.break and debug\n"
               "                            shells cannot turn one on (see rd.emergency=)\n"
               "  -H --hostonly             Only what this system's root, /usr and swap need: their\n"
               "                            drivers, file systems and tools (HostOnly=yes)\n"
               "  -N --no-hostonly          The generic image (the default; HostOnly=no)\n"
               "     --microcode=WHICH      Early microcode archive in front of the image, from\n"
               "                            the tree's intel-microcode and amd64-microcode:\n"
               "                            all (default), host (this CPU's vendor only), none\n"
               "     --keymap=NAME          Console layout loaded before any passphrase prompt,\n"
               "                            instead of the tree's (vconsole.conf, default/keyboard)\n"
               "     --add-keymap=NAME      Also hold layout NAME, for vconsole.keymap=NAME\n"
               "     --ssh-unlock=FILE      An SSH server (dropbear) and the network in the image:\n"
               "                            the keys of FILE (authorized_keys) log in and give the\n"
               "                            passphrases (the image becomes 0600: host keys)\n"
               "     --ssh-host-keys=DIR    Where the SSH host keys are made once and kept\n"
               "                            (default: ROOT/etc/foyer/ssh)\n"
               "     --network[=WHEN]       The network in the image (systemd-networkd): auto\n"
               "                            (default: for --ssh-unlock, network roots' tools,\n"
               "                            Clevis's tang pin), yes (--network alone), no\n"
               "  -v --verbose              Log debug messages\n"
               "  -h --help                 Show this help\n\n"
               "Spellings of dracut and mkinitcpio:\n"
               "  -g --generate=PATH        Same as --output (mkinitcpio)\n"
               "     --add-drivers=\"M...\"  Same as --add-module for each word (dracut)\n"
               "  -f --force                Accepted and ignored: the output is always replaced,\n"
               "                            atomically (dracut)\n\n"
               "Settings also come from /etc/foyer/foyer.conf and conf.d/*.conf drop-ins; the\n"
               "command line wins.\n",
               program_invocation_short_name);
}

static void help_ls(void) {
        printf("%s ls [OPTIONS...] IMAGE [PATH...]\n\n"
               "List an initrd image like lsinitrd: mode, size, path and link target, one entry\n"
               "a line on stdout; the image's size and compression before the entries and a\n"
               "summary after them go to stderr. With PATHs, print those files of the image\n"
               "instead, as lsinitrd IMAGE PATH does. Reads zstd, xz, gzip, lz4 and\n"
               "uncompressed images, concatenated archives, and the initrd of a UKI.\n\n"
               "  -f --file=PATH            Print the file PATH of the image (lsinitrd's -f)\n"
               "     --json                 The listing as one JSON document on stdout: the\n"
               "                            archives and each entry's path, type, mode, size,\n"
               "                            owner and link target (see foyer(1))\n"
               "  -h --help                 Show this help\n",
               program_invocation_short_name);
}

/* dracut's "dracut [OPTION...] [IMAGE [KVER]]": the same as -o and --kver, which may not also be
 * given, since it would be unclear which one was meant. */
static int build_positional(BuildArgs *a, char **args, int n) {
        static const struct {
                const char *key, *option;
        } slots[] = {
                { "Output",        "--output" },
                { "KernelVersion", "--kver"   },
        };
        int r;

        assert(a);
        assert(args || n == 0);

        if (n > (int) ELEMENTSOF(slots)) {
                log_error("build takes at most OUTPUT and KVER as arguments (got \"%s\" too).", args[ELEMENTSOF(slots)]);
                return usage_hint("build");
        }
        for (int i = 0; i < n; i++) {
                const char *old = i == 0 ? a->cli.output : a->cli.kver;

                if (old)
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "%s given twice: \"%s\" and argument \"%s\".",
                                               slots[i].option, old, args[i]);
                r = build_config_assign(&a->cli, slots[i].key, args[i], "command line", 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* dracut's --add-drivers takes one argument with several names. */
static int build_add_drivers(BuildArgs *a, const char *list) {
        _cleanup_strv_free_ char **names = NULL;
        int r;

        assert(a);
        assert(list);

        r = strv_split(list, " \t", &names);
        if (r < 0)
                return log_oom();
        STRV_FOREACH(n, names) {
                r = build_args_parse(a, 'm', *n);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int verb_build(int argc, char *argv[]) {
        enum {
                ARG_CMDLINE = _BUILD_ARG_MAX,
                ARG_ADD_DRIVERS,
        };
        static const struct option options[] = {
                { "help",           no_argument,       NULL, 'h'         },
                { "output",         required_argument, NULL, 'o'         },
                { "generate",       required_argument, NULL, 'g'         },
                { "cmdline",        required_argument, NULL, ARG_CMDLINE },
                { "add-drivers",    required_argument, NULL, ARG_ADD_DRIVERS },
                { "force",          no_argument,       NULL, 'f'         },
                { "hostonly",       no_argument,       NULL, 'H'         },
                { "no-hostonly",    no_argument,       NULL, 'N'         },
                BUILD_ARGS_LONG,
                {}
        };
        BuildArgs a;
        BuildConfig c;
        int opt, r = 0;

        /* The command line is parsed first, so that -v covers reading the configuration and
         * --help works without it, and applied on top of the files afterwards. */
        build_args_init(&a);
        build_config_init(&c);

        while (r >= 0 && (opt = getopt_long(argc, argv, "ho:g:fHN" BUILD_ARGS_SHORT, options, NULL)) >= 0) {
                switch (opt) {
                case 'h':
                        help_build();
                        build_args_done(&a);
                        return 0;
                case 'o':
                case 'g':
                        r = build_config_assign(&a.cli, "Output", optarg, "command line", 0);
                        break;
                case ARG_CMDLINE:
                        r = build_config_assign(&a.cli, "Cmdline", optarg, "command line", 0);
                        break;
                case ARG_ADD_DRIVERS:
                        r = build_add_drivers(&a, optarg);
                        break;
                case 'f':
                        /* dracut refuses to overwrite an image without -f; foyer always replaces it
                         * atomically, so the old image survives any failure anyway. */
                        log_debug("-f/--force is implied: the output is always replaced atomically.");
                        break;
                case 'N':
                        r = build_config_assign(&a.cli, "HostOnly", "no", "command line", 0);
                        break;
                case 'H':
                        r = build_config_assign(&a.cli, "HostOnly", "yes", "command line", 0);
                        break;
                case 'c':
                        /* dracut's and mkinitcpio's -c is a configuration file. */
                        if (strchr(optarg, '/')) {
                                r = log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                    "-c is --compress; foyer reads its settings from /etc/foyer/foyer.conf, "
                                                    "not from \"%s\" (see foyer.conf(5)).", optarg);
                                break;
                        }
                        /* fall through */
                default:
                        r = build_args_parse(&a, opt, optarg);
                        if (r == 0)     /* getopt named the option already */
                                r = usage_hint("build");
                }
                if (r == -ENOMEM)
                        r = log_oom();
        }
        if (r >= 0)
                r = build_positional(&a, argv + optind, argc - optind);
        if (r >= 0)
                r = build_args_config(&a, &c);
        if (r >= 0)
                r = build_image(&c, -EBADF, -EBADF, NULL);

        build_args_done(&a);
        build_config_done(&c);
        return r;
}

/* "foyer ls IMAGE [PATH...]" and "foyer ls -f PATH IMAGE", as lsinitrd has them. */
static int verb_ls(int argc, char *argv[]) {
        enum {
                ARG_JSON = 0x100,
        };
        static const struct option options[] = {
                { "help", no_argument,       NULL, 'h'      },
                { "file", required_argument, NULL, 'f'      },
                { "json", no_argument,       NULL, ARG_JSON },
                {}
        };
        _cleanup_strv_free_ char **paths = NULL;
        const char *image;
        bool json = false;
        int opt, r;

        while ((opt = getopt_long(argc, argv, "hf:", options, NULL)) >= 0)
                switch (opt) {
                case 'h':
                        help_ls();
                        return 0;
                case 'f':
                        if (strv_extend(&paths, optarg) < 0)
                                return log_oom();
                        break;
                case ARG_JSON:
                        json = true;
                        break;
                default:
                        return usage_hint("ls");
                }

        if (optind >= argc) {
                log_error("ls needs an image to list.");
                return usage_hint("ls");
        }
        image = argv[optind];
        for (int i = optind + 1; i < argc; i++)
                if (strv_extend(&paths, argv[i]) < 0)
                        return log_oom();

        if (json && paths) {
                log_error("--json lists the image; it does not go with PATH or -f (those print files).");
                return usage_hint("ls");
        }
        if (json)
                return ls_image_json(image);
        if (!paths)
                return ls_image(image);
        STRV_FOREACH(p, paths) {
                r = ls_cat(image, *p);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const struct {
        const char *name;
        int (*run)(int argc, char *argv[]);
} verbs[] = {
        { "build",   verb_build   },
        { "ls",      verb_ls      },
        { "uki",     verb_uki     },
        { "preview", verb_preview },
        { "timeline", verb_timeline },
};

static int run_verb(const char *name, int argc, char *argv[]) {
        _cleanup_free_ char *argv0 = NULL;

        assert(name);
        assert(argc >= 1);

        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                if (!streq(verbs[i].name, name))
                        continue;
                /* getopt prefixes its messages with argv[0]: "foyer build: unrecognized option ...". */
                argv0 = strjoin(program_invocation_short_name, " ", name);
                if (!argv0)
                        return log_oom();
                argv[0] = argv0;
                return verbs[i].run(argc, argv);
        }
        log_error("Unknown command \"%s\".", name);
        return usage_hint(NULL);
}

/* "foyer help [COMMAND]", as git and systemctl have it: COMMAND --help. */
static int verb_help(int argc, char *argv[]) {
        char *args[] = { argv[1], (char *) "--help", NULL };

        if (argc < 2) {
                help_main();
                return 0;
        }
        if (argc > 2) {
                log_error("help takes one command (got \"%s\" too).", argv[2]);
                return usage_hint(NULL);
        }
        return run_verb(argv[1], 2, args);
}

int main(int argc, char *argv[]) {
        int r;

        log_set_target(LOG_TARGET_CONSOLE);
        log_parse_environment();
        log_open();

        if (argc < 2) {
                help_main();
                return EXIT_FAILURE;
        }

        /* An interrupted build removes its temporary files; see util.h. */
        r = cleanup_on_signal_setup();
        if (r < 0) {
                log_error_errno(r, "Failed to set up the signal handlers: %m");
                return EXIT_FAILURE;
        }

        if (streq(argv[1], "help") || streq(argv[1], "-h") || streq(argv[1], "--help"))
                r = verb_help(argc - 1, argv + 1);
        else if (streq(argv[1], "version") || streq(argv[1], "--version")) {
                printf("foyer %s\n", FOYER_VERSION);
                r = 0;
        } else if (argv[1][0] == '-') {
                log_error("Unknown option \"%s\"; options go after the command.", argv[1]);
                r = usage_hint(NULL);
        } else
                r = run_verb(argv[1], argc - 1, argv + 1);

        log_close();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
