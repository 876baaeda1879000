/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The contract between foyer's parts: the paths and names that one part puts into the image and
 * another finds there at boot. The parts are the builder (src/foyer), the generators (generators/),
 * the failure report (src/failure) and the units (units/). Each value is defined here once, with a
 * comment that says who writes it and who reads it.
 *
 * This header is the single source of truth, for the units too: src/shared/meson.build reads it
 * and fills the @FOYER_*@ placeholders of units/ from it (units/meson.build), and test-contract checks
 * the units it built against the values compiled from here. The values live in a header rather than
 * in a list in meson.build because three of the four parts are C: they compile against this file
 * as it is, and a reader of their code finds each value, and what it is for, one #include away.
 *
 * So that meson can read it, every #define here has this form, on one line:
 *     #define FOYER_NAME TOKEN...    (a comment may follow)
 * where each TOKEN is a string literal without spaces, quotes or backslashes, or the name of a
 * macro defined above it. meson refuses any other #define, so the two readings cannot differ.
 *
 * Paths are paths in the image, the same whatever prefix foyer is built with. Where the builder
 * finds foyer's files on the build host (FOYER_HOST_GENERATOR_DIR, FOYER_UNIT_DIR, FOYER_LIB_DIR)
 * is meson's config.h, not part of this contract. */

/* --- systemd's places that the contract refers to ------------------------------------------- */

/* Exists only in an initrd. Written by the builder (plan-base.c); read by PID 1, by in_initrd()
 * (src/shared/cmdline.c, so by every generator) and by foyer-break@.service's AssertPathExists=. */
#define FOYER_INITRD_RELEASE "/etc/initrd-release"

/* systemd's generator directory in the image, so that PID 1 runs foyer's generators at initrd
 * boot. The builder (plan-base.c) puts the generators here, and only in the image: meson installs
 * them on the build host under FOYER_HOST_GENERATOR_DIR, where the host's own boot never runs them. */
#define FOYER_IMAGE_GENERATOR_DIR "/usr/lib/systemd/system-generators"

/* The "normal" output directory PID 1 gives its generators at boot (argv[1]). foyer-lvm-generator
 * writes there; the root generator's systemd-sysroot-fstab-check mode writes there by name. */
#define FOYER_GENERATOR_NORMAL_DIR "/run/systemd/generator"

/* The directory where systemd-cryptsetup looks for a volume's key file (NAME.key) when crypttab
 * names none. Every regular file the builder puts there is a key (plan-crypt.c: mode 0400 in the
 * image, the image 0600); foyer uki --initrd (ls.c) takes an initrd holding one for a secret one,
 * whatever the file's mode, as it does one holding FOYER_SSH_HOST_KEY_DIR's files. */
#define FOYER_CRYPT_KEYS_DIR "/etc/cryptsetup-keys.d"

/* The image's defaults for the kernel command line: every *.conf here, in C-locale order, comes
 * before /proc/cmdline (dracut's /etc/cmdline.d). Written by the builder (plan-base.c: --cmdline,
 * 50-foyer.conf; plan-target.c: 40-foyer-target.conf); read by every generator (src/shared/cmdline.c)
 * and by foyer preview --image (preview-image.c), which copies them out of an image. */
#define FOYER_CMDLINE_DIR "/etc/cmdline.d"

/* --- the root generator -------------------------------------------------------------------------- */

/* foyer-root-generator in the image. Run by units/initrd-parse-etc.service.d/10-foyer.conf.in. */
#define FOYER_ROOT_GENERATOR_PATH FOYER_IMAGE_GENERATOR_DIR "/foyer-root-generator"

/* The argv[0] under which foyer-root-generator re-reads /sysroot/etc/fstab (as systemd's fstab
 * generator does). Given by units/initrd-parse-etc.service.d/10-foyer.conf.in (ExecStart=@); read by
 * root_main() (root-generator.c). */
#define FOYER_SYSROOT_FSTAB_CHECK "systemd-sysroot-fstab-check"

/* --- root discovery (foyer-gpt-auto-generator) --------------------------------------------------- */

/* foyer-gpt-auto-generator in the image. Written into foyer-gpt-auto-root.service's ExecStart= by
 * the generator itself (gpt-auto-generator.c), which PID 1 then runs from there. */
#define FOYER_GPT_AUTO_GENERATOR_PATH FOYER_IMAGE_GENERATOR_DIR "/foyer-gpt-auto-generator"

/* The discovered root partition, and the LUKS volume on it. Created by udev's 99-systemd.rules
 * (in the image through plan-base.c's rules list, see plan-gptauto.c); read by
 * foyer-gpt-auto-generator (gpt-auto-generator.c) and its --root-discovered half (gpt-auto-root.c). */
#define FOYER_GPT_AUTO_ROOT "/dev/gpt-auto-root"
#define FOYER_GPT_AUTO_ROOT_LUKS "/dev/gpt-auto-root-luks"

/* --- LVM ------------------------------------------------------------------------------------------ */

/* What foyer-lvm-generator writes (lvm-generator.c), relative to its normal output directory. */
#define FOYER_LVMLOCAL_CONF "foyer-lvm/lvmlocal.conf"

/* The same file at boot: the builder's /etc/lvm/lvmlocal.conf is a symlink to it (plan-lvm.c), so
 * that every lvm command reads what the generator wrote. */
#define FOYER_LVMLOCAL_TARGET FOYER_GENERATOR_NORMAL_DIR "/" FOYER_LVMLOCAL_CONF

/* --- MD RAID ------------------------------------------------------------------------------------- */

/* The tree's mdadm.conf (its /etc/mdadm/mdadm.conf, else /etc/mdadm.conf), as the builder copies it
 * into the image (plan-md.c). mdadm never reads it there: foyer-md-generator (md-generator.c) copies
 * it into the file below unless rd.md.conf=0 or rd.md=0 says otherwise. */
#define FOYER_MDADM_IMAGE_CONF "/etc/foyer/mdadm.conf"

/* What foyer-md-generator writes, relative to its normal output directory: the mdadm.conf every
 * mdadm in the initrd reads (rd.md=, rd.md.uuid=, rd.md.conf= applied). It is written at every boot,
 * so the links below never dangle. */
#define FOYER_MDADM_CONF "foyer-md/mdadm.conf"

/* The same file at boot. The builder (plan-md.c) makes both places where mdadm looks for its
 * configuration (Debian builds it with /etc/mdadm/mdadm.conf first, upstream with /etc/mdadm.conf)
 * symlinks to it, so the stock udev rules' "mdadm --incremental" and mdadm-last-resort@.service read
 * what the generator wrote. */
#define FOYER_MDADM_CONF_TARGET FOYER_GENERATOR_NORMAL_DIR "/" FOYER_MDADM_CONF
#define FOYER_MDADM_CONF_LINK "/etc/mdadm/mdadm.conf"
#define FOYER_MDADM_CONF_ALT_LINK "/etc/mdadm.conf"

/* --- kernel modules: rd.driver.blacklist=, rd.driver.pre=, rd.driver.post= ------------------------ */

/* What foyer-driver-generator (driver-generator.c) writes, relative to its normal output directory:
 * modprobe.d lines, "blacklist NAME" for each rd.driver.blacklist= and rd.driver.post= module. It is
 * written at every boot, empty but for comments without those parameters, so the link below never
 * dangles. */
#define FOYER_DRIVER_MODPROBE_CONF "foyer-driver/modprobe.conf"

/* The same file at boot, and the image's link to it: the builder (plan-base.c) makes
 * FOYER_DRIVER_MODPROBE_LINK a symlink to FOYER_DRIVER_MODPROBE_TARGET, so every modprobe, udev's
 * module loading and systemd-modules-load in the initrd read what the generator wrote, from before
 * the first unit starts. */
#define FOYER_DRIVER_MODPROBE_TARGET FOYER_GENERATOR_NORMAL_DIR "/" FOYER_DRIVER_MODPROBE_CONF
#define FOYER_DRIVER_MODPROBE_LINK "/etc/modprobe.d/foyer-driver.conf"

/* The units that load the modules of rd.driver.pre= (before systemd-udevd.service) and
 * rd.driver.post= (once udev has settled, before initrd-root-device.target), one instance per
 * module, named "PREFIX@<unit_name_escape(module)>.service". units/meson.build names the templates
 * after these (units/foyer-driver-pre@.service.in, foyer-driver-post@.service.in);
 * foyer-driver-generator links the instances. */
#define FOYER_DRIVER_PRE_PREFIX "foyer-driver-pre"
#define FOYER_DRIVER_PRE_TEMPLATE FOYER_DRIVER_PRE_PREFIX "@.service"
#define FOYER_DRIVER_POST_PREFIX "foyer-driver-post"
#define FOYER_DRIVER_POST_TEMPLATE FOYER_DRIVER_POST_PREFIX "@.service"

/* The unit that loads a file system's module ("fs-TYPE", the kernel's own request) as soon as udev
 * has found the file system on a disk, one instance per type: the builder's udev rule
 * (FOYER_FS_MODULE_RULE) names it in the device's SYSTEMD_WANTS, so the module loads beside
 * systemd-fsck instead of inside the mount. units/foyer-fs-module@.service.in is the template. */
#define FOYER_FS_MODULE_PREFIX "foyer-fs-module"
#define FOYER_FS_MODULE_TEMPLATE FOYER_FS_MODULE_PREFIX "@.service"
#define FOYER_FS_MODULE_RULE "/usr/lib/udev/rules.d/61-foyer-fs-module.rules"

/* --- foyer's own programs in the image ------------------------------------------------------------- */

/* Where the builder puts foyer's programs in the image, whatever the build's prefix. */
#define FOYER_IMAGE_LIB_DIR "/usr/lib/foyer"

/* foyer-explain (src/failure) in the image. Copied there by the builder (plan-debug.c); run by
 * foyer-failure-report.service (units/foyer-failure-report.service.in). */
#define FOYER_EXPLAIN_PATH FOYER_IMAGE_LIB_DIR "/foyer-explain"

/* The unit that runs foyer-explain. units/meson.build names the unit file after it;
 * units/emergency.target.d/10-foyer-failure-report.conf.in pulls it in; foyer-explain leaves it
 * out of the failed units it reports (foyer-explain.c). */
#define FOYER_FAILURE_REPORT_SERVICE "foyer-failure-report.service"

/* --- shells ---------------------------------------------------------------------------------------- */

/* Written by foyer build --no-shell (plan-shell.c); while it exists, foyer-debug-generator
 * (debug-generator.c) starts no shell, whatever the command line says. */
#define FOYER_NO_SHELL_MARKER "/etc/foyer/no-shell"

/* The breakpoints of rd.break=: instances of foyer-break@.service (units/foyer-break@.service.in,
 * named after FOYER_BREAK_TEMPLATE by units/meson.build), which foyer-debug-generator
 * (debug-generator.c) pulls in, orders, and masks when there must be no shell. */
#define FOYER_BREAK_UNIT_PREFIX "foyer-break"
#define FOYER_BREAK_TEMPLATE FOYER_BREAK_UNIT_PREFIX "@.service"

/* The breakpoint's shell. Written by the builder (plan-shell.c); run by foyer-break@.service. */
#define FOYER_BREAK_SHELL_PATH FOYER_IMAGE_LIB_DIR "/foyer-break-shell"

/* The environment variables through which foyer-debug-generator's drop-in for each breakpoint
 * (debug-generator.c) tells the breakpoint's shell (plan-shell.c) which rd.break= stopped the
 * boot, what has happened and what runs next. */
#define FOYER_BREAK_VAR "FOYER_BREAK"
#define FOYER_BREAK_WHERE_VAR "FOYER_BREAK_WHERE"
#define FOYER_BREAK_NEXT_VAR "FOYER_BREAK_NEXT"

/* --- the image's systemd ------------------------------------------------------------------------- */

/* The image's systemd: "VERSION=257", "LIBEXECDIR=/usr/lib/systemd" (how its units spell its
 * libexec directory: the ExecStart= of the tree's systemd-fsck@.service) and
 * "CRYPTSETUP=/usr/bin/systemd-cryptsetup", one per line. Written by the builder from the tree
 * (plan-systemd.c: the version from the name of libsystemd-shared-NNN.so); read by every generator
 * (src/shared/systemd-version.c), which writes what that version's own generators write. */
#define FOYER_SYSTEMD_VERSION_PATH FOYER_IMAGE_LIB_DIR "/systemd-version"

/* --- the boot timeline ----------------------------------------------------------------------------- */

/* foyer-timeline (src/failure) in the image. Copied there by the builder (plan-debug.c, as
 * foyer-explain); run by the two units below. */
#define FOYER_TIMELINE_EXE_PATH FOYER_IMAGE_LIB_DIR "/foyer-timeline"

/* The units that run it: the first ("foyer-timeline trace") turns the kernel's module:module_load
 * tracepoint on before systemd-modules-load and udev load anything, the second ("foyer-timeline
 * record") writes the record once the root and its mounts are there, before initrd.target and so
 * before initrd-cleanup.service stops (and PID 1 forgets) the initrd's units. units/meson.build names
 * the unit files after these; sysinit.target.d/ and initrd.target.d/ pull them in. */
#define FOYER_TIMELINE_TRACE_SERVICE "foyer-timeline-trace.service"
#define FOYER_TIMELINE_RECORD_SERVICE "foyer-timeline-record.service"

/* The record: the timeline table (src/timeline/timeline.h). Written by foyer-timeline record, and by
 * foyer-explain on a failed boot (src/failure); it survives the switch-root with /run, where
 * "foyer timeline" (src/foyer/show-timeline.c) reads it in the real root. */
#define FOYER_TIMELINE_DIR "/run/foyer"
#define FOYER_TIMELINE_PATH FOYER_TIMELINE_DIR "/timeline.tsv"

/* The journal entry foyer-timeline record also logs (SYSLOG_IDENTIFIER=foyer-timeline), for a
 * persistent journal: the table in FOYER_TIMELINE, and PID 1's answer it was made from (systemctl
 * show, with each unit's After=) in FOYER_TIMELINE_UNITS. test/vm/timeline-check.py reads both. */
#define FOYER_TIMELINE_FIELD "FOYER_TIMELINE"
#define FOYER_TIMELINE_UNITS_FIELD "FOYER_TIMELINE_UNITS"

/* Where tracefs is mounted; foyer-timeline trace mounts it there if it is not. */
#define FOYER_TRACEFS_DIR "/sys/kernel/tracing"

/* --- the console keymap ----------------------------------------------------------------------------- */

/* The image's console layout: KEYMAP=NAME, as systemd's vconsole.conf. Written by the builder
 * (plan-keymap.c: the tree's layout, or Keymap=); read by foyer-vconsole-generator. */
#define FOYER_VCONSOLE_CONF "/etc/vconsole.conf"

/* The keymaps the builder compiled with ckbcomp (plan-keymap.c), one NAME.map each, in loadkeys'
 * text format and uncompressed (loadkeys would need gzip for a compressed one). Read by
 * foyer-vconsole-generator, which loads the one vconsole.keymap= or FOYER_VCONSOLE_CONF names. */
#define FOYER_KEYMAP_DIR "/usr/share/keymaps/foyer"
#define FOYER_KEYMAP_SUFFIX ".map"

/* kbd's loadkeys in the image, added by the builder with the keymaps and run by the unit below. */
#define FOYER_LOADKEYS "/usr/bin/loadkeys"

/* The unit foyer-vconsole-generator writes: loads the keymap before any passphrase prompt. */
#define FOYER_KEYMAP_SERVICE "foyer-keymap.service"

/* --- remote unlocking over SSH (foyer build --ssh-unlock) ------------------------------------------- */

/* dropbear, the SSH server, from the tree (Debian's dropbear-bin). Added by the builder (plan-ssh.c);
 * run by FOYER_SSH_SERVICE, which foyer-network-generator writes. */
#define FOYER_SSH_DROPBEAR "/usr/sbin/dropbear"

/* The host keys, dropbear's format: made once per system by the builder (dropbearkey) in the tree's
 * FOYER_SSH_HOST_KEY_DIR (or SshHostKeys=), kept there, and copied into the image at the same path, mode
 * 0600 (plan-ssh.c); read by dropbear (-r, FOYER_SSH_SERVICE). foyer uki --initrd (ls.c) takes an
 * initrd holding a file in FOYER_SSH_HOST_KEY_DIR for a secret one. */
#define FOYER_SSH_HOST_KEY_DIR "/etc/foyer/ssh"
#define FOYER_SSH_HOST_KEY_ED25519 FOYER_SSH_HOST_KEY_DIR "/dropbear_ed25519_host_key"
#define FOYER_SSH_HOST_KEY_ECDSA FOYER_SSH_HOST_KEY_DIR "/dropbear_ecdsa_host_key"

/* The keys that may log in: SshUnlock= (--ssh-unlock FILE), copied by the builder (plan-ssh.c); read by
 * dropbear for root, whose home the image's /etc/passwd says is /root. */
#define FOYER_SSH_AUTHORIZED_KEYS "/root/.ssh/authorized_keys"

/* The port dropbear listens on (FOYER_SSH_SERVICE). */
#define FOYER_SSH_PORT "22"

/* What an SSH login runs (src/unlock/foyer-unlock.c): answers the pending passphrase questions with
 * systemd-tty-ask-password-agent, then, where the image has a shell, opens it. Copied by the builder
 * (plan-ssh.c); dropbear's forced command (-c, FOYER_SSH_SERVICE); with --no-shell also root's login
 * shell in the image's /etc/passwd (plan-base.c), as dropbear runs every command through it. */
#define FOYER_UNLOCK_PATH FOYER_IMAGE_LIB_DIR "/foyer-unlock"

/* Takes down what the initrd's network set up (addresses, links, systemd-networkd's state in /run)
 * before the switch to the real root (src/unlock/foyer-network-cleanup.c). Copied by the builder
 * (plan-ssh.c, which needs it; plan-network.c, into every image with the network, when it is there); run by FOYER_NETWORK_CLEANUP_SERVICE's ExecStop=. */
#define FOYER_NETWORK_CLEANUP_PATH FOYER_IMAGE_LIB_DIR "/foyer-network-cleanup"

/* The units foyer-network-generator (generators/network-generator.c) writes in an image with
 * FOYER_SSH_DROPBEAR, unless rd.neednet=0: the SSH server, and the one that stops the network. */
#define FOYER_SSH_SERVICE "foyer-ssh.service"
#define FOYER_NETWORK_CLEANUP_SERVICE "foyer-network-cleanup.service"

/* --- the network and network roots (foyer build's Network=, plan-network.c and plan-netroot.c) ------ */

/* systemd-networkd: in the image exactly when the image has the network (SSH unlocking, a network
 * root's tool, Clevis's tang pin, Network=yes; never with Network=no), with systemd-network-generator,
 * systemd-networkd-wait-online, their units and network-online.target. Added by the builder
 * (plan-network.c); the generators look for it (access()) to learn whether the image has the network. */
#define FOYER_NETWORKD "/usr/lib/systemd/systemd-networkd"

/* The default network of an image with the network: DHCP on every Ethernet interface that no ip= names.
 * Written by the builder (plan-network.c); read by systemd-networkd, after the files
 * systemd-network-generator writes for ip= in /run/systemd/network (90-IFNAME.network,
 * 91-default.network), which match first. */
#define FOYER_DEFAULT_NETWORK "/usr/lib/systemd/network/99-foyer-default.network"

/* The network roots' tools, from the tree at Debian's paths (plan-netroot.c): in a generic image when
 * the tree has them, in a host-only one when the host's root is on that kind of network storage; always
 * with the network. A generator offers a network root only when its tool is in the image. */
/* NFS (nfs-common): the mount helper, and its NFSv4 name (a symlink to it). No rpc.statd, rpcbind or
 * nfsidmap: an NFSv3 root is mounted with nolock. With it the modules sunrpc, nfs, nfsv3, nfsv4. */
#define FOYER_NFS_MOUNT "/usr/sbin/mount.nfs"
#define FOYER_NFS4_MOUNT "/usr/sbin/mount.nfs4"
/* NBD (nbd-client), with the module nbd. */
#define FOYER_NBD_CLIENT "/usr/sbin/nbd-client"
/* iSCSI (open-iscsi): iscsistart logs in from its command line (-i -t -g -a -p) or iBFT (-b), with the
 * modules iscsi_tcp and iscsi_ibft. A host-only image of an iSCSI root also holds the tree's initiator
 * name, the default when no rd.iscsi.initiator= names one. */
#define FOYER_ISCSISTART "/usr/sbin/iscsistart"
#define FOYER_ISCSI_INITIATORNAME "/etc/iscsi/initiatorname.iscsi"

/* The units foyer-netroot-generator writes for iSCSI: one service per netroot=iscsi: (or the one
 * root=iscsi:), numbered from 1 in command-line order, each logging in with FOYER_ISCSISTART after
 * network-online.target and modprobe@iscsi_tcp.service, before initrd-root-device.target. A spec with
 * CHAP credentials gets the drop-in FOYER_ISCSI_CHAP_DROPIN of mode 0600 in the generator's output
 * directory, whose Environment= holds them (the unit itself stays world-readable). rd.iscsi.firmware
 * (rd.iscsi.ibft) writes FOYER_ISCSI_FIRMWARE_SERVICE: iscsistart -N, then -b, from the iBFT. */
#define FOYER_ISCSI_ROOT_SERVICE_FORMAT "foyer-iscsi-root-%u.service"
#define FOYER_ISCSI_CHAP_DROPIN "50-foyer-iscsi-chap.conf"
#define FOYER_ISCSI_FIRMWARE_SERVICE "foyer-iscsi-firmware.service"
/* The initiator name when neither rd.iscsi.initiator= nor the image's FOYER_ISCSI_INITIATORNAME gives
 * one: Debian's prefix (open-iscsi's postinst, iscsi-iname -p) and systemd's %m, the machine ID (in an
 * initrd without /etc/machine-id a random one per boot, as dracut's iscsi-iname would be). */
#define FOYER_ISCSI_GENERATED_INITIATOR "iqn.1993-08.org.debian:01:%m"

/* The unit foyer-netroot-generator writes for root=nbd:/netroot=nbd:: loads the nbd module
 * (modprobe@nbd.service) and connects FOYER_NBD_DEVICE with FOYER_NBD_CLIENT after
 * network-online.target; sysroot.mount requires it. The generator finds systemd-networkd
 * (FOYER_NETWORKD) with systemd_libexec_dir() at run time. */
#define FOYER_NBD_ROOT_SERVICE "foyer-nbd-root.service"
#define FOYER_NBD_DEVICE "/dev/nbd0"

/* root=dhcp and netroot=dhcp (foyer-netroot-generator): the root path comes from DHCP option 17.
 * foyer-netroot-generator in the image, run again under the argv[0] FOYER_DHCP_ROOT_MODE by the units
 * it writes: "FOYER_DHCP_ROOT_MODE network" (ExecStartPost= of systemd-network-generator.service, before
 * systemd-networkd starts) writes FOYER_DHCP_ROOT_DROPIN for FOYER_DEFAULT_NETWORK and every .network
 * in FOYER_NETWORK_RUN_DIR (RequestOptions=17); "FOYER_DHCP_ROOT_MODE mount" (FOYER_DHCP_ROOT_SERVICE,
 * after network-online.target) finds the root path in FOYER_DHCP_LEASES_DIR, reloads systemd (which
 * runs the generator again: it now finds the lease and writes sysroot.mount) and starts sysroot.mount. */
#define FOYER_NETROOT_GENERATOR_PATH FOYER_IMAGE_GENERATOR_DIR "/foyer-netroot-generator"
#define FOYER_DHCP_ROOT_MODE "foyer-dhcp-root"
#define FOYER_DHCP_ROOT_SERVICE "foyer-dhcp-root.service"
/* systemd-networkd's DHCPv4 leases, one file per interface index (sd-dhcp-lease's dhcp_lease_save():
 * ROOT_PATH= holds option 17; systemd 252 and 257 write it). */
#define FOYER_DHCP_LEASES_DIR "/run/systemd/netif/leases"
/* Where systemd-network-generator writes the .network files of ip= (and where the drop-ins go). */
#define FOYER_NETWORK_RUN_DIR "/run/systemd/network"
#define FOYER_DHCP_ROOT_DROPIN "50-foyer-root-dhcp.conf"
