/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* foyer uki: a unified kernel image. systemd's EFI stub with the kernel, a foyer image (given, or
 * built with the options of foyer build), the command line, os-release and the kernel version
 * appended as PE sections (pe.c), written atomically, then signed with sbsign if asked to. */

int verb_uki(int argc, char *argv[]);
