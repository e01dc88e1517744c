#!/usr/bin/env bash
# One bounded fuzz run, as CTest runs it (tests/fuzz/CMakeLists.txt):
#   run_fuzzer.sh BINARY WORK_DIR SECONDS MAX_LEN SEED_DIR...
# New inputs go to WORK_DIR/corpus (in the build tree, kept between runs so later runs start
# from what earlier ones found); the seed folders in the repository are only read. A crash,
# sanitizer report, leak, an input running over 10 s or more than 512 MB fails the test; the
# input that did it is saved as WORK_DIR/crash-*, leak-*, timeout-* or oom-* and can be replayed
# with `BINARY FILE`.
set -euo pipefail
bin=$1 work=$2 seconds=$3 max_len=$4
shift 4
mkdir -p "$work/corpus"
log="$work/last-run.log"
set +e
"$bin" -max_total_time="$seconds" -rss_limit_mb=512 -timeout=10 -max_len="$max_len" \
  -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$@" >"$log" 2>&1
rc=$?
set -e
# The run's own summary lines and, on failure, the report; not libFuzzer's per-input chatter.
grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' "$log" | tail -n 150
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
echo "fuzz: $(basename "$bin"): ${execs:-?} executions in ${seconds} s, exit $rc"
exit "$rc"
