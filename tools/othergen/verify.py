#!/usr/bin/env python3
"""verify.py HISTORY.edn WITNESS.jsonl

Re-checks an othergen history from its text against the engine's schedule
(written by othergen.py --witness), independently of how the generator built
the reads:

  all engines: every :ok transaction is committed exactly once, no :fail one is;
               replaying the schedule reproduces every :ok read exactly.
  ss:  the commit order is a serial order (each transaction's reads and appends
       at one point) that respects real time and process order (a transaction
       completed before another was invoked commits first; :info ones excluded,
       as they never complete).
  si:  reads come from the snapshot at the transaction's start (plus its own
       appends), no two committed transactions that overlap in [start, commit]
       append to one key (first committer wins).
  rc:  each read sees the committed lists at its own point (plus own appends);
       a transaction that read a key after appending to it commits its block
       right after what that read showed (so the version order the reads imply
       is the commit order).

Prints OK or the first violation.
"""
import json
import re
import sys

OP = re.compile(r'\[:(append|r) (\d+) (nil|\d+|\[[\d ]*\])\]')
EV = re.compile(r'\{:index (\d+), :time (\d+), :type :(\w+), :process (\d+), :f :txn, :value \[(.*)\]\}$')


def parse(path):
    evs = []
    with open(path) as f:
        for line in f:
            m = EV.match(line.strip())
            if not m:
                raise SystemExit('unparsed line: ' + line[:200])
            idx, _, typ, proc, val = m.groups()
            ops = []
            for kind, k, v in OP.findall(val):
                if kind == 'append':
                    ops.append(('a', int(k), int(v)))
                else:
                    ops.append(('r', int(k), None if v == 'nil' else [int(x) for x in v[1:-1].split()]))
            evs.append((int(idx), typ, int(proc), ops))
    return evs


def main():
    hist, wit = sys.argv[1:3]
    evs = parse(hist)
    open_by_proc = {}
    txn = {}   # invoke index -> dict(ops, outcome, done index)
    for idx, typ, proc, ops in evs:
        if typ == 'invoke':
            assert proc not in open_by_proc, 'process %d invoked twice' % proc
            open_by_proc[proc] = idx
            txn[idx] = {'ops': ops, 'proc': proc, 'inv': idx}
        else:
            i = open_by_proc.pop(proc)
            t = txn[i]
            t['outcome'] = typ
            t['done'] = idx
            t['res'] = ops
            assert [o[:2] for o in ops] == [o[:2] for o in t['ops']]
    with open(wit) as f:
        engine = json.loads(f.readline())['engine']
        sched = [json.loads(l) for l in f]
    committed = [e[1] for e in sched if e[0] == 'commit']
    cset = set(committed)
    assert len(cset) == len(committed), 'a transaction committed twice'
    for i, t in txn.items():
        if t['outcome'] == 'ok':
            assert i in cset, 'ok T%d not committed' % i
        if t['outcome'] == 'fail':
            assert i not in cset, 'fail T%d committed' % i
        if t['outcome'] == 'info':
            assert all(o[2] is None for o in t['res'] if o[0] == 'r')
    store = {}
    nreads = 0

    def check_read(t, j, want):
        nonlocal nreads
        if t['outcome'] != 'ok':
            return
        got = t['res'][j][2]
        assert got == want, 'T%d read %d of key %d: history %s, schedule %s' % (
            t['inv'], j, t['ops'][j][1], got, want)
        nreads += 1

    if engine == 'ss':
        pos = {i: p for p, i in enumerate(committed)}
        for i in committed:
            t = txn[i]
            for j, op in enumerate(t['ops']):
                lst = store.setdefault(op[1], [])
                if op[0] == 'a':
                    lst.append(op[2])
                else:
                    check_read(t, j, list(lst))
        # real time (and so process order): sweep the history
        best = -1
        byidx = {}
        for i, t in txn.items():
            byidx[t['inv']] = ('inv', i)
            if 'done' in t:
                byidx[t['done']] = ('done', i)
        for idx in sorted(byidx):
            kind, i = byidx[idx]
            t = txn[i]
            if i not in pos:
                continue
            if kind == 'inv':
                assert pos[i] > best, 'real time: T%d commits before a transaction completed before its invoke' % i
            elif t['outcome'] == 'ok':
                best = max(best, pos[i])
    elif engine == 'si':
        snap = {}
        start_at = {}
        last_commit_at = {}   # key -> schedule position of its last commit
        for p, e in enumerate(sched):
            i = e[1]
            if i not in cset:
                continue
            t = txn[i]
            if e[0] == 'start':
                snap[i] = {op[1]: list(store.get(op[1], [])) for op in t['ops']}
                start_at[i] = p
                continue
            s = snap.pop(i)
            own = {}
            for j, op in enumerate(t['ops']):
                k = op[1]
                if op[0] == 'a':
                    own.setdefault(k, []).append(op[2])
                    assert last_commit_at.get(k, -1) < start_at[i], 'SI: concurrent writers of key %d' % k
                else:
                    check_read(t, j, s[k] + own.get(k, []))
            for j, op in enumerate(t['ops']):
                if op[0] == 'a':
                    store.setdefault(op[1], []).append(op[2])
                    last_commit_at[op[1]] = p
    elif engine == 'rc':
        own = {}
        seen_after_own = {}   # txn -> {key: committed length a read after its own append showed}
        for e in sched:
            i = e[1]
            if i not in cset:
                continue
            t = txn[i]
            o = own.setdefault(i, {})
            if e[0] == 'op':
                j = e[2]
                op = t['ops'][j]
                k = op[1]
                if op[0] == 'a':
                    o.setdefault(k, []).append(op[2])
                else:
                    cur = list(store.get(k, []))
                    check_read(t, j, cur + o.get(k, []))
                    if k in o:
                        seen_after_own.setdefault(i, {})[k] = len(cur)
                continue
            for k, n in seen_after_own.pop(i, {}).items():
                assert len(store.get(k, [])) == n, 'RC: T%d block on key %d not after what it read' % (i, k)
            for j, op in enumerate(t['ops']):
                if op[0] == 'a':
                    store.setdefault(op[1], []).append(op[2])
            own.pop(i)
    print('OK %s: %d transactions, %d committed, %d :ok reads reproduced' % (engine, len(txn), len(cset), nreads))


if __name__ == '__main__':
    main()
