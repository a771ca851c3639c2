#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run the uprobes kselftests and the base tree's ftrace uprobe parser test in the guest.
# Each suite's TAP is framed by @@SUITE name / @@SUITE-END name rc=N for the host to parse.
cd /kselftest/uprobes || exit 1
echo "kernel: $(uname -r) $(cat /proc/version | cut -d' ' -f4-)"
fail=0
for t in $(cat .tests); do
	echo "@@SUITE $t"
	timeout ${SUITE_TIMEOUT:-600} ./"$t"
	rc=$?
	echo "@@SUITE-END $t rc=$rc"
	[ $rc = 0 ] || fail=1
done

# ftracetest prints [PASS]/[FAIL]/[UNSUPPORTED]; turn its result into TAP.
echo "@@SUITE ftrace"
echo "1..1"
cd /kselftest/ftrace
out=$(./ftracetest -l /tmp/ftracetest-logs test.d/kprobe/uprobe_syntax_errors.tc 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
if [ $rc = 0 ] && echo "$out" | grep -q '\[PASS\]'; then
	echo "ok 1 uprobe_syntax_errors.tc"
else
	echo "not ok 1 uprobe_syntax_errors.tc"
	fail=1
fi
echo "@@SUITE-END ftrace rc=$rc"
exit $fail
