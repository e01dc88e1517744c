# Scenario 1 (topology numa-hmat): node 1 is CPU-less with SLIT 20 and HMAT figures. What the
# tool makes of it: topo's classification, KV placed on node 1 (verified page by page by the
# run's placement check), and probe figures for both nodes labelled as measured in a VM.
. /scenarios/lib.sh
step numactl numactl -H
step topo_json hybridbench topo --json
step topo hybridbench topo
step run_kv1 hybridbench run --strategy cpu-only --kv-node 1 --seq-len 2k $TINY --out /out/run_kv1.json
step probe hybridbench probe --quick --duration 0.05 --quiet --out /out/platform.json
exit 0
