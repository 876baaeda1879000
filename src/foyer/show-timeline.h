/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* foyer timeline: the initrd's boot timeline (src/timeline/timeline.h), as the initrd left it in
 * FOYER_TIMELINE_PATH, printed as a table or drawn as an SVG. Runs in the real root after boot. */

int verb_timeline(int argc, char *argv[]);
