# Scenario 3 (topology cxl): placement the machine cannot honour must fail loudly: node 2 while
# it is still offline (possible, its memory not yet onlined), a node that does not exist, and
# node 2 once onlined but too small (128 MiB) for the KV asked for.
. /scenarios/lib.sh
step offline hybridbench run --strategy cpu-only --kv-node 2 --seq-len 1k $TINY --out /out/offline.json
step missing hybridbench run --strategy cpu-only --kv-node 9 --seq-len 1k $TINY --out /out/missing.json
make_cxl_node || exit 1
# Llama-3.1-8B's shape keeps 4 KiB of KV per token and layer: 64k tokens = 256 MiB > 128 MiB.
step too_small hybridbench run --strategy cpu-only --kv-node 2 --model llama-3.1-8b --seq-len 64k \
  --decode-steps 3 --warmup 1 --min-samples 1 --timeout 5 --accuracy-steps 0 -q --out /out/too_small.json
exit 0
