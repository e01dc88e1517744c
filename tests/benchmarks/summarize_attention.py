#!/usr/bin/env python3
"""Markdown table of the attention-vs-stream medians from a hybridbench_kernels_bench JSON file.

Usage: hybridbench_kernels_bench --benchmark_repetitions=N --benchmark_enable_random_interleaving=true \
           --benchmark_out=bench.json --benchmark_out_format=json
       summarize_attention.py bench.json
"""
import json
import sys

FAMILIES = ("BM_DecodeAttention", "BM_StreamRead", "BM_AttentionVsStream", "BM_AttentionVsStream_avx2")


def main(path):
    runs = json.load(open(path))["benchmarks"]
    med = {}
    for r in runs:
        name = r["run_name"]
        if r.get("aggregate_name") != "median" or name.split("/")[0] not in FAMILIES:
            continue
        parts = dict(p.split(":", 1) for p in name.split("/")[1:] if ":" in p)
        key = (int(parts["tokens"]), r.get("label", ""))
        med.setdefault(key, {})[name.split("/")[0]] = r
    print("| tokens | threads | attention GB/s | stream GB/s | attention / stream | paired: attention GB/s | "
          "paired: read roof GB/s | paired: compute roof GB/s | binding roof | attention / binding roof | "
          "paired CPU-time ratio |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for (tokens, label), cases in sorted(med.items()):
        a = cases.get("BM_DecodeAttention", {}).get("bytes_per_second", 0) / 1e9
        s = cases.get("BM_StreamRead", {}).get("bytes_per_second", 0) / 1e9
        p = cases.get("BM_AttentionVsStream", cases.get("BM_AttentionVsStream_avx2", {}))
        ratio = f"{a / s:.0%}" if a and s else "-"
        read, compute = p.get("read_roof_GBps", 0), p.get("compute_roof_GBps", 0)
        binding = "-" if not (read and compute) else ("compute" if compute < read else "read")
        print(f"| {tokens // 1024}K | {label} | {a:.1f} | {s:.1f} | {ratio} | {p.get('attn_GBps', 0):.1f} | "
              f"{read:.1f} | {compute:.1f} | {binding} | {p.get('of_roof', 0):.0%} | {p.get('ratio_cpu', 0):.0%} |")

if __name__ == "__main__":
    main(sys.argv[1])
