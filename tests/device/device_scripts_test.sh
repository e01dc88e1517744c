#!/usr/bin/env bash
# CTest label `device`: scripts/device-bundle.sh and scripts/device-check.sh without a GPU.
#   device_scripts_test.sh SOURCE_DIR HYBRIDBENCH CASE
# CASE args    both scripts refuse bad arguments with exit 2 before building or running anything
# CASE judge   the sweep verdict on a real tiny report (cpu accelerator) and on edited copies:
#              an unsupported strategy, an oom that is not all-KV-on-accelerator, and a
#              full-gpu that fits at the longer length must each fail, naming the cause
# CASE no-gpu  device-check.sh --no-gpu of SOURCE_DIR/.device-bundle, when one has been built
#              (scripts/device-bundle.sh takes minutes, so CTest never builds it): exit 77 otherwise
set -uo pipefail
SRC=$1
HB=$2
CASE=$3
CHECK="$SRC/scripts/device-check.sh"
BUNDLE="$SRC/scripts/device-bundle.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fails=0
expect() {  # expect RC PATTERN -- command...: exit status RC and output matching PATTERN
  local want=$1 pattern=$2 out rc
  shift 3
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" != "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: $* -> exit $rc (want $want), output must match /$pattern/:"
    echo "$out" | tail -5
    fails=1
  else
    echo "ok: $*"
  fi
}

case "$CASE" in
  args)
    expect 2 "unknown argument '--bogus'" -- "$CHECK" --bogus
    expect 2 "not a positive number of seconds" -- "$CHECK" --budget-s 0
    expect 2 "needs a value" -- "$CHECK" --out
    expect 2 "not a token count" -- "$CHECK" --fit-len 12q --bundle "$WORK"
    expect 2 "run scripts/device-bundle.sh" -- "$CHECK" --no-gpu --bundle "$WORK/none"
    expect 2 "no report" -- "$CHECK" --judge "$WORK/missing.json" --fit-len 1k
    expect 0 "usage:" -- "$CHECK" --help
    expect 2 "unknown argument '--bogus'" -- "$BUNDLE" --bogus
    expect 2 "'x' is not a positive number" -- "$BUNDLE" --jobs x
    expect 2 "'0' is not a positive number" -- "$BUNDLE" --max-mib 0
    expect 0 "usage:" -- "$BUNDLE" --help
    ;;
  judge)
    [ -x "$HB" ] || { echo "hybridbench not built: $HB"; exit 77; }
    r="$WORK/r.json"
    # The cpu-sweep of device-check.sh: 1K tokens of qwen2.5-0.5b fit 6 MiB, 16K do not.
    if ! "$HB" run --model qwen2.5-0.5b --seq-len 1k,16k --decode-steps 3 --warmup 1 \
         --min-samples 2 --accuracy-steps 1 --accelerator cpu --accelerator-threads 1 \
         --host-threads 1 --accelerator-memory 6M -q --strategy all --out "$r" >"$WORK/run.log" 2>&1; then
      echo "FAIL: the sweep did not run"; cat "$WORK/run.log"; exit 1
    fi
    # Sets the status (and reason) of STRATEGY's point at SEQ to STATUS in a copy of the report.
    edit() {  # edit STRATEGY SEQ STATUS REASON OUT
      awk -v s="$1" -v q="$2" -v st="$3" -v why="$4" '
        /^        "seq_len": / { seq = $2; sub(/,$/, "", seq) }
        /^        "strategy": / { strat = $2; gsub(/[",]/, "", strat) }
        /^      "status": / && strat == s && seq == q { sub(/: ".*"/, ": \"" st "\"") }
        /^      "reason": / && strat == s && seq == q { sub(/: ".*"/, ": \"" why "\"") }
        { print }' "$r" >"$5"
    }
    expect 0 "sweep ok: 24 points; all-KV-on-accelerator oom as expected: full-gpu@16384" -- "$CHECK" --judge "$r" --fit-len 1k
    edit h2o 1024 unsupported "no kernel" "$WORK/u.json"
    expect 1 "UNSUPPORTED on this accelerator: h2o@1024" -- "$CHECK" --judge "$WORK/u.json" --fit-len 1k
    edit offload 16384 oom "two chunk buffers needs 9 MiB" "$WORK/o.json"
    expect 1 "NOT OK: offload@16384: oom \(two chunk buffers" -- "$CHECK" --judge "$WORK/o.json" --fit-len 1k
    edit full-gpu 16384 ok "" "$WORK/f.json"
    expect 1 "full-gpu did not run out of memory" -- "$CHECK" --judge "$WORK/f.json" --fit-len 1k
    # At the fitting length even an all-KV oom is a failure.
    edit quest 1024 oom "all KV plus page metadata needs 9 MiB" "$WORK/q.json"
    expect 1 "NOT OK: quest@1024: oom" -- "$CHECK" --judge "$WORK/q.json" --fit-len 1k
    # The microbatch step's line, from two tiny batch-2 runs with 1 and 2 micro-batches.
    for m in 1 2; do
      if ! "$HB" run --model qwen2.5-0.5b --seq-len 1k --batch 2 --scope layer --microbatches $m --decode-steps 3 \
           --warmup 1 --min-samples 2 --accuracy-steps 1 --accelerator cpu --accelerator-threads 1 \
           --host-threads 1 -q --strategy cpu-only,hybridgen --out "$WORK/mb$m.json" >"$WORK/mb.log" 2>&1; then
        echo "FAIL: the micro-batch run did not run"; cat "$WORK/mb.log"; exit 1
      fi
    done
    expect 0 "median step with 2 micro-batches / 1: cpu-only [0-9]+[.][0-9]+x, hybridgen [0-9]+[.][0-9]+x$" \
      -- "$CHECK" --microbatch-ratios "$WORK/mb2.json" "$WORK/mb1.json"
    r="$WORK/mb2.json" && edit cpu-only 1024 oom "all KV needs 9 MiB" "$WORK/mbx.json"
    r="$WORK/mbx.json" && edit hybridgen 1024 oom "all KV needs 9 MiB" "$WORK/mby.json"
    expect 1 "no strategy ran in both reports" -- "$CHECK" --microbatch-ratios "$WORK/mby.json" "$WORK/mb1.json"
    expect 2 "no report" -- "$CHECK" --microbatch-ratios "$WORK/none.json" "$WORK/mb1.json"
    expect 2 "needs two reports" -- "$CHECK" --microbatch-ratios "$WORK/mb2.json"
    ;;
  no-gpu)
    [ -f "$SRC/.device-bundle/MANIFEST" ] || {
      echo "no bundle at $SRC/.device-bundle (scripts/device-bundle.sh builds one; minutes, so not here)"
      exit 77
    }
    expect 0 "device-check: ok" -- "$CHECK" --no-gpu --out "$WORK/out"
    grep -q '"ok":true' "$WORK/out/device-check.json" || { echo "FAIL: device-check.json is not ok"; fails=1; }
    ;;
  *) echo "unknown case '$CASE'"; exit 2 ;;
esac
exit $fails
