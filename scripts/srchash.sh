#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernel sources of IMPL=ours as one hash: every overlay file under kernel/, include/ and
# arch/ and every diff under patches/, by path and content. The harness stamps test results
# and bench tables with it; scripts/series.sh uses only results whose stamp is current.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
find kernel include arch patches -type f ! -name '.*' -print0 | sort -z | xargs -0 sha256sum |
	sha256sum | cut -c1-16
