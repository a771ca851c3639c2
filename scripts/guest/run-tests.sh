#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run the uprobes kselftests and the base tree's ftrace uprobe parser test in the guest.
# Each suite's TAP is framed by @@SUITE name / @@SUITE-END name rc=N secs=S for the host to
# parse.
# uprobe_clients* suites run in the chroot of the build machine's root (scripts/guest/init),
# where the clients are; kernels of CONFIG=fast have neither BPF, 32-bit tasks nor that root,
# and leave them out.
cd /kselftest/uprobes || exit 1
echo "kernel: $(uname -r) $(cat /proc/version | cut -d' ' -f4-)"
config=fast
for arg in $(cat /proc/cmdline); do
	case $arg in harness.config=*) config=${arg#harness.config=} ;; esac
done
fail=0
for t in $(cat .tests); do
	run=./$t
	# a lockdep and KASAN kernel runs the suites several times slower
	limit=${SUITE_TIMEOUT:-600}
	[ "$config" = fast ] || limit=${SUITE_TIMEOUT:-1200}
	case $t in uprobe_clients*)
		# the clients start slowly under TCG (bcc compiles for minutes)
		limit=${SUITE_TIMEOUT:-1800}
		# CONFIG=fast has no host root: the gdb suite's raw ptrace tests
		# run without it (its gdb tests SKIP), the other clients not at all
		if [ "$config" != fast ]; then
			run="chroot /host /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin
				HOME=/tmp/home TERM=linux UPROBE_TEST_IMPL=${UPROBE_TEST_IMPL:-}
				UT_CLIENTS=${UT_CLIENTS:-} /tmp/kselftest/uprobes/$t"
		elif [ "$t" != uprobe_clients_gdb ]; then
			echo "# $t: not run (CONFIG=fast has no BPF, 32-bit tasks or host root)"
			continue
		fi
		;;
	esac
	echo "@@SUITE $t"
	start=$(date +%s)
	timeout "$limit" $run
	rc=$?
	echo "@@SUITE-END $t rc=$rc secs=$(($(date +%s) - start))"
	[ $rc = 0 ] || fail=1
done

# The base tree's ftracetest cases (paths under /kselftest/ftrace), one TAP line each. Only
# [PASS] is ok: FAIL, UNRESOLVED, UNTESTED, XFAIL and UNSUPPORTED (a feature the config
# fragments ask for is missing) are failures, shown with the end of the case's log.
FTRACE_TESTS=${FTRACE_TESTS:-test.d/kprobe/uprobe_syntax_errors.tc}
cd /kselftest/ftrace || exit 1
echo "@@SUITE ftrace"
set -- $FTRACE_TESTS
echo "1..$#"
n=0
rc=0
for tc in $FTRACE_TESTS; do
	n=$((n + 1))
	name=$(basename "$tc" .tc)
	logs=/tmp/ftracetest/$name
	mkdir -p "$logs"
	timeout ${SUITE_TIMEOUT:-600} ./ftracetest -k -l "$logs" "$tc" >"$logs.out" 2>&1
	trc=$?
	sed 's/^/# /' "$logs.out"
	res=$(sed -n 's/^\[[0-9]*\].*\[\([A-Z]*\)\]$/\1/p' "$logs.out" | sort -u | paste -sd" " -)
	if [ $trc = 0 ] && [ "$res" = PASS ]; then
		echo "ok $n $name"
	else
		for f in "$logs"/*-log.*; do
			[ -f "$f" ] || continue
			echo "# --- last 25 lines of ${f#"$logs"/}:"
			tail -n 25 "$f" | sed 's/^/# /'
		done
		echo "not ok $n $name # ${res:-no result}, ftracetest exit $trc"
		rc=1
		fail=1
	fi
done
echo "@@SUITE-END ftrace rc=$rc"
exit $fail
