/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <getopt.h>

#include "build.h"
#include "foyer-config.h"
#include "log.h"
#include "ls.h"
#include "uki.h"
#include "util.h"

static void help_main(void) {
        printf("%s [OPTIONS...] COMMAND ...\n\n"
               "Build and inspect foyer initrd images.\n\n"
               "Commands:\n"
               "  build [OPTIONS...]   Build an initrd image\n"
               "  ls IMAGE...          List the contents of images (or of UKIs)\n"
               "  uki -o OUT.efi ...   Build a unified kernel image\n\n"
               "Options:\n"
               "  -h --help            Show this help\n"
               "     --version         Show the version\n\n"
               "See foyer(1) and \"%s COMMAND --help\".\n",
               program_invocation_short_name, program_invocation_short_name);
}

static void help_build(void) {
        printf("%s build [OPTIONS...]\n\n"
               "Build a systemd-based initrd from the host (or --root).\n\n"
               "  -o --output=PATH          Output file (default: ./initrd-VERSION.img)\n"
               "  -k --kver=VERSION         Kernel version (default: the running kernel if its\n"
               "                            modules exist, else the only one installed)\n"
               "  -r --root=DIR             Take binaries, units and modules from DIR (default: /)\n"
               "  -c --compress=FORMAT      zstd (default), xz, gzip, lz4 or none\n"
               "     --compress-level=N     Compression level (default depends on the format)\n"
               "  -m --add-module=NAME      Add a kernel module (error if it does not exist)\n"
               "  -a --add-file=SRC[:DEST]  Add a file or directory tree from the build host\n"
               "     --cmdline=ARGS         Kernel command line defaults stored in the image\n"
               "     --crypttab=FILE        Install FILE as /etc/crypttab in the image\n"
               "     --add-key-file=SRC[:DEST]\n"
               "                            Add a key file (mode 0400; the image becomes 0600)\n"
               "     --no-shell             No shell in the image: rd.shell, rd.break and debug\n"
               "                            shells cannot turn one on (see rd.emergency=)\n"
               "  -v --verbose              Log debug messages\n"
               "  -h --help                 Show this help\n\n"
               "Settings also come from /etc/foyer/foyer.conf and conf.d/*.conf drop-ins; the\n"
               "command line wins.\n",
               program_invocation_short_name);
}

static void help_ls(void) {
        printf("%s ls [OPTIONS...] IMAGE...\n\n"
               "List an initrd image like lsinitrd: mode, size, path and link target.\n"
               "Reads zstd, xz, gzip, lz4 and uncompressed images, and concatenated archives.\n\n"
               "  -h --help                 Show this help\n",
               program_invocation_short_name);
}

static int verb_build(int argc, char *argv[]) {
        enum {
                ARG_CMDLINE = _BUILD_ARG_MAX,
        };
        static const struct option options[] = {
                { "help",           no_argument,       NULL, 'h'         },
                { "output",         required_argument, NULL, 'o'         },
                { "cmdline",        required_argument, NULL, ARG_CMDLINE },
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

        while (r >= 0 && (opt = getopt_long(argc, argv, "ho:" BUILD_ARGS_SHORT, options, NULL)) >= 0) {
                switch (opt) {
                case 'h':
                        help_build();
                        build_args_done(&a);
                        return 0;
                case 'o':
                        r = build_config_assign(&a.cli, "Output", optarg, "command line", 0);
                        break;
                case ARG_CMDLINE:
                        r = build_config_assign(&a.cli, "Cmdline", optarg, "command line", 0);
                        break;
                default:
                        r = build_args_parse(&a, opt, optarg);
                        if (r == 0)
                                r = -EINVAL;
                }
                if (r == -ENOMEM)
                        r = log_oom();
        }
        if (r >= 0 && optind < argc)
                r = log_error_errno(SYNTHETIC_ERRNO(EINVAL), "build takes no positional arguments (got \"%s\").",
                                    argv[optind]);
        if (r >= 0)
                r = build_args_config(&a, &c);
        if (r >= 0)
                r = build_image(&c, -EBADF, NULL);

        build_args_done(&a);
        build_config_done(&c);
        return r;
}

static int verb_ls(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int opt, r;

        while ((opt = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (opt) {
                case 'h':
                        help_ls();
                        return 0;
                default:
                        return -EINVAL;
                }

        if (optind >= argc)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "ls needs an image to list.");

        for (int i = optind; i < argc; i++) {
                r = ls_image(argv[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        int r;

        log_set_target(LOG_TARGET_CONSOLE);
        log_parse_environment();
        log_open();

        if (argc < 2 || streq(argv[1], "-h") || streq(argv[1], "--help")) {
                help_main();
                return argc < 2 ? EXIT_FAILURE : EXIT_SUCCESS;
        }
        if (streq(argv[1], "--version")) {
                printf("foyer %s\n", FOYER_VERSION);
                return EXIT_SUCCESS;
        }

        /* An interrupted build removes its temporary files; see util.h. */
        r = cleanup_on_signal_setup();
        if (r < 0) {
                log_error_errno(r, "Failed to set up the signal handlers: %m");
                return EXIT_FAILURE;
        }

        if (streq(argv[1], "build"))
                r = verb_build(argc - 1, argv + 1);
        else if (streq(argv[1], "ls"))
                r = verb_ls(argc - 1, argv + 1);
        else if (streq(argv[1], "uki"))
                r = verb_uki(argc - 1, argv + 1);
        else {
                log_error("Unknown command \"%s\"; see %s --help.", argv[1], program_invocation_short_name);
                r = -EINVAL;
        }

        log_close();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
