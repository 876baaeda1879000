# SPDX-License-Identifier: LGPL-2.1-or-later
# fish completion for foyer(1): the commands, the options of each (as foyer.bash has them), file
# names for paths, kernel versions from /usr/lib/modules, the formats of --compress, the words of
# --microcode. Keep the option lists in step with "foyer COMMAND --help" (test/foyer/test-docs.sh
# checks that).

set -l commands build ls uki preview timeline help version

function __foyer_kvers
        path basename /usr/lib/modules/* 2>/dev/null
end

complete -c foyer -f
complete -c foyer -n "not __fish_seen_subcommand_from $commands" -s h -l help -d 'Show the help'
complete -c foyer -n "not __fish_seen_subcommand_from $commands" -l version -d 'Show the version'
complete -c foyer -n "not __fish_seen_subcommand_from $commands" -a build -d 'Build an initrd image'
complete -c foyer -n "not __fish_seen_subcommand_from $commands" -a ls -d 'List an image, or print files of it'
complete -c foyer -n "not __fish_seen_subcommand_from $commands" -a uki -d 'Build a unified kernel image'
complete -c foyer -n "not __fish_seen_subcommand_from $commands" -a preview -d 'Show the units the generators would write'
complete -c foyer -n "not __fish_seen_subcommand_from $commands" -a timeline -d "Show the initrd's boot timeline"
complete -c foyer -n "not __fish_seen_subcommand_from $commands" -a help -d 'Show the help of a command'
complete -c foyer -n "not __fish_seen_subcommand_from $commands" -a version -d 'Show the version'
complete -c foyer -n "__fish_seen_subcommand_from help" -a "build ls uki preview timeline"

# Every command's --help.
complete -c foyer -n "__fish_seen_subcommand_from build ls uki preview timeline" -s h -l help -d 'Show the help'

# The image options of foyer build, which foyer uki takes too.
set -l image "__fish_seen_subcommand_from build uki"
complete -c foyer -n $image -s k -l kver -x -a '(__foyer_kvers)' -d 'Kernel version'
complete -c foyer -n $image -s r -l root -x -a '(__fish_complete_directories)' -d 'Source tree'
complete -c foyer -n $image -s c -l compress -x -a 'zstd xz gzip lz4 none' -d 'Compression'
complete -c foyer -n $image -l compress-level -x -d 'Compression level'
complete -c foyer -n $image -s m -l add-module -x -d 'Add a kernel module'
complete -c foyer -n $image -s a -l add-file -r -F -d 'Add a file or tree: SRC[:DEST]'
complete -c foyer -n $image -l crypttab -r -F -d 'Install FILE as /etc/crypttab'
complete -c foyer -n $image -l add-key-file -r -F -d 'Add a key file: SRC[:DEST]'
complete -c foyer -n $image -l no-shell -d 'No shell in the image'
complete -c foyer -n $image -l microcode -x -a 'all host none' -d 'Early microcode archive'
complete -c foyer -n $image -l no-target-settings -d "Read nothing of the tree's crypttab and fstab"
complete -c foyer -n $image -l keymap -x -d 'Console layout'
complete -c foyer -n $image -l add-keymap -x -d 'Also hold this layout'
complete -c foyer -n $image -l ssh-unlock -r -F -d 'SSH server with the keys of this authorized_keys'
complete -c foyer -n $image -l ssh-host-keys -x -a '(__fish_complete_directories)' -d 'SSH host key directory'
complete -c foyer -n $image -l network -f -a 'auto yes no' -d 'The network in the image'
complete -c foyer -n $image -s v -l verbose -d 'Log debug messages'

# build
set -l build "__fish_seen_subcommand_from build"
complete -c foyer -n $build -F
complete -c foyer -n $build -s o -l output -r -F -d 'Output file'
complete -c foyer -n $build -s g -l generate -r -F -d 'Same as --output (mkinitcpio)'
complete -c foyer -n $build -l cmdline -x -d 'Kernel command line defaults'
complete -c foyer -n $build -l add-drivers -x -d 'Same as --add-module for each word (dracut)'
complete -c foyer -n $build -s f -l force -d 'Accepted and ignored (dracut)'
complete -c foyer -n $build -s H -l hostonly -d 'Only what this system needs'
complete -c foyer -n $build -s N -l no-hostonly -d 'The generic image'

# ls
set -l ls "__fish_seen_subcommand_from ls"
complete -c foyer -n $ls -F
complete -c foyer -n $ls -s f -l file -x -d 'Print this file of the image'
complete -c foyer -n $ls -l json -d 'The listing as one JSON document'

# uki
set -l uki "__fish_seen_subcommand_from uki"
complete -c foyer -n $uki -s o -l output -r -F -d 'The UKI to write'
complete -c foyer -n $uki -l kernel -r -F -d 'Kernel EFI image'
complete -c foyer -n $uki -l initrd -r -F -d 'Initrd to embed'
complete -c foyer -n $uki -l cmdline -x -d 'Kernel command line, or @FILE'
complete -c foyer -n $uki -l os-release -r -F -d 'os-release file'
complete -c foyer -n $uki -l uname -x -a '(__foyer_kvers)' -d 'Kernel version'
complete -c foyer -n $uki -l splash -r -F -d 'Boot splash (BMP)'
complete -c foyer -n $uki -l stub -r -F -d 'EFI stub'
complete -c foyer -n $uki -l sign-key -r -F -d 'Sign: PEM private key'
complete -c foyer -n $uki -l sign-cert -r -F -d 'Sign: PEM certificate'
complete -c foyer -n $uki -l pcr-private-key -r -F -d 'Sign the PCR 11 values: private key'
complete -c foyer -n $uki -l pcr-public-key -r -F -d 'Sign the PCR 11 values: public key'
complete -c foyer -n $uki -l phases -x -d 'Boot phases to sign for'

# preview
set -l preview "__fish_seen_subcommand_from preview"
complete -c foyer -n $preview -l image -r -F -d 'The image to describe'
complete -c foyer -n $preview -l cmdline -x -d 'Kernel command line'
complete -c foyer -n $preview -l crypttab -r -F -d "The image's /etc/crypttab"
complete -c foyer -n $preview -l fstab -r -F -d "The real root's /etc/fstab"
complete -c foyer -n $preview -s v -l verbose -d 'Let the generators log debug messages'

# timeline
set -l timeline "__fish_seen_subcommand_from timeline"
complete -c foyer -n $timeline -F
complete -c foyer -n $timeline -l svg -d 'Draw an SVG chart'
