#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# arm64 smoke test, until the harness boots arm64 (issue 20): build IMPL's (ours|stock) arm64
# kernel (tinyconfig + arm64-smoke.config), boot it under qemu-system-aarch64 TCG with a static
# arm64 busybox, trace smoke.c's functions (stepped, simulated, return probes) through tracefs.
# Run after `make tree`; needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-system-arm.
set -euo pipefail
impl=${1:-ours}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../kconfig.sh
. "$here/../kconfig.sh"
B=${BUILD:-$(cd "$here/../.." && pwd)/build}
out=$B/arm64-smoke
mkdir -p "$out"
# arm64 busybox from Debian's package, unpacked here: installing busybox-static:arm64
# would replace the host's busybox.
if [ ! -x "$out/busybox" ]; then
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		dpkg --add-architecture arm64 && apt-get update >/dev/null
	fi
	(cd "$out" && apt-get download busybox-static:arm64 >/dev/null 2>&1 &&
		dpkg-deb -x busybox-static_*_arm64.deb deb && cp deb/bin/busybox busybox)
fi
obj=$B/obj/smoke-$impl-arm64
mk=(make -C "$B/src/$impl" O="$obj" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- CC="ccache aarch64-linux-gnu-gcc" HOSTCC="ccache gcc")
kconfig_configure "$B/src/$impl" "$obj" arm64 aarch64-linux-gnu- "$here/arm64-smoke.config" ||
	{ echo "arm64 smoke kernel: configuration failed"; exit 1; }
"${mk[@]}" -s -j2 Image >"$obj/build.log" 2>&1 || { tail -30 "$obj/build.log"; exit 1; }
aarch64-linux-gnu-gcc -O2 -static -o "$out/smoke" "$here/smoke.c"
off() {
	local va base
	va=$(aarch64-linux-gnu-nm "$out/smoke" | awk -v s="$1" '$3 == s { print $1 }')
	# static, non-PIE: the text LOAD segment maps file offset 0 at its vaddr
	base=$(aarch64-linux-gnu-readelf -lW "$out/smoke" | awk '$1 == "LOAD" && $2 == "0x000000" { print $3; exit }')
	printf '0x%x' $((0x$va - base))
}
root=$out/root-$impl
rm -rf "$root" && mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp}
cp "$out/busybox" "$root/bin/busybox"
for a in sh mount cat grep echo poweroff head tail sleep ls; do ln -s busybox "$root/bin/$a"; done
cp "$here/init" "$root/init" && chmod +x "$root/init"
cp "$out/smoke" "$root/smoke"
printf 'LEAF=%s\nOUTER=%s\nCALL=0x%x\n' "$(off leaf)" "$(off outer)" $(($(off outer) + 8)) >"$root/offsets"
cat "$root/offsets"
(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet) >"$out/root-$impl.cpio"
timeout 600 qemu-system-aarch64 -M virt -cpu max -accel tcg -m 512 -smp 2 -nographic -no-reboot \
	-kernel "$obj/arch/arm64/boot/Image" -initrd "$out/root-$impl.cpio" \
	-append "console=ttyAMA0 rdinit=/init panic=-1" </dev/null >"$out/console-$impl.log" 2>&1 || true
grep -E 'PASS|FAIL|@@SMOKE|BUG|WARNING|Oops|uprobe|smoke' "$out/console-$impl.log" | head -60
grep -q "@@SMOKE fail=0@@" "$out/console-$impl.log"
