/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <getopt.h>

#include "build.h"
#include "foyer-config.h"
#include "log.h"
#include "ls.h"
#include "util.h"

static void help_main(void) {
        printf("%s [OPTIONS...] COMMAND ...\n\n"
               "Build and inspect foyer initrd images.\n\n"
               "Commands:\n"
               "  build [OPTIONS...]   Build an initrd image\n"
               "  ls IMAGE...          List the contents of images\n\n"
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
                ARG_CMDLINE = 0x100,
                ARG_LEVEL,
                ARG_CRYPTTAB,
                ARG_KEY_FILE,
        };
        static const struct option options[] = {
                { "help",           no_argument,       NULL, 'h'         },
                { "output",         required_argument, NULL, 'o'         },
                { "kver",           required_argument, NULL, 'k'         },
                { "root",           required_argument, NULL, 'r'         },
                { "compress",       required_argument, NULL, 'c'         },
                { "compress-level", required_argument, NULL, ARG_LEVEL   },
                { "add-module",     required_argument, NULL, 'm'         },
                { "add-file",       required_argument, NULL, 'a'         },
                { "cmdline",        required_argument, NULL, ARG_CMDLINE },
                { "crypttab",       required_argument, NULL, ARG_CRYPTTAB },
                { "add-key-file",   required_argument, NULL, ARG_KEY_FILE },
                { "verbose",        no_argument,       NULL, 'v'         },
                {}
        };
        _cleanup_strv_free_ char **modules = NULL, **files = NULL, **key_files = NULL;
        BuildConfig cli, c;
        int opt, r;

        /* The command line is parsed first, so that -v covers reading the configuration and
         * --help works without it, and applied on top of the files afterwards. */
        build_config_init(&cli);
        build_config_init(&c);
        cli.compression = _COMPRESSION_INVALID;

        while ((opt = getopt_long(argc, argv, "ho:k:r:c:m:a:v", options, NULL)) >= 0) {
                switch (opt) {
                case 'h':
                        help_build();
                        build_config_done(&cli);
                        return 0;
                case 'o':
                        r = build_config_assign(&cli, "Output", optarg, "command line", 0);
                        break;
                case 'k':
                        r = build_config_assign(&cli, "KernelVersion", optarg, "command line", 0);
                        break;
                case 'r':
                        r = build_config_assign(&cli, "Root", optarg, "command line", 0);
                        break;
                case 'c':
                        r = build_config_assign(&cli, "Compression", optarg, "command line", 0);
                        break;
                case ARG_LEVEL:
                        r = build_config_assign(&cli, "CompressionLevel", optarg, "command line", 0);
                        break;
                case 'm':
                        r = strv_extend(&modules, optarg);
                        break;
                case 'a':
                        r = strv_extend(&files, optarg);
                        break;
                case ARG_CMDLINE:
                        r = build_config_assign(&cli, "Cmdline", optarg, "command line", 0);
                        break;
                case ARG_CRYPTTAB:
                        r = build_config_assign(&cli, "Crypttab", optarg, "command line", 0);
                        break;
                case ARG_KEY_FILE:
                        r = strv_extend(&key_files, optarg);
                        break;
                case 'v':
                        log_set_max_level(LOG_DEBUG);
                        r = 0;
                        break;
                default:
                        build_config_done(&cli);
                        return -EINVAL;
                }
                if (r < 0) {
                        build_config_done(&cli);
                        return r == -ENOMEM ? log_oom() : r;
                }
        }
        if (optind < argc) {
                build_config_done(&cli);
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "build takes no positional arguments (got \"%s\").",
                                       argv[optind]);
        }

        r = build_config_load_files(&c);
        if (r >= 0) {
#define OVERRIDE(field) if (cli.field) { free(c.field); c.field = TAKE_PTR(cli.field); }
                OVERRIDE(output);
                OVERRIDE(kver);
                OVERRIDE(root);
                OVERRIDE(cmdline);
                OVERRIDE(crypttab);
#undef OVERRIDE
                if (cli.compression >= 0)
                        c.compression = cli.compression;
                if (cli.level >= 0)
                        c.level = cli.level;
                STRV_FOREACH(mod, modules)
                        if (strv_extend(&c.add_modules, *mod) < 0)
                                r = log_oom();
                STRV_FOREACH(f, files)
                        if (strv_extend(&c.add_files, *f) < 0)
                                r = log_oom();
                STRV_FOREACH(f, key_files)
                        if (strv_extend(&c.add_key_files, *f) < 0)
                                r = log_oom();
        }
        if (r >= 0)
                r = build_image(&c);

        build_config_done(&cli);
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

        if (streq(argv[1], "build"))
                r = verb_build(argc - 1, argv + 1);
        else if (streq(argv[1], "ls"))
                r = verb_ls(argc - 1, argv + 1);
        else {
                log_error("Unknown command \"%s\"; see %s --help.", argv[1], program_invocation_short_name);
                r = -EINVAL;
        }

        log_close();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
