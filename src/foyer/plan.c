/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The ordered table of planners. Each adds one concern to the manifest with the helpers of
 * plan-util.c; none calls back into this file. The order matters: the units the listed ones need
 * are read from the tree (unit-deps) before the stock .wants links are resolved, the programs of
 * every unit are added and checked (unit-programs, closure-units) after every planner that adds
 * units and before the fixed binary list (so that a program the tree lacks is named with its
 * unit), /etc/group is written after every udev rule is in (the storage and debug planners add
 * rules), key files are marked after the user's files are in, and the --no-shell check runs last.
 * The rest of the closure check (rules, libraries) runs in build.c after the library closure. */

#include <assert.h>

#include "closure.h"
#include "log.h"
#include "plan.h"
#include "plan-debug.h"
#include "plan-table.h"
#include "plan-shell.h"

typedef struct Planner {
        const char *name;
        int (*run)(Manifest *m, const BuildConfig *c);
        /* Instead of run, for the planners that need what was probed on the host. */
        int (*run_probe)(Manifest *m, const BuildConfig *c, const Probe *p);
        /* The kernel modules it needs beyond the default set (plan_image_modules()). */
        PlanModulesFunc modules;
} Planner;

static const Planner planners[] = {
        { "skeleton",           .run = plan_skeleton },
        { "pid1",               .run = plan_pid1 },
        { "stock-units",        .run = plan_stock_units },
        /* The tree's resume generator and unit: stock units too, whose dependencies are followed. */
        { "resume",             .run = plan_resume },
        /* foyer's units, including drop-ins for stock units, before the stock links are resolved. */
        { "foyer-units",        .run = plan_foyer_units },
        /* The tree's /run/lock tmpfs, mounted early (plan-run-lock.c). */
        { "run-lock",           .run = plan_run_lock },
        /* The units those need, from the tree, before their .wants links are carried over. */
        { "unit-deps",          .run = plan_unit_deps },
        { "unit-links",         .run = plan_unit_links },
        { "rules",              .run_probe = plan_rules },
        { "config",             .run = plan_config },
        { "generators",         .run = plan_generators },
        { "shell",              .run = plan_shell },
        { "lvm",                .run_probe = plan_lvm },
        { "md",                 .run_probe = plan_md },
        { "gptauto",            .run = plan_gptauto },
        { "crypt",              .run_probe = plan_crypt },
        /* dm-verity with the tree's veritysetup generator and program, and its modules (host-only: a
         * verity root or /usr). */
        { "verity",             .run_probe = plan_verity, .modules = plan_verity_modules },
        /* systemd-repart for the tree's repart definitions; its unit's dependencies and stock links
         * (sysinit.target.wants/) come with the tokens'. */
        { "repart",             .run = plan_repart },
        /* The keymap for the passphrase prompt; its loadkeys is resolved with the other binaries. */
        { "keymap",             .run = plan_keymap },
        /* After crypt, whose /etc/crypttab says what the volumes ask for; the units it adds have
         * their dependencies and stock links carried as the others' were. */
        { "tokens",             .run_probe = plan_tokens, .modules = plan_tokens_modules },
        /* Clevis (plan-clevis.c): after tokens, before the network, which the tang pin needs. */
        { "clevis",             .run_probe = plan_clevis },
        /* The SSH server, whose units' dependencies come with the tokens'. Before etc, which gives root
         * foyer-unlock as its shell with --no-shell. */
        { "ssh",                .run = plan_ssh },
        /* The network roots' tools and modules (the host's root on the network: hostonly.c). */
        { "netroot",            .run_probe = plan_netroot, .modules = plan_netroot_modules },
        /* The network, after every planner whose files need it (ssh, netroot, clevis's tang pin);
         * before etc, which adds systemd-networkd's user; its units' dependencies come with the tokens'. */
        { "network",            .run_probe = plan_network, .modules = plan_network_modules },
        /* What systemd-stub passes in /.extra: its units' dependencies and links come with the tokens'. */
        { "stub",               .run = plan_stub, .modules = plan_stub_modules },
        { "token-unit-deps",    .run = plan_unit_deps },
        { "token-unit-links",   .run = plan_unit_links },
        { "debug",              .run = plan_debug },
        /* After every planner that adds units. */
        { "unit-programs",      .run = plan_unit_programs },
        /* Before the fixed list of binaries, whose error for a missing program would not name the
         * unit that runs it. */
        { "closure-units",      .run = plan_closure_units },
        { "binaries",           .run_probe = plan_binaries },
        { "shell-binaries",     .run = plan_shell_binaries },
        { "etc",                .run_probe = plan_etc },
        { "target-root",        .run = plan_target_root },
        { "systemd-version",    .run = plan_systemd_version },
        { "user-files",         .run = plan_user_files },
        { "crypt-keys",         .run = plan_crypt_keys },
        { "no-shell",           .run = plan_shell_finish },
};

int plan_image(Manifest *m, const BuildConfig *c, const Probe *p) {
        int r;

        assert(m);
        assert(c);
        assert(p);

        for (size_t i = 0; i < ELEMENTSOF(planners); i++) {
                log_debug("Planning %s.", planners[i].name);
                r = planners[i].run ? planners[i].run(m, c) : planners[i].run_probe(m, c, p);
                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_image_modules(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted) {
        int r;

        assert(m);
        assert(c);
        assert(p);
        assert(wanted);

        for (size_t i = 0; i < ELEMENTSOF(planners); i++) {
                if (!planners[i].modules)
                        continue;
                r = planners[i].modules(m, c, p, wanted);
                if (r < 0)
                        return r;
        }
        return 0;
}
