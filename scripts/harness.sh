#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build -> boot -> test harness for the uprobes patch series.
#
#   harness.sh deps [PKG...]|tree|kernel|selftests|initramfs|vm|shell|check|run|lint|bench|
#              profile|info|summary
#
# Environment: IMPL=ours|stock|series (default ours; series: the tree make series-am
# made by git am of the series on Debian's source, built as it is; with SERIES_TREE=DIR and
# SERIES_BOUNDARY=NAME, the git tree DIR of a prefix of the series instead, with logs of
# their own named series-NAME (in SERIES_OBJ if given: objects the tree was built in),
# tested with the overlay's selftests when DIR has none: make series-check at a boundary),
# CONFIG=fast|full|debug|debian (default fast; full adds scripts/configs/full*.config, debug
# adds those and debug.config; debian is Debian's own amd64 config with modules off, plus the
# selftests' and debian.config),
# ARCH=x86_64|arm64 (default x86_64: the guest's architecture; arm64 cross-builds and boots
# qemu-system-aarch64 -M virt),
# CMD='shell command' and EXTRA=dir for vm, TIMEOUT=seconds for a boot, ICOUNT=1 for
# a one-vCPU guest whose clock counts guest instructions (QEMU -icount shift=0),
# QEMU_EXTRA='args' for more QEMU arguments (a TCG plugin: scripts/bench/insnprof.c),
# KAPPEND='params' for more kernel command line parameters (uprobes.jump_sites=0),
# CLIENTS=smoke to run one client test of each tool and kind, not the heavy ones (the tests
# whose time is a tool's own start-up under emulation: bcc's compiles, gdb per instruction).
#
# Layout of the build directory ($B, default ./build, git-ignored):
#   src/stock/        pristine base tree, extracted from linux-source-6.1 (never written)
#   src/ours/         a copy of it with our overlay files and patches/ applied
#   series-am/        Debian's source with the series applied by git am (scripts/series.sh)
#   obj/IMPL-CONFIG/  out-of-tree kernel objects (.config, bzImage)
#   selftests/        tools/testing/selftests/uprobes built from the ours tree (the series-am
#                     tree for IMPL=series)
#   initramfs/        guest root and its cpio archive
#   logs/IMPL-CONFIG/ console.log (kernel console), out.log (guest command output), results
#   (for ARCH=arm64 the last four end in -arm64: obj/IMPL-CONFIG-arm64/, selftests-arm64/, ...)
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/kconfig.sh
. "$TOP/scripts/kconfig.sh"
# shellcheck source=scripts/overlay.sh
. "$TOP/scripts/overlay.sh"
B=${BUILD:-$TOP/build}
IMPL=${IMPL:-ours}
CONFIG=${CONFIG:-fast}
ARCH=${ARCH:-x86_64}
case $ARCH in x86 | amd64) ARCH=x86_64 ;; aarch64) ARCH=arm64 ;; esac
JOBS=${JOBS:-$(nproc)}
TARBALL=/usr/src/linux-source-6.1.tar.xz
SRC_STOCK=$B/src/stock
SRC_OURS=$B/src/ours
SRC_SERIES=${SERIES_TREE:-$B/series-am}
# What differs between the guest architectures: kbuild's ARCH, the cross compiler, the
# kernel image, the console the kernel writes (console.log) and the one the guest command's
# output goes to (out.log, QEMU's stdio), the QEMU machine, and the suffix of this
# architecture's build directories (none for x86_64).
case $ARCH in
x86_64)
	KARCH=x86_64 CROSS='' KIMAGE=arch/x86/boot/bzImage SUF=''
	KCONSOLE=ttyS0 GUEST_OUT=ttyS1 QEMU_SYS=qemu-system-x86_64
	;;
arm64)
	KARCH=arm64 CROSS=aarch64-linux-gnu- KIMAGE=arch/arm64/boot/Image SUF=-arm64
	KCONSOLE=ttyAMA0 GUEST_OUT=hvc0 QEMU_SYS=qemu-system-aarch64
	;;
*) echo "ARCH must be x86_64 or arm64, not '$ARCH'" >&2; exit 2 ;;
esac
OBJ=$B/obj/$IMPL-$CONFIG$SUF
LOGS=$B/logs/$IMPL-$CONFIG$SUF
if [ "$IMPL" = series ] && [ -n "${SERIES_TREE:-}" ]; then
	# SERIES_OBJ: objects the caller already built the tree in (make series-check's).
	OBJ=${SERIES_OBJ:-$B/obj/series-${SERIES_BOUNDARY:?SERIES_TREE needs SERIES_BOUNDARY}-$CONFIG$SUF}
	LOGS=$B/logs/series-$SERIES_BOUNDARY-$CONFIG$SUF
fi
STEST=$B/selftests$SUF
IRD=$B/initramfs$SUF

case $IMPL in ours|stock|series) ;; *) echo "IMPL must be ours, stock or series, not '$IMPL'" >&2; exit 2;; esac
case $CONFIG in fast|full|debug|debian) ;; *) echo "CONFIG must be fast, full, debug or debian, not '$CONFIG'" >&2; exit 2;; esac
# CONFIG=debian starts from the config Debian builds its amd64 kernel with (linux-config-6.1).
DEBIAN_CONFIG=/usr/src/linux-config-6.1/config.amd64_none_amd64.xz
if [ "$CONFIG" = debian ]; then
	[ "$ARCH" = x86_64 ] || { echo "CONFIG=debian is for ARCH=x86_64" >&2; exit 2; }
	export KCONFIG_BASE=$DEBIAN_CONFIG
fi

say() { printf '[harness] %s\n' "$*" >&2; }
die() { printf '[harness] error: %s\n' "$*" >&2; exit 1; }

src_dir() {
	case $IMPL in
	stock) echo "$SRC_STOCK" ;;
	series) echo "$SRC_SERIES" ;;
	*) echo "$SRC_OURS" ;;
	esac
}

# One harness invocation at a time per build directory.
take_lock() {
	mkdir -p "$B"
	exec 9>"$B/.lock"
	if ! flock -n 9; then
		say "waiting for another harness run to finish"
		flock 9
	fi
}

# ---------------------------------------------------------------- deps
PKGS="linux-source-6.1 build-essential flex bison bc libelf-dev libssl-dev cpio ccache dwarves
      xz-utils busybox-static qemu-system-x86 systemtap-sdt-dev linux-perf perl git"
# The real clients (uprobe_clients, run in the guest from the build machine's root over 9p),
# and what builds its BPF and 32-bit programs.
PKGS+=" bpftrace bpfcc-tools python3-bpfcc libbpf-dev clang llvm bpftool gdb stress-ng strace
      gcc-i686-linux-gnu libc6-dev-i386-cross"
[ "$CONFIG" != debian ] || PKGS+=" linux-config-6.1"
PKGS_arm64="gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm"
# The clients of a guest of another architecture (guest_root): Debian's own packages for it
# (binutils: perf's addr2line for the source lines and inlined frames of callchains).
ROOT_PKGS="bpftrace bpfcc-tools python3-bpfcc gdb stress-ng strace linux-perf binutils libc-bin
      base-passwd dash coreutils xz-utils"

# Install what is missing of the harness's packages, plus any named as arguments.
cmd_deps() {
	local missing=() p pkgs="$PKGS $*"
	[ "$ARCH" != arm64 ] || pkgs+=" $PKGS_arm64"
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	say "installing: ${missing[*]}"
	[ "$(id -u)" = 0 ] || die "need root to install: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# Two harness runs side by side (a series-check beside make check) may install at once:
	# the second waits for the first's dpkg lock rather than failing.
	local apt=(apt-get -o DPkg::Lock::Timeout=1200)
	"${apt[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
		{ "${apt[@]}" update >/dev/null && "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null; } ||
		die "apt-get install ${missing[*]} failed"
}

# ---------------------------------------------------------------- trees
base_version() { make -s -C "$SRC_STOCK" kernelversion 2>/dev/null; }
project_commit() {
	git -C "$TOP" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown
}

info() {
	local deb
	deb=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo '?')
	say "base linux $(base_version) (linux-source-6.1 $deb), project $(project_commit), IMPL=$IMPL CONFIG=$CONFIG ARCH=$ARCH"
}

extract_stock() {
	[ -f "$SRC_STOCK/.extracted" ] && return 0
	[ -r "$TARBALL" ] || die "$TARBALL missing: run 'make deps' (apt-get install linux-source-6.1)"
	say "extracting $TARBALL"
	rm -rf "$SRC_STOCK" "$SRC_OURS" "$B/src/.tmp"
	mkdir -p "$B/src/.tmp"
	tar -xJf "$TARBALL" -C "$B/src/.tmp"
	mv "$B/src/.tmp/linux-source-6.1" "$SRC_STOCK"
	rmdir "$B/src/.tmp"
	chmod -R a-w "$SRC_STOCK"
	touch "$SRC_STOCK/.extracted" 2>/dev/null || { chmod u+w "$SRC_STOCK"; touch "$SRC_STOCK/.extracted"; chmod u-w "$SRC_STOCK"; }
}

# "PATH SOURCE" for each file that replaces or adds PATH in the ours tree.
overlay_map() {
	local d
	for d in $OVERLAY_DIRS; do
		[ -d "$TOP/$d" ] || continue
		(cd "$TOP" && find "$d" -type f ! -name '*.o' ! -name '.*' | sort) |
			while read -r f; do echo "$f $TOP/$f"; done
	done
}

patch_files() {
	ls "$TOP"/patches/*.patch 2>/dev/null | sort || true
	return 0
}
patched_paths() {
	local p
	for p in $(patch_files "$1"); do
		sed -n 's,^+++ b/\([^[:space:]]*\).*,\1,p' "$p"
	done | sort -u
}

# Make src/$1 = src/stock + overlay + patches - patches/removed, touching only files whose
# content changes (so that an incremental build recompiles just what was edited).
sync_tree() {
	local kind=$1 tree=$B/src/$1 st=$B/src/.staging new=$B/src/.managed-$1.new old=$B/src/.managed-$1 f p src
	if [ ! -f "$tree/.copied" ]; then
		say "copying the base tree to src/$kind"
		rm -rf "$tree"
		cp -a "$SRC_STOCK" "$tree"
		chmod -R u+w "$tree"
		rm -f "$old"
		touch "$tree/.copied"
	fi
	rm -rf "$st" && mkdir -p "$st"
	{ overlay_map "$kind" | cut -d' ' -f1; patched_paths "$kind"; } | sort -u >"$new"
	for f in $(removed_paths); do
		[ -f "$SRC_STOCK/$f" ] || die "patches/removed: $f is not a base file"
		! grep -qx "$f" "$new" || die "patches/removed: $f is also in the overlay or a patch"
		echo "$f" >>"$new"
	done
	sort -o "$new" "$new"
	for f in $(patched_paths "$kind"); do
		[ -f "$SRC_STOCK/$f" ] || continue
		mkdir -p "$st/$(dirname "$f")" && cp "$SRC_STOCK/$f" "$st/$f"
	done
	overlay_map "$kind" | while read -r f src; do
		mkdir -p "$st/$(dirname "$f")" && cp "$src" "$st/$f"
	done
	for p in $(patch_files "$kind"); do
		patch -s -p1 -N --no-backup-if-mismatch -d "$st" <"$p" || die "patch ${p#"$TOP"/} does not apply"
	done
	chmod -R u+w "$st"
	# Paths we managed before but no longer do go back to the base version.
	if [ -f "$old" ]; then
		for f in $(comm -23 "$old" "$new"); do
			if [ -f "$SRC_STOCK/$f" ]; then
				cmp -s "$SRC_STOCK/$f" "$tree/$f" || cp "$SRC_STOCK/$f" "$tree/$f"
			else
				rm -f "$tree/$f"
			fi
		done
	fi
	while read -r f; do
		[ -n "$f" ] || continue
		if [ -f "$st/$f" ]; then
			if ! cmp -s "$st/$f" "$tree/$f"; then
				mkdir -p "$tree/$(dirname "$f")"
				cp "$st/$f" "$tree/$f"
				say "overlay ($kind): $f"
			fi
		else
			rm -f "$tree/$f"
		fi
	done <"$new"
	mv "$new" "$old"
	rm -rf "$st"
}

cmd_tree() {
	extract_stock
	sync_tree ours
	[ "$IMPL" != series ] || [ -d "$SRC_SERIES/.git" ] ||
		die "IMPL=series builds $SRC_SERIES, which is missing: run 'make series-am'"
}

# ---------------------------------------------------------------- kernel
fragments() {
	local f
	if [ "$CONFIG" = debian ]; then
		for f in tools/testing/selftests/uprobes/config scripts/configs/debian.config; do
			echo "$TOP/$f"
		done
		return 0
	fi
	for f in scripts/configs/fast.config scripts/configs/arch-$ARCH.config \
		tools/testing/selftests/uprobes/config \
		$([ "$CONFIG" = fast ] || echo scripts/configs/full.config scripts/configs/full-$ARCH.config) \
		$([ "$CONFIG" = debug ] && echo scripts/configs/debug.config); do
		[ -f "$TOP/$f" ] && echo "$TOP/$f"
	done
	return 0
}

kmake() {
	make -C "$(src_dir)" O="$OBJ" ARCH="$KARCH" CROSS_COMPILE="$CROSS" \
		CC="ccache ${CROSS}gcc" HOSTCC="ccache gcc" \
		KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026' \
		KBUILD_BUILD_USER=uprobes KBUILD_BUILD_HOST=harness "$@"
}

configure() {
	# shellcheck disable=SC2046
	kconfig_current "$OBJ" $(fragments) && return 0
	local base=tinyconfig
	[ -z "${KCONFIG_BASE:-}" ] || base="$(basename "$KCONFIG_BASE"), mod2noconfig"
	say "configuring $IMPL-$CONFIG$SUF ($base + $(fragments | xargs -n1 basename | tr '\n' ' '))"
	# shellcheck disable=SC2046
	kconfig_configure "$(src_dir)" "$OBJ" "$KARCH" "$CROSS" $(fragments) ||
		die "kernel configuration failed (the options above are missing, or see $OBJ/merge.log)"
}

cmd_kernel() {
	cmd_tree
	configure
	local t0=$SECONDS
	say "building ${KIMAGE##*/} ($IMPL-$CONFIG$SUF, -j$JOBS)"
	kmake -s -j"$JOBS" "${KIMAGE##*/}" >"$OBJ/build.log" 2>&1 || { tail -40 "$OBJ/build.log" >&2; die "kernel build failed (log: $OBJ/build.log)"; }
	grep -E 'warning:|error:' "$OBJ/build.log" | grep -v '^make' | awk 'NR <= 20' >&2 || true
	say "kernel built in $((SECONDS - t0)) s: $OBJ/$KIMAGE"
}

# ---------------------------------------------------------------- guest
cmd_selftests() {
	cmd_tree
	local d=$SRC_OURS/tools/testing/selftests/uprobes
	[ "$IMPL" != series ] || [ ! -d "$SRC_SERIES/tools/testing/selftests/uprobes" ] ||
		d=$SRC_SERIES/tools/testing/selftests/uprobes
	[ -d "$d" ] || die "no selftests in $d"
	mkdir -p "$STEST"
	local mk=(make -s -C "$d" OUTPUT="$STEST" ARCH="$KARCH" CROSS_COMPILE="$CROSS" CXX="${CROSS}g++")
	if [ -n "$CROSS" ]; then
		# the build machine's <sys/sdt.h> (systemtap-sdt-dev), which serves every architecture
		mkdir -p "$B/dl-$ARCH/include/sys"
		cp /usr/include/x86_64-linux-gnu/sys/sdt.h /usr/include/x86_64-linux-gnu/sys/sdt-config.h \
			"$B/dl-$ARCH/include/sys/"
		mk+=(SDT_INCLUDE="$B/dl-$ARCH/include")
		# uprobe_clients, for a kernel that has the clients' root (9p): libbpf's headers,
		# the build machine's, which serve every architecture too, and the target's
		# libbpf from that root; without the root the suite is not built
		if has_9p; then
			local root lib
			root=$(guest_root) || exit 1
			lib=$root/usr/lib/${CROSS%-}
			cp -a /usr/include/bpf "$B/dl-$ARCH/include/"
			mk+=(UT_LIBBPF="$lib/libbpf.so.1 -Wl,-rpath-link,$lib:$root/lib/${CROSS%-}")
		fi
	fi
	"${mk[@]}" >"$STEST.log" 2>&1 || { cat "$STEST.log" >&2; die "selftests build failed"; }
	"${mk[@]}" emit_tests 2>/dev/null | sed -n 's/^[^:]*://p' >"$STEST/.tests"
}

# Does the kernel just built have virtio-9p, for the clients' root (boot())?
has_9p() {
	grep -qx 'CONFIG_NET_9P_VIRTIO=y' "$OBJ/.config" 2>/dev/null
}

# Copy an ELF file's shared libraries (and the loader) into the guest root.
copy_libs() {
	local root=$1 f lib
	shift
	[ -z "$CROSS" ] || { copy_libs_cross "$root" "$@"; return; }
	for f in "$@"; do
		ldd "$f" 2>/dev/null | grep -oE '/[^ ]+' || true
	done | sort -u | while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# The same for a cross-built ELF file: the loader and the libraries it names (DT_NEEDED,
# transitively), from the cross toolchain's sysroot, into the guest's /lib. Libraries found
# next to the file (the selftests' own, reached through $ORIGIN) are left where they are.
copy_libs_cross() {
	local root=$1 sysroot=/usr/${CROSS%-}/lib f lib todo=() seen=" "
	shift
	for f in "$@"; do
		todo+=("$f")
		lib=$("${CROSS}readelf" -lW "$f" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
		[ -z "$lib" ] || [ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")"; cp -L "$sysroot/$(basename "$lib")" "$root$lib"; }
	done
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		for lib in $("${CROSS}readelf" -dW "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			case $seen in *" $lib "*) continue ;; esac
			seen+="$lib "
			[ -e "$(dirname "$f")/$lib" ] && continue
			[ -e "$sysroot/$lib" ] || die "$lib (needed by ${f#"$root"}) is not in $sysroot"
			mkdir -p "$root/lib"
			cp -L "$sysroot/$lib" "$root/lib/$lib"
			todo+=("$root/lib/$lib")
		done
	done
}

# The guest's busybox: the host's for x86_64; for arm64, Debian's busybox-static:arm64 unpacked
# into the build directory (installing it would replace the host's busybox).
guest_busybox() {
	local dir=$B/dl-$ARCH
	[ "$ARCH" != x86_64 ] || { echo /bin/busybox; return; }
	if [ ! -x "$dir/busybox" ]; then
		mkdir -p "$dir"
		if ! dpkg --print-foreign-architectures | grep -qx "$ARCH"; then
			dpkg --add-architecture "$ARCH" && apt-get -o DPkg::Lock::Timeout=1200 update >/dev/null
		fi
		(cd "$dir" && rm -rf deb ./*.deb && apt-get download "busybox-static:$ARCH" >/dev/null 2>&1 &&
			dpkg-deb -x busybox-static_*_"$ARCH".deb deb && cp deb/bin/busybox busybox) ||
			die "cannot fetch busybox-static:$ARCH"
	fi
	echo "$dir/busybox"
}

# The root the real clients run from in a guest of another architecture than the build
# machine's (the build machine's own root serves x86_64): Debian's packages of ROOT_PKGS for
# $ARCH with their dependencies, unpacked by mmdebstrap (no maintainer script can run here);
# then what those scripts would have made and the clients need: the loader's cache (the
# target's static ldconfig, run by qemu-user), the accounts and /bin/sh.
guest_root() {
	local root=$B/root-$ARCH want rel
	[ "$ARCH" != x86_64 ] || { echo /; return; }
	rel=$(. /etc/os-release && echo "$VERSION_CODENAME")
	want="$(dpkg --print-architecture) $ARCH $rel $(echo $ROOT_PKGS)"
	if [ "$(cat "$root/.made" 2>/dev/null)" != "$want" ]; then
		cmd_deps mmdebstrap qemu-user-static
		say "unpacking Debian's $ARCH packages of the clients into $root (once)"
		rm -rf "$root" "$root.tmp"
		mmdebstrap --quiet --variant=extract --arch="$ARCH" \
			--include="$(echo $ROOT_PKGS | tr ' ' ,)" "$rel" "$root.tmp" >/dev/null ||
			die "mmdebstrap of the $ARCH clients' root failed"
		"qemu-${CROSS%%-*}-static" "$root.tmp/sbin/ldconfig" -r "$root.tmp" ||
			die "ldconfig of the $ARCH clients' root failed"
		cp "$root.tmp/usr/share/base-passwd/passwd.master" "$root.tmp/etc/passwd"
		cp "$root.tmp/usr/share/base-passwd/group.master" "$root.tmp/etc/group"
		[ -e "$root.tmp/bin/sh" ] || ln -s dash "$root.tmp/bin/sh"
		mkdir -p "$root.tmp/run" "$root.tmp/proc" "$root.tmp/sys"
		echo "$want" >"$root.tmp/.made"
		mv "$root.tmp" "$root"
	fi
	echo "$root"
}

cmd_initramfs() {
	cmd_selftests
	local root=$IRD/root a elfs bb
	bb=$(guest_busybox)
	rm -rf "$root" && mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,root,etc,kselftest,harness}
	cp "$bb" "$root/bin/busybox"
	# The host's busybox lists the applets (the guest's may not run here).
	for a in $(/bin/busybox --list-full); do
		[ -e "$root/$a" ] || ln -s /bin/busybox "$root/$a"
	done
	# The perf tool is the host's (x86_64 only: the arm64 guest has none, its tests skip).
	[ "$ARCH" != x86_64 ] || cp /usr/bin/perf "$root/usr/bin/perf"
	# So is strace (uprobe_fivebyte's strace test; x86_64 only, it skips elsewhere).
	[ "$ARCH" != x86_64 ] || cp /usr/bin/strace "$root/usr/bin/strace"
	cp -a "$STEST" "$root/kselftest/uprobes"
	cp -a "$SRC_STOCK/tools/testing/selftests/ftrace" "$root/kselftest/ftrace"
	cp "$TOP"/scripts/guest/* "$root/harness/"
	mv "$root/harness/init" "$root/init"
	chmod +x "$root/init" "$root"/harness/*
	echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"
	# (not the clients', which run in the clients' root with its libraries)
	elfs=$(find "$root/usr/bin" "$root/kselftest/uprobes" -type f ! -name 'uprobe_clients*' \
		-exec sh -c 'head -c4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
	# shellcheck disable=SC2086
	copy_libs "$root" $elfs
	[ "$ARCH" != x86_64 ] || [ -e "$root/lib/x86_64-linux-gnu/libgcc_s.so.1" ] || cp -L /lib/x86_64-linux-gnu/libgcc_s.so.1 "$root/lib/x86_64-linux-gnu/" 2>/dev/null || true
	(cd "$root" && find . -print0 | sort -z | cpio --null -o -H newc -R 0:0 --quiet) >"$IRD/base.cpio"
}

# Kernel console goes to console.log ($KCONSOLE); the guest command's output to $GUEST_OUT
# (stdio, mirrored to out.log). The guest prints @@EXIT=n@@ when the command ends.
boot() {
	local mode=$1 limit=${TIMEOUT:-} kernel=$OBJ/$KIMAGE extra=$IRD/extra mem accel
	[ -f "$kernel" ] || die "no kernel at $kernel"
	mkdir -p "$LOGS"
	rm -rf "$extra" && mkdir -p "$extra"
	if [ "$mode" = cmd ]; then
		printf '%s\n' "$CMD" >"$extra/cmd"
	fi
	if [ -n "${EXTRA:-}" ]; then
		[ -d "$EXTRA" ] || die "EXTRA=$EXTRA is not a directory"
		cp -a "$EXTRA" "$extra/extra"
	fi
	(cd "$extra" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) >"$IRD/extra.cpio"
	cat "$IRD/base.cpio" "$IRD/extra.cpio" >"$IRD/boot.cpio"
	if [ "$CONFIG" = fast ]; then mem=1024; else mem=2048; fi
	if [ -z "$limit" ]; then
		if [ "$mode" = shell ]; then limit=14400; elif [ "$CONFIG" = fast ]; then limit=1200; else limit=3600; fi
	fi
	accel=$(accel_args)
	# Debian's config patches kernel text with IPIs (static calls, jump labels) that
	# multi-threaded TCG can leave unanswered: one host thread for the vCPUs.
	[ "$CONFIG" != debian ] || accel="-accel tcg,thread=single -cpu max"
	# ICOUNT=1: one vCPU, guest clock = guest instructions (deterministic speed counts).
	local smp=2
	[ -z "${ICOUNT:-}" ] || { accel="-accel tcg -cpu max -icount shift=0,sleep=off"; smp=1; }
	: >"$LOGS/console.log"
	: >"$LOGS/out.log"
	local qemu=("$QEMU_SYS" $accel -m "$mem" -smp "$smp" -nodefaults -display none -no-reboot
		-kernel "$kernel" -initrd "$IRD/boot.cpio"
		-append "console=$KCONSOLE panic=-1 loglevel=7 rdinit=/init harness.mode=$mode harness.out=$GUEST_OUT harness.config=$CONFIG UPROBE_TEST_IMPL=$IMPL ${CLIENTS:+UT_CLIENTS=$CLIENTS} ${KAPPEND:-}"
		-serial "file:$LOGS/console.log"
		-chardev "stdio,id=out,signal=on,logfile=$LOGS/out.log")
	case $ARCH in
	# the virt board has one UART: the output goes to a virtio console (hvc0)
	arm64) qemu+=(-M virt -device virtio-serial-device -device "virtconsole,chardev=out") ;;
	*) qemu+=(-serial chardev:out) ;;
	esac
	# A kernel with 9p gets the clients' root, read-only (tag hostroot): the build machine's
	# own, or guest_root()'s for arm64; the guest's init mounts it on /host for the real
	# clients (scripts/guest/init).
	if has_9p; then
		local v9p=virtio-9p-pci root
		[ "$ARCH" != arm64 ] || v9p=virtio-9p-device
		root=$(guest_root) || exit 1
		qemu+=(-fsdev "local,id=hostroot,path=$root,security_model=none,readonly=on,multidevs=remap"
			-device "$v9p,fsdev=hostroot,mount_tag=hostroot")
	fi
	# shellcheck disable=SC2206
	[ -z "${QEMU_EXTRA:-}" ] || qemu+=($QEMU_EXTRA)
	local rc=0
	if [ "$mode" = shell ]; then
		timeout --foreground -k 10 "$limit" "${qemu[@]}" || rc=$?
		return 0
	fi
	: >"$LOGS/times.txt"
	timeout -k 10 "$limit" "${qemu[@]}" </dev/null | guest_times "$LOGS/times.txt" || rc=$?
	GUEST_RC=$(tr -d '\r' <"$LOGS/out.log" | sed -n 's/.*@@EXIT=\([0-9]*\)@@.*/\1/p' | tail -1)
	if [ -z "$GUEST_RC" ]; then
		if [ $rc = 124 ]; then
			say "guest timed out after ${limit}s (console: $LOGS/console.log)"
		else
			say "guest ended without an exit status (qemu rc=$rc); last console lines:"
			tail -25 "$LOGS/console.log" >&2
		fi
		GUEST_RC=125
	fi
}

# Copies the guest's output, writing each test's result line with the seconds since its
# RUN line to $1 (the host's clock: the guest's output is not changed).
guest_times() {
	local line t0=$SECONDS
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line"
		line=${line%$'\r'}
		case $line in
		"#  RUN "*) t0=$SECONDS ;;
		"ok "* | "not ok "*) printf '%5d %s\n' $((SECONDS - t0)) "$line" >>"$1" ;;
		esac
	done
}

# TCG unless a probe boot proves that KVM runs our guests on this machine.
accel_args() {
	if [ "${ACCEL:-}" = tcg ] || [ "$ARCH" != x86_64 ]; then
		echo "-accel tcg -cpu max"
		return
	fi
	local stamp=$B/kvm-probe.$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo x)
	if [ ! -f "$stamp" ]; then
		local ok=no
		if [ -w /dev/kvm ] && [ -f "$OBJ/arch/x86/boot/bzImage" ]; then
			local plog=$B/kvm-probe.log
			printf 'true\n' >"$IRD/probe.cmd"
			if timeout -k 5 20 qemu-system-x86_64 -accel kvm -m 256 -nodefaults -display none -no-reboot \
				-kernel "$OBJ/arch/x86/boot/bzImage" -initrd "$IRD/base.cpio" \
				-append "console=ttyS0 panic=-1 rdinit=/init harness.mode=probe" \
				-serial "file:$plog" </dev/null >/dev/null 2>&1 && grep -q '@@PROBE-OK@@' "$plog"; then
				ok=yes
			fi
		fi
		echo $ok >"$stamp"
		say "KVM usable: $ok"
	fi
	if [ "$(cat "$stamp")" = yes ]; then echo "-accel kvm -cpu host"; else echo "-accel tcg -cpu max"; fi
}

cmd_vm() {
	[ -n "${CMD:-}" ] || die "usage: make vm CMD='shell command' [EXTRA=dir]"
	info
	cmd_kernel
	cmd_initramfs
	boot cmd
	return "$GUEST_RC"
}

cmd_shell() {
	info
	cmd_kernel
	cmd_initramfs
	boot shell
}

# Kernel problems that fail a run whatever the tests said.
CONSOLE_BAD='BUG:|WARNING:|Oops|general protection fault|Kernel panic|KASAN|UBSAN|kernel BUG|possible recursive locking|possible circular locking|inconsistent lock state|suspicious RCU usage|possible deadlock|DEBUG_LOCKS_WARN_ON|turning off the locking correctness validator|INFO: task .* blocked|rcu: INFO: rcu_.* detected stalls|rcu_.* self-detected stall|rcu: .* kthread starved|Bad page|Bad rss-counter|list_add corruption|list_del corruption|refcount_t:'

console_problems() {
	grep -aE "$CONSOLE_BAD" "$LOGS/console.log" || true
}

# Summarise the TAP the guest printed: one line per test, then the closing counts.
summarise() {
	local res=$LOGS/results.txt
	tr -d '\r' <"$LOGS/out.log" | awk '
		/^@@SUITE / { suite = $2; planned = -1; seen = 0; ndiag = 0; next }
		/^@@SUITE-END / {
			rc = $3; sub("rc=", "", rc)
			secs = $4; sub("secs=", "", secs)
			if (secs != "") printf "TIME %s %s s\n", suite, secs
			if (planned >= 0 && seen < planned) {
				printf "FAIL %s: %d of %d planned tests did not report\n", suite, planned - seen, planned
				fail += planned - seen
			} else if (rc != 0 && suitefail == 0) {
				printf "FAIL %s: exited with status %s\n", suite, rc; fail++
			}
			suite = ""; suitefail = 0; next
		}
		suite == "" { next }
		/^1\.\.[0-9]+/ { planned = substr($1, 4) + 0; next }
		/^# +RUN / { run = $3 }
		/^#/ { if (ndiag < 40) diag[ndiag++] = $0; next }
		/^(not )?ok [0-9]+ / {
			line = $0; seen++
			name = line; sub(/^(not )?ok [0-9]+ /, "", name)
			skipped = (name ~ /# [Ss][Kk][Ii][Pp]/)
			reason = name; sub(/^[^#]*# [Ss][Kk][Ii][Pp] */, "", reason)
			sub(/ *# .*$/, "", name)
			sub(/^#.*$/, "", name)
			if (name == "") name = run
			if (line ~ /^not ok/ && !skipped) {
				printf "FAIL %s.%s\n", suite, name; fail++; suitefail++
				for (i = 0; i < ndiag; i++) printf "     %s\n", diag[i]
			}
			else if (skipped && reason ~ /CONFIG_/) {
				# the fragments set every option a test names: an
				# environment skip here means the test never ran
				printf "FAIL %s.%s: skipped: %s\n", suite, name, reason
				fail++; suitefail++
			}
			else if (skipped) { printf "SKIP %s.%s (%s)\n", suite, name, reason; skip++ }
			else { printf "PASS %s.%s\n", suite, name; pass++ }
			ndiag = 0
		}
		END { printf "@@COUNTS %d %d %d\n", pass, fail, skip }
	' >"$res"
	grep -v '^@@COUNTS' "$res" || true
	read -r _ PASSED FAILED SKIPPED < <(grep '^@@COUNTS' "$res")
}

# The x86 instruction code of ours against the build machine's CPU, in user space
# (wip/tests/x86-insn: unit tests and a differential fuzz of ls, bash and libc): one
# more test of make check on x86-64, with its output in $LOGS/x86-insn.log.
host_insn_check() {
	[ "$IMPL" = ours ] && [ "$ARCH" = x86_64 ] && [ "$(uname -m)" = x86_64 ] || return 0
	if make -s -C "$TOP/wip/tests/x86-insn" check O="$B/x86-insn-test" STOCK="$SRC_STOCK" \
		>"$LOGS/x86-insn.log" 2>&1; then
		PASSED=$((PASSED + 1))
		echo "PASS host.x86-insn.check"
	else
		FAILED=$((FAILED + 1))
		echo "FAIL host.x86-insn.check (see $LOGS/x86-insn.log)"
		grep -E '^MISMATCH|FAIL' "$LOGS/x86-insn.log" | awk 'NR <= 10' >&2
	fi
}

cmd_check() {
	info
	local t0=$SECONDS src
	src=$("$TOP/scripts/srchash.sh")
	cmd_kernel
	cmd_initramfs
	CMD=/harness/run-tests.sh
	boot cmd
	summarise
	if [ -s "$LOGS/times.txt" ]; then
		say "slowest tests (s; all in $LOGS/times.txt):"
		sort -rn "$LOGS/times.txt" | awk 'NR <= 12' >&2
	fi
	host_insn_check
	local problems
	problems=$(console_problems)
	if [ -n "$problems" ]; then
		say "kernel reported problems in $LOGS/console.log:"
		printf '%s\n' "$problems" | awk 'NR <= 20' >&2
		FAILED=$((FAILED + 1))
		echo "FAIL console: kernel BUG/WARNING/Oops/lockdep/KASAN report"
	fi
	if [ "$GUEST_RC" = 125 ] || [ "$GUEST_RC" = 124 ]; then
		FAILED=$((FAILED + 1))
		echo "FAIL guest: did not finish"
	fi
	say "IMPL=$IMPL CONFIG=$CONFIG ARCH=$ARCH done in $((SECONDS - t0)) s; logs in $LOGS"
	# What scripts/series.sh reports as tested: the counts and the sources they were run on.
	printf 'sources %s\nproject %s\nrun %s %s %s\ncounts %s %s %s\n' "$src" "$(project_commit)" \
		"$IMPL" "$CONFIG" "$ARCH" "$PASSED" "$FAILED" "$SKIPPED" >"$LOGS/stamp"
	if [ "$SKIPPED" -gt 0 ]; then
		echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	else
		echo "$PASSED passed, $FAILED failed"
	fi
	[ "$FAILED" = 0 ] && [ "$PASSED" -gt 0 ]
}

cmd_run() {
	info
	cmd_kernel
	cmd_initramfs
	CMD=/harness/demo.sh
	boot cmd
	local problems
	problems=$(console_problems)
	[ -z "$problems" ] || { say "kernel reported problems:"; printf '%s\n' "$problems" | awk 'NR <= 20' >&2; return 1; }
	return "$GUEST_RC"
}

# ---------------------------------------------------------------- lint
# checkpatch --strict and kernel-doc on every C file, header and assembly file we own.
cmd_lint() {
	extract_stock
	local f files=() bad=0 out
	# Not the shims of wip/tests/*/shim: they re-declare kernel interfaces for a user-space
	# build as the kernel spells them (typedefs, macros that take a goto label).
	while read -r f; do files+=("$f"); done < <(cd "$TOP" && git ls-files --cached --others --exclude-standard -- \
		'kernel/*.[ch]' 'include/*.h' 'arch/*.[chS]' 'wip/*.[ch]' 'tools/testing/selftests/uprobes/*.[chS]' \
		':!wip/tests/*/shim/*' | sort -u)
	[ ${#files[@]} -gt 0 ] || { say "lint: no C files yet"; return 0; }
	for f in "${files[@]}"; do
		[ -f "$TOP/$f" ] || continue
		out=$(cd "$SRC_STOCK" && perl scripts/checkpatch.pl --no-tree --strict --terse --show-types -q \
			-f "$TOP/$f" 2>&1 | grep -E ': (ERROR|WARNING|CHECK):' || true)
		out+=$(cd "$SRC_STOCK" && perl scripts/kernel-doc -none "$TOP/$f" 2>&1 || true)
		if [ -n "$out" ]; then
			printf '%s\n' "$out" | sed "s,$TOP/,,"
			bad=1
		fi
	done
	lint_docs || bad=1
	if [ $bad = 0 ]; then
		say "lint: ${#files[@]} files clean (checkpatch --strict, kernel-doc), and our documentation"
	else
		die "lint: problems above"
	fi
}

# Our Documentation/ pages through Sphinx, as make htmldocs builds them (their directories
# only): no warning may name one of our pages; and checkpatch --strict on them.
lint_docs() {
	local docs dirs out d bad=0
	docs=$(cd "$TOP" && git ls-files --cached --others --exclude-standard -- 'Documentation/*.rst')
	[ -n "$docs" ] || return 0
	dirs=$(xargs -n1 dirname <<<"$docs" | sed 's,^Documentation/,,' | sort -u | xargs)
	cmd_deps python3-sphinx python3-sphinx-rtd-theme
	sync_tree ours
	out=$(make -s -C "$SRC_OURS" O="$B/docs" SPHINXDIRS="$dirs" htmldocs 2>&1) || {
		printf '%s\n' "$out" | tail -20
		return 1
	}
	for d in $docs; do
		grep -F "/$d:" <<<"$out" | grep -E 'WARNING|ERROR' && bad=1
		(cd "$SRC_STOCK" && perl scripts/checkpatch.pl --no-tree --strict --terse -q -f "$TOP/$d" 2>&1 |
			grep -E ': (ERROR|WARNING|CHECK):') && bad=1
	done
	[ $bad = 0 ] || return 1
	say "lint: Sphinx builds our $(wc -w <<<"$docs") pages ($dirs) without a warning about them"
}

# ---------------------------------------------------------------- bench
# The static benchmark binary every kernel runs (make bench, make profile), into dir $1.
build_ubench() {
	local targets=ubench_targets.S
	[ "$ARCH" = x86_64 ] || targets=ubench_targets_$ARCH.S
	mkdir -p "$1"
	"${CROSS}gcc" -static -O2 -Wall -o "$1/ubench" "$TOP"/scripts/bench/ubench.c \
		"$TOP/scripts/bench/$targets" || die "building ubench failed"
}

# The exccount plugin's arguments for the kernel of $OBJ and the ubench of dir $1: the entries
# of the breakpoint trap, the single-step trap, the 64-bit system call and the page fault,
# and ub_mark(). On arm64 a BRK and a step both enter el0_dbg(), counted as bp: the step
# handler's count (db) is taken off it in exceptions_per_call().
exccount_args() {
	local map=$OBJ/System.map sym a args= syms
	case $ARCH in
	arm64) syms="bp:el0_dbg db:single_step_handler sys:el0_svc pf:el0_da" ;;
	*) syms="bp:asm_exc_int3 db:asm_exc_debug sys:entry_SYSCALL_64 pf:asm_exc_page_fault" ;;
	esac
	for sym in $syms; do
		a=$(awk -v s="${sym#*:}" '$3 == s { print $1; exit }' "$map")
		[ -n "$a" ] || die "no ${sym#*:} in $map"
		args+=",${sym%%:*}=0x$a"
	done
	a=$("${CROSS}nm" "$1/ubench" | awk '$3 == "ub_mark" { print $1 }')
	[ -n "$a" ] || die "no ub_mark in $1/ubench"
	echo "$args,mark=0x$a"
}

# Per row of rows file $1 ("key|label|value|loop|base"), from the plugin's marks file $2 (a
# line "int3 #DB sys #PF" of counts so far per ub_mark()) and the calls per loop $3:
# "key|int3/#DB/sys/#PF" per call, the base loop's subtracted (arm64: BRK/step/svc/abort).
exceptions_per_call() {
	awk -F'|' -v calls="$3" -v arm64="$([ "$ARCH" = arm64 ] && echo 1)" '
		NR == FNR { n = split($0, f, " "); for (i = 1; i <= 4; i++) m[FNR - 1, i] = f[i] + 0
			    if (arm64) m[FNR - 1, 1] -= m[FNR - 1, 2]
			    next }
		function d(loop, i) { return m[2 * loop + 1, i] - m[2 * loop, i] }
		function fmt(v) { v = sprintf("%.2f", v); sub(/\.?0+$/, "", v); return (v == "-0" || v == "") ? "0" : v }
		$4 >= 0 {
			s = ""
			for (i = 1; i <= 4; i++)
				s = s (i > 1 ? "/" : "") fmt((d($4, i) - ($5 >= 0 ? d($5, i) : 0)) / calls)
			print $1 "|" s
		}' "$2" "$1"
}

# Guest instructions per operation (scripts/bench/ubench.c), stock 6.1 beside ours: each kernel
# (fast config) boots with QEMU -icount shift=0,sleep=off, where the guest clock counts guest
# instructions, and runs the same static binary; the exccount plugin (scripts/bench/exccount.c)
# counts in the same run each row's kernel entries per call: int3 traps, #DB (single-steps),
# system calls and page faults. The table goes to stdout, $B/bench/table.md and BENCHMARKS.
cmd_bench() {
	local out=$B/bench$SUF impl t0=$SECONDS src calls record=$TOP/BENCHMARKS$SUF
	local entries="int3 traps / #DB (single-step traps) / system calls / page faults"
	[ "$ARCH" = x86_64 ] || entries="BRK traps / single-step traps / system calls (svc) / data aborts"
	src=$("$TOP/scripts/srchash.sh")
	build_ubench "$out/guest"
	gcc -shared -fPIC -O2 -Wall -o "$out/exccount.so" "$TOP"/scripts/bench/exccount.c ||
		die "building the exccount plugin failed"
	CONFIG=fast
	# BENCH_IMPLS=ours re-measures ours only, against the stock rows of the last run.
	for impl in ${BENCH_IMPLS:-stock ours}; do
		IMPL=$impl OBJ=$B/obj/$impl-fast$SUF LOGS=$B/logs/$impl-bench$SUF
		info
		cmd_kernel
		cmd_initramfs
		rm -f "$out/$impl.marks"
		EXTRA=$out/guest ICOUNT=1 CMD=./ubench \
			QEMU_EXTRA="-plugin $out/exccount.so,out=$out/$impl.marks$(exccount_args "$out/guest")" \
			boot cmd
		tr -d '\r' <"$LOGS/out.log" | sed -n 's/^@@BENCH \(.*\)$/\1/p' >"$out/$impl.rows"
		[ "$GUEST_RC" = 0 ] && tr -d '\r' <"$LOGS/out.log" | grep -q '^@@BENCH-END' ||
			die "ubench did not finish under $impl (log: $LOGS/out.log)"
		calls=$(tr -d '\r' <"$LOGS/out.log" | sed -n 's/^@@BENCH-CALLS \([0-9]*\)$/\1/p')
		[ -n "$calls" ] && [ -s "$out/$impl.marks" ] || die "no exception counts under $impl"
		exceptions_per_call "$out/$impl.rows" "$out/$impl.marks" "$calls" >"$out/$impl.exc"
		[ -z "$(console_problems)" ] || die "kernel reported problems under $impl: $LOGS/console.log"
		# Wall-clock rows: two vCPUs (multi-threaded TCG), no -icount.
		EXTRA=$out/guest CMD="./ubench scale" boot cmd
		tr -d '\r' <"$LOGS/out.log" | sed -n 's/^@@BENCH \(.*\)$/\1/p' >>"$out/$impl.rows"
		[ "$GUEST_RC" = 0 ] && tr -d '\r' <"$LOGS/out.log" | grep -q '^@@BENCH-END' ||
			die "ubench scale did not finish under $impl (log: $LOGS/out.log)"
		[ -z "$(console_problems)" ] || die "kernel reported problems under $impl: $LOGS/console.log"
	done
	local carried=
	case " ${BENCH_IMPLS:-stock ours} " in *" stock "*) ;; *)
		# Ours only on a clone with no stock run of its own: stock's rows are the last
		# BENCHMARKS's (the same base sources), matched by their operation.
		if [ ! -s "$out/stock.rows" ] && [ -f "$record" ]; then
			awk -F'|' -v rows="$out/stock.rows" -v exc="$out/stock.exc" '
				function trim(s) { gsub(/^ +| +$/, "", s); return s }
				FILENAME ~ /BENCHMARKS(-arm64)?$/ {
					if (NF == 8 && trim($3) ~ /^[0-9]+$/) {
						s[trim($2)] = trim($3); x[trim($2)] = trim($6)
					}
					next
				}
				($2 in s) { print $1 "|" $2 "|" s[$2] > rows
					    if (x[$2] != "-") print $1 "|" x[$2] > exc }' \
				"$record" "$out/ours.rows"
			carried=$(sed -n 's/^\([0-9-]*\), project .*/\1/p' "$record" | head -1)
		fi ;;
	esac
	{
		[ -z "$carried" ] ||
			echo "Stock rows: the make bench of $carried (BENCH_IMPLS=ours measured ours only)."
		echo "Guest instructions per operation ($ARCH, QEMU -icount shift=0, fast config, one vCPU);"
		echo "hit rows: probed call minus unprobed call, event enabled, tracing_on 0 unless recording."
		echo "2 vCPUs rows: wall time of two threads on two vCPUs (multi-threaded TCG, no -icount),"
		echo "each making as many calls as one thread alone, in % of that thread's time (100: no sharing)."
		echo
		echo "Kernel entries per call (same run, QEMU plugin exccount.c): $entries,"
		echo "probed call minus unprobed call."
		echo
		if [ "$ARCH" = arm64 ]; then
			echo "| operation | stock 6.1 | ours | ours/stock | stock BRK/step/svc/abort | ours BRK/step/svc/abort |"
		else
			echo "| operation | stock 6.1 | ours | ours/stock | stock int3/#DB/sys/#PF | ours int3/#DB/sys/#PF |"
		fi
		echo "|---|---:|---:|---:|:---:|:---:|"
		[ -f "$out/stock.rows" ] || : >"$out/stock.rows"
		[ -f "$out/stock.exc" ] || : >"$out/stock.exc"
		awk -F'|' 'FILENAME ~ /stock.rows$/ { stock[$1] = $3; next }
			FILENAME ~ /stock.exc$/ { sx[$1] = $2; next }
			FILENAME ~ /ours.exc$/ { ox[$1] = $2; next }
			{ s = stock[$1]; r = (s > 0) ? sprintf("%.2f", $3 / s) : "-"
			  printf "| %s | %s | %s | %s | %s | %s |\n", $2, (s == "" ? "-" : s), $3, r,
				($1 in sx) ? sx[$1] : "-", ($1 in ox) ? ox[$1] : "-" }' \
			"$out/stock.rows" "$out/stock.exc" "$out/ours.exc" "$out/ours.rows"
	} >"$out/table.md"
	printf 'sources %s\nproject %s\n' "$src" "$(project_commit)" >"$out/stamp"
	cat "$out/table.md"
	# The dated record in the repo: scripts/bench/BENCHMARKS[-arm64].in with this table.
	TABLE=$(cat "$out/table.md") DATE=$(date -u +%Y-%m-%d) COMMIT=$(project_commit) SOURCES=$src \
		perl -pe 's/\@(TABLE|DATE|COMMIT|SOURCES)\@/$ENV{$1}/g' \
		"$TOP/scripts/bench/BENCHMARKS$SUF.in" >"$record"
	say "bench done in $((SECONDS - t0)) s; table in $out/table.md and ${record#"$TOP"/}"
}

# ---------------------------------------------------------------- profile
# Where one operation's guest instructions go, per kernel function. PROF='TARGET [r]
# [NAME=FETCH...]' (a target of ubench spin, r for a return probe too, the probe's fetch
# arguments) boots the fast kernel twice under
# -icount with the insnprof plugin (scripts/bench/insnprof.c), running PROF_N (default
# 20000) and then twice as many probed calls with tracing off (PROF_REC=1: recording into
# the ring buffer): the difference of the two runs' counts over PROF_N is one call's cost,
# exact. FUNC=name adds that function's count per instruction. Works for IMPL=stock too.
# Output: stdout and $B/profile/IMPL.txt.
cmd_profile() {
	local out=$B/profile n=${PROF_N:-20000} k target words rest=
	[ "$ARCH" = x86_64 ] || die "make profile runs x86_64 guests only"
	read -r target words <<<"${PROF:-}"
	[ -n "$target" ] || die "usage: make profile PROF='TARGET [r] [NAME=FETCH...]' [PROF_N=n] [PROF_REC=1] [FUNC=name] [IMPL=stock]"
	# quoted for the guest's shell: fetch arguments have parentheses
	# shellcheck disable=SC2086
	[ -z "$words" ] || rest=$(printf ' %q' $words)
	case ${PROF_REC:-0} in 0 | 1) ;; *) die "PROF_REC is 0 (tracing off) or 1 (recording)" ;; esac
	build_ubench "$out/guest"
	gcc -shared -fPIC -O2 -Wall -o "$out/insnprof.so" "$TOP"/scripts/bench/insnprof.c ||
		die "building the insnprof plugin failed"
	CONFIG=fast OBJ=$B/obj/$IMPL-fast LOGS=$B/logs/$IMPL-profile
	info
	cmd_kernel
	cmd_initramfs
	for k in 1 2; do
		rm -f "$out/$IMPL.$k"
		EXTRA=$out/guest ICOUNT=1 QEMU_EXTRA="-plugin $out/insnprof.so,out=$out/$IMPL.$k" \
			CMD="echo ${PROF_REC:-0} > /sys/kernel/tracing/tracing_on && ./ubench spin $target $((k * n))$rest" \
			boot cmd
		[ "$GUEST_RC" = 0 ] && [ -s "$out/$IMPL.$k" ] ||
			die "ubench spin $target failed under $IMPL (log: $LOGS/out.log)"
	done
	# shellcheck disable=SC2086
	python3 "$TOP"/scripts/bench/insnprof.py "$OBJ/System.map" "$out/$IMPL.1" "$out/$IMPL.2" \
		"$n" ${FUNC:-} | tee "$out/$IMPL.txt"
}

# uprobe_torture alone (make torture [SECONDS=] [SEED=]): TORTURE_SECONDS long (300 unless
# given), with TORTURE_SEED or a seed of its own, which it prints; fails on a failed run, a
# guest that did not finish, or a kernel report on the console.
cmd_torture() {
	local secs=${TORTURE_SECONDS:-300} problems
	info
	cmd_kernel
	cmd_initramfs
	[ -x "$STEST/uprobe_torture" ] || die "no uprobe_torture for $ARCH (x86_64 only)"
	CMD="cd /kselftest/uprobes && UPROBE_TORTURE_SECONDS=$secs ${TORTURE_SEED:+UPROBE_TORTURE_SEED=$TORTURE_SEED }./uprobe_torture"
	TIMEOUT=${TIMEOUT:-$((secs + 900))} boot cmd
	tr -d '\r' <"$LOGS/out.log" | grep -E '^#.*torture|^(not )?ok' || true
	problems=$(console_problems)
	if [ -n "$problems" ]; then
		say "kernel reported problems in $LOGS/console.log:"
		printf '%s\n' "$problems" | awk 'NR <= 20' >&2
		return 1
	fi
	[ "$GUEST_RC" = 0 ] || die "uprobe_torture failed (rc $GUEST_RC; log: $LOGS/out.log)"
	say "torture: $secs s, passed; console clean"
}

main() {
	local c=${1:-}
	[ -n "$c" ] || die "usage: harness.sh deps|tree|kernel|selftests|initramfs|vm|shell|check|run|lint|bench|profile|torture|info|summary"
	case $c in
	deps) shift; cmd_deps "$@" ;;
	info) extract_stock; info ;;
	summary) summarise; echo "$PASSED passed, $FAILED failed, $SKIPPED skipped" ;;
	tree|kernel|selftests|initramfs|vm|shell|check|run|lint|bench|profile|torture)
		cmd_deps
		take_lock
		"cmd_$c"
		;;
	*) die "unknown command '$c'" ;;
	esac
}

main "$@"; exit $?
