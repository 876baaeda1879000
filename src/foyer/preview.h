/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* foyer preview: a dry run of the generator step of the boot. foyer's generators run on the build
 * host, as PID 1 would run them in the initrd, on a given kernel command line (and crypttab and
 * fstab), into a private temporary directory; every unit they write is printed. With --image, what a
 * built image's generators read at boot (preview-image.c) is taken from it, and only its generators
 * run; SSH units come only from an image with dropbear, never from the host's. Nothing is
 * mounted, unlocked or started. Not to be confused with foyer-explain, which explains a boot that
 * failed. */

int verb_preview(int argc, char *argv[]);
