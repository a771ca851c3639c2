#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make run`: trace the SDT tick demo through tracefs uprobe_events (with a reference
# counter) and through perf probe + perf stat, and show what a tracing user wants to see.
T=/sys/kernel/tracing
D=/kselftest/uprobes
TICK=$D/tick
N=${TICK_N:-10}
USEC=${TICK_USEC:-20000}
status=0
# the register tick's markers carry their argument in (see tick.c)
case $(uname -m) in aarch64) REG=%x19 ;; *) REG=%bx ;; esac

bad() { echo "!! $*"; status=1; }

info=$($D/uprobe_sdt_info $TICK) || { echo "cannot read SDT notes of $TICK"; exit 1; }
loop1=$(echo "$info" | awk '$1 == "tick" && $2 == "loop1" { print $3 }')
loop2=$(echo "$info" | awk '$1 == "tick" && $2 == "loop2" { print $3 }')
sem=$(echo "$info" | awk '$1 == "tick" && $2 == "loop2" { print $4 }')
echo "== $TICK: SDT markers (provider name pc-file-offset semaphore-file-offset)"
echo "$info"

echo
echo "== tracefs: uprobe_events, loop2 with its reference counter"
echo 0 >$T/tracing_on
echo >$T/trace
echo "p:sdt_tick/loop1 $TICK:$loop1 i=$REG:s32" >>$T/uprobe_events || bad "cannot add loop1"
echo "p:sdt_tick/loop2 $TICK:$loop2($sem) i=$REG:s32" >>$T/uprobe_events || bad "cannot add loop2"
sed 's/^/   /' $T/uprobe_events
echo 1 >$T/events/sdt_tick/enable
echo 1 >$T/tracing_on
echo "-- $TICK $N (traced)"
$TICK "$N" "$USEC" | tee /tmp/tick.out | sed 's/^/   /'
echo 0 >$T/tracing_on
echo 0 >$T/events/sdt_tick/enable
echo "-- trace"
grep -E ' loop[12]: ' $T/trace | sed 's/^ */   /' | head -$((2 * N + 4))
c1=$(grep -c ' loop1: ' $T/trace)
c2=$(grep -c ' loop2: ' $T/trace)
expect=$(i=0; while [ $i -lt "$N" ]; do printf 'i=%d ' $i; i=$((i + 1)); done)
got=$(grep ' loop2: ' $T/trace | sed 's/.* i=\([-0-9]*\).*/i=\1/' | tr '\n' ' ')
s_on=$(sed -n 's/.*loop2 semaphore=\([0-9]*\).*/\1/p' /tmp/tick.out | tail -1)
echo "-- uprobe_profile"
sed 's/^/   /' $T/uprobe_profile
echo "-- $TICK 2 (no longer traced)"
$TICK 2 0 | tee /tmp/tick.out | sed 's/^/   /'
s_off=$(sed -n 's/.*loop2 semaphore=\([0-9]*\).*/\1/p' /tmp/tick.out | tail -1)
echo '-:sdt_tick/loop1' >>$T/uprobe_events
echo '-:sdt_tick/loop2' >>$T/uprobe_events
echo "tracefs: loop1 traced $c1/$N, loop2 traced $c2/$N; loop2 semaphore while traced: $s_on, after: $s_off"
[ "$c1" = "$N" ] || bad "loop1 traced $c1 times, expected $N"
[ "$c2" = "$N" ] || bad "loop2 traced $c2 times, expected $N"
[ "$got" = "$expect" ] || bad "loop2 arguments: got '$got', expected '$expect'"
[ "$s_on" = 1 ] || bad "semaphore while traced is '$s_on', expected 1"
[ "$s_off" = 0 ] || bad "semaphore after tracing is '$s_off', expected 0"

echo
echo "== perf probe -x tick sdt_tick:loop2 + perf stat"
export HOME=/root
if [ -x /usr/bin/perf ]; then
	perf buildid-cache --add $TICK 2>&1 | sed 's/^/   /'
	perf probe -x $TICK sdt_tick:loop2 2>&1 | sed 's/^/   /'
	echo "-- perf stat -e sdt_tick:loop2 -- $TICK $N"
	perf stat -x, -o /tmp/perf.stat -e sdt_tick:loop2 -- $TICK "$N" "$USEC" | tee /tmp/tick.out | sed 's/^/   /'
	sed 's/^/   /' /tmp/perf.stat
	pc=$(awk -F, '$3 == "sdt_tick:loop2" { print $1 }' /tmp/perf.stat)
	ps_on=$(sed -n 's/.*loop2 semaphore=\([0-9]*\).*/\1/p' /tmp/tick.out | tail -1)
	perf probe -d 'sdt_tick:*' 2>&1 | sed 's/^/   /'
	$TICK 1 0 >/tmp/tick.out
	ps_off=$(sed -n 's/.*loop2 semaphore=\([0-9]*\).*/\1/p' /tmp/tick.out | tail -1)
	echo "perf: sdt_tick:loop2 counted $pc/$N; semaphore while counted: $ps_on, after: $ps_off"
	[ "$pc" = "$N" ] || bad "perf stat counted '$pc', expected $N"
	[ "$ps_on" = 1 ] || bad "semaphore under perf is '$ps_on', expected 1"
	[ "$ps_off" = 0 ] || bad "semaphore after perf is '$ps_off', expected 0"
elif [ "$(uname -m)" = x86_64 ]; then
	bad "/usr/bin/perf missing"
else
	echo "   (no perf tool in this guest: the harness ships the build machine's, x86_64 only)"
fi

echo
if [ $status = 0 ]; then echo "demo: OK"; else echo "demo: FAILED"; fi
exit $status
