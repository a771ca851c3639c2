#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The patch series: a git history over the pristine base tree, one commit per entry of
# scripts/series/series, exported with git format-patch.
#
#   series.sh make    build/series/: 0000-cover-letter.patch and the numbered patches, the
#                     tree after the last one byte-identical to IMPL=ours, and every patch
#                     file clean under checkpatch --strict
#   series.sh check   the series applied with git am, one patch at a time, to a fresh git
#                     repo of the base tree, with the x86_64 fast config built after each
#                     (CHECK_ARCHS="arm64 i386" builds those after each patch too; by default
#                     they are built after the last one; SERIES_EACH="arm64 i386" builds only
#                     those after each patch, with SERIES_SUITES=0; a patch that changes
#                     nothing an architecture compiles is not built again for it,
#                     builds_for()); at each layer's boundary (a "boundary" line of the
#                     series file) the tree booted and the whole suite run on it (harness.sh
#                     check IMPL=series SERIES_TREE=...; SERIES_SUITES=0 skips that); the
#                     final tree byte-identical to IMPL=ours
#                     SERIES_FROM=N (SERIES_TO=M) resumes a check an earlier run of the same
#                     patches did not finish: patches before N are applied but not built
#                     (nor their boundaries run), building starts with patch N (and stops
#                     after patch M; the tree is then not compared with IMPL=ours)
#   series.sh am      README's commands, as a user types them: Debian's linux-source-6.1
#                     tarball extracted into a new git repo (build/series-am), the series
#                     applied with git am; the tree must be byte-identical to IMPL=ours
#                     (make check IMPL=series then builds and tests that tree)
#   series.sh deb     make bindeb-pkg in build/series-am (the fast config, or DEB_CONFIG=FILE
#                     as the starting .config), the kernel package checked: it holds the
#                     kernel image of the tree's version
#
# The cover letter is scripts/series/cover.in with @BASE@ (the base version), @BENCH@ (the
# last make bench table) and @TESTED@ (the last make check results), each only if it was
# measured on the kernel sources being exported (scripts/srchash.sh); else the cover letter
# says what is missing, and SERIES_STRICT=1 makes that an error.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/kconfig.sh
. "$TOP/scripts/kconfig.sh"
# shellcheck source=scripts/overlay.sh
. "$TOP/scripts/overlay.sh"
B=${BUILD:-$TOP/build}
JOBS=${JOBS:-$(nproc)}
SRC_STOCK=$B/src/stock
TARBALL=/usr/src/linux-source-6.1.tar.xz
AM=$B/series-am
SPEC=$TOP/scripts/series
OUT=$B/series
REPO=$B/series-git

say() { printf '[series] %s\n' "$*" >&2; }
die() { printf '[series] error: %s\n' "$*" >&2; exit 1; }

# The patch files of the series, without the cover letter.
patch_files() {
	local p
	for p in "$OUT"/[0-9][0-9][0-9][0-9]-*.patch; do
		case $p in */0000-cover-letter.patch) ;; *) echo "$p" ;; esac
	done
}

# The project's identity, and a fixed date (the project commit's), so that the same sources
# give the same series.
ident() { git -C "$TOP" log -1 --format='%an <%ae>'; }
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
export GIT_AUTHOR_DATE GIT_COMMITTER_DATE
set_ident() {
	GIT_AUTHOR_NAME=$(git -C "$TOP" log -1 --format=%an)
	GIT_AUTHOR_EMAIL=$(git -C "$TOP" log -1 --format=%ae)
	GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
	GIT_AUTHOR_DATE=$(git -C "$TOP" log -1 --format=%cI)
	GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
}

# The lines of the series file: continuation lines joined, comments dropped.
spec_lines() {
	sed -e 's/#.*//' "$SPEC/series" | awk '
		{ line = line $0 }
		/\\[[:space:]]*$/ { sub(/\\[[:space:]]*$/, " ", line); next }
		{ if (line ~ /[^[:space:]]/) print line; line = "" }'
}

# The entries of the series (its patches), one per line.
entries() {
	spec_lines | awk '$1 != "boundary"'
}

# The layers' boundaries: "N NAME", N being how many patches come before it.
boundaries() {
	spec_lines | awk '$1 == "boundary" { print n, $2; next } { n++ }'
}

# Overlay paths of ITEM (a file, or a directory: every file under it), one per line.
overlay_paths() {
	(cd "$TOP" && find "${1%/}" -type f ! -name '.*' ! -name '*.o' | sort)
}

# Every overlay file, every patch and every removal, as the series names them
# ("patches/NAME", "-PATH").
all_items() {
	local d
	for d in $OVERLAY_DIRS; do
		[ -d "$TOP/$d" ] && overlay_paths "$d"
	done
	(cd "$TOP" && ls patches/*.patch)
	removed_paths | sed 's/^/-/'
}

# Each file and patch in exactly one entry; every entry's files exist.
check_spec() {
	local used kind rest item
	used=$(entries | while read -r kind rest; do
		case $kind in
		patch) echo "patches/$rest" ;;
		commit)
			set -- $rest
			[ -f "$SPEC/$1.msg" ] || die "scripts/series/$1.msg missing"
			shift
			for item in "$@"; do
				case $item in
				patches/* | -*) echo "$item" ;;
				*) [ -e "$TOP/$item" ] || die "series names $item, which is not in the repo"
				   overlay_paths "$item" ;;
				esac
			done ;;
		*) die "series: unknown entry '$kind'" ;;
		esac
	done | sort)
	[ -z "$(uniq -d <<<"$used")" ] || die "series uses these twice: $(uniq -d <<<"$used" | xargs)"
	local missing
	missing=$(comm -23 <(all_items | sort) <(sort -u <<<"$used"))
	[ -z "$missing" ] || die "series leaves out: $(xargs <<<"$missing")"
	local extra
	extra=$(comm -13 <(all_items | sort) <(sort -u <<<"$used"))
	[ -z "$extra" ] || die "series names what does not exist: $(xargs <<<"$extra")"
}

# Paths a diff changes.
diff_paths() { sed -n 's,^+++ b/\([^[:space:]]*\).*,\1,p' "$1"; }

# The commit message in a patches/ file: everything before its first diff line.
patch_msg() {
	awk '/^(--- a\/|diff --git )/ { exit } { print }' "$1" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
}

apply_patch() {
	patch -s -p1 -N --no-backup-if-mismatch -F0 -d "$REPO" <"$1" >/dev/null ||
		die "${1#"$TOP"/} does not apply to the series tree without fuzz"
}

# Every file the series adds (git repo $1, since commit $2) is under an F: pattern of the
# UPROBES entry of its MAINTAINERS (scripts/series/checkpatch.ignore: FILE_PATH_CHANGES).
maintained() {
	local f pat pats ok bad=
	pats=$(awk '/^UPROBES$/ { on = 1; next } on && /^$/ { exit } on && /^F:/ { print $2 }' \
		"$1/MAINTAINERS")
	[ -n "$pats" ] || die "MAINTAINERS has no UPROBES entry"
	for f in $(git -C "$1" diff --name-only --diff-filter=A "$2" HEAD); do
		ok=
		for pat in $pats; do
			case $pat in
			*/) [[ $f == "$pat"* ]] && ok=1 ;;
			*) [[ $f == $pat ]] && ok=1 ;;
			esac
		done
		[ -n "$ok" ] || bad+=" $f"
	done
	[ -z "$bad" ] || die "files the series adds outside the UPROBES entry of MAINTAINERS:$bad"
}

# Is tree $1 byte-identical to IMPL=ours (git's and the harness's stamps left out)?
same_as_ours() {
	diff -r -q -x .git -x .copied -x .extracted "$1" "$B/src/ours" >/dev/null
}

# Commit the paths listed in file $2 (ignored ones too) with message file $1, signed off.
commit_entry() {
	local msg=$1
	printf '\nSigned-off-by: %s\n' "$(ident)" >>"$msg"
	xargs -a "$2" git -C "$REPO" add -A -f --
	git -C "$REPO" diff --cached --quiet && die "entry '$(head -1 "$msg")' changes nothing"
	git -C "$REPO" commit -q --no-verify -F "$msg"
}

# A git repo of the pristine base tree, committed once, as a user would make it
# (README: "Applying the series").
base_repo() {
	local dir=$1
	rm -rf "$dir"
	cp -a "$SRC_STOCK" "$dir"
	chmod -R u+w "$dir"
	# the harness's stamp, and the cache checkpatch_all() leaves in the base tree
	rm -f "$dir/.extracted" "$dir"/.checkpatch-camelcase.*
	git -C "$dir" init -q
	# -f: Debian's top-level .gitignore ignores everything at the top of the tree
	git -C "$dir" add -A -f .
	git -C "$dir" commit -q --no-verify -m "linux-source-6.1 $(base_version)"
}

base_version() { make -s -C "$SRC_STOCK" ARCH=x86 kernelversion 2>/dev/null; }

# The make check results the cover letter reports: those of ours run on these kernel sources,
# each with 6.1's on the same configuration and architecture if there is one; then those of
# IMPL=series (the tree git am made of Debian's source) on these sources.
tested() {
	local src=$1 f sf line config arch p fl sk
	for f in "$B"/logs/ours-*/stamp "$B"/logs/series-*/stamp; do
		[ -f "$f" ] && grep -qx "sources $src" "$f" || continue
		read -r _ _ config arch < <(grep '^run ' "$f")
		read -r _ p fl sk < <(grep '^counts ' "$f")
		line="- make check CONFIG=$config ARCH=$arch: $p passed, $fl failed, $sk skipped"
		case $f in */series-*)
			echo "- make check IMPL=series CONFIG=$config (built from Debian's source after"
			echo "  git am of the series): $p passed, $fl failed, $sk skipped"
			continue ;;
		esac
		sf=${f/\/ours-//stock-}
		if [ -f "$sf" ]; then
			read -r _ p fl sk < <(grep '^counts ' "$sf")
			line+=$'\n'"  (6.1: $p passed, $fl failed, $sk skipped)"
		fi
		echo "$line"
	done
}

cover_letter() {
	local cover=$1 src=$2 base=$3 bench tested_txt subject blurb
	if [ -f "$B/bench/stamp" ] && grep -qx "sources $src" "$B/bench/stamp"; then
		bench=$(cat "$B/bench/table.md")
	else
		[ "${SERIES_STRICT:-0}" = 0 ] || die "no make bench table measured on these sources"
		bench="(make bench has not been run on these sources)"
	fi
	tested_txt=$(tested "$src")
	if [ -z "$tested_txt" ]; then
		[ "${SERIES_STRICT:-0}" = 0 ] || die "no make check results on these sources"
		tested_txt="(make check has not been run on these sources)"
	fi
	subject=$(head -1 "$SPEC/cover.in")
	blurb=$(tail -n +3 "$SPEC/cover.in")
	blurb=${blurb//@BASE@/$base}
	blurb=${blurb//@BENCH@/$bench}
	blurb=${blurb//@TESTED@/$tested_txt}
	blurb=${blurb//@SOURCES@/$src}
	SUBJECT=$subject BLURB=$blurb perl -0pi -e \
		's/\*\*\* SUBJECT HERE \*\*\*/$ENV{SUBJECT}/; s/\*\*\* BLURB HERE \*\*\*/$ENV{BLURB}/' "$cover"
}

cmd_make() {
	local kind rest msg paths item src base n t0=$SECONDS
	"$TOP/scripts/harness.sh" tree >/dev/null
	check_spec
	set_ident
	src=$("$TOP/scripts/srchash.sh")
	base=$(base_version)
	say "base tree $base into a git repo ($REPO)"
	base_repo "$REPO"
	msg=$(mktemp) paths=$(mktemp)
	while read -r kind rest; do
		: >"$paths"
		case $kind in
		patch)
			patch_msg "$TOP/patches/$rest" >"$msg"
			apply_patch "$TOP/patches/$rest"
			diff_paths "$TOP/patches/$rest" >>"$paths" ;;
		commit)
			set -- $rest
			cat "$SPEC/$1.msg" >"$msg"
			shift
			for item in "$@"; do
				case $item in
				patches/*)
					apply_patch "$TOP/$item"
					diff_paths "$TOP/$item" >>"$paths" ;;
				-*)
					[ -f "$REPO/${item#-}" ] || die "series removes ${item#-}, not in the tree"
					rm "$REPO/${item#-}"
					echo "${item#-}" >>"$paths" ;;
				*) overlay_paths "$item" | while read -r f; do
					mkdir -p "$REPO/$(dirname "$f")"
					cp "$TOP/$f" "$REPO/$f"
					echo "$f" >>"$paths"
				   done ;;
				esac
			done ;;
		esac
		commit_entry "$msg" "$paths"
	done < <(entries)
	rm -f "$msg" "$paths"
	maintained "$REPO" "HEAD~$(entries | wc -l)"
	# The series must give exactly IMPL=ours.
	same_as_ours "$REPO" ||
		die "the series tree differs from IMPL=ours: diff -r -x .git $REPO $B/src/ours"
	rm -rf "$OUT"
	n=$(entries | wc -l)
	git -C "$REPO" format-patch -q --no-signature --cover-letter --base="HEAD~$n" \
		-o "$OUT" "HEAD~$n..HEAD"
	cover_letter "$OUT"/0000-cover-letter.patch "$src" "$base"
	say "$n patches and a cover letter in $OUT ($((SECONDS - t0)) s)"
	checkpatch_all
}

# checkpatch --strict on every patch file: no error, warning or check, but for the types
# scripts/series/checkpatch.ignore names (each with its reason there).
checkpatch_all() {
	local p out bad=0 ignore
	ignore=$(grep -v '^#' "$SPEC/checkpatch.ignore" | grep . | paste -sd, -)
	for p in $(patch_files); do
		out=$(cd "$SRC_STOCK" && perl scripts/checkpatch.pl --strict --terse --show-types -q \
			${ignore:+--ignore "$ignore"} "$p" 2>&1 |
			grep -E ': (ERROR|WARNING|CHECK):' || true)
		[ -z "$out" ] && continue
		printf '%s\n' "$out" | sed "s,^$OUT/,," >&2
		bad=1
	done
	[ $bad = 0 ] || die "checkpatch --strict complains about the patches above"
	say "checkpatch --strict: every patch clean${ignore:+ (ignoring $ignore: scripts/series/checkpatch.ignore)}"
}

# Build tree $1 for $2 (x86_64, arm64, i386) into $B/obj/series-$2: tinyconfig + the fast
# fragments (x86_64; the harness's), or the cross build's (the others).
build_tree() {
	local tree=$1 arch=$2 obj=$B/obj/series-$2 karch cross c=$TOP/scripts/configs frags=()
	case $arch in
	x86_64) karch=x86_64 cross=''
		frags=("$c/fast.config" "$c/arch-x86_64.config" "$TOP/tools/testing/selftests/uprobes/config") ;;
	arm64) karch=arm64 cross=aarch64-linux-gnu- frags=("$c/cross.config") ;;
	i386) karch=i386 cross='' frags=("$c/cross.config") ;;
	esac
	[ "$arch" = x86_64 ] || [ ! -f "$c/cross-$arch.config" ] || frags+=("$c/cross-$arch.config")
	kconfig_configure "$tree" "$obj" "$karch" "$cross" "${frags[@]}" || die "configuring $arch failed"
	make -s -C "$tree" O="$obj" ARCH="$karch" CROSS_COMPILE="$cross" CC="ccache ${cross}gcc" \
		HOSTCC="ccache gcc" -j"$JOBS" >"$obj/build.log" 2>&1 || {
		tail -30 "$obj/build.log" >&2
		return 1
	}
}

# Does patch file $1 change anything the $2 build (x86_64, arm64, i386) compiles? Not when
# it touches only Documentation/, tools/, MAINTAINERS and other architectures' arch/ trees:
# the tree that build sees is then the one of the patch before, built already.
builds_for() {
	local f mine
	case $2 in x86_64 | i386) mine=arch/x86/ ;; *) mine=arch/$2/ ;; esac
	while read -r f; do
		case $f in
		Documentation/* | tools/* | MAINTAINERS) ;;
		"$mine"*) return 0 ;;
		arch/*/*) ;;
		*) return 0 ;;
		esac
	done < <(sed -n 's,^diff --git a/\([^ ]*\) b/.*,\1,p' "$1")
	return 1
}

cmd_check() {
	local p n=0 tree=$B/series-check t0=$SECONDS arch built each
	local from=${SERIES_FROM:-1} to=${SERIES_TO:-0}
	# SERIES_EACH: the architectures built after each patch (x86_64 and CHECK_ARCHS)
	each=${SERIES_EACH:-x86_64 ${CHECK_ARCHS:-}}
	case " $each " in *" x86_64 "*) ;; *)
		[ "${SERIES_SUITES:-1}" = 0 ] || die "the boundary suites need x86_64 in SERIES_EACH" ;;
	esac
	[ -f "$OUT/0000-cover-letter.patch" ] || die "no series: run 'make series' first"
	ARCH=arm64 "$TOP/scripts/harness.sh" deps	# the arm64 cross compiler
	set_ident
	base_repo "$tree"
	# Objects of a tree further along (generated files kbuild does not remake when the
	# tree goes back) would break the first builds: start from none (ccache keeps them).
	rm -rf "$B"/obj/series-x86_64 "$B"/obj/series-arm64 "$B"/obj/series-i386
	local -A boundary=()
	local at name suites=()
	while read -r at name; do boundary[$at]=$name; done < <(boundaries)
	for p in $(patch_files); do
		n=$((n + 1))
		[ "$to" = 0 ] || [ "$n" -le "$to" ] || break
		git -C "$tree" am -q "$p" || die "git am ${p##*/} failed"
		if [ "$n" -lt "$from" ]; then
			say "${p##*/}: applies (not built: SERIES_FROM=$from)"
			continue
		fi
		built=()
		for arch in $each; do
			builds_for "$p" "$arch" || continue
			build_tree "$tree" "$arch" || die "${p##*/}: the $arch build fails"
			built+=("$arch")
		done
		say "${p##*/}: applies, builds (${built[*]:-nothing it changes is built}; $((SECONDS - t0)) s)"
		name=${boundary[$n]:-}
		[ -n "$name" ] && [ "${SERIES_SUITES:-1}" != 0 ] || continue
		say "boundary '$name' after patch $n: the whole suite on this tree"
		# The kernel build_tree() just made, with the harness's fast fragments. A
		# series-check usually runs beside other work (README): twice the fast guest's
		# time limit, so that a loaded machine is not a failure.
		IMPL=series SERIES_TREE=$tree SERIES_BOUNDARY=$name SERIES_OBJ=$B/obj/series-x86_64 \
			TIMEOUT=${TIMEOUT:-2400} "$TOP/scripts/harness.sh" check ||
			die "boundary '$name' (after ${p##*/}): the suite fails (logs: $B/logs/series-$name-fast)"
		suites+=("$name after patch $n: $(awk '$1 == "counts" { print $2 " passed, " $3 " failed, " $4 " skipped" }' \
			"$B/logs/series-$name-fast/stamp")")
	done
	if [ "$to" != 0 ]; then
		say "patches $from to $to: each applies with git am and builds ($((SECONDS - t0)) s)"
		return 0
	fi
	for arch in arm64 i386; do
		case " $each " in *" $arch "*) continue ;; esac
		build_tree "$tree" "$arch" || die "the $arch build after the last patch fails"
		say "$arch builds after the last patch"
	done
	same_as_ours "$tree" ||
		die "the tree after git am differs from IMPL=ours"
	for name in "${suites[@]}"; do say "boundary $name"; done
	say "$n patches: each applies with git am and builds${SERIES_FROM:+ from patch $from on}; the result is IMPL=ours ($((SECONDS - t0)) s)"
}

# README's "Applying the series", command for command, in a new directory.
cmd_am() {
	local t0=$SECONDS n
	[ -f "$OUT/0000-cover-letter.patch" ] || die "no series: run 'make series' first"
	[ -r "$TARBALL" ] || die "$TARBALL missing (apt-get install linux-source-6.1)"
	set_ident
	rm -rf "$AM" "$AM.tmp"
	mkdir -p "$AM.tmp"
	tar -xf "$TARBALL" -C "$AM.tmp"
	mv "$AM.tmp/linux-source-6.1" "$AM"
	rmdir "$AM.tmp"
	git -C "$AM" init -q
	git -C "$AM" add -f .
	git -C "$AM" commit -q --no-verify -m linux-source-6.1
	n=$(patch_files | wc -l)
	# git am applies no hunk with fuzz; --whitespace=error-all: none with a whitespace error
	patch_files | xargs git -C "$AM" am -q --whitespace=error-all ||
		die "git am of the series on $TARBALL failed (see git -C $AM am --show-current-patch)"
	[ "$(git -C "$AM" rev-list --count HEAD)" = $((n + 1)) ] || die "git am did not make $n commits"
	same_as_ours "$AM" ||
		die "the git am'd tree differs from IMPL=ours: diff -r -x .git $AM $B/src/ours"
	say "$n patches applied with git am to $TARBALL ($(base_version)) in $AM: byte-identical to IMPL=ours ($((SECONDS - t0)) s)"
}

# make bindeb-pkg in the git am'd tree, out of tree: in the objects of make check IMPL=series
# (the same fast config), or from DEB_CONFIG in a directory of its own. The linux-image
# package must hold the kernel image the build made, named for the tree's version.
cmd_deb() {
	local obj=$B/obj/series-fast c=$TOP/scripts/configs t0=$SECONDS ver deb
	[ -d "$AM/.git" ] || die "no $AM: run 'make series-am' first"
	"$TOP/scripts/harness.sh" deps dpkg-dev fakeroot rsync kmod bc cpio libssl-dev libelf-dev
	rm -rf "$B/obj"/linux-*.deb "$B/obj"/linux-*.buildinfo "$B/obj"/linux-*.changes
	if [ -n "${DEB_CONFIG:-}" ]; then
		obj=$B/obj/series-deb
		mkdir -p "$obj"
		cp "$DEB_CONFIG" "$obj/.config"
		make -s -C "$AM" O="$obj" ARCH=x86_64 olddefconfig >/dev/null
	else
		kconfig_configure "$AM" "$obj" x86_64 '' "$c/fast.config" "$c/arch-x86_64.config" \
			"$TOP/tools/testing/selftests/uprobes/config" || die "configuring failed"
	fi
	# ARCH explicitly: the project's Makefile exports it, empty unless given
	make -C "$AM" O="$obj" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" -j"$JOBS" bindeb-pkg \
		>"$obj/bindeb-pkg.log" 2>&1 || {
		tail -30 "$obj/bindeb-pkg.log" >&2
		die "make bindeb-pkg failed (log: $obj/bindeb-pkg.log)"
	}
	ver=$(make -s -C "$AM" O="$obj" ARCH=x86_64 kernelrelease)
	deb=$(ls "$B/obj"/linux-image-"$ver"_*.deb 2>/dev/null | grep -v -- -dbg_ | head -1 || true)
	[ -n "$deb" ] || die "make bindeb-pkg made no linux-image-$ver package in $B/obj"
	# the package's kernel image is the one this build made
	dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./boot/vmlinuz-$ver" >"$obj/vmlinuz.deb" ||
		die "${deb##*/} holds no /boot/vmlinuz-$ver"
	cmp -s "$obj/vmlinuz.deb" "$obj/arch/x86/boot/bzImage" ||
		die "/boot/vmlinuz-$ver in ${deb##*/} is not the bzImage of the build"
	rm -f "$obj/vmlinuz.deb"
	say "make bindeb-pkg: ${deb##*/} with /boot/vmlinuz-$ver ($((SECONDS - t0)) s)"
	ls "$B/obj"/linux-*.deb >&2
}

case ${1:-make} in
make) cmd_make ;;
check) cmd_check ;;
am) cmd_am ;;
deb) cmd_deb ;;
*) die "usage: series.sh make|check|am|deb" ;;
esac
