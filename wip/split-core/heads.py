#!/usr/bin/env python3
# heads.py DIR: the file heads of the split core, the SPDX line and the design
# comment of internal.h placed before its include guard.
import re, sys, os
d = sys.argv[1]
heads = {
 'core.c': 'the registry of probes, the consumer API and the walks over the mms of a file',
 'patch.c': 'writing into the text (page replacement, in place, back to the file), SDT counters',
 'sites.c': "the per-mm site table, and debuggers' access to it (remote_lock)",
 'mm.c': 'the mm hooks: mmap, munmap, mremap, fork, exec and exit',
 'xol.c': 'the XOL area: its slots, boosted copies, and their reuse (xol_area->lock)',
 'jump.c': 'jump sites, their stub page and per-mm stub areas (stub_lock)',
 'task.c': 'the per-task state and return instances',
 'hit.c': 'the hit path: sites found, consumers run, the instruction carried out, returns',
 'arch.c': 'the __weak defaults of the architecture interface (the classic path)',
}
for f, what in heads.items():
    p = os.path.join(d, f)
    s = open(p).read()
    s = re.sub(r'\A// SPDX-License-Identifier: GPL-2.0\+\n/\*\n \* uprobes: \w+\.\n \*/\n',
               '// SPDX-License-Identifier: GPL-2.0+\n/*\n * uprobes: %s.\n *\n'
               ' * Objects, lifetimes and the lock order: internal.h; the design:\n'
               ' * Documentation/trace/uprobes.rst.\n */\n' % what, s)
    s = re.sub(r'(?m)^/\* -{5,} [^*]+ \*/\n\n', '', s)
    s = s.replace('see the top.', 'see internal.h.').replace('(see the top)', '(see internal.h)')
    s = s.replace('at the top of this file', 'at the top of internal.h')
    open(p, 'w').write(s)
p = os.path.join(d, 'internal.h')
s = open(p).read()
guard = '\n#ifndef _KERNEL_EVENTS_UPROBES_INTERNAL_H\n#define _KERNEL_EVENTS_UPROBES_INTERNAL_H\n\n'
s = s[len(guard):]
i = s.index(' */\n#ifdef CONFIG_GENERIC_ENTRY') + 4
s = s[:i].replace('// SPDX-License-Identifier: GPL-2.0+\n', '/* SPDX-License-Identifier: GPL-2.0+ */\n', 1) + guard.lstrip('\n') + s[i:]
open(p, 'w').write(s)
