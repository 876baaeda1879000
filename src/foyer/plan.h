/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The planners' interface: each planner adds one concern of the image to the manifest (the
 * skeleton, binaries, stock units, udev rules, /etc files, foyer's generators and units, storage,
 * unlocking, SSH, the user's additions), each entry with the reason it is there. They are run in
 * order by plan.c's table (plan-table.h, which only the builder's driver uses); they use
 * plan-util.h, never plan.c. A planner that needs kernel modules beyond its files says so through
 * its modules hook (PlanModulesFunc), run by the table before the modules are resolved. */

#include "foyer-config.h"
#include "manifest.h"
#include "probe.h"

/* The default module set of a generic image: enough to find a root on common PCs and VMs. */
extern const char *const plan_default_modules[];

/* A planner's kernel modules: adds the names of the modules the image needs for it to *wanted
 * (a host-only image: what this host's devices need; a generic one: the common ones). */
typedef int (*PlanModulesFunc)(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted);

/* plan-base.c: the base of every image. */
int plan_skeleton(Manifest *m, const BuildConfig *c);
/* systemd's binaries and the tools every image needs (the shells are plan-shell.c's). */
int plan_binaries(Manifest *m, const BuildConfig *c, const Probe *p);
/* The stock units of the initrd transaction. */
int plan_stock_units(Manifest *m, const BuildConfig *c);
/* foyer's units and drop-ins for stock units ($FOYER_UNIT_DIR). */
int plan_foyer_units(Manifest *m, const BuildConfig *c);
/* The stock .wants/.requires links and drop-ins between units in the image. */
int plan_unit_links(Manifest *m, const BuildConfig *c);
/* The stock udev rules. */
int plan_rules(Manifest *m, const BuildConfig *c, const Probe *p);
/* Configuration files and modprobe.d/sysctl.d. */
int plan_config(Manifest *m, const BuildConfig *c);
/* foyer's generators ($FOYER_GENERATOR_DIR). */
int plan_generators(Manifest *m, const BuildConfig *c);
/* /etc: initrd-release, passwd, group (with the groups the rules in the image name), cmdline.d. */
int plan_etc(Manifest *m, const BuildConfig *c, const Probe *p);
/* plan-systemd.c: FOYER_SYSTEMD_VERSION_PATH, the tree's systemd version and paths. */
int plan_systemd_version(Manifest *m, const BuildConfig *c);
/* The NNN of the first libsystemd-shared-NNN[-suffix].so in <root>/usr/lib/systemd or
 * <root>/usr/lib/MULTIARCH/systemd; 0 if none. */
unsigned plan_tree_systemd_version(const char *root);
/* --add-file. */
int plan_user_files(Manifest *m, const BuildConfig *c);

/* plan-run-lock.c: the tree's run-lock.mount, when the tree enables it, mounted before udev. */
int plan_run_lock(Manifest *m, const BuildConfig *c);

/* plan-units.c: PID 1, which every tree must have; */
int plan_pid1(Manifest *m, const BuildConfig *c);
/* the units the image's units need (hard dependencies, and initrd units they want),
 * read from the tree with their drop-ins. */
int plan_unit_deps(Manifest *m, const BuildConfig *c);
/* The programs the Exec*= lines of every unit in the image run, and systemd-executor. */
int plan_unit_programs(Manifest *m, const BuildConfig *c);

/* plan-crypt.c: what unlocking LUKS volumes needs, and the crypttab. */
int plan_crypt(Manifest *m, const BuildConfig *c, const Probe *p);
/* After the user's files are in: adds --add-key-file files and makes every key file (those, the
 * ones the crypttab or rd.luks.key= in --cmdline name, and /etc/cryptsetup-keys.d/ files) mode
 * 0400 and marks them secret (Entry.secret; the reason says "key file" for the reader only). */
int plan_crypt_keys(Manifest *m, const BuildConfig *c);
/* Returns the image paths of the key files, the entries marked secret (NULL when there are none). */
int plan_key_files(Manifest *m, char ***ret);

/* plan-tokens.c: unlocking with TPM2, FIDO2 and PKCS#11 tokens. */
typedef enum TokenKind_t {
        TOKEN_TPM2,
        TOKEN_FIDO2,
        TOKEN_PKCS11,
        _TOKEN_MAX,
} TokenKind_t;

typedef struct TokenAsks {
        char *why[_TOKEN_MAX];          /* what asks for it (a crypttab option, a LUKS2 token), or NULL */
        bool include[_TOKEN_MAX];       /* it goes into the image: asked for, or a generic image */
} TokenAsks;

const char *token_kind_name(TokenKind_t t);
/* What the image's /etc/crypttab (run after plan_crypt), rd.luks.options= in --cmdline and, for a
 * host-only image, the LUKS2 headers below the root ask for. */
int plan_token_asks(Manifest *m, const BuildConfig *c, const Probe *p, TokenAsks *ret);
void token_asks_done(TokenAsks *a);
/* The libraries, token plugins, units and rules of the tokens included; a volume asking for one
 * whose libraries the tree lacks is an error naming them. */
int plan_tokens(Manifest *m, const BuildConfig *c, const Probe *p);
/* Modules hook: the TPM drivers, when a host-only image's volume unlocks with the TPM2. */
int plan_tokens_modules(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted);

/* The storage planners below leave their tools out of a host-only image (p->host) whose root, /usr
 * and swap do not use them. */

/* plan-lvm.c: lvm2's tools, udev rules and an lvm.conf for the initrd. */
int plan_lvm(Manifest *m, const BuildConfig *c, const Probe *p);

/* plan-md.c: mdadm's tools, udev rules and units, and the tree's mdadm.conf. */
int plan_md(Manifest *m, const BuildConfig *c, const Probe *p);

/* plan-gptauto.c: what root discovery needs beyond the stock rules (systemd-growfs). */
int plan_gptauto(Manifest *m, const BuildConfig *c);

/* plan-keymap.c: the console keymaps (the default one and AddKeymaps=), compiled with ckbcomp, the
 * image's vconsole.conf and loadkeys, for foyer-vconsole-generator. */
int plan_keymap(Manifest *m, const BuildConfig *c);

/* plan-clevis.c: Clevis unlocking (clevis-systemd's askpass units, clevis, its pins and every
 * program its bash scripts run), when the tree has clevis-systemd; --no-shell refuses it. The tang pin
 * in the image (manifest_find(m, CLEVIS_TANG_PIN), after this planner) means the image needs the
 * network. */
#define CLEVIS_TANG_PIN "/usr/bin/clevis-decrypt-tang"
int plan_clevis(Manifest *m, const BuildConfig *c, const Probe *p);

/* plan-ssh.c: remote unlocking over SSH (SshUnlock=): dropbear, its host keys (made once per system,
 * secret), root's authorized_keys and foyer-unlock; nothing without the setting, an error with
 * Network=no. The network is plan_network()'s. */
int plan_ssh(Manifest *m, const BuildConfig *c);

/* plan-netroot.c: the network roots' tools (mount.nfs, nbd-client, iscsistart) from the tree: in a
 * generic image those the tree has (none with Network=no), in a host-only one what the host's root
 * is on (an error if the tree lacks it or Network=no). */
int plan_netroot(Manifest *m, const BuildConfig *c, const Probe *p);
/* Modules hook: the modules of each network root whose tool is in the image. */
int plan_netroot_modules(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted);

/* plan-network.c: the network (Network=): systemd-networkd, systemd-network-generator,
 * systemd-networkd-wait-online, their units, the .link files and FOYER_DEFAULT_NETWORK, when
 * Network=yes, or with auto when the image holds dropbear, a network root's tool or Clevis's tang pin
 * (the planners that add those run before it). */
int plan_network(Manifest *m, const BuildConfig *c, const Probe *p);
/* Modules hook: with the network, af_packet and the network drivers: the host's interfaces' in a
 * host-only image, else the common ones. */
int plan_network_modules(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted);

/* plan-target.c: the root of the tree's /etc/fstab as a default root= (cmdline.d), unless
 * --no-target-settings or --cmdline names a root. */
int plan_target_root(Manifest *m, const BuildConfig *c);

/* plan-verity.c: dm-verity (roothash=, usrhash=, systemd.verity*=, veritytab) with the tree's
 * systemd-veritysetup-generator and systemd-veritysetup; a tree without them gives an image without
 * verity, unless --cmdline or a host-only image of a verity root asks for it (then an error). */
int plan_verity(Manifest *m, const BuildConfig *c, const Probe *p);
/* Modules hook: dm_verity and sha256, in every image plan_verity() gave veritysetup. */
int plan_verity_modules(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted);

/* plan-repart.c: systemd-repart in the initrd, with its unit, the tree's repart definitions and the
 * mkfs programs their Format= lines need, when the tree has definitions; a tree with definitions but
 * without systemd-repart or its unit fails the build, naming it. */
int plan_repart(Manifest *m, const BuildConfig *c);
/* plan-stub.c: what systemd-stub passes in /.extra taken on by the tree's systemd where its version
 * can: 20-systemd-stub.conf with systemd-tmpfiles-setup.service, systemd-sysext and its initrd units
 * for the stub's extensions, systemd-creds. */
int plan_stub(Manifest *m, const BuildConfig *c);
/* Modules hook: overlay, loop, squashfs and erofs, in every image that merges extensions. */
int plan_stub_modules(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted);

/* plan-resume.c: resume from hibernation, with the tree's systemd-hibernate-resume-generator and
 * the unit it enables (the template in systemd 252, one service in later versions). */
int plan_resume(Manifest *m, const BuildConfig *c);
