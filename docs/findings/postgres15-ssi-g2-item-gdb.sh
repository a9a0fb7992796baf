#!/usr/bin/env bash
# Deterministic reproduction of the PostgreSQL SERIALIZABLE G2-item doppel recorded
# (docs/findings/postgres15-ssi-g2-item.md): three sessions, and a debugger that pauses
# the first writer's backend in ReleasePredicateLocks, after its commit became visible
# to new snapshots and before the serializable bookkeeping marked it committed.
#
#   1. T1 (pivot):     BEGIN SERIALIZABLE; read x
#   2. T2 (writer):    BEGIN SERIALIZABLE; append x; append z; COMMIT  -- gdb stops it
#   3. T3 (read-only): BEGIN SERIALIZABLE; read z                      -- sees T2
#   4. T1:             append y; COMMIT                                -- commits
#   5. gdb detaches:   T2's COMMIT returns
#   6. T3:             read y; COMMIT                                  -- without T1's append
#
# T1 -rw-> T2 (T1 read x without T2's append), T2 -wr-> T3 (T3 read T2's append to z),
# T3 -rw-> T1 (T3 read y without T1's append): a cycle, which SERIALIZABLE must prevent
# by aborting one of them. Without the pause (--no-pause) PostgreSQL aborts one of
# them; with it, all three commit.
#
# Needs: root (gdb attaches to the backend), psql, gdb, and a server where
#   psql "$PGURL" works as a superuser (default postgres://postgres@127.0.0.1:5432/test).
# Exit: 0 reproduced (all three committed: the anomaly), 1 not reproduced (one aborted),
# 2 the script could not run.
set -u
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432/test}
PAUSE=1
[ "${1:-}" = "--no-pause" ] && PAUSE=0
T=g2repro_$$
DIR=$(mktemp -d)
trap 'exec 11>&- 12>&- 13>&- 14>&-; kill $(jobs -p) 2>/dev/null; psql -q "$PGURL" -c "DROP TABLE IF EXISTS $T" >/dev/null 2>&1; rm -rf "$DIR"' EXIT

psql -q -v ON_ERROR_STOP=1 "$PGURL" -c "CREATE TABLE $T (k int PRIMARY KEY, v text NOT NULL); INSERT INTO $T VALUES (2, '1'), (4, '1'), (8, '1')" >/dev/null || exit 2

# One psql per session, fed through a fifo; each step ends with \echo DONE-n so that
# the script knows the step is over.
for s in 1 2 3; do
  mkfifo "$DIR/in$s"
  psql -X -q -A -t "$PGURL" <"$DIR/in$s" >"$DIR/out$s" 2>&1 &
done
exec 11>"$DIR/in1" 12>"$DIR/in2" 13>"$DIR/in3"
step=0
# send SESSION SQL: run SQL in the session and wait until it has finished.
send() {
  local s=$1 sql=$2 fd=$((10 + $1))
  step=$((step + 1))
  printf '%s\n\\echo DONE-%d\n' "$sql" "$step" >&$fd
  wait_for "$s" "DONE-$step"
}
# wait_for SESSION TEXT: wait until the session's output has TEXT (at most 30 s).
wait_for() {
  for _ in $(seq 1 300); do
    grep -q "$2" "$DIR/out$1" && return 0
    sleep 0.1
  done
  echo "session $1: timed out waiting for $2; output:" >&2
  cat "$DIR/out$1" >&2
  exit 2
}

send 2 "SELECT 'pid=' || pg_backend_pid();"
PID2=$(grep -o 'pid=[0-9]*' "$DIR/out2" | cut -d= -f2)

send 1 "BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT 'T1 read x=' || v FROM $T WHERE k = 8;"
send 2 "BEGIN ISOLATION LEVEL SERIALIZABLE; UPDATE $T SET v = v || ',2' WHERE k = 8; UPDATE $T SET v = v || ',2' WHERE k = 4;"

if [ $PAUSE = 1 ]; then
  # gdb stops T2's backend at ReleasePredicateLocks and holds it there until told.
  mkfifo "$DIR/gdbin"
  gdb -q -nx -p "$PID2" <"$DIR/gdbin" >"$DIR/gdbout" 2>&1 &
  exec 14>"$DIR/gdbin"
  printf 'set pagination off\nbreak ReleasePredicateLocks\ncontinue\n' >&14
  sleep 1 # let gdb attach and continue the backend before COMMIT is sent
  printf 'COMMIT;\n\\echo DONE-T2\n' >&12
  for _ in $(seq 1 300); do grep -q "Breakpoint 1," "$DIR/gdbout" && break; sleep 0.1; done
  grep -q "Breakpoint 1," "$DIR/gdbout" || { echo "gdb did not stop T2's backend:" >&2; cat "$DIR/gdbout" >&2; exit 2; }
  echo "T2's backend $PID2 is paused in ReleasePredicateLocks (its COMMIT is visible to new snapshots)"
else
  send 2 "COMMIT;"
fi

# T3 takes its snapshot while T2 is visible but not yet committed for SSI.
send 3 "BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT 'T3 read z=' || v FROM $T WHERE k = 4;"
# T1 appends to y and commits meanwhile: SSI does not yet count T2 as committed, so
# T1's rw-conflict out to T2 does not mark T1 as having one to a committed transaction.
send 1 "UPDATE $T SET v = v || ',1' WHERE k = 2; COMMIT;"

if [ $PAUSE = 1 ]; then
  # T2's commit completes; it drops its rw-conflict in from the committed T1.
  printf 'detach\nquit\n' >&14
  wait_for 2 "DONE-T2"
fi

# T3 reads y without T1's append (T1 committed after T3's snapshot) and commits.
send 3 "SELECT 'T3 read y=' || v FROM $T WHERE k = 2; COMMIT;"

echo "--- session 1 (T1)"; grep -v '^DONE' "$DIR/out1"
echo "--- session 2 (T2)"; grep -v '^DONE\|^pid=' "$DIR/out2"
echo "--- session 3 (T3)"; grep -v '^DONE' "$DIR/out3"
echo "--- final state"; psql -X -A -t "$PGURL" -c "SELECT k, v FROM $T ORDER BY k"

if grep -q "ERROR" "$DIR/out1" "$DIR/out2" "$DIR/out3"; then
  echo "NOT REPRODUCED: PostgreSQL aborted a transaction of the cycle (SERIALIZABLE held)"
  exit 1
fi
if grep -q 'T3 read z=1,2' "$DIR/out3" && grep -q 'T3 read y=1$' "$DIR/out3" && grep -q 'T1 read x=1$' "$DIR/out1"; then
  echo "REPRODUCED: T1, T2 and T3 all committed a G2-item cycle under SERIALIZABLE"
  exit 0
fi
echo "unexpected reads; see above"
exit 2
