#!/usr/bin/env bash
# The GPU check of a bare GPU node in one call, from the bundle scripts/device-bundle.sh made
# (.device-bundle/) and nothing else: the node has the driver and CUDA 13 but no -dev packages
# and no network, so it cannot build this project. Every bundled program runs under `env -i`
# with PATH = the bundle's bin/ and LD_LIBRARY_PATH = its lib/ plus links to the node's cuBLAS
# (too big to carry); glibc and the driver's libcuda come from the node (step `load` checks
# that nothing else does).
#
#   scripts/device-check.sh [--no-gpu] [--bundle DIR] [--out DIR] [--budget-s N]
#                           [--model M] [--fit-len L] [--nofit-len L] [--accelerator-memory SIZE]
#   scripts/device-check.sh --judge REPORT --fit-len L    (the sweep verdict below on a report)
#   scripts/device-check.sh --microbatch-ratios TWO.json ONE.json   (the microbatch step's line)
#
# Steps, each with a time-out inside one overall budget (default 480 s; a step that would
# start after it is spent is a failure, "not run: time budget spent"):
#   bundle      MANIFEST present, every file's sha256 as recorded, total <= 64 MiB
#   node        the node's glibc is not older than the build machine's; its CUDA <major> cuBLAS
#   load        every bundled binary and library resolves each library it loads to the bundle,
#               glibc, the driver or the node's cuBLAS (ldd under the restricted environment)
#   version     hybridbench --version (CUDA on)
#   cpu-tests   the bundled unit tests (with a GPU: all but the GPU and conformance tests)
#   cpu-sweep   hybridbench run --accelerator cpu, a tiny sweep at a length whose KV fits the
#               capacity and one whose KV does not, judged like the GPU sweep below
# With a GPU (all skipped, and listed as such, with --no-gpu):
#   probe       nvidia-smi -L; hybridbench_cuda_bench --probe (this build's code runs here)
#   gpu-tests   test_kernels' GPU tests with HB_REQUIRE_GPU=1 (a skip is a failure)
#   conformance every bundled *Conformance* test with HB_REQUIRE_GPU=1 (none found: failure)
#   bench       hybridbench_cuda_bench: HBM copy, decode attention at 8K/32K/128K as % of it,
#               LSE merge, pinned H2D/D2H
#   strategies  hybridbench run --accelerator cuda --strategy all at --fit-len (KV fits the
#               --accelerator-memory cap) and --nofit-len (it does not), in two passes, each a
#               forked process with its own CUDA context
#   memcheck    compute-sanitizer --tool memcheck on a small filtered set of GPU tests
#   racecheck   compute-sanitizer --tool racecheck on a smaller one
#   microbatch  issue 15's micro-batching, measured not gated: hybridbench run --accelerator cuda
#               --seq-len 16k --batch 2 with --microbatches 1 and 2 (cpu-only, offload, hybridgen,
#               hybridgen-lse, the --accelerator-memory cap); the detail gives each strategy's
#               median step with 2 micro-batches over 1. Skipped under 150 s of budget left.
# Sweep verdict (cpu-sweep, strategies): every point at the fitting length is `ok`; at the other
# one every point is `ok` except those whose strategy keeps all KV on the accelerator by design
# (an `oom` whose reason starts "all KV"), and full-gpu must be that `oom` (else the length
# fits and proves nothing). `unsupported` points are a failure, listed by strategy.
#
# Writes device-check.json and device-check.md (and logs/) to --out (default $OUT when set,
# else device-check-out/). Exit 0 when every step that ran passed; 1 when one failed; 2 for bad
# arguments or a missing bundle.
set -uo pipefail
CALLER_DIR=$(pwd)
cd "$(dirname "$0")/.." || exit 2
MODE=gpu
BUNDLE=.device-bundle
OUTDIR="${OUT:-device-check-out}"
BUDGET=480
MODEL=llama-3.1-8b
FIT_LEN=16k
NOFIT_LEN=64k
CAP=208M
JUDGE=""
MB_TWO="" MB_ONE=""
usage() { sed -n '9,12p' "$0" | sed 's/^#  //; 1s/^ */usage: /'; }
bad() {
  echo "device-check: $*" >&2
  usage >&2
  exit 2
}
from_caller() {  # a path given on the command line, relative to where the script was called
  case "$1" in /*) echo "$1" ;; *) echo "$CALLER_DIR/$1" ;; esac
}
while [ $# -gt 0 ]; do
  case "$1" in
    --no-gpu) MODE=no-gpu; shift ;;
    --bundle | --out | --budget-s | --model | --fit-len | --nofit-len | --accelerator-memory | --judge)
      [ $# -ge 2 ] && [ -n "$2" ] || bad "$1 needs a value"
      case "$1" in
        --bundle) BUNDLE=$(from_caller "$2") ;;
        --out) OUTDIR=$(from_caller "$2") ;;
        --budget-s) BUDGET="$2" ;;
        --model) MODEL="$2" ;;
        --fit-len) FIT_LEN="$2" ;;
        --nofit-len) NOFIT_LEN="$2" ;;
        --accelerator-memory) CAP="$2" ;;
        --judge) JUDGE=$(from_caller "$2") ;;
      esac
      shift 2 ;;
    --microbatch-ratios)
      [ $# -ge 3 ] && [ -n "$2" ] && [ -n "$3" ] || bad "$1 needs two reports (2 micro-batches, then 1)"
      MB_TWO=$(from_caller "$2") MB_ONE=$(from_caller "$3")
      shift 3 ;;
    -h | --help) usage; exit 0 ;;
    *) bad "unknown argument '$1'" ;;
  esac
done
[[ "$BUDGET" =~ ^[1-9][0-9]*$ ]] || bad "--budget-s '$BUDGET' is not a positive number of seconds"
for len in "$FIT_LEN" "$NOFIT_LEN"; do
  [[ "${len,,}" =~ ^[1-9][0-9]*[km]?$ ]] || bad "length '$len' is not a token count like 4096, 16k or 1m"
done
B=/nonexistent
CUDA_MAJOR=""
if [ -z "$JUDGE" ] && [ -z "$MB_TWO" ]; then
  [ -f "$BUNDLE/MANIFEST" ] || bad "no bundle at '$BUNDLE' (no MANIFEST): run scripts/device-bundle.sh on the build machine first"
  B=$(cd "$BUNDLE" && pwd)
  mkdir -p "$OUTDIR/logs" || bad "cannot create the output folder '$OUTDIR'"
  OUTDIR=$(cd "$OUTDIR" && pwd)
  CUDA_MAJOR=$(awk '$1 == "cuda" {split($2, v, "."); print v[1]; exit}' "$B/MANIFEST")
fi
start=$SECONDS
NODE_CUDA="$OUTDIR/node-cuda-libs"  # links to exactly the node's cuBLAS libraries

# The restricted environment every bundled program runs in: "${RUN_B[@]}" [VAR=value...] cmd.
RUN_B=(env -i HOME="${HOME:-/tmp}" TMPDIR="${TMPDIR:-/tmp}" PATH="$B/bin"
       LD_LIBRARY_PATH="$B/lib:$NODE_CUDA" HWLOC_PLUGINS_PATH="$B/lib/hwloc")
# The GPUs this job was given (a scheduler's or MIG's choice) are kept.
for v in CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER NVIDIA_VISIBLE_DEVICES; do
  [ -n "${!v:-}" ] && RUN_B+=("$v=${!v}")
done
left() {
  local l=$((BUDGET - (SECONDS - start)))
  echo $((l > 0 ? l : 0))
}
# A command under the time left (at most $1 seconds), output to logs/<step>.log.
timed() {
  local cap=$1
  shift
  local t
  t=$(left)
  [ "$t" -gt "$cap" ] && t=$cap
  [ "$t" -ge 1 ] || { TIMED_OUT=1; return 124; }
  timeout --kill-after=10 "$t" "$@" >>"$LOG" 2>&1
  local rc=$?
  if [ $rc = 124 ] || [ $rc = 137 ]; then
    TIMED_OUT=1
    echo "device-check: timed out after $t s: $*" >>"$LOG"
  fi
  return $rc
}

# Step records: name, status (ok | failed | skipped), seconds, detail. A step function that
# returns 0 with SKIP set was skipped for that reason.
NAMES=() STATUS=() SECS=() DETAILS=()
FAILED=0
DETAIL=""
SKIP=""
TIMED_OUT=0
step() {
  local name=$1 fn=$2 t0=$SECONDS st
  LOG="$OUTDIR/logs/$name.log"
  : >"$LOG"
  DETAIL=""
  SKIP=""
  TIMED_OUT=0
  if [ "$MODE" = no-gpu ] && [ "${3:-}" = gpu ]; then
    st=skipped
    DETAIL="needs a GPU (--no-gpu)"
    rm -f "$LOG"
  elif [ "$(left)" -le 0 ]; then
    st=failed
    DETAIL="not run: the ${BUDGET} s budget is spent"
  elif "$fn"; then
    st=ok
    [ -n "$SKIP" ] && { st=skipped; DETAIL=$SKIP; }
  else
    st=failed
  fi
  [ "$st" = failed ] && FAILED=1
  [ "$TIMED_OUT" = 1 ] && DETAIL="TIMED OUT (${BUDGET} s budget or the step's cap); $DETAIL"
  NAMES+=("$name")
  STATUS+=("$st")
  SECS+=($((SECONDS - t0)))
  DETAILS+=("$DETAIL")
  printf '== %-12s %-8s %4d s  %s\n' "$name" "$st" $((SECONDS - t0)) "$DETAIL"
}

# --- the steps ------------------------------------------------------------------------------

check_bundle() {
  local bad_files total
  bad_files=$(awk '$1 == "file" {print $3 "  " $4}' "$B/MANIFEST" | (cd "$B" && sha256sum -c --quiet 2>&1))
  if [ -n "$bad_files" ]; then
    DETAIL="files differ from MANIFEST: $(echo "$bad_files" | head -3 | tr '\n' ' ')"
    return 1
  fi
  local listed present
  listed=$(awk '$1 == "file"' "$B/MANIFEST" | wc -l)
  present=$(cd "$B" && find bin lib -type f | wc -l)
  if [ "$listed" != "$present" ]; then
    DETAIL="$present files in the bundle, $listed in MANIFEST"
    return 1
  fi
  total=$(du -sb "$B" | awk '{print $1}')
  DETAIL="$listed files, $total bytes ($((total / 1024 / 1024)) MiB), $(sed -n 2p "$B/MANIFEST")"
  [ "$total" -le $((64 * 1024 * 1024)) ] || { DETAIL="$DETAIL: over 64 MiB"; return 1; }
}

check_node() {
  local need have dir
  need=$(awk '$1 == "glibc" {print $2}' "$B/MANIFEST")
  have=$(ldd --version 2>/dev/null | awk 'NR == 1 {print $NF}')
  if [ -z "$have" ] || [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" != "$need" ]; then
    DETAIL="the bundle needs glibc >= $need; this machine has '${have:-unknown}'"
    return 1
  fi
  rm -rf "$NODE_CUDA"
  mkdir -p "$NODE_CUDA"
  for dir in ${CUDA_HOME:+"$CUDA_HOME/lib64"} ${CUDA_PATH:+"$CUDA_PATH/lib64"} \
             /usr/local/cuda/lib64 /usr/local/cuda-"$CUDA_MAJOR"*/lib64 \
             /usr/local/cuda/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu; do
    if [ -e "$dir/libcublas.so.$CUDA_MAJOR" ] && [ -e "$dir/libcublasLt.so.$CUDA_MAJOR" ]; then
      ln -s "$dir/libcublas.so.$CUDA_MAJOR" "$dir/libcublasLt.so.$CUDA_MAJOR" "$NODE_CUDA/"
      DETAIL="glibc $have (bundle needs $need); cuBLAS $CUDA_MAJOR from $dir"
      return 0
    fi
  done
  DETAIL="no libcublas.so.$CUDA_MAJOR / libcublasLt.so.$CUDA_MAJOR (CUDA $CUDA_MAJOR toolkit) found; set CUDA_HOME"
  return 1
}

check_load() {
  local f line name path bad="" n=0
  while read -r f; do
    n=$((n + 1))
    while read -r line; do
      name=$(basename "$(awk '{print $1}' <<<"$line")")
      path=$(awk '$2 == "=>" {print $3}' <<<"$line")
      case "$name" in
        linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.*) continue ;;
        libcuda.so.*) [ "$MODE" = no-gpu ] && continue ;;  # the driver: absent without a GPU
      esac
      case "$path" in
        "$B"/lib/* | "$NODE_CUDA"/*) ;;
        /*) [[ "$name" == libcuda.so.* ]] || bad="$bad ${f#"$B"/}: $name from $path;" ;;
        *) bad="$bad ${f#"$B"/}: $name not found;" ;;
      esac
    done < <(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$B/lib:$NODE_CUDA" ldd "$f" 2>&1 | grep -v 'statically linked')
  done < <(find "$B/bin" "$B/lib" -type f | sort)
  if [ -n "$bad" ]; then
    DETAIL="loads from outside the bundle:${bad}"
    echo "$DETAIL" >>"$LOG"
    return 1
  fi
  DETAIL="$n binaries and libraries load from the bundle, glibc and the node's cuBLAS only"
}

check_version() {
  timed 30 "${RUN_B[@]}" hybridbench --version || { DETAIL="hybridbench --version failed (logs/version.log)"; return 1; }
  grep -q 'CUDA: *on' "$LOG" || { DETAIL="hybridbench was built without CUDA"; return 1; }
  DETAIL=$(grep -E 'git commit|GPU:' "$LOG" | sed 's/^ *//; s/  */ /g' | paste -sd';' | sed 's/;/; /g')
}

# Runs bundled gtest binaries; $1 = filter, $2 = require a GPU (1/0); the rest = binaries.
# Fails on a failed test or, when a GPU is required, on a skipped one. Sets RAN to the count.
RAN=0
gtests() {
  local filter=$1 req=$2 t rc=0 n
  shift 2
  RAN=0
  for t in "$@"; do
    [ -x "$B/bin/$t" ] || continue
    n=$("${RUN_B[@]}" "$B/bin/$t" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null | grep -c '^  ')
    [ "$n" -gt 0 ] || continue
    RAN=$((RAN + n))
    echo "--- $t ($n tests)" >>"$LOG"
    if [ "$req" = 1 ]; then
      timed 300 "${RUN_B[@]}" HB_REQUIRE_GPU=1 "$B/bin/$t" --gtest_filter="$filter" --gtest_brief=1 || rc=1
    else
      timed 300 "${RUN_B[@]}" "$B/bin/$t" --gtest_filter="$filter" --gtest_brief=1 || rc=1
    fi
  done
  if [ "$req" = 1 ] && grep -q '^\[  SKIPPED \]' "$LOG"; then
    DETAIL="skipped with HB_REQUIRE_GPU=1: $(grep '^\[  SKIPPED \] [A-Za-z]' "$LOG" | awk '{print $4}' | sort -u | head -5 | tr '\n' ' ')"
    return 1
  fi
  return $rc
}
failed_tests() { grep -E '^\[  FAILED  \] [A-Za-z]' "$LOG" | awk '{print $4}' | sort -u | head -5 | tr '\n' ' '; }

BUNDLED_TESTS=()
[ -f "$B/MANIFEST" ] && read -r -a BUNDLED_TESTS < <(awk '$1 == "tests" {$1 = ""; print}' "$B/MANIFEST")
GPU_FILTER='Cuda*:*/Cuda*:-CudaBackend.*'
check_cpu_tests() {
  local filter='*'
  [ "$MODE" = gpu ] && filter='-Cuda*:*/Cuda*:*Conformance*'
  if gtests "$filter" 0 "${BUNDLED_TESTS[@]}"; then
    DETAIL="$RAN tests of ${BUNDLED_TESTS[*]} passed$( [ "$MODE" = no-gpu ] && echo ' (GPU tests skip without a GPU)')"
  else
    DETAIL="failed: $(failed_tests)(logs/cpu-tests.log)"
    return 1
  fi
}

# Points of a report as "seq_len<TAB>strategy<TAB>status<TAB>median_ns<TAB>rel_l2<TAB>reason" lines (the
# report is pretty-printed with a fixed layout; the count is checked against the writer's).
points_tsv() {
  awk '
    function str(line) { sub(/^[^:]*: "/, "", line); sub(/",?$/, "", line); return line }
    /^  "points": \[/ { inp = 1; next }
    inp && /^  \]/ { inp = 0 }
    !inp { next }
    /^    \{/ { seq = ""; strat = ""; status = ""; reason = ""; med = ""; err = ""; instep = 0 }
    /^        "seq_len": / { seq = $2; sub(/,$/, "", seq) }
    /^        "strategy": / { strat = str($0) }
    /^      "status": / { status = str($0) }
    /^      "reason": / { reason = str($0) }
    /^      "step": / { instep = 1 }
    instep && /^          "median_ns": / { med = $2; sub(/,$/, "", med); instep = 0 }
    /^      "accuracy": / { inacc = 1 }
    inacc && /^        "rel_l2": / { err = $2; sub(/,$/, "", err); inacc = 0 }
    /^      \},?$/ { inacc = 0 }
    # (bash read joins adjacent tabs, so only the last field may be empty)
    /^    \}/ { print seq "\t" strat "\t" status "\t" (med == "" ? "null" : med) "\t" \
                 (err == "" ? "null" : err) "\t" reason }
  ' "$1"
}
# The sweep verdict (see the header) over report $1 with fitting length $2 (tokens); sets DETAIL.
SWEEP_TSV=""
judge_sweep() {
  local report=$1 fit=$2 seq strat status med err reason
  local bad="" unsupported="" expected="" full_gpu_oom=0 n=0
  SWEEP_TSV=$(points_tsv "$report")
  while IFS=$'\t' read -r seq strat status med err reason; do
    [ -n "$seq" ] || continue
    n=$((n + 1))
    [ "$status" = ok ] && continue
    if [ "$status" = unsupported ]; then
      unsupported="$unsupported $strat@$seq"
    elif [ "$seq" != "$fit" ] && [ "$status" = oom ] && [[ "$reason" == "all KV"* ]]; then
      expected="$expected $strat@$seq"
      [ "$strat" = full-gpu ] && full_gpu_oom=1
    else
      bad="$bad $strat@$seq: $status ($reason);"
    fi
  done <<<"$SWEEP_TSV"
  local written
  written=$(grep -o 'wrote .* (\([0-9]*\) points)' "$LOG" | sed 's/.*(\([0-9]*\) points)/\1/' | tail -1)
  DETAIL="$n points"
  [ -n "$expected" ] && DETAIL="$DETAIL; all-KV-on-accelerator oom as expected:$expected"
  local ok=0
  if [ "$n" = 0 ] || { [ -n "$written" ] && [ "$written" != "$n" ]; }; then
    DETAIL="$DETAIL; read $n points of the ${written:-?} the report holds"
    ok=1
  fi
  [ -n "$unsupported" ] && { DETAIL="$DETAIL; UNSUPPORTED on this accelerator:$unsupported"; ok=1; }
  [ -n "$bad" ] && { DETAIL="$DETAIL; NOT OK:$bad"; ok=1; }
  [ "$full_gpu_oom" = 1 ] || { DETAIL="$DETAIL; full-gpu did not run out of memory at the longer length, so it fits: raise --nofit-len or lower --accelerator-memory"; ok=1; }
  return $ok
}
tokens_of() {  # 16k -> 16384, 1m -> 1048576, 4096 -> 4096
  local v=${1,,}
  case "$v" in
    *k) echo $((${v%k} * 1024)) ;;
    *m) echo $((${v%m} * 1024 * 1024)) ;;
    *) echo "$v" ;;
  esac
}
sweep() {  # $1 accelerator, $2 model, $3 fit, $4 nofit, $5 cap, $6 report, rest: extra options
  local acc=$1 model=$2 fit=$3 nofit=$4 cap=$5 report=$6
  shift 6
  if ! timed 300 "${RUN_B[@]}" hybridbench run --accelerator "$acc" --model "$model" --seq-len "$fit,$nofit" \
       --accelerator-memory "$cap" --strategy all --out "$report" "$@"; then
    DETAIL="hybridbench run failed: $(tail -2 "$LOG" | tr '\n' ' ')"
    return 1
  fi
  judge_sweep "$report" "$(tokens_of "$fit")"
}
check_cpu_sweep() {
  # qwen2.5-0.5b: 512 bytes of KV per token, so 1K tokens fit 6 MiB and 16K (8 MiB) do not,
  # while InfiniGen's partial keys and fetch buffer (5.2 MiB at 16K) still fit.
  sweep cpu qwen2.5-0.5b 1k 16k 6M "$OUTDIR/cpu-sweep.json" --batch 1 --decode-steps 3 \
    --warmup 1 --min-samples 2 --accuracy-steps 1 --accelerator-threads 1 --host-threads 1 -q \
    --repetitions 1
}

check_probe() {
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    DETAIL="nvidia-smi not found: no NVIDIA driver on this machine"
    return 1
  fi
  timed 30 nvidia-smi -L || { DETAIL="nvidia-smi sees no GPU"; return 1; }
  timed 60 "${RUN_B[@]}" hybridbench_cuda_bench --probe || { DETAIL="the GPU is not usable by this build: $(tail -1 "$LOG")"; return 1; }
  DETAIL=$(grep -m1 '^GPU' "$LOG")
}
check_gpu_tests() {
  if gtests "$GPU_FILTER" 1 test_kernels && [ "$RAN" -gt 0 ]; then
    DETAIL="$RAN GPU tests passed with HB_REQUIRE_GPU=1"
  else
    [ -n "$DETAIL" ] || DETAIL="failed: $(failed_tests)(logs/gpu-tests.log)"
    return 1
  fi
}
check_conformance() {
  if gtests '*Conformance*' 1 "${BUNDLED_TESTS[@]}"; then
    [ "$RAN" -gt 0 ] || { DETAIL="no *Conformance* test in the bundled binaries (${BUNDLED_TESTS[*]})"; return 1; }
    DETAIL="$RAN conformance tests passed with HB_REQUIRE_GPU=1"
  else
    [ -n "$DETAIL" ] || DETAIL="failed: $(failed_tests)(logs/conformance.log)"
    return 1
  fi
}
SANITIZER=""
find_sanitizer() {
  local c
  for c in "$(command -v compute-sanitizer 2>/dev/null)" ${CUDA_HOME:+"$CUDA_HOME/bin/compute-sanitizer"} \
           /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda-"$CUDA_MAJOR"*/bin/compute-sanitizer; do
    [ -n "$c" ] && [ -x "$c" ] && { SANITIZER=$c; return 0; }
  done
  return 1
}
sanitize() {  # $1 tool, $2 gtest filter
  find_sanitizer || { DETAIL="compute-sanitizer not found (CUDA toolkit bin/); set CUDA_HOME"; return 1; }
  if timed 150 "${RUN_B[@]}" "$SANITIZER" --tool "$1" --error-exitcode 1 --print-limit 20 \
       "$B/bin/test_kernels" --gtest_filter="$2" --gtest_brief=1; then
    DETAIL="clean: $(grep -m1 -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards[^\n]*' "$LOG" || echo "no report") over $2"
  else
    DETAIL="$1 found errors or failed: $(grep -m3 -E '=+ (Invalid|Race|Error|ERROR)' "$LOG" | tr '\n' ' ')(logs/$1.log)"
    return 1
  fi
}
check_memcheck() {
  sanitize memcheck 'CudaDecodeAttention.MatchesReferenceAndCpuEngineAtEdgeLengths:CudaMergePartials.*:CudaLogitMerge.*:CudaGatherRows.*:CudaPageMinMax.*'
}
check_racecheck() {
  sanitize racecheck 'CudaDecodeAttention.MatchesReferenceAndCpuEngineAtEdgeLengths:CudaMergePartials.MatchesFp64AndTheCpuMerge'
}
check_bench() {
  timed 150 "${RUN_B[@]}" hybridbench_cuda_bench || { DETAIL="hybridbench_cuda_bench failed (logs/bench.log)"; return 1; }
  DETAIL="$(grep -c '^| ' "$LOG") table rows (device-check.md)"
}
check_strategies() {
  # Two passes, each a forked process that makes its own CUDA context (cli/pass_processes.h).
  if sweep cuda "$MODEL" "$FIT_LEN" "$NOFIT_LEN" "$CAP" "$OUTDIR/strategies.json" --batch 1 \
       --decode-steps 8 --warmup 2 --min-samples 3 --accuracy-steps 2 --repetitions 2 --timeout 5; then
    return 0
  fi
  return 1
}
# "strategy 0.87x, ..." : each strategy's median step in report $1 (2 micro-batches) over its
# median in $2 (1), for the points ok in both; sets DETAIL, fails when none are.
microbatch_ratios() {
  local ok_points='$3 == "ok" && $4 != "null" { print $2 "\t" $4 }'
  DETAIL=$(join -t $'\t' <(points_tsv "$1" | awk -F'\t' "$ok_points" | sort) \
                         <(points_tsv "$2" | awk -F'\t' "$ok_points" | sort) |
           awk -F'\t' '{ printf "%s%s %.2fx", (NR > 1 ? ", " : ""), $1, $2 / $3 }')
  [ -n "$DETAIL" ] || { DETAIL="no strategy ran in both reports"; return 1; }
  DETAIL="median step with 2 micro-batches / 1: $DETAIL"
}
check_microbatch() {
  [ "$(left)" -ge 150 ] || { SKIP="under 150 s of the ${BUDGET} s budget left (raise --budget-s)"; return 0; }
  local m
  for m in 1 2; do
    if ! timed 70 "${RUN_B[@]}" hybridbench run --accelerator cuda --model "$MODEL" --seq-len 16k \
         --batch 2 --scope layer --microbatches $m --strategy cpu-only,offload,hybridgen,hybridgen-lse \
         --accelerator-memory "$CAP" --decode-steps 8 --warmup 2 --min-samples 3 --accuracy-steps 1 \
         --repetitions 1 -q --out "$OUTDIR/microbatch-$m.json"; then
      DETAIL="hybridbench run --microbatches $m failed: $(tail -2 "$LOG" | tr '\n' ' ')"
      return 1
    fi
  done
  microbatch_ratios "$OUTDIR/microbatch-2.json" "$OUTDIR/microbatch-1.json"
}

if [ -n "$MB_TWO" ]; then
  for r in "$MB_TWO" "$MB_ONE"; do [ -f "$r" ] || bad "no report '$r'"; done
  if microbatch_ratios "$MB_TWO" "$MB_ONE"; then
    echo "device-check: $DETAIL"
    exit 0
  fi
  echo "device-check: FAILED: $DETAIL"
  exit 1
fi
if [ -n "$JUDGE" ]; then
  [ -f "$JUDGE" ] || bad "no report '$JUDGE'"
  LOG=/dev/null
  if judge_sweep "$JUDGE" "$(tokens_of "$FIT_LEN")"; then
    echo "device-check: sweep ok: $DETAIL"
    exit 0
  fi
  echo "device-check: sweep FAILED: $DETAIL"
  exit 1
fi
echo "device-check ($MODE) of $B into $OUTDIR, budget ${BUDGET} s"
step bundle check_bundle
step node check_node
step load check_load
step version check_version
step cpu-tests check_cpu_tests
step cpu-sweep check_cpu_sweep
CPU_SWEEP_TSV=$SWEEP_TSV
step probe check_probe gpu
step gpu-tests check_gpu_tests gpu
step conformance check_conformance gpu
step bench check_bench gpu
SWEEP_TSV=""
step strategies check_strategies gpu
# Last: the sanitizers are the slowest and the least likely to change a figure above.
step memcheck check_memcheck gpu
step racecheck check_racecheck gpu
# After everything else: a measurement for the notes, not a check of this build.
step microbatch check_microbatch gpu

# --- the report -----------------------------------------------------------------------------
json_str() {  # a JSON string literal of $1
  printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g; s/\t/\\t/g; s/[[:cntrl:]]/ /g' |
    awk 'BEGIN { ORS = ""; print "\"" } { print (NR > 1 ? "\\n" : "") $0 } END { print "\"" }'
}
points_json() {  # TSV points -> JSON array
  local first=1 seq strat status med err reason
  printf '['
  while IFS=$'\t' read -r seq strat status med err reason; do
    [ -n "$seq" ] || continue
    [ $first = 1 ] || printf ','
    first=0
    printf '{"seq_len":%s,"strategy":%s,"status":%s,"median_step_ns":%s,"rel_l2":%s,"reason":%s}' \
      "$seq" "$(json_str "$strat")" "$(json_str "$status")" "${med:-null}" "${err:-null}" "$(json_str "$reason")"
  done <<<"$1"
  printf ']'
}
BENCH_TABLE=""
[ -f "$OUTDIR/logs/bench.log" ] && BENCH_TABLE=$(grep '^|' "$OUTDIR/logs/bench.log")
verdict=$([ $FAILED = 0 ] && echo ok || echo failed)
{
  printf '{"schema":"hybridbench.device-check/1","mode":%s,"ok":%s,"date_utc":%s,"seconds":%d,' \
    "$(json_str "$MODE")" "$([ $FAILED = 0 ] && echo true || echo false)" "$(json_str "$(date -u +%FT%TZ)")" $((SECONDS - start))
  printf '"bundle":{"path":%s,"manifest":%s},' "$(json_str "$B")" "$(json_str "$(grep -v '^file ' "$B/MANIFEST")")"
  printf '"steps":['
  for i in "${!NAMES[@]}"; do
    [ "$i" = 0 ] || printf ','
    printf '{"name":%s,"status":%s,"seconds":%d,"detail":%s}' "$(json_str "${NAMES[$i]}")" \
      "$(json_str "${STATUS[$i]}")" "${SECS[$i]}" "$(json_str "${DETAILS[$i]}")"
  done
  printf '],"cpu_sweep":%s,"strategies":%s,"bench_table":%s}\n' "$(points_json "$CPU_SWEEP_TSV")" \
    "$(points_json "$SWEEP_TSV")" "$(json_str "$BENCH_TABLE")"
} >"$OUTDIR/device-check.json"

points_md() {  # TSV points -> markdown table
  echo "| length | strategy | status | median step | rel. L2 error vs fp64 | reason |"
  echo "|---:|---|---|---:|---:|---|"
  local seq strat status med err reason
  while IFS=$'\t' read -r seq strat status med err reason; do
    [ -n "$seq" ] || continue
    [ "$med" = null ] && med=""
    [ "$err" = null ] && err=""
    echo "| $seq | $strat | $status | $([ -n "$med" ] && awk -v n="$med" 'BEGIN {printf "%.1f us", n / 1000}') | $err | $reason |"
  done <<<"$1"
}
{
  echo "# hybridbench device check ($MODE): $verdict"
  echo
  echo "$(date -u +%FT%TZ), $((SECONDS - start)) s, bundle \`$B\` ($(sed -n 2p "$B/MANIFEST"))."
  echo
  echo "| step | status | seconds | detail |"
  echo "|---|---|---:|---|"
  for i in "${!NAMES[@]}"; do
    echo "| ${NAMES[$i]} | ${STATUS[$i]} | ${SECS[$i]} | ${DETAILS[$i]//|/\\|} |"
  done
  if [ -n "$BENCH_TABLE" ]; then
    echo
    echo "## Kernel benchmark (hybridbench_cuda_bench)"
    echo
    echo "$BENCH_TABLE"
  fi
  if [ -n "$SWEEP_TSV" ]; then
    echo
    echo "## Strategies on the GPU ($MODEL, $FIT_LEN fits / $NOFIT_LEN does not fit $CAP)"
    echo
    points_md "$SWEEP_TSV"
  fi
  echo
  echo "## CPU sweep from the bundle (qwen2.5-0.5b, 1k fits / 16k does not fit 6M)"
  echo
  points_md "$CPU_SWEEP_TSV"
} >"$OUTDIR/device-check.md"
echo "device-check: $verdict in $((SECONDS - start)) s; $OUTDIR/device-check.json, $OUTDIR/device-check.md"
[ $FAILED = 0 ]
