# SPDX-License-Identifier: GPL-2.0
# Front door of the uprobes patch series harness; the work is done by scripts/harness.sh.
#   make run | check | vm CMD='...' [EXTRA=dir] | shell | lint | kernel | deps | clean
#   IMPL=ours|stock (default ours), CONFIG=fast|debug (default fast)

IMPL ?= ours
CONFIG ?= fast
export IMPL CONFIG CMD EXTRA TIMEOUT

H := scripts/harness.sh

.PHONY: all run check vm shell lint kernel selftests initramfs tree deps info summary clean

all: check

run check vm shell lint kernel selftests initramfs tree deps info summary:
	@$(H) $@

clean:
	rm -rf build
