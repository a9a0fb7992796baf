#!/usr/bin/env python3
"""othergen: an independent generator of Jepsen list-append histories (EDN),
duplicate-heavy, from three simulated stores whose consistency is known by
construction.  Written from the Jepsen/Elle history format only; it shares no
code with doppel's generator.

Engines
  ss  strict serializable: every committed transaction runs atomically at one
      instant strictly inside its invoke..complete window (an :info one at an
      instant after its invoke, possibly after the client gave up).
  si  snapshot isolation (MVCC): reads from the snapshot taken at a start
      instant, appends installed at a later commit instant, first committer
      wins on write-write conflicts (the loser is recorded as :fail). With
      --stale, some snapshots are taken before the invoke (a lagging replica):
      snapshot isolated, but neither strong nor strong-session.
  rc  read committed: every read sees the latest committed list at the read's
      own instant (plus the transaction's own appends); appends take a
      per-key write lock held until commit (no-wait: a conflicting writer
      aborts, :fail), and become visible at commit.

Every list in the store only grows at its end, so each read the history shows
is a prefix of the key's final list (plus nothing else: an own append always
lands right after the prefix the transaction saw, which the engines assert).
Reads are kept as (key, length) and written out from the final lists.

Clients: --threads concurrent threads, each running transactions one after
another; a thread whose transaction ends :info takes a fresh process number
(process + threads), as Jepsen does.
"""
import argparse
import bisect
import heapq
import random
import sys


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--engine', choices=['ss', 'si', 'rc'], default='ss')
    p.add_argument('--txns', type=int, default=1000)
    p.add_argument('--threads', type=int, default=10)
    p.add_argument('--keys', type=int, default=10, help='active keys')
    p.add_argument('--max-writes-per-key', type=int, default=0,
                   help='retire a key for a fresh one after this many appends are '
                        'generated on it (Jepsen style); 0: never')
    p.add_argument('--vals', type=int, default=2, help='appended values are 1..VALS')
    p.add_argument('--key-dist', choices=['uniform', 'zipf'], default='uniform')
    p.add_argument('--zipf-s', type=float, default=1.0)
    p.add_argument('--reads', type=float, default=0.5, help='fraction of ops that are reads')
    p.add_argument('--min-ops', type=int, default=1)
    p.add_argument('--max-ops', type=int, default=4)
    p.add_argument('--info', type=float, default=0.0, help='fraction of client timeouts (:info)')
    p.add_argument('--info-commit', type=float, default=0.5,
                   help='probability that an :info transaction commits')
    p.add_argument('--info-late', type=float, default=0.5,
                   help='probability that a committing :info transaction commits after '
                        'its :info completion (the client gave up first)')
    p.add_argument('--stale', type=float, default=0.0,
                   help='si: fraction of transactions whose snapshot is stale: taken up to '
                        '--stale-by ms before the invoke (snapshot isolated, not strongly)')
    p.add_argument('--stale-by', type=float, default=30.0,
                   help='si: how far back a stale snapshot may be taken (ms)')
    p.add_argument('--fail', type=float, default=0.0, help='fraction of voluntary aborts (:fail)')
    p.add_argument('--latency', type=float, default=10.0, help='mean transaction latency (ms)')
    p.add_argument('--gap', type=float, default=1.0, help='mean think time between transactions (ms)')
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--out', default='-')
    p.add_argument('--witness', default='',
                   help='also write the engine\'s schedule (JSON lines, by invoke :index) for verify.py')
    return p.parse_args(argv)


class Txn:
    __slots__ = ('id', 'thread', 'process', 't0', 't1', 'ops', 'outcome',
                 'want_commit', 'committed', 'reads', 'start', 'commit', 'optimes')

    def __init__(self, i, thread, t0, t1, ops):
        self.id = i
        self.thread = thread
        self.t0 = t0
        self.t1 = t1
        self.ops = ops          # list of ('a', k, v) / ('r', k)
        self.outcome = 'ok'     # ok | fail | info
        self.want_commit = True
        self.committed = False
        self.reads = {}         # op index -> length of the key's final list it shows
        self.process = None


def make_key_chooser(a, rnd):
    pool = list(range(a.keys))
    next_key = [a.keys]
    writes = [0] * a.keys
    if a.key_dist == 'zipf':
        w = [1.0 / (i + 1) ** a.zipf_s for i in range(a.keys)]
        cum = []
        s = 0.0
        for x in w:
            s += x
            cum.append(s)

        def slot():
            return min(bisect.bisect_left(cum, rnd.random() * s), a.keys - 1)
    else:
        def slot():
            return rnd.randrange(a.keys)

    def choose(is_append):
        i = slot()
        k = pool[i]
        if is_append and a.max_writes_per_key > 0:
            writes[i] += 1
            if writes[i] >= a.max_writes_per_key:
                pool[i] = next_key[0]
                next_key[0] += 1
                writes[i] = 0
        return k
    return choose


def generate_workload(a, rnd):
    choose = make_key_chooser(a, rnd)
    # threads' next invoke times
    heap = [(rnd.random() * a.gap, th) for th in range(a.threads)]
    heapq.heapify(heap)
    txns = []
    for i in range(a.txns):
        t0, th = heapq.heappop(heap)
        n = rnd.randint(a.min_ops, a.max_ops)
        ops = []
        for _ in range(n):
            if rnd.random() < a.reads:
                ops.append(('r', choose(False)))
            else:
                ops.append(('a', choose(True), rnd.randint(1, a.vals)))
        lat = 0.05 + rnd.expovariate(1.0 / a.latency)
        t1 = t0 + lat
        t = Txn(i, th, t0, t1, ops)
        u = rnd.random()
        if u < a.info:
            t.outcome = 'info'
            t.want_commit = rnd.random() < a.info_commit
        elif u < a.info + a.fail:
            t.outcome = 'fail'
            t.want_commit = False
        txns.append(t)
        heapq.heappush(heap, (t1 + 0.01 + rnd.expovariate(1.0 / a.gap), th))
    return txns


def commit_instant(a, rnd, t, lo):
    """An instant after lo inside t's window; for an :info transaction possibly
    after its completion."""
    if t.outcome == 'info' and rnd.random() < a.info_late:
        return t.t1 + rnd.random() * 3 * a.latency
    return lo + (t.t1 - lo) * (0.001 + 0.998 * rnd.random())


SCHED = []  # the engine's schedule, by transaction id


def run_ss(a, rnd, txns):
    events = []
    for t in txns:
        if t.want_commit:
            t.commit = commit_instant(a, rnd, t, t.t0)
            events.append((t.commit, t.id))
    events.sort()
    store = {}
    for _, i in events:
        t = txns[i]
        SCHED.append(('commit', i))
        for j, op in enumerate(t.ops):
            lst = store.setdefault(op[1], [])
            if op[0] == 'a':
                lst.append(op[2])
            else:
                t.reads[j] = len(lst)
        t.committed = True
    return store


def run_si(a, rnd, txns):
    events = []  # (time, kind, id): kind 0 start, 1 commit
    for t in txns:
        # every transaction runs (an aborting one too, it just never installs)
        t.start = t.t0 + (t.t1 - t.t0) * (0.001 + 0.5 * rnd.random())
        t.commit = commit_instant(a, rnd, t, t.start)
        if a.stale > 0 and rnd.random() < a.stale:
            # a stale snapshot: taken before the invoke (commit stays in the window)
            t.start = t.t0 - a.stale_by * rnd.random()
        events.append((t.start, 0, t.id))
        events.append((t.commit, 1, t.id))
    events.sort()
    store = {}
    last_commit = {}   # key -> instant of the last committed append
    snap = {}
    for when, kind, i in events:
        t = txns[i]
        if kind == 0:
            snap[i] = {op[1]: len(store.get(op[1], ())) for op in t.ops}
            SCHED.append(('start', i))
            continue
        s = snap.pop(i)
        if not t.want_commit:
            continue
        wkeys = {op[1] for op in t.ops if op[0] == 'a'}
        if any(last_commit.get(k, -1.0) > t.start for k in wkeys):
            # first committer wins: abort
            if t.outcome == 'ok':
                t.outcome = 'fail'
            continue
        own = {}
        for j, op in enumerate(t.ops):
            k = op[1]
            if op[0] == 'r':
                t.reads[j] = s[k] + own.get(k, 0)
            else:
                own[k] = own.get(k, 0) + 1
        for k in wkeys:
            lst = store.setdefault(k, [])
            assert len(lst) == s[k], 'SI: own block not right after the snapshot'
        for op in t.ops:
            if op[0] == 'a':
                store[op[1]].append(op[2])
        for k in wkeys:
            last_commit[k] = when
        SCHED.append(('commit', i))
        t.committed = True
    return store


def run_rc(a, rnd, txns):
    events = []  # (time, seq, id, op index or -1 for commit)
    for t in txns:
        n = len(t.ops)
        end = t.t1 if not (t.outcome == 'info' and t.want_commit) else t.t1
        pts = sorted(t.t0 + (t.t1 - t.t0) * (0.001 + 0.998 * rnd.random()) for _ in range(n + 1))
        t.optimes = pts[:n]
        if t.outcome == 'info' and t.want_commit and rnd.random() < a.info_late:
            t.commit = t.t1 + rnd.random() * 3 * a.latency
        else:
            t.commit = pts[n]
        for j in range(n):
            events.append((t.optimes[j], j, t.id))
        events.append((t.commit, n, t.id))
    events.sort()
    store = {}
    lock = {}          # key -> txn id holding the write lock
    state = {}         # txn id -> {'own': {k: count}, 'base': {k: len at first append}, 'dead': bool}
    for when, j, i in events:
        t = txns[i]
        st = state.get(i)
        if st is None:
            st = state[i] = {'own': {}, 'base': {}, 'dead': False, 'reads': {}}
        if st['dead']:
            continue
        if j < len(t.ops):
            op = t.ops[j]
            k = op[1]
            SCHED.append(('op', i, j))
            if op[0] == 'r':
                st['reads'][j] = len(store.get(k, ())) + st['own'].get(k, 0)
            else:
                h = lock.get(k)
                if h is not None and h != i:
                    # no-wait write lock: abort
                    st['dead'] = True
                    for kk in st['base']:
                        del lock[kk]
                    if t.outcome == 'ok':
                        t.outcome = 'fail'
                    continue
                if h is None:
                    lock[k] = i
                    st['base'][k] = len(store.get(k, ()))
                st['own'][k] = st['own'].get(k, 0) + 1
            continue
        # commit (or voluntary abort)
        for kk in st['base']:
            del lock[kk]
        if not t.want_commit:
            st['dead'] = True
            continue
        for k, b in st['base'].items():
            lst = store.setdefault(k, [])
            assert len(lst) == b, 'RC: a locked key changed'
        for op in t.ops:
            if op[0] == 'a':
                store[op[1]].append(op[2])
        t.reads = st['reads']
        t.committed = True
        SCHED.append(('commit', i))
        del state[i]
    return store


def edn_ops(t, store, complete):
    parts = []
    for j, op in enumerate(t.ops):
        if op[0] == 'a':
            parts.append('[:append %d %d]' % (op[1], op[2]))
        elif complete:
            n = t.reads[j]
            parts.append('[:r %d [%s]]' % (op[1], ' '.join(map(str, store.get(op[1], [])[:n]))))
        else:
            parts.append('[:r %d nil]' % op[1])
    return '[' + ' '.join(parts) + ']'


def main(argv=None):
    a = parse_args(argv)
    rnd = random.Random(a.seed)
    txns = generate_workload(a, rnd)
    store = {'ss': run_ss, 'si': run_si, 'rc': run_rc}[a.engine](a, rnd, txns)
    # a requested commit of an ok transaction that the engine refused became :fail;
    # every :ok transaction committed; :fail ones never did.
    for t in txns:
        if t.outcome == 'ok':
            assert t.committed
        if t.outcome == 'fail':
            assert not t.committed
    # processes: a thread gets a fresh process after an :info
    proc = list(range(a.threads))
    for t in sorted(txns, key=lambda t: t.t0):
        t.process = proc[t.thread]
        if t.outcome == 'info':
            proc[t.thread] += a.threads
    events = []
    for t in txns:
        events.append((t.t0, 0, t.id))
        events.append((t.t1, 1, t.id))
    events.sort()
    out = sys.stdout if a.out == '-' else open(a.out, 'w')
    w = out.write
    last_ns = -1
    for idx, (when, kind, i) in enumerate(events):
        t = txns[i]
        ns = int(when * 1e6)
        if ns <= last_ns:
            ns = last_ns + 1
        last_ns = ns
        if kind == 0:
            typ, val = 'invoke', edn_ops(t, store, False)
        else:
            typ = t.outcome
            val = edn_ops(t, store, t.outcome == 'ok')
        w('{:index %d, :time %d, :type :%s, :process %d, :f :txn, :value %s}\n'
          % (idx, ns, typ, t.process, val))
    if out is not sys.stdout:
        out.close()
    if a.witness:
        import json
        inv = {}
        for idx, (when, kind, i) in enumerate(events):
            if kind == 0:
                inv[i] = idx
        with open(a.witness, 'w') as f:
            f.write(json.dumps({'engine': a.engine}) + '\n')
            for e in SCHED:
                f.write(json.dumps([e[0], inv[e[1]]] + list(e[2:])) + '\n')
    n_ok = sum(t.outcome == 'ok' for t in txns)
    n_fail = sum(t.outcome == 'fail' for t in txns)
    n_info = sum(t.outcome == 'info' for t in txns)
    n_infoc = sum(t.outcome == 'info' and t.committed for t in txns)
    longest = max((len(v) for v in store.values()), default=0)
    print('othergen: %d txns: ok %d, fail %d, info %d (%d committed); keys %d, longest list %d'
          % (len(txns), n_ok, n_fail, n_info, n_infoc, len(store), longest), file=sys.stderr)


if __name__ == '__main__':
    main()
