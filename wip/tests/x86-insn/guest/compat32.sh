#!/bin/sh
# SPDX-License-Identifier: GPL-2.0+
#
# Probes hit by 32-bit code (compat mode) in a 64-bit process: compat32.c.
# In the guest, from the directory "make -C wip/tests/x86-insn guest" built:
#   make vm EXTRA=build/x86-insn-test/guest CMD='sh compat32.sh'
# Each part runs the program 10 times over under a time limit (a hit that
# is retried for ever is a failure, not a hang) and checks its result, the
# exact hit counts of uprobe_profile and the events in the trace buffer.
T=/sys/kernel/tracing
EXE=$(pwd)/compat32
N=10
. ./compat32.offsets
fail=0

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
hits() { awk -v e="$1" '$2 == e { print $3 }' $T/uprobe_profile; }
events() { grep -c " $1:" $T/trace; }
reset() {
	[ -e $T/events/c32/enable ] && echo 0 > $T/events/c32/enable
	echo > $T/uprobe_events
}
add() { echo "$1" >> $T/uprobe_events || bad "cannot add '$1'"; }
run() {
	echo > $T/trace
	echo 1 > $T/events/c32/enable || bad "cannot enable"
	out=$(timeout 30 ./compat32 $N $2 2>&1)
	rc=$?
	echo 0 > $T/events/c32/enable
	[ $rc = 0 ] && ok "$1: the program's result ($out)" || bad "$1: exit $rc ($out)"
}
expect() {
	h=$(hits "$2")
	[ "$h" = "$3" ] && ok "$1: $2 hit $3 times" || bad "$1: $2 hit '$h' times, not $3"
}

# 1. Emulated in 32-bit mode (decoded as 32-bit code: push %ebp pushes 4
#    bytes, call rel32 pushes a 4-byte return address, jecxz tests ecx).
reset
add "p:c32/push $EXE:$c32_func"
add "p:c32/mov $EXE:$c32_mov"
add "p:c32/call $EXE:$c32_call"
add "p:c32/jecxz $EXE:$c32_jecxz"
add "p:c32/nop $EXE:$c32_leaf2"
run emulated
for e in push mov call jecxz nop; do expect emulated $e $N; done

# 2. With the XOL area below 4 GiB (compat32 ... low, as in a compat
#    process): stepped instructions of 32-bit code (inc %eax is a REX
#    prefix in 64-bit mode, add imm, ret), and a return probe, whose 4-byte
#    return address is hijacked: every entry and every return traced.
reset
add "p:c32/inc $EXE:$c32_inc"
add "p:c32/add $EXE:$c32_add"
add "p:c32/ret $EXE:$c32_ret"
add "p:c32/leaf2 $EXE:$c32_leaf2"
add "r:c32/leaf2ret $EXE:$c32_leaf2"
run "low XOL" low
for e in inc add ret leaf2; do expect "low XOL" $e $N; done
n=$(events leaf2ret)
[ "$n" = $N ] && ok "low XOL: $N returns traced" || bad "low XOL: $n returns traced, not $N"

# 3. With the XOL area above 4 GiB (a 64-bit process running 32-bit code),
#    a return probe of 32-bit code cannot be hijacked: entries traced, no
#    returns, the program unharmed (an 8-byte or truncated hijack would
#    crash it).
reset
add "p:c32/leaf2 $EXE:$c32_leaf2"
add "r:c32/leaf2ret $EXE:$c32_leaf2"
run "high XOL, return"
n=$(events leaf2)
[ "$n" = $N ] && ok "high XOL: $N entries traced" || bad "high XOL: $n entries traced, not $N"
n=$(events leaf2ret)
[ "$n" = 0 ] && ok "high XOL: no return traced" || bad "high XOL: $n returns traced, not 0"

# 4. ...and a stepped instruction of 32-bit code gets no slot it can
#    reach: the first hit removes the probe from the process (the core's
#    "no XOL slot" path) and the original instruction runs.
reset
dmesg -c > /dev/null
add "p:c32/inc $EXE:$c32_inc"
run "high XOL, step"
expect "high XOL, step" inc 1
dmesg | grep -q "no XOL slot" && ok "high XOL, step: reported" ||
	bad "high XOL, step: no kernel notice"

reset
[ $fail = 0 ] && echo "compat32: all passed" || echo "compat32: FAILED"
exit $fail
