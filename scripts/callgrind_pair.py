#!/usr/bin/env python3
"""User-space instructions per UNCORE_REGION pair on perf msr/tsc/.

Runs region_bench's BM_RegionPerfMsrTsc under valgrind's callgrind and
prints the inclusive instructions of internal::BeginRegion plus
internal::EndRegion per pair (the SDK's whole boundary code, its read()
calls' user-space side included; not the kernel's).  Instruction counts do
not change with the machine's load, so two builds compare in one run each:

  python3 scripts/callgrind_pair.py build/tests/region_bench
  python3 scripts/callgrind_pair.py old/build/tests/region_bench

Needs valgrind and root (the msr PMU).  docs/performance.md has figures.
"""
import re
import subprocess
import sys
import tempfile


def per_pair(profile_path):
    names = {}
    calls = {}
    inclusive = {}
    current = None
    pending = None
    with open(profile_path) as f:
        for line in f:
            m = re.match(r'(c?fn)=\((\d+)\)(?: (.*))?$', line.rstrip('\n'))
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3)
                current = names[m.group(2)] if m.group(1) == 'cfn' else None
                continue
            if line.startswith('calls=') and current:
                pending = current
                calls[current] = calls.get(current, 0) + int(
                    line.split('=')[1].split()[0])
                continue
            if pending:
                parts = line.split()
                if len(parts) >= 2:
                    inclusive[pending] = inclusive.get(pending, 0) + int(
                        parts[-1])
                pending = None
    total = 0
    pairs = 0
    for name, n in calls.items():
        if 'internal::BeginRegion(' in name or 'internal::EndRegion(' in name:
            total += inclusive[name]
            pairs = n
    if pairs == 0:
        sys.exit('no BeginRegion/EndRegion calls in the profile')
    return total / pairs, pairs


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with tempfile.NamedTemporaryFile(suffix='.callgrind') as out:
        subprocess.run(
            ['valgrind', '--tool=callgrind', f'--callgrind-out-file={out.name}',
             sys.argv[1], '--benchmark_filter=BM_RegionPerfMsrTsc$',
             '--benchmark_min_time=0.3'],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        instructions, pairs = per_pair(out.name)
    print(f'{instructions:.0f} instructions per pair ({pairs} pairs)')


if __name__ == '__main__':
    main()
