# SPDX-License-Identifier: GPL-2.0
#
# objdump -d --no-show-raw-insn output of section uprobe_corpus to the
# list of its instruction boundaries: "VADDR FUNCTION OFFSET INSTRUCTION"
# (hex address, function, hex offset in it, disassembly).  Fails on an
# instruction objdump cannot decode and on an empty list.

function hex(s,    i, v) {
	v = 0
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}

/^[0-9a-f]+ <[^>]+>:$/ {
	fn = substr($2, 2, length($2) - 3)
	start = hex($1)
	next
}

/^ *[0-9a-f]+:\t/ {
	split($0, f, "\t")
	a = f[1]
	gsub(/[ :]/, "", a)
	# x86: "mnemonic operands"; arm64: mnemonic and operands a tab apart
	t = f[2]
	for (i = 3; i in f; i++)
		t = t " " f[i]
	# comments: x86 "# addr <sym>" (an arm64 immediate is "#0x..."), arm64 "//"
	sub(/ *(# |\/\/).*/, "", t)
	gsub(/ +/, " ", t)
	sub(/ $/, "", t)
	if (t ~ /\(bad\)/ || fn == "") {
		print "uprobe_corpus_insns.awk: cannot list " $0 > "/dev/stderr"
		bad = 1
		exit 1
	}
	printf "%s %s %x %s\n", a, fn, hex(a) - start, t
	n++
}

END {
	if (bad || !n)
		exit 1
}
