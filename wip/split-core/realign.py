#!/usr/bin/env python3
# realign.py FILE LINE...: re-indent each continuation LINE to the open paren above it
import sys
f = sys.argv[1]
lines = open(f).read().split('\n')
def col(s):
    c = 0
    for ch in s:
        c = (c // 8 + 1) * 8 if ch == '\t' else c + 1
    return c
for n in map(int, sys.argv[2:]):
    i = n - 1
    # find the unmatched '(' going up
    depth = 0
    target = None
    for j in range(i - 1, max(i - 10, -1), -1):
        s = lines[j]
        for k in range(len(s) - 1, -1, -1):
            if s[k] == ')':
                depth += 1
            elif s[k] == '(':
                if depth == 0:
                    target = col(s[:k]) + 1
                    break
                depth -= 1
        if target is not None:
            break
    if target is None:
        continue
    body = lines[i].lstrip()
    lines[i] = '\t' * (target // 8) + ' ' * (target % 8) + body
open(f, 'w').write('\n'.join(lines))
