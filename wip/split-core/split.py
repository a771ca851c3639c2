#!/usr/bin/env python3
# split.py SRC OUTDIR: split kernel/events/uprobes.c into files by section.
import re, sys, collections

src, outdir = sys.argv[1], sys.argv[2]
L = open(src).read().split('\n')
if L[-1] == '':
    L = L[:-1]

# section markers -> file
SECTION_FILE = {
    'registry': 'core', 'patching': 'patch', 'SDT counters': 'patch',
    'sites': 'sites', 'debuggers': 'sites', 'walks': 'core',
    'consumer API': 'core', 'mm hooks': 'mm', 'XOL area': 'xol',
    'jump sites': 'jump', 'per task': 'task', 'hit path': 'hit',
    'architecture defaults': 'arch',
}

# ---- chunking: paragraphs at brace depth 0
chunks = []   # (start, end_exclusive)
depth = 0
in_comment = False
start = None
for i, line in enumerate(L):
    s = line
    # strip strings/chars, track comments
    j = 0
    out = ''
    while j < len(s):
        if in_comment:
            k = s.find('*/', j)
            if k < 0:
                j = len(s)
            else:
                in_comment = False
                j = k + 2
            continue
        c = s[j]
        if s.startswith('/*', j):
            in_comment = True
            j += 2
            continue
        if s.startswith('//', j):
            break
        if c in '"\'':
            q = c
            j += 1
            while j < len(s) and s[j] != q:
                j += 2 if s[j] == '\\' else 1
            j += 1
            continue
        out += c
        j += 1
    if start is None:
        if line.strip() == '':
            continue
        start = i
    depth += out.count('{') - out.count('}')
    if depth == 0 and not in_comment and (i + 1 == len(L) or L[i + 1].strip() == ''):
        # a paragraph ends unless the line continues a macro
        if not line.rstrip().endswith('\\'):
            chunks.append((start, i + 1))
            start = None
assert start is None, 'unterminated chunk at %d' % start

def text(c):
    return '\n'.join(L[c[0]:c[1]])

def code_only(t):
    t = re.sub(r'/\*.*?\*/', ' ', t, flags=re.S)
    t = re.sub(r'//[^\n]*', ' ', t)
    t = re.sub(r'"(\\.|[^"\\])*"', '""', t)
    t = re.sub(r"'(\\.|[^'\\])*'", "''", t)
    return t

# merge trailing NOKPROBE/EXPORT chunks into the previous one
merged = []
for c in chunks:
    t = code_only(text(c)).strip()
    if merged and re.fullmatch(r'(NOKPROBE_SYMBOL|EXPORT_SYMBOL(_GPL)?)\(\w+\);', t):
        merged[-1] = (merged[-1][0], c[1])
    else:
        merged.append(c)
chunks = merged

# sections
items = []
section = 'head'
for c in chunks:
    t = text(c)
    m = re.fullmatch(r'/\* -+ (.*?) \*/', t.strip())
    if m:
        section = m.group(1)
        items.append(dict(c=c, kind='marker', section=section, text=t))
        continue
    items.append(dict(c=c, kind=None, section=section, text=t))

KW = set('''if for while switch return sizeof typeof __typeof__ defined do else case
struct union enum static const unsigned signed long int char void bool u8 u16 u32 u64
s8 s16 s32 s64 inline noinline __always_inline'''.split())

def classify(it):
    t = it['text']
    code = code_only(t).strip()
    it['code'] = code
    if it['kind'] == 'marker':
        return
    first = code.split('\n')[0] if code else ''
    if not code:
        it['kind'] = 'comment'
    elif code.startswith('#include') or code.startswith('#ifdef CONFIG_GENERIC_ENTRY\n#include'):
        it['kind'] = 'include'
    elif code.startswith('#define'):
        it['kind'] = 'macro'
        it['name'] = re.match(r'#define\s+(\w+)', code).group(1)
        # several defines in one chunk
        it['names'] = re.findall(r'(?m)^#define\s+(\w+)', code)
    elif re.match(r'(struct|union|enum)\s+\w+\s*\{', code) or re.match(r'enum\s*\{', code):
        it['kind'] = 'type'
        m = re.match(r'(?:struct|union|enum)\s+(\w+)', code)
        it['name'] = m.group(1) if m else None
        it['names'] = re.findall(r'(?m)^#define\s+(\w+)', code)
    elif re.fullmatch(r'((struct|union)\s+\w+;\s*)+', code):
        it['kind'] = 'fwdtype'
    elif re.match(r'module_param', code):
        it['kind'] = 'misc'
    else:
        # function definition, prototype(s) or variable
        head = code.split('{')[0] if '{' in code else code
        if '{' in code and re.search(r'\)\s*$', head.strip()) and not re.search(r'=\s*$', head.strip()):
            it['kind'] = 'func'
            m = re.search(r'(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*$', head.strip())
            it['name'] = m.group(1)
            it['sig'] = head.strip()
            it['static'] = bool(re.match(r'static\b', head.strip()))
            it['inline'] = bool(re.search(r'\b(inline|__always_inline|nokprobe_inline)\b', head))
        elif re.match(r'(static\s+)?DEFINE_\w+\(', code) or '=' in code or (code.endswith(';') and not re.search(r'\)\s*;\s*$', code)):
            it['kind'] = 'var'
            m = re.match(r'(?:static\s+)?DEFINE_PER_CPU\(([^,]+),\s*(\w+)', code)
            m2 = re.match(r'(?:static\s+)?DEFINE_\w+\((\w+)', code)
            if m:
                it['name'] = m.group(2)
            elif m2:
                it['name'] = m2.group(1)
            else:
                m = re.search(r'(\w+)\s*(\[[^\]]*\])?\s*(__\w+\s*)*(=|;)', code)
                it['name'] = m.group(1)
            it['static'] = code.startswith('static') or code.startswith('DEFINE_STATIC_')
        else:
            it['kind'] = 'proto'
            it['names'] = re.findall(r'(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*;', code)
            it['static'] = code.startswith('static')

for it in items:
    classify(it)

# file of each item
for it in items:
    s = it['section']
    if s == 'head':
        if it['kind'] in ('func',):
            it['file'] = 'H'          # header, static inline
        elif it['kind'] == 'var':
            it['file'] = 'core'
        elif it['kind'] == 'comment' and it['c'][0] == 0:
            it['file'] = 'Hhead'      # the design comment
        else:
            it['file'] = 'H'
    else:
        it['file'] = SECTION_FILE[s]

ident = re.compile(r'\b[A-Za-z_]\w*\b')
for it in items:
    it['uses'] = set(ident.findall(it.get('code', '')))

defs = {}
for it in items:
    if it['kind'] in ('func', 'var', 'type', 'macro'):
        for n in ([it['name']] if it.get('name') else []) + it.get('names', []):
            defs.setdefault(n, it)

# which files use each name
users = collections.defaultdict(set)
for it in items:
    for n in it['uses']:
        if n in defs and defs[n] is not it:
            users[n].add(it['file'])

# types and macros used outside their file -> header
changed = True
while changed:
    changed = False
    for it in items:
        f = it['file']
        if f in ('H', 'Hhead'):
            continue
        if it['kind'] in ('type', 'macro'):
            ns = ([it['name']] if it.get('name') else []) + it.get('names', [])
            if any(users[n] - {f} for n in ns):
                it['file'] = 'H'
                changed = True
        if it['kind'] == 'func' and it['static'] and it['inline']:
            if users[it['name']] - {f}:
                it['file'] = 'H'
                changed = True
        if it['kind'] == 'var' and it['code'].startswith('static const') and users[it['name']] - {f}:
            it['file'] = 'H'
            changed = True
    # things used by header items
    hdr_uses = set()
    for it in items:
        if it['file'] == 'H':
            hdr_uses |= it['uses']
    for it in items:
        if it['file'] in ('H', 'Hhead'):
            continue
        if it['kind'] in ('type', 'macro') and ((it.get('name') in hdr_uses) or set(it.get('names', [])) & hdr_uses):
            it['file'] = 'H'
            changed = True
        if it['kind'] == 'func' and it['static'] and it['inline'] and it['name'] in hdr_uses:
            it['file'] = 'H'
            changed = True
    # recompute users with header as a file
    users = collections.defaultdict(set)
    for it in items:
        for n in it['uses']:
            if n in defs and defs[n] is not it:
                users[n].add(it['file'])

# globalize static functions/vars used from other files (or from the header)
globalize = set()
for it in items:
    if it['kind'] in ('func', 'var') and it.get('static') and it['file'] not in ('H',):
        if users[it['name']] - {it['file']}:
            globalize.add(it['name'])

protos_h = []
externs_h = []
for it in items:
    if it['kind'] == 'func' and it['name'] in globalize:
        sig = re.sub(r'^static\s+', '', it['sig'])
        it['text'] = it['text'].replace(it['sig'].split('\n')[0], re.sub(r'^static\s+', '', it['sig'].split('\n')[0]), 1)
        protos_h.append((it['file'], sig + ';'))
    if it['kind'] == 'var' and it['name'] in globalize:
        t = it['text']
        code = it['code']
        mp = re.match(r'static\s+DEFINE_PER_CPU\(([^,]+),\s*(\w+)\)', code)
        m = re.match(r'(?:static\s+)?(DEFINE_\w+)\((\w+)', code)
        if mp:
            it['text'] = t.replace('static DEFINE_PER_CPU', 'DEFINE_PER_CPU', 1)
            externs_h.append('DECLARE_PER_CPU(%s, %s);' % (mp.group(1), mp.group(2)))
        elif m:
            macro = m.group(1)
            ext = {'DEFINE_STATIC_SRCU': 'struct srcu_struct',
                   'DEFINE_STATIC_PERCPU_RWSEM': 'struct percpu_rw_semaphore',
                   'DEFINE_XARRAY_ALLOC': 'struct xarray',
                   'DEFINE_MUTEX': 'struct mutex', 'DEFINE_SPINLOCK': 'spinlock_t'}.get(macro)
            if ext is None:
                raise SystemExit('unknown DEFINE macro %s for %s' % (macro, m.group(2)))
            newmacro = {'DEFINE_STATIC_SRCU': 'DEFINE_SRCU',
                        'DEFINE_STATIC_PERCPU_RWSEM': 'DEFINE_PERCPU_RWSEM'}.get(macro, macro)
            it['text'] = t.replace('static ' + macro, newmacro, 1) if ('static ' + macro) in t else t.replace(macro, newmacro, 1)
            externs_h.append('extern %s %s;' % (ext, m.group(2)))
        else:
            decl = code.split('=')[0].rstrip().rstrip(';').strip()
            decl = re.sub(r'^static\s+', '', decl)
            decl = re.sub(r'\s*__ro_after_init', '', decl)
            externs_h.append('extern %s;' % decl)
            it['text'] = re.sub(r'(?m)^static ', '', t, count=1)

# prototypes in .c files of globalized functions: drop them
for it in items:
    if it['kind'] == 'proto':
        code = it['code']
        keep = []
        for line in re.split(r'(?<=;)\n', it['text']):
            names = re.findall(r'(\w+)\s*\(', code_only(line))
            if names and any(n in globalize for n in names) and code_only(line).strip().startswith('static'):
                continue
            keep.append(line)
        it['text'] = '\n'.join(keep)

# header-placed static functions: make them static inline
for it in items:
    if it['file'] == 'H' and it['kind'] == 'func':
        if not it['inline']:
            it['text'] = it['text'].replace('static ', 'static inline ', 1)

report = collections.Counter(it['file'] for it in items)
print('items per file', dict(report))
print('globalized', len(globalize), sorted(globalize))

import os
os.makedirs(outdir, exist_ok=True)
files = collections.OrderedDict()
for it in items:
    files.setdefault(it['file'], []).append(it)

def body(its):
    return '\n\n'.join(it['text'] for it in its if it['text'].strip()) + '\n'

# header
hdr = []
hdr.append(body([it for it in files.get('Hhead', [])]))
hh = files.get('H', [])
incl = [it for it in hh if it['kind'] == 'include']
rest = [it for it in hh if it['kind'] != 'include']
types = [it for it in rest if it['kind'] != 'func']
funcs = [it for it in rest if it['kind'] == 'func']
out = hdr[0]
out += '#ifndef _KERNEL_EVENTS_UPROBES_INTERNAL_H\n#define _KERNEL_EVENTS_UPROBES_INTERNAL_H\n\n'
out += body(incl) + '\n'
out += body(types) + '\n'
out += '\n'.join(externs_h) + '\n\n'
byfile = collections.OrderedDict()
for f, p in protos_h:
    byfile.setdefault(f, []).append(p)
for f, ps in byfile.items():
    out += '/* %s.c */\n' % f + '\n'.join(ps) + '\n\n'
out += body(funcs)
out += '\n#endif /* _KERNEL_EVENTS_UPROBES_INTERNAL_H */\n'
open(os.path.join(outdir, 'internal.h'), 'w').write(out)
for f, its in files.items():
    if f in ('H', 'Hhead'):
        continue
    t = '// SPDX-License-Identifier: GPL-2.0+\n/*\n * uprobes: %s.\n */\n#include "internal.h"\n\n' % f
    t += body([it for it in its if it['kind'] != 'marker' or True])
    open(os.path.join(outdir, f + '.c'), 'w').write(t)
    print(f, len(t.split('\n')))
