#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# arm64 smoke test of what the selftests do not reach on arm64 yet: trace smoke.c's functions
# (entry probes on a stepped add and stp, a simulated bl, return probes with $retval and %x0)
# through tracefs in the harness's arm64 guest (make vm ARCH=arm64, IMPL=$1: ours or stock).
set -euo pipefail
impl=${1:-ours}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${BUILD:-$top/build}/arm64-smoke
ARCH=arm64 "$top/scripts/harness.sh" deps
rm -rf "$out" && mkdir -p "$out/extra"
aarch64-linux-gnu-gcc -O2 -static -o "$out/extra/smoke" "$here/smoke.c"
off() {
	local va base
	va=$(aarch64-linux-gnu-nm "$out/extra/smoke" | awk -v s="$1" '$3 == s { print $1 }')
	# static, non-PIE: the text LOAD segment maps file offset 0 at its vaddr
	base=$(aarch64-linux-gnu-readelf -lW "$out/extra/smoke" | awk '$1 == "LOAD" && $2 == "0x000000" { print $3; exit }')
	printf '0x%x' $((0x$va - base))
}
printf 'LEAF=%s\nOUTER=%s\nCALL=0x%x\n' "$(off leaf)" "$(off outer)" $(($(off outer) + 8)) >"$out/extra/offsets"
cat "$out/extra/offsets"
cp "$here/check.sh" "$out/extra/"
make -s -C "$top" vm ARCH=arm64 IMPL="$impl" EXTRA="$out/extra" CMD='sh check.sh'
