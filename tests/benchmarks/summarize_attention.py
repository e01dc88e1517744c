#!/usr/bin/env python3
"""Markdown table of the attention-vs-stream medians from a hybridbench_kernels_bench JSON file.

Usage: hybridbench_kernels_bench --benchmark_repetitions=N --benchmark_enable_random_interleaving=true \
           --benchmark_out=bench.json --benchmark_out_format=json
       summarize_attention.py bench.json
"""
import json
import sys

PAIRED = ("BM_AttentionVsStream", "BM_AttentionVsStream_avx2", "BM_AttentionVsStream_bf16")
FAMILIES = ("BM_DecodeAttention", "BM_StreamRead") + PAIRED


def main(path):
    runs = json.load(open(path))["benchmarks"]
    med = {}
    for r in runs:
        name = r["run_name"]
        if r.get("aggregate_name") != "median" or name.split("/")[0] not in FAMILIES:
            continue
        parts = dict(p.split(":", 1) for p in name.split("/")[1:] if ":" in p)
        label = r.get("label", "")
        dtype = label.rsplit(" ", 1)[1] if label.endswith(("fp16", "bf16", "fp32")) else "fp16"
        key = (int(parts["tokens"]), label.removesuffix(" " + dtype), dtype)
        med.setdefault(key, {})[name.split("/")[0]] = r
    print("| tokens | threads | KV | attention GB/s | stream GB/s | attention / stream | paired: attention GB/s | "
          "paired: read roof GB/s | paired: compute roof GB/s | binding roof | attention / binding roof | "
          "paired CPU-time ratio | kernel's own in-cache ceiling GB/s |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for (tokens, label, dtype), cases in sorted(med.items()):
        a = cases.get("BM_DecodeAttention", {}).get("bytes_per_second", 0) / 1e9
        s = cases.get("BM_StreamRead", {}).get("bytes_per_second", 0) / 1e9
        p = next((cases[f] for f in PAIRED if f in cases), {})
        ratio = f"{a / s:.0%}" if a and s else "-"
        read, compute = p.get("read_roof_GBps", 0), p.get("compute_roof_GBps", 0)
        binding = "-" if not (read and compute) else ("compute" if compute < read else "read")
        print(f"| {tokens // 1024}K | {label} | {dtype} | {a:.1f} | {s:.1f} | {ratio} | {p.get('attn_GBps', 0):.1f} | "
              f"{read:.1f} | {compute:.1f} | {binding} | {p.get('of_roof', 0):.0%} | {p.get('ratio_cpu', 0):.0%} | "
              f"{p.get('own_ceiling_GBps', 0):.1f} |")

if __name__ == "__main__":
    main(sys.argv[1])
