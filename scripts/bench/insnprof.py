#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Per-operation instruction profile from two insnprof runs.

usage: insnprof.py SYSTEM_MAP SHORT.out LONG.out OPS [FUNC]

SHORT.out and LONG.out are insnprof.c's counts of two boots that differ
only in the number of operations run (OPS more in LONG). Their difference
divided by OPS is the cost of one operation, exact under -icount: it
prints the guest instructions per operation for each kernel function
(user space as one line), and with FUNC the count at each of FUNC's
instructions ("pc +offset count"), to put beside objdump -d.
"""
import bisect
import collections
import sys

USER_TOP = 0xffff800000000000


def load(path):
    counts = collections.Counter()
    with open(path) as f:
        for line in f:
            pc, n = line.split()
            counts[int(pc, 16)] += int(n)
    return counts


def main():
    smap, short, long_, ops = sys.argv[1:5]
    func = sys.argv[5] if len(sys.argv) > 5 else None
    ops = float(ops)
    names = collections.defaultdict(list)    # address -> its text symbols
    with open(smap) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1] in 'tTwW':
                names[int(p[0], 16)].append(p[2])
    syms = sorted((a, '/'.join(n)) for a, n in names.items())
    addrs = [a for a, _ in syms]

    def where(pc):
        if pc < USER_TOP:
            return None, '(user space)'
        i = bisect.bisect_right(addrs, pc) - 1
        return (syms[i] if i >= 0 else (0, '?'))

    a, b = load(short), load(long_)
    per_func = collections.Counter()
    per_pc = {}
    for pc in set(a) | set(b):
        d = b[pc] - a[pc]
        if d:
            base, name = where(pc)
            per_func[name] += d
            per_pc[pc] = (base, name, d)
    print('%.1f guest instructions per operation' % (sum(per_func.values()) / ops))
    for name, d in per_func.most_common():
        if abs(d / ops) >= 0.5:
            print('%8.1f  %s' % (d / ops, name))
    if func:
        print('\n%s, per instruction:' % func)
        for pc in sorted(per_pc):
            base, name, d = per_pc[pc]
            if name == func:
                print('%x +%#x %.2f' % (pc, pc - base, d / ops))


if __name__ == '__main__':
    main()
