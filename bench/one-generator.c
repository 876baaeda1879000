/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/one-generator: every foyer generator in one process, for bench/levers.sh's lever "one
 * generator process instead of nine" (docs/performance.md). Not installed, not shipped.
 *
 * systemd forks every generator of the image on its own; this program runs, one after the other
 * and each under its own name (program_invocation_short_name, which names the log lines and
 * selects a generator's modes), those of foyer's generators that the image carries in
 * /usr/lib/systemd/system-generators/, with the arguments systemd gave it. bench/levers.sh masks
 * the image's own generators and puts this one in their place. The generators are linked in as the
 * fuzz harness links them (-DFOYER_FUZZ_GENERATOR=one_generator_main_NAME, see generator.h); each
 * resets its own state when it returns.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "foyer-contract.h"
#include "macro.h"

int one_generator_main_root(int argc, char *argv[]);
int one_generator_main_crypt(int argc, char *argv[]);
int one_generator_main_lvm(int argc, char *argv[]);
int one_generator_main_debug(int argc, char *argv[]);
int one_generator_main_gpt_auto(int argc, char *argv[]);
int one_generator_main_driver(int argc, char *argv[]);
int one_generator_main_md(int argc, char *argv[]);
int one_generator_main_vconsole(int argc, char *argv[]);
int one_generator_main_network(int argc, char *argv[]);
int one_generator_main_netroot(int argc, char *argv[]);

static const struct {
        const char *name;
        int (*main)(int argc, char *argv[]);
} generators[] = {
        { "foyer-root-generator", one_generator_main_root },
        { "foyer-crypt-generator", one_generator_main_crypt },
        { "foyer-lvm-generator", one_generator_main_lvm },
        { "foyer-debug-generator", one_generator_main_debug },
        { "foyer-gpt-auto-generator", one_generator_main_gpt_auto },
        { "foyer-driver-generator", one_generator_main_driver },
        { "foyer-md-generator", one_generator_main_md },
        { "foyer-vconsole-generator", one_generator_main_vconsole },
        { "foyer-network-generator", one_generator_main_network },
        { "foyer-netroot-generator", one_generator_main_netroot },
};

int main(int argc, char *argv[]) {
        int ret = 0;

        for (size_t i = 0; i < ELEMENTSOF(generators); i++) {
                char path[256];

                /* Only what the image carries: the builder leaves out the generators it has no use for. */
                snprintf(path, sizeof(path), "%s/%s", FOYER_IMAGE_GENERATOR_DIR, generators[i].name);
                if (access(path, X_OK) < 0)
                        continue;
                program_invocation_short_name = (char *) generators[i].name;
                if (generators[i].main(argc, argv) != 0)
                        ret = 1;
        }
        return ret;
}
