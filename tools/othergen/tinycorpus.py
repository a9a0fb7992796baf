#!/usr/bin/env python3
"""tinycorpus.py OUT.edn.gz: the corpus of check.TestOthergenAgainstBruteForce.

Tiny histories (4-10 transactions) from othergen.py's three stores, 6,000 of them
(seeds 1001-3000, each engine), with 30% :info and 10% :fail, then three mutants of
each (one :ok read's list truncated, extended, one value flipped or two adjacent
values swapped: most mutants are not valid under some model, which the stores alone
rarely give). 400 histories and 1,200 mutants are drawn (random.Random(7)) and
written end to end, each after a line ';; history NAME'.

    python3 tools/othergen/tinycorpus.py testdata/othergen/tiny.edn.gz
"""
import glob, gzip, os, random, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
READ = re.compile(r'\[:r (\d+) \[([\d ]*)\]\]')


def generate(dst):
    for seed in range(1001, 3001):
        for eng in ('ss', 'si', 'rc'):
            args = ['--engine', eng, '--txns', str(4 + seed % 7), '--threads', str(2 + seed % 4),
                    '--keys', str(1 + seed % 3), '--vals', str(2 + seed % 2), '--min-ops', '1',
                    '--max-ops', str(2 + seed % 3), '--info', '0.3', '--fail', '0.1', '--reads', '0.4',
                    '--seed', str(seed), '--out', os.path.join(dst, '%s-%d.edn' % (eng, seed))]
            subprocess.run([sys.executable, os.path.join(HERE, 'othergen.py')] + args, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def mutate(src, dst):
    for f in sorted(glob.glob(src + '/*.edn')):
        lines = open(f).read().splitlines()
        okl = [i for i, l in enumerate(lines) if ':type :ok' in l and READ.search(l)]
        if not okl:
            continue
        for m in range(3):
            rng = random.Random(os.path.basename(f) + str(m))
            out = list(lines)
            i = rng.choice(okl)
            mm = rng.choice(list(READ.finditer(out[i])))
            vals = mm.group(2).split()
            kind = rng.randrange(4)
            if kind == 0 and vals:
                vals = vals[:-1]
            elif kind == 1 and vals:
                j = rng.randrange(len(vals))
                vals[j] = '1' if vals[j] == '2' else '2'
            elif kind == 2 and len(vals) >= 2:
                j = rng.randrange(len(vals) - 1)
                vals[j], vals[j + 1] = vals[j + 1], vals[j]
            else:
                vals = vals + [rng.choice(['1', '2'])]
            out[i] = out[i][:mm.start()] + '[:r %s [%s]]' % (mm.group(1), ' '.join(vals)) + out[i][mm.end():]
            open(os.path.join(dst, os.path.basename(f)[:-4] + '-m%d.edn' % m), 'w').write('\n'.join(out) + '\n')


def main(out):
    with tempfile.TemporaryDirectory() as base, tempfile.TemporaryDirectory() as muts:
        generate(base)
        mutate(base, muts)
        rng = random.Random(7)
        pick = rng.sample(sorted(glob.glob(base + '/*.edn')), 400) + rng.sample(sorted(glob.glob(muts + '/*.edn')), 1200)
        data = ''.join(';; history %s\n' % os.path.basename(f)[:-4] + open(f).read() for f in pick)
        with gzip.open(out, 'wb', compresslevel=9) as g:
            g.write(data.encode())


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
