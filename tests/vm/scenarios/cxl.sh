# Scenario 2 (topology cxl): the CXL Type-3 device becomes NUMA node 2. topo must call it cxl
# with the region/DAX link as the reason; HybridGen's semantic mapping must put V there and K
# on node 0 (checked by page location in the run report); hybridgen and cpu-only must finish.
. /scenarios/lib.sh
make_cxl_node || exit 1
step numactl numactl -H
step region_sysfs ls /sys/bus/cxl/devices/region0/  # what memtier's sysfs reader sees (no mode file on 6.1)
step topo_json hybridbench topo --json
step topo hybridbench topo
# 1 MiB of emulated accelerator memory: most of the 4k-token KV must live on the host tiers.
step run hybridbench run --strategy hybridgen,cpu-only --seq-len 4k --accelerator cpu \
  --accelerator-memory 1M $TINY --out /out/run.json
exit 0
