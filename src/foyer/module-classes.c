/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The generic image must boot the machines dracut's --no-hostonly image boots: it takes whole
 * directories of the module tree, as dracut's 90kernel-modules does, instead of a list of names
 * that misses the controller nobody thought of. A storage directory also holds modules that drive
 * no disk (transport classes, tape and changer drivers, target and back-end drivers); like dracut
 * (dracut-install --mod-filter-symbol with its block functions), foyer keeps only the modules that
 * call into the block layer or a storage host API, read from the symbol versions (__versions) the
 * module imports. It then leaves out what cannot be a root in foyer's image, or is too large for
 * what it serves (see the exclusions below): the generic image stays under half of dracut's. */

#include <fnmatch.h>
#include <string.h>

#include "log.h"
#include "module-classes.h"
#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct kmod_module *, kmod_module_unref);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct kmod_list *, kmod_module_unref_list);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct kmod_list *, kmod_module_dependency_symbols_free_list);

/* What a block driver calls: dracut's block functions (90kernel-modules' _blockfuncs) and the
 * names they have in later kernels, matched as dracut matches them: anywhere in the imported
 * symbol's name (so scsi_add_host matches scsi_add_host_with_dma, blk_mq_alloc_disk the kernel's
 * __blk_mq_alloc_disk). */
static const char *const block_symbols[] = {
        "ahci_platform_get_resources", "ata_scsi_ioctl", "scsi_add_host", "scsi_esp_register",
        "register_mtd_blktrans", "register_virtio_device", "usb_stor_disconnect", "mmc_add_host",
        "sdhci_add_host", "blk_cleanup_queue", "blk_cleanup_disk", "blk_mq_alloc_disk",
        "blk_alloc_disk", "blk_mq_alloc_request", "blk_mq_destroy_queue",
};

/* What a HID transport driver calls: it creates the HID devices of a bus (usbhid, i2c-hid, Surface,
 * Hyper-V, Logitech's receivers). hid-generic then drives a keyboard on any of them; surface_kbd,
 * the one keyboard it cannot drive, is a default module by name. */
static const char *const hid_transport_symbols[] = { "hid_add_device" };

typedef struct ModuleClass {
        const char *dir;                /* below the module directory, without the trailing slash */
        const char *const *uses;        /* NULL (every module), or only the modules that import a
                                         * symbol with one of these in its name, minus the
                                         * exclusions below */
        size_t n_uses;
        const char *why;
} ModuleClass;

#define ALL NULL, 0
#define BLOCK block_symbols, ELEMENTSOF(block_symbols)
#define HID_TRANSPORT hid_transport_symbols, ELEMENTSOF(hid_transport_symbols)

/* The classes. A module that is built in is skipped by modules.c; dependencies, soft dependencies
 * and firmware come with each module there. */
static const ModuleClass classes[] = {
        /* SATA host adapters: AHCI, the sata_* chips (parallel ATA is left out below). */
        { "kernel/drivers/ata",                 BLOCK, "SATA/PATA controllers" },
        /* SCSI, SAS and RAID host adapters: megaraid_sas, mpt3sas, hpsa, aacraid, smartpqi,
         * vmw_pvscsi, hv_storvsc, virtio_scsi, xen-scsifront, the disk and CD-ROM drivers. */
        { "kernel/drivers/scsi",                BLOCK, "SCSI/SAS/RAID controllers" },
        /* LSI Fusion MPT: mptsas (QEMU's mptsas1068, older LSI SAS); mptspi (VMware's "LSI Logic
         * Parallel") is parallel SCSI, left out below and a default module by name. */
        { "kernel/drivers/message/fusion",      BLOCK, "LSI Fusion MPT controllers" },
        /* NVMe over PCIe (the fabrics are network storage, left out by the filter). */
        { "kernel/drivers/nvme/host",           BLOCK, "NVMe" },
        /* SD/MMC and eMMC: the block driver and the host controllers (sdhci, rtsx, ...). */
        { "kernel/drivers/mmc",                 BLOCK, "SD/MMC controllers" },
        /* Block drivers of their own: virtio_blk, xen-blkfront, mtip32xx, loop, ... */
        { "kernel/drivers/block",               BLOCK, "block device drivers" },
        /* Device mapper and MD's core (their targets and personalities come with LVM and RAID). */
        { "kernel/drivers/md",                  BLOCK, "device mapper/MD core" },
        /* The virtio transports (PCI, MMIO) that the virtio disk and SCSI drivers sit on. */
        { "kernel/drivers/virtio",              BLOCK, "virtio transports" },
        /* USB mass storage: usb-storage, uas and the ums-* card reader sub-drivers. */
        { "kernel/drivers/usb/storage",         ALL, "USB storage" },
        /* PCIe host bridges that disks sit behind: Intel VMD (NVMe in RST mode), Hyper-V's PCI. */
        { "kernel/drivers/pci/controller",      ALL, "PCI host bridges (VMD, Hyper-V)" },
        /* Keyboards for the passphrase prompt and the emergency shell: AT and others, and the
         * serial-input ports they sit on (i8042, Hyper-V's keyboard). */
        { "kernel/drivers/input/keyboard",      ALL, "keyboards" },
        { "kernel/drivers/input/serio",         ALL, "keyboard ports" },
        /* HID transports: usbhid, i2c-hid (laptops' internal keyboards), Surface, Hyper-V. The
         * vendor drivers are over a hundred modules, mostly for game controllers, tablets, mice
         * and sensors: on bookworm they would add over a megabyte, more than the image has left
         * under half of dracut's. */
        { "kernel/drivers/hid",                 HID_TRANSPORT, "HID transports" },
};

/* Block drivers foyer's image cannot use as a root: they import one of these symbols. The image
 * brings up no network: nbd, drbd, aoe and FCoE are left out. */
static const char *const network_symbols[] = {
        "sock_create_kern", "sock_sendmsg", "kernel_sendmsg", "sockfd_lookup", "dev_add_pack",
        "register_netdevice_notifier",
};

/* Block drivers left out by a module they depend on; --add-module adds any of them. */
static const struct {
        const char *name;
        const char *why;
} excluded_dependencies[] = {
        /* Fibre Channel and iSCSI host adapters (lpfc, qla2xxx, bfa, qla4xxx, ...) and the iSCSI
         * library: a root on a SAN needs its fabric's multipath setup, which a generic image does
         * not know. They are also the largest drivers of the tree. hv_storvsc registers an FC
         * transport too; it is a default module by name. */
        { "scsi_transport_fc",    "SAN host adapter (Fibre Channel)" },
        { "scsi_transport_iscsi", "SAN host adapter (iSCSI)" },
        /* Parallel SCSI (Ultra320 and older), gone from machines since the mid-2000s; the two that
         * virtual machines still emulate, mptspi (VMware's "LSI Logic Parallel") and sym53c8xx
         * (QEMU's lsi53c895a), are default modules by name. */
        { "scsi_transport_spi",   "parallel SCSI host adapter" },
        /* 16-bit PC Card slots, not built for twenty years. */
        { "pcmcia",               "PC Card adapter" },
};

/* Modules of the filtered classes left out by name (a glob): no hardware a root or keyboard
 * could be on, or hardware gone from machines. ata_piix (also QEMU's IDE) is a default module. */
static const struct {
        const char *pattern;
        const char *why;
} excluded_names[] = {
        { "scsi_debug", "a test device" },
        { "null_blk",   "a test device" },
        { "brd",        "a RAM disk" },
        { "zram",       "a compressed RAM disk" },
        /* A bcache device only appears when its udev rule registers the members (bcache-tools). */
        { "bcache",     "needs bcache-tools" },
        { "floppy",     "a floppy drive" },
        /* Parallel ATA (IDE) controllers, gone since SATA took over in the late 2000s. */
        { "pata_*",     "parallel ATA (IDE) controller" },
        { "pdc_adma",   "parallel ATA (IDE) controller" },
        /* Host adapters of the 1990s and early 2000s (ISA, PCI and PCI-X cards, parallel SCSI
         * and PATA RAID) that were never made for PCIe. */
        { "advansys",   "1990s SCSI adapter" },
        { "BusLogic",   "1990s SCSI adapter" },
        { "initio",     "1990s SCSI adapter" },
        { "a100u2w",    "1990s SCSI adapter" },
        { "atp870u",    "1990s SCSI adapter" },
        { "wd719x",     "1990s SCSI adapter" },
        { "dc395x",     "1990s SCSI adapter" },
        { "dmx3191d",   "1990s SCSI adapter" },
        { "qla1280",    "1990s SCSI adapter" },
        { "am53c974",   "1990s SCSI adapter" },
        { "ips",        "PCI-X RAID adapter (IBM ServeRAID)" },
        { "megaraid",   "PCI RAID adapter (legacy MegaRAID)" },
        { "myrb",       "PCI RAID adapter (Mylex)" },
        { "myrs",       "PCI RAID adapter (Mylex)" },
        { "3w_xxxx",    "PCI RAID adapter (3ware Escalade)" },
        { "aic94xx",    "PCI-X SAS adapter (Adaptec)" },
        /* IBM's SAS RAID adapters of POWER systems (System x used ServeRAID and LSI). */
        { "ipr",        "RAID adapter of IBM POWER systems" },
        /* HID transports that carry no keyboard: sensor hubs, a game controller, and uhid, whose
         * devices come from bluetoothd, which the image does not run. */
        { "intel_ish*", "a sensor hub" },
        { "amd_sfh",    "a sensor hub" },
        { "hid_steam",  "a game controller" },
        { "uhid",       "needs bluetoothd" },
};

/* Why a module is left out for what it depends on (a network driver or the network stack: qedf,
 * csiostor, bnx2fc, rbd; or one of excluded_dependencies), or NULL. */
static const char *excluded_by_dependency(struct kmod_module *mod) {
        _cleanup_(kmod_module_unref_listp) struct kmod_list *deps = kmod_module_get_dependencies(mod);
        struct kmod_list *i;

        kmod_list_foreach(i, deps) {
                _cleanup_(kmod_module_unrefp) struct kmod_module *d = kmod_module_get_module(i);
                const char *path = kmod_module_get_path(d), *name = kmod_module_get_name(d);

                if (path && (strstr(path, "/kernel/net/") || strstr(path, "/kernel/drivers/net/")))
                        return "needs a network driver";
                for (size_t k = 0; k < ELEMENTSOF(excluded_dependencies); k++)
                        if (streq(name, excluded_dependencies[k].name))
                                return excluded_dependencies[k].why;
        }
        return NULL;
}

/* Whether a module of a filtered class is kept: returns 1 or 0 and, for 0, why in *ret_why. */
static int module_wanted(const ModuleClass *class, struct kmod_module *mod, const char **ret_why) {
        _cleanup_(kmod_module_dependency_symbols_free_listp) struct kmod_list *symbols = NULL;
        const char *name = kmod_module_get_name(mod);
        struct kmod_list *i;
        bool uses = false;
        int r;

        for (size_t k = 0; k < ELEMENTSOF(excluded_names); k++)
                if (fnmatch(excluded_names[k].pattern, name, 0) == 0) {
                        *ret_why = excluded_names[k].why;
                        return 0;
                }

        /* Before the symbols, which mean reading (and maybe decompressing) the module. */
        *ret_why = excluded_by_dependency(mod);
        if (*ret_why)
                return 0;

        r = kmod_module_get_dependency_symbols(mod, &symbols);
        if (r < 0 || !symbols) {
                /* A kernel without CONFIG_MODVERSIONS records no imported symbols: keep the
                 * module rather than lose a disk controller. */
                log_debug("Module %s has no symbol versions, keeping it unfiltered.", name);
                return 1;
        }

        kmod_list_foreach(i, symbols) {
                const char *s = kmod_module_dependency_symbol_get_symbol(i);

                if (!s)
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(network_symbols); k++)
                        if (streq(s, network_symbols[k])) {
                                *ret_why = "needs the network";
                                return 0;
                        }
                for (size_t k = 0; !uses && k < class->n_uses; k++)
                        if (strstr(s, class->uses[k]))
                                uses = true;
        }
        if (!uses) {
                *ret_why = "uses none of the class's functions";
                return 0;
        }
        return 1;
}

/* The module name of a modules.dep path: its file name up to ".ko", with '-' as '_'. */
static char *module_name_of(const char *path, size_t len) {
        const char *base = memrchr(path, '/', len), *ko;
        char *name;

        base = base ? base + 1 : path;
        ko = memmem(base, len - (base - path), ".ko", 3);
        if (!ko)
                return strdup("");
        name = strndup(base, ko - base);
        if (name)
                for (char *c = name; *c; c++)
                        if (*c == '-')
                                *c = '_';
        return name;
}

int module_classes_select(struct kmod_ctx *ctx, const char *modules_dep, module_class_add_t add, void *userdata) {
        int r;

        assert(ctx);
        assert(modules_dep);
        assert(add);

        for (const char *line = modules_dep; *line; ) {
                const char *eol = strchrnul(line, '\n'), *colon = memchr(line, ':', eol - line);
                const ModuleClass *class = NULL;

                for (size_t k = 0; colon && k < ELEMENTSOF(classes); k++) {
                        size_t n = strlen(classes[k].dir);

                        if ((size_t) (colon - line) > n && strneq(line, classes[k].dir, n) && line[n] == '/') {
                                class = &classes[k];
                                break;
                        }
                }

                if (class) {
                        _cleanup_(kmod_module_unrefp) struct kmod_module *mod = NULL;
                        _cleanup_free_ char *name = module_name_of(line, colon - line);
                        const char *why = NULL;

                        if (!name)
                                return log_oom();
                        r = kmod_module_new_from_name(ctx, name, &mod);
                        if (r < 0)
                                return log_error_errno(r, "Failed to look up module %s: %m", name);
                        r = class->uses ? module_wanted(class, mod, &why) : 1;
                        if (r < 0)
                                return r;
                        if (r == 0)
                                log_debug("Not adding %s for its class (%s): %s.", name, class->why, why);
                        else {
                                r = add(mod, class->why, userdata);
                                if (r < 0)
                                        return r;
                        }
                }
                line = *eol ? eol + 1 : eol;
        }
        return 0;
}
