# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# bash completion for foyer(1): commands, the options of each, file names for paths, kernel
# versions from /usr/lib/modules for --kver, the formats for --compress, the words of
# --microcode. Needs only bash itself, not the bash-completion package. Keep the option lists in
# step with "foyer COMMAND --help" (test/foyer/test-docs.sh checks that).

_foyer() {
        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} verb=
        local image='-k --kver -r --root -c --compress --compress-level -m --add-module -a --add-file
                     --crypttab --add-key-file --no-shell --microcode --no-target-settings --keymap
                     --add-keymap --ssh-unlock --ssh-host-keys --network -v --verbose'
        local -A opts=(
                [build]="-h --help -o --output --cmdline $image -g --generate --add-drivers -f --force
                         -N --no-hostonly -H --hostonly"
                [ls]='-h --help -f --file --json'
                [uki]="-h --help -o --output --kernel --initrd --cmdline --os-release --uname --splash
                       --stub --sign-key --sign-cert --pcr-private-key --pcr-public-key --phases $image"
                [preview]='-h --help --image --cmdline --crypttab --fstab -v --verbose'
                [timeline]='-h --help --svg'
                [help]=''
                [version]=''
        )

        # --option=value: bash splits at "=" (COMP_WORDBREAKS), so the option is two words back.
        if [[ $cur == = ]]; then
                cur=
        elif [[ $prev == = ]] && ((COMP_CWORD >= 3)); then
                prev=${COMP_WORDS[COMP_CWORD - 2]}
        fi

        ((COMP_CWORD >= 2)) && verb=${COMP_WORDS[1]}
        if [[ -z $verb ]]; then
                if [[ $cur == -* ]]; then
                        mapfile -t COMPREPLY < <(compgen -W '-h --help --version' -- "$cur")
                else
                        mapfile -t COMPREPLY < <(compgen -W "${!opts[*]}" -- "$cur")
                fi
                return 0
        fi

        case $prev in
        -k | --kver | --uname)
                mapfile -t COMPREPLY < <(compgen -W "$(command ls /usr/lib/modules 2>/dev/null)" -- "$cur")
                return 0 ;;
        -c | --compress)
                [[ $verb == build || $verb == uki ]] &&
                        mapfile -t COMPREPLY < <(compgen -W 'zstd xz gzip lz4 none' -- "$cur")
                return 0 ;;
        --microcode)
                [[ $verb == build || $verb == uki ]] &&
                        mapfile -t COMPREPLY < <(compgen -W 'all host none' -- "$cur")
                return 0 ;;
        -r | --root | --ssh-host-keys)
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -d -- "$cur")
                return 0 ;;
        -o | --output | -g | --generate | -a | --add-file | --crypttab | --add-key-file | --fstab | --ssh-unlock | \
        --kernel | --initrd | --os-release | --splash | --stub | --sign-key | --sign-cert | \
        --pcr-private-key | --pcr-public-key | --image)
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                return 0 ;;
        --cmdline | --compress-level | -m | --add-module | --add-drivers | --file | --phases)
                return 0 ;;
        -f)     # ls: a path inside the image; build: --force, which takes no argument
                [[ $verb == ls ]] && return 0 ;;
        esac

        if [[ $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "${opts[$verb]}" -- "$cur")
        elif [[ $verb == help ]]; then
                ((COMP_CWORD == 2)) && mapfile -t COMPREPLY < <(compgen -W "${!opts[*]}" -- "$cur")
        elif [[ $verb == build || $verb == ls ]]; then
                # build's OUTPUT (and KVER, which a file name rarely matches), ls's image (the paths
                # after it are inside the image, which the completion does not read).
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        return 0
}

complete -F _foyer foyer
