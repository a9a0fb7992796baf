#!/usr/bin/env python3
"""witness2attr: othergen's --witness schedule as the runs search's diagnostic wants it
(uncommitted/diagnose_test.go, built with -tags diagnose): PREFIX.order, the invoke
:index of each committed transaction in commit order, and PREFIX.attr, each installed
append's key, position in its key's list and invoke :index.

    python3 tools/othergen/witness2attr.py HISTORY.edn WITNESS PREFIX
"""
import json
import re
import sys


def main():
    history, witness, prefix = sys.argv[1:4]
    appends = {}  # invoke :index -> [(key, value)] in the transaction's order
    invoke = re.compile(r'\{:index (\d+),.*?:type :invoke,.*?:value \[(.*)\]\}')
    with open(history) as f:
        for line in f:
            m = invoke.match(line)
            if m:
                appends[int(m.group(1))] = re.findall(r'\[:append (\S+) (\S+)\]', m.group(2))
    length = {}
    with open(witness) as f, open(prefix + '.order', 'w') as order, open(prefix + '.attr', 'w') as attr:
        for line in f:
            step = json.loads(line)
            if not isinstance(step, list) or step[0] != 'commit':
                continue
            inv = step[1]
            order.write(f'{inv}\n')
            for key, _ in appends.get(inv, []):
                attr.write(f'{key} {length.get(key, 0)} {inv}\n')
                length[key] = length.get(key, 0) + 1


if __name__ == '__main__':
    main()
