#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# split.sh OUT: write the core split by responsibility (see ../README) into OUT, from
# kernel/events/uprobes.c as it is now: OUT/{core,patch,sites,mm,xol,jump,task,hit,arch}.c,
# internal.h and the Makefile. Needs the harness's base tree (build/src/stock) for checkpatch.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$1
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# one top-level item per paragraph where the source runs several together
python3 - "$top/kernel/events/uprobes.c" "$tmp" <<'PY'
import sys
s = open(sys.argv[1]).read()
for a in ('DEFINE_STATIC_SRCU(uprobes_srcu);\n', 'static struct rhashtable uprobe_inodes;\n',
          'static bool uprobes_ready __ro_after_init;\n', 'static DEFINE_XARRAY_ALLOC(uprobes_by_key);\n'):
    s = s.replace(a, a + '\n', 1)
open(sys.argv[2], 'w').write(s)
PY
rm -rf "$out"
python3 "$here/split.py" "$tmp" "$out"
python3 "$here/heads.py" "$out"
# continuation lines of signatures that lost their "static"
for pass in 1 2 3; do
	for f in "$out"/*.[ch]; do
		l=$(cd "$top/build/src/stock" && perl scripts/checkpatch.pl --no-tree --strict --terse -q -f "$f" |
		    sed -n 's/^[^:]*:\([0-9]*\): CHECK: Alignment.*/\1/p' | tr '\n' ' ' || true)
		[ -z "$l" ] || python3 "$here/realign.py" "$f" $l
	done
done
printf '%s\n' '# SPDX-License-Identifier: GPL-2.0' \
	'# uprobes: one object, "uprobes" (its parameters are uprobes.*), from the files of its parts.' \
	'obj-y += uprobes.o' \
	'uprobes-y := core.o patch.o sites.o mm.o xol.o jump.o task.o hit.o arch.o' >"$out/Makefile"
