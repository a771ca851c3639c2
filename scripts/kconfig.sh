# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Kernel configuration shared by scripts/harness.sh and scripts/crossbuild.sh (sourced):
# tinyconfig, then config fragments merged over it, then olddefconfig, then a check that the
# .config has every option a fragment asks for.

# kconfig_check CONFIG FRAGMENT...: every "CONFIG_X=v" line of a fragment is in the .config
# file CONFIG as asked, and no "# CONFIG_X is not set" of a fragment is set there. Prints
# each miss on stderr; returns 1 if there was one.
kconfig_check() {
	local config=$1 frag line sym bad=0
	shift
	for frag in "$@"; do
		while read -r line; do
			case $line in
			CONFIG_*=*)
				grep -qxF "$line" "$config" && continue
				sym=${line%%=*}
				printf 'requested %s (from %s), got: %s\n' "$line" "${frag#"${TOP:-}"/}" \
					"$(grep -E "^$sym=|^# $sym is not set" "$config" || echo absent)" >&2
				bad=1
				;;
			"# CONFIG_"*" is not set")
				sym=${line#\# }
				sym=${sym%% *}
				grep -q "^$sym=" "$config" || continue
				printf "requested '%s' (from %s), got: %s\n" "$line" "${frag#"${TOP:-}"/}" \
					"$(grep "^$sym=" "$config")" >&2
				bad=1
				;;
			esac
		done <"$frag"
	done
	return $bad
}

# kconfig_current OBJ FRAGMENT...: does OBJ hold the checked configuration of these fragments?
# (kconfig_configure keeps their hash in OBJ/.frag-hash once its check has passed.)
kconfig_current() {
	local obj=$1
	shift
	[ -f "$obj/.config" ] && [ "$(cat "$obj/.frag-hash" 2>/dev/null)" = "$(kconfig_hash "$@")" ]
}

# The hash of the fragments (and of KCONFIG_BASE, when set).
kconfig_hash() {
	cat ${KCONFIG_BASE:+"$KCONFIG_BASE"} "$@" | sha1sum | cut -c1-40
}

# kconfig_configure SRC OBJ KARCH CROSS_COMPILE FRAGMENT...: configure the tree SRC in OBJ
# for ARCH=KARCH from tinyconfig and the fragments, and check the result (kconfig_check),
# unless kconfig_current says it is done. Returns 1 on failure. With KCONFIG_BASE set (an
# xz-compressed distribution config), that config with its modules turned off (mod2noconfig)
# replaces tinyconfig; the hash kconfig_current compares then covers it too.
kconfig_configure() {
	local src=$1 obj=$2 karch=$3 cross=$4
	shift 4
	kconfig_current "$obj" "$@" && return 0
	rm -f "$obj/.frag-hash"
	mkdir -p "$obj"
	local mk=(make -C "$src" O="$obj" ARCH="$karch" CROSS_COMPILE="$cross"
		CC="ccache ${cross}gcc" HOSTCC="ccache gcc")
	if [ -n "${KCONFIG_BASE:-}" ]; then
		xzcat "$KCONFIG_BASE" >"$obj/.config" || return 1
		"${mk[@]}" -s olddefconfig >/dev/null || return 1
		"${mk[@]}" -s mod2noconfig >/dev/null || return 1
	else
		"${mk[@]}" -s tinyconfig >/dev/null || return 1
	fi
	(cd "$obj" && ARCH=$karch "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$@" \
		>"$obj/merge.log" 2>&1) || { cat "$obj/merge.log" >&2; return 1; }
	"${mk[@]}" -s olddefconfig >/dev/null || return 1
	kconfig_check "$obj/.config" "$@" || return 1
	kconfig_hash "$@" >"$obj/.frag-hash"
}
