#!/usr/bin/env bash
# CTest `trace_capture` (label trace): scripts/capture-trace.py records a small Llama-style
# attention layer (RoPE, GQA 8 q-heads / 2 kv-heads x 64, randomly initialised), and hybridbench's
# exact strategies must reproduce the layer's own scaled_dot_product_attention output on that
# trace. Needs a Python that can `import torch` (Debian: python3-torch, which is for
# /usr/bin/python3, not a pyenv python3 on PATH); exits 77 (skipped) with the reason without one.
# Usage: capture_trace_test.sh SOURCE_DIR HYBRIDBENCH
set -euo pipefail
src=$1 bin=$2
py=""
for c in ${HB_TORCH_PYTHON:-} /usr/bin/python3 python3; do
  if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import torch' >/dev/null 2>&1; then py=$c; break; fi
done
if [ -z "$py" ]; then
  echo "skipped: no python that can import torch (install python3-torch, or set HB_TORCH_PYTHON)"
  exit 77
fi
exec "$py" "$src/tests/trace/capture_trace_test.py" "$src" "$bin"
