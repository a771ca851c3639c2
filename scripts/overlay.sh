# SPDX-License-Identifier: GPL-2.0
# The overlay rule, shared by scripts/harness.sh (IMPL=ours) and scripts/series.sh (the
# series): sourced, with TOP set to the repo.

# Directories of the repo that mirror the kernel tree: each file there replaces or adds
# that path in the base tree.
OVERLAY_DIRS="kernel include arch Documentation tools"

# Base files the overlay removes (patches/removed: one path per line, # comments).
removed_paths() {
	[ -f "$TOP/patches/removed" ] || return 0
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$TOP/patches/removed" | grep . || true
}
