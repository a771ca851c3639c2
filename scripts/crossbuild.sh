#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Cross builds: a small uprobes-enabled kernel for every architecture whose 6.1 tree has
# uprobes and Debian a cross compiler, plus i386 and x86_64 without uprobes, for IMPL=ours
# and IMPL=stock, and x86_64 without jump sites for IMPL=ours. Fails on any error, and on any
# warning of ours that stock's same build does not have.
#
#   crossbuild.sh [TARGET ...]      (default: all; IMPL=ours|stock|both, default both)
#
# A target is ARCH:HOW, HOW being "link" (vmlinux: a hook without a definition fails) or
# "objs" (the objects uprobes touch; whole links of every architecture do not fit CI).
# Config: tinyconfig + scripts/configs/cross.config (+ cross-ARCH.config if present; x86_64-noup:
# cross-noup.config instead). x86_64-nojump (CONFIG_UPROBE_JUMP_SITES off) is built for ours only:
# stock has no such option.
# Objects in build/obj/cross-IMPL-ARCH, logs beside them.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/kconfig.sh
. "$TOP/scripts/kconfig.sh"
B=${BUILD:-$TOP/build}
JOBS=${JOBS:-$(nproc)}
BASELINE=$TOP/scripts/configs/cross-stock.warnings
ALL="arm64:link i386:link riscv:link arm:objs powerpc:objs s390:objs mips:objs x86_64-noup:objs
	x86_64-nojump:objs"
# Not built: csky and sparc have uprobes in 6.1 but no cross compiler in Debian 12.

say() { printf '[crossbuild] %s\n' "$*" >&2; }
die() { printf '[crossbuild] error: %s\n' "$*" >&2; exit 1; }

# "KARCH CROSS_COMPILE PKG" of a target's architecture.
toolchain() {
	case $1 in
	arm64) echo "arm64 aarch64-linux-gnu- gcc-aarch64-linux-gnu" ;;
	arm) echo "arm arm-linux-gnueabihf- gcc-arm-linux-gnueabihf" ;;
	powerpc) echo "powerpc powerpc64le-linux-gnu- gcc-powerpc64le-linux-gnu" ;;
	riscv) echo "riscv riscv64-linux-gnu- gcc-riscv64-linux-gnu" ;;
	s390) echo "s390 s390x-linux-gnu- gcc-s390x-linux-gnu" ;;
	mips) echo "mips mips64el-linux-gnuabi64- gcc-mips64el-linux-gnuabi64" ;;
	i386) echo "i386 - gcc" ;;
	x86_64-noup | x86_64-nojump) echo "x86_64 - gcc" ;;
	*) die "unknown architecture '$1'" ;;
	esac
}

# What a target of kind "objs" builds: our files, the files our patches touch, and the
# architecture's users of <linux/uprobes.h> (its uprobes file, signal code and traps).
objects() {
	local arch=$1
	echo kernel/events/ kernel/fork.o kernel/seccomp.o kernel/signal.o mm/mremap.o mm/mmap.o
	[ "$arch" = x86_64-noup ] || echo kernel/trace/trace_uprobe.o
	case $arch in
	arm64) echo arch/arm64/kernel/probes/ arch/arm64/kernel/signal.o arch/arm64/kernel/debug-monitors.o ;;
	arm) echo arch/arm/probes/ arch/arm/kernel/signal.o ;;
	powerpc) echo arch/powerpc/kernel/uprobes.o arch/powerpc/kernel/signal.o arch/powerpc/kernel/signal_64.o ;;
	riscv) echo arch/riscv/kernel/probes/ arch/riscv/kernel/signal.o ;;
	s390) echo arch/s390/kernel/uprobes.o arch/s390/kernel/signal.o ;;
	mips) echo arch/mips/kernel/uprobes.o arch/mips/kernel/signal.o ;;
	i386 | x86_64-noup | x86_64-nojump)
		echo arch/x86/kernel/traps.o arch/x86/kernel/signal.o arch/x86/entry/vdso/ arch/x86/mm/fault.o
		[ "$arch" = x86_64-noup ] || echo arch/x86/kernel/uprobes/ ;;
	esac
}

# Build target $2 of tree $1 (ours or stock); the warnings go to $obj/warnings.
build_one() {
	local impl=$1 target=$2 arch how karch cross pkg obj frag cc
	arch=${target%%:*} how=${target#*:}
	read -r karch cross pkg <<<"$(toolchain "$arch")"
	[ "$cross" = - ] && cross=
	if ! command -v "${cross}gcc" >/dev/null; then
		[ "$(id -u)" = 0 ] || die "${cross}gcc missing: apt-get install $pkg"
		say "installing $pkg"
		# -o DPkg::Lock::Timeout: wait for another harness run's install (harness.sh)
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=1200 install -y \
			--no-install-recommends "$pkg" >/dev/null 2>&1 ||
			{ apt-get -o DPkg::Lock::Timeout=1200 update >/dev/null &&
				DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=1200 install -y \
					--no-install-recommends "$pkg" >/dev/null; } ||
			die "apt-get install $pkg failed"
	fi
	obj=$B/obj/cross-$impl-$arch
	mkdir -p "$obj"
	cc="ccache ${cross}gcc"
	local mk=(make -C "$B/src/$impl" O="$obj" ARCH="$karch" CROSS_COMPILE="$cross" CC="$cc"
		HOSTCC="ccache gcc" KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
		KBUILD_BUILD_USER=uprobes KBUILD_BUILD_HOST=harness)
	local frags=("$TOP/scripts/configs/cross.config")
	[ "$arch" = x86_64-noup ] && frags=("$TOP/scripts/configs/cross-noup.config")
	[ -f "$TOP/scripts/configs/cross-$arch.config" ] && frags+=("$TOP/scripts/configs/cross-$arch.config")
	kconfig_configure "$B/src/$impl" "$obj" "$karch" "$cross" "${frags[@]}" ||
		die "$impl $arch: configuration failed (the options above are missing, or see $obj/merge.log)"
	local goals
	if [ "$how" = link ]; then goals=vmlinux; else goals=$(objects "$arch" | tr '\n' ' '); fi
	# shellcheck disable=SC2086
	if ! "${mk[@]}" -j"$JOBS" $goals >"$obj/build.log" 2>&1; then
		grep -E 'error|Error' "$obj/build.log" | awk 'NR <= 30' >&2
		die "$impl $arch ($how) failed; log: $obj/build.log"
	fi
	grep -E 'warning:|WARNING' "$obj/build.log" | sed "s,$B/src/$impl/,,g; s,$obj/,,g" | sort -u >"$obj/warnings" || true
}

targets=${*:-$ALL}
impls=${IMPL:-both}
[ "$impls" = both ] && impls="stock ours"
case " $impls " in " stock ours " | " ours " | " stock ") ;; *) die "IMPL must be ours, stock or both" ;; esac
IMPL=ours CONFIG=fast "$TOP/scripts/harness.sh" tree >/dev/null
t0=$SECONDS bad=0
for target in $targets; do
	arch=${target%%:*}
	for impl in $impls; do
		[ "$arch:$impl" = x86_64-nojump:stock ] && continue
		t1=$SECONDS
		build_one "$impl" "$target" || exit 1
		say "$impl $target built in $((SECONDS - t1)) s"
	done
	w=$B/obj/cross-ours-$arch/warnings s=$B/obj/cross-stock-$arch/warnings
	if [ ! -f "$s" ]; then
		# No stock build here: stock's warnings as recorded (make crossbuild IMPL=stock
		# rewrites the record).
		s=$B/obj/cross-stock-$arch/recorded-warnings
		mkdir -p "$(dirname "$s")"
		sed -n "s/^$arch: //p" "$BASELINE" | sort -u >"$s"
	fi
	if [[ " $impls " == *" ours "* ]]; then
		new=$(comm -23 "$w" "$s")
		if [ -n "$new" ]; then
			say "ours $arch has warnings stock does not:"
			printf '%s\n' "$new" >&2
			bad=1
		fi
	fi
done
# A run that built stock records its warnings, for runs that build only ours (CI).
if [ "$impls" != ours ]; then
	{
		echo "# Warnings of stock's cross builds (scripts/crossbuild.sh), one per line: \"ARCH: warning\"."
		echo "# Written by \`make crossbuild IMPL=stock\` (or both); read when a run builds only ours."
		for target in $ALL; do
			arch=${target%%:*}
			f=$B/obj/cross-stock-$arch/warnings
			if [ -f "$f" ]; then sed "s/^/$arch: /" "$f"; else sed -n "/^$arch: /p" "$BASELINE"; fi
		done
	} >"$BASELINE.new"
	mv "$BASELINE.new" "$BASELINE"
fi
say "done in $((SECONDS - t0)) s"
[ $bad = 0 ] || die "new warnings"
echo "crossbuild: $targets ok"
