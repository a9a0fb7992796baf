#!/usr/bin/env python3
"""lostupdate.py HISTORY.edn...: Elle's lost-update finding computed from the text
(doppel DESIGN: two :ok transactions whose first read of key x, made before their
first append to x, returned the same list, and which both append to x). For the
rc engine's histories (read committed by construction) cursor stability is valid
exactly when there is none."""
import re, sys
OP = re.compile(r'\[:(append|r) (\d+) (nil|\d+|\[[\d ]*\])\]')
for path in sys.argv[1:]:
    seen = {}
    found = []
    for line in open(path):
        if ':type :ok' not in line:
            continue
        idx = int(re.match(r'\{:index (\d+)', line).group(1))
        first = {}
        appended = set()
        for kind, k, v in OP.findall(line.split(':value ', 1)[1]):
            if kind == 'r' and k not in first and k not in appended:
                first[k] = v
            elif kind == 'append':
                appended.add(k)
        for k in appended:
            if k in first:
                key = (k, first[k])
                if key in seen:
                    found.append((k, seen[key], idx))
                else:
                    seen[key] = idx
    print(path, 'lost-update' if found else 'none', found[:2])
