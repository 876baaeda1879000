/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Progress of the long phases of a build (module resolution, the library closure, writing and
 * compressing the archive): a short line on stderr as a phase starts, and with -v one with its
 * time as it ends. Shown only when stderr is a terminal or the log level is debug (-v), so that
 * the output of a build whose stderr goes to a file or a pipe (logs, tests, kernel-install) is
 * the same as without it. */

/* -1 (the default): decide by stderr and the log level at each call; 0: never; 1: always. */
void progress_set_mode(int mode);

/* Whether progress_begin() prints now. */
int progress_enabled(void);

/* "foyer: PHASE..." when enabled; the phase is a short lower-case description ("resolving kernel
 * modules"). Starts the phase's clock. */
void progress_begin(const char *phase);

/* With -v, "foyer: PHASE: N.NN s" for the phase progress_begin() started; else nothing. */
void progress_end(void);
