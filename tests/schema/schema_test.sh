#!/usr/bin/env bash
# Reports of a small matrix of commands validate against the published schema
# (reports/schema/report.schema.json), and the validator refuses planted bad fields (so this test
# can fail). Usage: schema_test.sh HYBRIDBENCH. Exit 77 (CTest: skipped) with the reason where
# Debian's python3-jsonschema is missing for /usr/bin/python3.
set -uo pipefail
hb=$1
here=$(cd "$(dirname "$0")" && pwd)
validate() { /usr/bin/python3 "$here/validate_report.py" "$@"; }
# HB_REQUIRE_JSONSCHEMA=1 (scripts/test.sh, so CI): a missing validator fails instead of skipping.
skip() {
  [ "${HB_REQUIRE_JSONSCHEMA:-}" = 1 ] && { echo "FAIL: $* (HB_REQUIRE_JSONSCHEMA=1)"; exit 1; }
  echo "SKIP: $*"; exit 77
}
fail() { echo "FAIL: $*"; [ -f "$work/log.txt" ] && tail -20 "$work/log.txt"; exit 1; }
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 (Debian: apt-get install python3-jsonschema)"
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null ||
  skip "python3-jsonschema is missing for /usr/bin/python3 (Debian: apt-get install python3-jsonschema)"
work=$(mktemp -d /tmp/hb-schema-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# Seconds each: a small model, two lengths, one thread per side.
common=(--model qwen2.5-0.5b --decode-steps 4 --warmup 1 --min-samples 2
        --accuracy-steps 1 --accelerator cpu --accelerator-threads 1 --host-threads 1 -q)
small=("${common[@]}" --seq-len 256,512)
ok() {  # ok NAME EXPECTED-RC HYBRIDBENCH-ARGS...: run, check the exit status, validate NAME.json
  local name=$1 want=$2; shift 2
  "$hb" "$@" >>log.txt 2>&1
  local rc=$?
  [ "$rc" = "$want" ] || fail "hybridbench $* exited $rc, expected $want"
  [ -s "$name.json" ] || fail "hybridbench $* wrote no $name.json"
  validate "$name.json" || fail "$name.json (hybridbench $*) does not validate"
  echo "valid: $name.json"
}
ok default 0 run "${small[@]}" --strategy cpu-only,full-gpu,hybridgen --out default.json
ok pooled 0 run "${small[@]}" --strategy cpu-only --repetitions 2 --kv-budget 64,25% --out pooled.json
ok model 0 run "${small[@]}" --strategy h2o --mode model --platform preset:gh200-c2c --out model.json
ok stacked 0 run "${small[@]}" --strategy cpu-only --layers 4 --out stacked.json
grep -q '"layer_stack": {' stacked.json || fail "stacked.json has no layer_stack"
HB_TEST_FAIL_AFTER_POINTS=1 ok interrupted 1 run "${small[@]}" --strategy cpu-only --out interrupted.json
grep -q '"interrupted": true' interrupted.json || fail "interrupted.json is not an interrupted report"
ok measured 0 validate-model "${common[@]}" --strategy cpu-only --seq-len 256 --out vm.txt --report measured.json

# Typed sweep values (schema /2): numbers, not strings.
grep -q '"seq_lens": \[' default.json || fail "context.sweep.seq_lens is not an array"

# The validator must refuse what the writer never writes: a stray field in a closed object, a
# number written as text, a status outside the vocabulary.
plant() {  # plant NAME PYTHON-EXPRESSION-ON-d: edit default.json into NAME.json, expect refusal
  /usr/bin/python3 - "$1" "$2" <<'PY' || fail "cannot plant $1"
import json, sys
d = json.load(open("default.json"))
exec(sys.argv[2])
json.dump(d, open(sys.argv[1] + ".json", "w"))
PY
  if validate "$1.json" >"$1.err" 2>&1; then fail "planted $1 validates: $2"; fi
  grep -q "$3" "$1.err" || { cat "$1.err"; fail "planted $1: no error naming $3"; }
  echo "refused: $1 ($3)"
}
plant stray 'd["points"][0]["tokens_per_s"] = 1.0' "Additional properties"
plant textual 'd["context"]["sweep"]["decode_steps"] = "4"' "decode_steps"
plant status 'd["points"][0]["status"] = "fine"' "status"
plant summary 'del d["points"][0]["step"]["summary"]["median_ns"]' "median_ns"
cp stacked.json default.json  # the planted fields below are the stacks'
plant stack_layers 'd["points"][0]["layer_stack"]["layers"] = 1' "minimum"
plant stack_stray 'd["points"][0]["layer_stack"]["error"] = 0.1' "Additional properties"
echo "all reports validate against reports/schema/report.schema.json"
