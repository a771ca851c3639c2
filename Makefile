# SPDX-License-Identifier: GPL-2.0
# Front door of the uprobes patch series harness; the work is done by scripts/harness.sh.
#   make run | check | bench | profile PROF='TARGET [r] [NAME=FETCH...]' | vm CMD='...' [EXTRA=dir] | shell | lint |
#   torture [SECONDS=300] [SEED=n] |
#   kernel | deps | clean | crossbuild [TARGETS='arm64:link ...'] | series | series-check |
#   series-am | series-deb
#   IMPL=ours|stock|series (default ours; series: the tree series-am made),
#   CONFIG=fast|full|debug|debian (default fast), ICOUNT=1 (vm: one vCPU, guest clock counts
#   guest instructions), KAPPEND='more kernel command line' (uprobes.jump_sites=1),
#   CLIENTS=smoke (one client test of each tool and kind; default: all)

IMPL ?= ours
CONFIG ?= fast
export IMPL CONFIG ARCH EXTRA TIMEOUT ICOUNT BENCH_IMPLS QEMU_EXTRA KAPPEND CLIENTS PROF PROF_N PROF_REC FUNC \
	CHECK_ARCHS SERIES_STRICT DEB_CONFIG SERIES_EACH SERIES_SUITES SERIES_FROM SERIES_TO

H := scripts/harness.sh
# CMD reaches the guest verbatim: $(value) keeps make from expanding $(...) and $x in it.
shquote = '$(subst ','\'',$(1))'

.PHONY: all run check bench profile vm shell lint kernel selftests initramfs tree deps info summary clean crossbuild torture \
	series series-check series-am series-deb

all: check

run check bench profile shell lint kernel selftests initramfs tree deps info summary:
	@$(H) $@

vm:
	@CMD=$(call shquote,$(value CMD)) $(H) $@

# SECONDS and SEED of the torture run (not bash's SECONDS: the harness is bash)
torture:
	@TORTURE_SECONDS=$(SECONDS) TORTURE_SEED=$(SEED) $(H) $@

crossbuild:
	@scripts/harness.sh deps
	@IMPL=$(if $(filter command line environment,$(origin IMPL)),$(IMPL),both) \
		scripts/crossbuild.sh $(TARGETS)

# The patch series (build/series/) and its check: checkpatch, git am and a build per patch;
# git am on Debian's source as README says (build/series-am: make check IMPL=series tests
# it); a Debian kernel package made from that tree.
series:
	@scripts/harness.sh deps
	@scripts/series.sh make

series-check: series
	@scripts/series.sh check

series-am: series
	@scripts/series.sh am

series-deb: series-am
	@scripts/series.sh deb

clean:
	rm -rf build
