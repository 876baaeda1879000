#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-registered.py SOURCE-ROOT BUILD-ROOT (suite lint)
#
# Nothing on disk is silently left out of the test run:
#  - every golden directory test/generators/KIND/ (a directory holding NN-name.expected/ trees) is
#    given to a registered meson test (a test whose arguments name the directory: golden-KIND runs
#    run-golden.sh on it, golden-gpt-auto gpt-auto.sh) and is one regen-golden.sh knows a reference
#    for (its "case $kind" lines);
#  - every test/vm/scenarios/NAME.scenario is in test/vm/meson.build's vm_scenarios or
#    vm_sid_scenarios (so registered as vm-NAME), and when the build has the VM tests
#    (-Dvm_tests=true) the test vm-NAME is there and runs that file; no name is listed without its file.
# The registered tests come from the build's meson-info/intro-tests.json (what `meson test --list`
# shows).
import json
import re
import sys
from pathlib import Path

src = Path(sys.argv[1]).resolve()
build = Path(sys.argv[2]).resolve()
failures = []

tests = json.loads((build / 'meson-info' / 'intro-tests.json').read_text())
args_of = {t['name']: t['cmd'] for t in tests}
all_args = {a for t in tests for a in t['cmd']}

# Golden directories.
gen = src / 'test' / 'generators'
golden = sorted({p.parent for p in gen.glob('*/*.expected') if p.is_dir()})
if len(golden) < 5:
    failures.append(f'only {len(golden)} golden directories found under {gen}')
regen = (gen / 'regen-golden.sh').read_text()
regen_kinds = set()
for m in re.finditer(r'^\s*([a-z0-9 |-]+)\)', regen, re.M):
    regen_kinds.update(k.strip() for k in m.group(1).split('|'))
for d in golden:
    if str(d) not in all_args:
        failures.append(f'test/generators/{d.name}/ has golden trees but no meson test is given it '
                        f'(register golden-{d.name} in test/generators/meson.build)')
    if d.name not in regen_kinds:
        failures.append(f'test/generators/{d.name}/ has golden trees but regen-golden.sh knows no '
                        f'reference for it')
print(f'{len(golden)} golden directories: {" ".join(d.name for d in golden)}')

# VM scenarios.
vm = src / 'test' / 'vm'
scenarios = sorted(p.stem for p in (vm / 'scenarios').glob('*.scenario'))
listed = []
meson_vm = (vm / 'meson.build').read_text()
for var in ('vm_scenarios', 'vm_sid_scenarios'):
    m = re.search(r'^' + var + r' = \[(.*?)^\]', meson_vm, re.M | re.S)
    if not m:
        failures.append(f'test/vm/meson.build: no list {var}')
        continue
    body = '\n'.join(line.split('#', 1)[0] for line in m.group(1).splitlines())
    listed += re.findall(r"'([^']+)'", body)
for s in scenarios:
    if s not in listed:
        failures.append(f'test/vm/scenarios/{s}.scenario is not in vm_scenarios or vm_sid_scenarios '
                        f'of test/vm/meson.build')
for s in listed:
    if s not in scenarios:
        failures.append(f'test/vm/meson.build lists {s}, but test/vm/scenarios/{s}.scenario does not exist')
for s in sorted({s for s in listed if listed.count(s) > 1}):
    failures.append(f'test/vm/meson.build lists {s} more than once')
vm_registered = any(n.startswith('vm-') and 'scenarios' in ' '.join(a) for n, a in args_of.items())
if vm_registered:
    for s in scenarios:
        path = str(vm / 'scenarios' / (s + '.scenario'))
        if path not in args_of.get('vm-' + s, []):
            failures.append(f'no meson test vm-{s} runs test/vm/scenarios/{s}.scenario')
    print(f'{len(scenarios)} VM scenarios, each registered as vm-NAME')
else:
    print(f'{len(scenarios)} VM scenarios, each listed in test/vm/meson.build (the VM tests are not '
          f'configured: -Dvm_tests=false)')

for f in failures:
    print('FAIL: ' + f)
sys.exit(1 if failures else 0)
