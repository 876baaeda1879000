/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The hardware classes of the generic image: directories of the kernel's module tree, as dracut's
 * 90kernel-modules names them, narrowed by the symbols each module uses. */

#include <libkmod.h>

/* Called for each chosen module; why names its class. */
typedef int (*module_class_add_t)(struct kmod_module *mod, const char *why, void *userdata);

/* Walks modules.dep (its text, as depmod wrote it for the kernel of ctx) and calls add for every
 * module that belongs to a class and passes its filters, in the order of modules.dep. */
int module_classes_select(struct kmod_ctx *ctx, const char *modules_dep, module_class_add_t add, void *userdata);
