#!/usr/bin/env python3
"""dropinfo: the control history for an :info question. Reads a history written by
othergen.py and its --witness, and writes the same history without the :info
transactions that never committed (their invoke and completion lines; :index
renumbered). What is left is valid exactly when the original is (by construction), so
a check that decides the control but not the original is stuck on the search, not on
the semantics: the never-committed :info transactions are decoys that fit the trace.

    python3 tools/othergen/dropinfo.py h.edn h.witness.jsonl h-committed.edn
"""
import json
import re
import sys


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    src, witness, dst = argv[1:]
    committed = set()
    with open(witness) as f:
        for line in f:
            e = json.loads(line)
            if isinstance(e, list) and e[0] == 'commit':
                committed.add(e[1])  # the invoke's line index
    lines = open(src).read().splitlines()
    pending, drop = {}, set()
    for i, line in enumerate(lines):
        p = int(re.search(r':process (\d+)', line).group(1))
        if ':type :invoke' in line:
            pending[p] = i
            continue
        inv = pending.pop(p)
        if ':type :info' in line and inv not in committed:
            drop.update((i, inv))
    kept = [l for i, l in enumerate(lines) if i not in drop]
    with open(dst, 'w') as out:
        for j, line in enumerate(kept):
            out.write(re.sub(r':index \d+', ':index %d' % j, line) + '\n')
    print('dropinfo: %d never-committed :info transactions dropped' % (len(drop) // 2), file=sys.stderr)


if __name__ == '__main__':
    main(sys.argv)
