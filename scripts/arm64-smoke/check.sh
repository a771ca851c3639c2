#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run by scripts/arm64-smoke/run.sh in the harness's arm64 guest (cwd /extra): probes smoke's
# functions through tracefs, runs ./smoke 100, checks the trace; exits non-zero on a miss.
T=/sys/kernel/tracing
S=$(pwd)/smoke
. ./offsets
fail=0
check() { if [ "$2" = "$3" ]; then echo "PASS $1 ($2)"; else echo "FAIL $1: got $2, want $3"; fail=1; fi; }
echo "p:smoke/leaf $S:$LEAF x=%x0:s64" >> $T/uprobe_events || fail=1
echo "r:smoke/leafret $S:$LEAF rv=\$retval:s64" >> $T/uprobe_events || fail=1
echo "p:smoke/outer $S:$OUTER" >> $T/uprobe_events || fail=1
echo "p:smoke/call $S:$CALL" >> $T/uprobe_events || fail=1
echo "r:smoke/outerret $S:$OUTER rv=\$retval:s64" >> $T/uprobe_events || fail=1
echo 1 > $T/events/smoke/enable
$S 100 > /tmp/out
echo 0 > $T/events/smoke/enable
check "program output" "$(cat /tmp/out)" "sum 15150"
check "leaf hits" "$(grep -c 'leaf: ' $T/trace)" 100
check "leaf returns" "$(grep -c 'leafret: ' $T/trace)" 100
check "outer hits" "$(grep -c 'outer: ' $T/trace)" 100
check "outer returns" "$(grep -c 'outerret: ' $T/trace)" 100
check "bl hits (simulated)" "$(grep -c 'call: ' $T/trace)" 100
check "leaf arg 7" "$(grep -c 'leaf: .* x=7$' $T/trace)" 1
check "leaf retval of 7" "$(grep -c 'leafret: .* rv=22$' $T/trace)" 1
check "outer retval of 7" "$(grep -c 'outerret: .* rv=24$' $T/trace)" 1
cat $T/uprobe_profile
cat $T/uprobe_stats 2>/dev/null
grep -m3 . $T/trace | tail -2
echo > $T/uprobe_events
echo "@@SMOKE fail=$fail@@"
exit $fail
