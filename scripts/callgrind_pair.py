#!/usr/bin/env python3
"""User-space instructions per UNCORE_REGION pair on perf msr/tsc/.

Runs region_bench's BM_RegionPerfMsrTsc (or the benchmark named) under
valgrind's callgrind and
prints the inclusive instructions of internal::BeginRegion plus
internal::EndRegion per pair (the SDK's whole boundary code, its read()
calls' user-space side included; not the kernel's).  Instruction counts do
not change with the machine's load, so two builds compare in one run each:

  python3 scripts/callgrind_pair.py build/tests/region_bench
  python3 scripts/callgrind_pair.py old/build/tests/region_bench
  python3 scripts/callgrind_pair.py build/tests/shared_library_bench \
      'BM_SharedPairOverTwoReads/on_event_cpu'   # through libuncore_sdk.so

Needs valgrind and root (the msr PMU).  docs/performance.md has figures.
"""
import re
import subprocess
import sys
import tempfile


# A thread's, a path's or a recorder's first use: not what a pair costs.
FIRST_USE = ('NewStateOf', 'SlowPathOf', 'NewAccumulatorOf', 'NewSlot',
             'NameIdAtSiteSlow', 'LookUpOrIntern')
BOUNDARIES = ('internal::BeginRegion(', 'internal::EndRegion(')


def per_pair(profile_path):
    """Instructions per pair, first uses left out, and the number of pairs."""
    names = {}
    calls = {}  # boundary function -> times called
    cost = 0  # the boundaries' own and their callees', first uses left out
    fn = None  # the function whose costs the lines are
    callee = None  # the function a cfn= line named last
    pending = None  # the callee whose call's cost line comes next
    with open(profile_path) as f:
        for line in f:
            line = line.rstrip('\n')
            m = re.match(r'(c?fn)=\((\d+)\)(?: (.*))?$', line)
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3)
                if m.group(1) == 'fn':
                    fn = names[m.group(2)]
                else:
                    callee = names[m.group(2)]
                continue
            if line.startswith('calls='):
                n = int(line.split('=')[1].split()[0])
                if any(b in callee for b in BOUNDARIES):
                    calls[callee] = calls.get(callee, 0) + n
                pending = callee
                continue
            parts = line.split()
            if not parts or not re.match(r'^(0x[0-9a-f]+|[+-]\d+|\*|\d+)$',
                                         parts[0]):
                continue
            in_boundary = fn is not None and any(b in fn for b in BOUNDARIES)
            if pending is not None:
                # The inclusive cost of the call just announced.
                if in_boundary and not any(c in pending for c in FIRST_USE):
                    cost += int(parts[-1])
                pending = None
                continue
            if in_boundary and len(parts) >= 2:
                cost += int(parts[-1])
    pairs = max(calls.values(), default=0)
    if pairs == 0:
        sys.exit('no BeginRegion/EndRegion calls in the profile')
    return cost / pairs, pairs


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    benchmark = sys.argv[2] if len(sys.argv) == 3 else 'BM_RegionPerfMsrTsc$'

    with tempfile.NamedTemporaryFile(suffix='.callgrind') as out:
        subprocess.run(
            ['valgrind', '--tool=callgrind', f'--callgrind-out-file={out.name}',
             sys.argv[1], f'--benchmark_filter={benchmark}',
             '--benchmark_min_time=0.2'],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        instructions, pairs = per_pair(out.name)
    print(f'{instructions:.0f} instructions per pair ({pairs} pairs)')


if __name__ == '__main__':
    main()
