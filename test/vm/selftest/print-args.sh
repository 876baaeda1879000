#!/bin/bash
# A stand-in for qemu-system-x86_64 that prints its arguments, for vm-run's firmware self-test,
# and whether the variable store it was given is an unmodified copy of the template.
printf 'ARGS: %s\r\n' "$*"
for a in "$@"; do
        case $a in if=pflash,*unit=1,file=*) vars=${a##*file=} ;; esac
done
if [[ -n ${vars:-} && -n ${PRINT_ARGS_TEMPLATE:-} ]] && cmp -s "$vars" "$PRINT_ARGS_TEMPLATE"; then
        printf 'VARS: a copy of %s\r\n' "$PRINT_ARGS_TEMPLATE"
fi
sleep 30
