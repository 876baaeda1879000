/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "progress.h"

static int progress_mode = -1;
static const char *progress_phase = NULL;
static struct timespec progress_start;

void progress_set_mode(int mode) {
        progress_mode = mode < 0 ? -1 : !!mode;
}

int progress_enabled(void) {
        if (progress_mode >= 0)
                return progress_mode;
        return log_get_max_level() >= LOG_DEBUG || isatty(STDERR_FILENO);
}

void progress_begin(const char *phase) {
        progress_phase = phase;
        clock_gettime(CLOCK_MONOTONIC, &progress_start);
        if (!phase || !progress_enabled())
                return;
        fprintf(stderr, "%s: %s...\n", program_invocation_short_name, phase);
}

void progress_end(void) {
        struct timespec now;

        if (!progress_phase)
                return;
        if (log_get_max_level() >= LOG_DEBUG && progress_enabled()) {
                clock_gettime(CLOCK_MONOTONIC, &now);
                fprintf(stderr, "%s: %s: %.2f s\n", program_invocation_short_name, progress_phase,
                        (double) (now.tv_sec - progress_start.tv_sec) + (now.tv_nsec - progress_start.tv_nsec) / 1e9);
        }
        progress_phase = NULL;
}
