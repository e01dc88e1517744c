#!/usr/bin/env bash
# Fleet runs end to end: `mpirun --oversubscribe -np 2 hybridbench run --distribute ...` on this
# machine (loopback only), checked through `hybridbench report`, which also validates the file.
# Usage: fleet_test.sh HYBRIDBENCH MPIRUN CASE; CASE: points | replicate | bad-placement |
# slow-rank | mismatch | no-launcher | unavailable. Exit 77 (CTest: skipped) with the reason when a case cannot run here.
set -uo pipefail
hb=$1 mpirun=$2 case=$3
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -n "${log:-}" ] && [ -f "$log" ] && cat "$log"; exit 1; }
work=$(mktemp -d /tmp/hb-mpi-XXXXXX)
trap 'rm -rf "$work"' EXIT
log=$work/log.txt
mpi_built() { "$hb" --version | grep -q "MPI: *on"; }

# A sweep of seconds: a small model, two lengths (one per rank in points mode), two cheap
# strategies, the cpu accelerator with one thread per side so two ranks share two cores.
base=(run --model qwen2.5-0.5b --accelerator cpu --accelerator-threads 1 --host-threads 1 --strategy cpu-only,full-gpu
      --warmup 1 --accuracy-steps 1 --quiet)
sweep=("${base[@]}" --decode-steps 4 --min-samples 2 --timeout 5)
mpi() {  # mpi MPIRUN-ARGS...: mpirun with loopback-only transports, output in $log
  OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo \
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1 \
    timeout 240 "$mpirun" --oversubscribe "$@" >"$log" 2>&1
}
launch() { local np=$1; shift; mpi -np "$np" "$hb" "$@"; }  # launch NP HYBRIDBENCH-ARGS...
report_md() {
  "$hb" report "$1" >"$work/report.md" 2>>"$log" || fail "hybridbench report cannot read $1"
  # The merged fleet report against the published schema too (tests/schema/; rc 77: no validator).
  /usr/bin/python3 "$(dirname "$0")/../schema/validate_report.py" "$1" >>"$log" 2>&1
  case $? in 0|77) ;; *) fail "$1 does not validate against reports/schema/report.schema.json" ;; esac
}
report_csv() { "$hb" report "$1" --format csv >"$work/report.csv" 2>>"$log" || fail "no CSV from $1"; }
# Rows of the CSV whose ran_on_rank column is $1, found by its header (quoted fields such as a
# reason or a blank figure's reason may hold commas, so no column is counted).
rows_of_rank() {
  /usr/bin/python3 -c 'import csv, sys
print(sum(1 for row in csv.DictReader(open(sys.argv[1])) if row["ran_on_rank"] == sys.argv[2]))' \
    "$work/report.csv" "$1"
}
need_mpi() {
  command -v "$mpirun" >/dev/null 2>&1 || [ -x "$mpirun" ] || skip "mpirun not found ($mpirun): install openmpi-bin"
  mpi_built || skip "this hybridbench was built without MPI (HYBRIDBENCH_MPI=OFF or no libopenmpi-dev)"
}
host=$(hostname)

case $case in
points)
  need_mpi
  launch 2 "${sweep[@]}" --seq-len 1k,2k --distribute points --out "$work/r.json" || fail "mpirun exited $?"
  report_md "$work/r.json"; report_csv "$work/r.json"
  grep -q "rank 0\*\*: $host/r0: " "$work/report.md" || fail "context lacks rank 0's host"
  grep -q "rank 1\*\*: $host/r1: " "$work/report.md" || fail "context lacks rank 1's host"
  grep -q "Where each point ran" "$work/report.md" || fail "no ran-on grid"
  [ "$(rows_of_rank 0)" = 2 ] && [ "$(rows_of_rank 1)" = 2 ] || fail "expected 2 points from each rank"
  ;;
replicate)
  need_mpi
  launch 2 "${sweep[@]}" --seq-len 1k --distribute replicate --out "$work/r.json" || fail "mpirun exited $?"
  report_md "$work/r.json"; report_csv "$work/r.json"
  grep -q "1k @ $host/r0 |.*1k @ $host/r1 |" "$work/report.md" || fail "no column per host in the table"
  [ "$(rows_of_rank 0)" = 2 ] && [ "$(rows_of_rank 1)" = 2 ] || fail "expected every point from both ranks"
  ;;
bad-placement)
  # Rank 1 is told to put its KV on a NUMA node that does not exist: it must fail alone, its
  # error must be in the report, and rank 0's points must survive.
  need_mpi
  launch 2 "${sweep[@]}" --seq-len 1k --distribute replicate --kv-node 0,99 --out "$work/r.json"
  rc=$?
  [ $rc -ne 0 ] || fail "a failed rank must make the job fail"
  [ $rc -ne 124 ] || fail "the job hung"
  [ -f "$work/r.json" ] || fail "rank 0 wrote no report"
  grep -q "NUMA node 99 does not exist" "$log" || fail "the failing rank's error was not printed"
  report_md "$work/r.json"; report_csv "$work/r.json"
  grep -q "rank 1\*\*: .*FAILED: NUMA node 99 does not exist" "$work/report.md" || fail "rank 1's error not in the report"
  [ "$(rows_of_rank 0)" = 2 ] || fail "rank 0's 2 points did not survive"
  # Rank 1's points are listed as failed, with its reason, never silently missing.
  [ "$(grep -c ",error,rank 1 on $host failed: NUMA node 99" "$work/report.csv")" = 2 ] ||
    fail "rank 1's points are not marked error"
  ;;
slow-rank)
  # Rank 1 gets a long point and rank 0 waits only 1 s after its own: rank 0 must write what it
  # has, mark rank 1 failed with the reason, and end the job instead of hanging.
  need_mpi
  launch 2 "${base[@]}" --seq-len 1k,256k --decode-steps 400 --min-samples 400 --max-noise 0.01 \
    --timeout 60 --distribute points --gather-timeout 1 --out "$work/r.json"
  rc=$?
  [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "expected a failed job that ends by itself (exit $rc)"
  report_md "$work/r.json"
  grep -q "rank 1\*\*: .*FAILED: no result within 1 s" "$work/report.md" || fail "rank 1's timeout not in the report"
  grep -q "rank 0\*\*: .* 2 point(s)" "$work/report.md" || fail "rank 0's points did not survive"
  ;;
mismatch)
  # Rank 1 is given another sweep (MPMD launch): it must say so and run nothing, rank 0 runs.
  need_mpi
  common=("${sweep[@]}" --distribute replicate --out "$work/r.json")
  mpi -np 1 "$hb" "${common[@]}" --seq-len 1k : -np 1 "$hb" "${common[@]}" --seq-len 2k
  rc=$?
  [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "expected a failed job that ends by itself (exit $rc)"
  report_md "$work/r.json"
  grep -q "rank 1\*\*: .*FAILED: rank 1's sweep differs from rank 0's: here 'seq_lens=2048', on rank 0 'seq_lens=1024'" \
    "$work/report.md" || fail "the disagreement is not in the report"
  grep -q "rank 0\*\*: .* 2 point(s)" "$work/report.md" || fail "rank 0's points did not survive"
  ;;
no-launcher)
  # Started by a launcher without --distribute: refused before anything runs.
  OMPI_COMM_WORLD_SIZE=2 "$hb" "${sweep[@]}" --seq-len 1k --out "$work/r.json" >"$log" 2>&1
  [ $? -eq 2 ] || fail "expected exit 2"
  grep -q "add --distribute" "$log" || fail "no fix named"
  [ ! -e "$work/r.json" ] || fail "a report was written"
  ;;
unavailable)
  mpi_built && skip "this build has MPI; the refusal is for builds without it"
  "$hb" "${sweep[@]}" --seq-len 1k --distribute points --out "$work/r.json" >"$log" 2>&1
  [ $? -eq 2 ] || fail "expected exit 2"
  grep -q "MPI mode is unavailable" "$log" || fail "no clear refusal"
  [ ! -e "$work/r.json" ] || fail "a report was written"
  ;;
*) fail "unknown case $case" ;;
esac
echo "PASS: $case"
