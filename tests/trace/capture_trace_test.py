"""Driven by capture_trace_test.sh (which found a python with torch): capture a trace from a
Llama-style attention layer built here and check hybridbench's exact strategies on it against
the layer's own output (accuracy.captured_rel_l2), plus the trace's own shape as model."""
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

SRC, BIN = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("capture_trace",
                                              os.path.join(SRC, "scripts", "capture-trace.py"))
ct = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ct)

Q_HEADS, KV_HEADS, HEAD_DIM, HIDDEN = 8, 2, 64, 512
PROMPT, STEPS = 96, 8


def sdpa(q, k, v, causal):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return F._scaled_dot_product_attention(q, k, v, None, 0.0, False, causal)[0]  # torch 1.13


def rope(x, pos):  # x [B, H, L, d], pos [L]: Llama's rotate-half RoPE, theta 10000
    d = x.shape[-1]
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    ang = pos[:, None].float() * inv[None, :]
    cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * cos + torch.cat([-x2, x1], -1) * sin


class LlamaAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = torch.nn.Linear(HIDDEN, Q_HEADS * HEAD_DIM, bias=False)
        self.k_proj = torch.nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.v_proj = torch.nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.o_proj = torch.nn.Linear(Q_HEADS * HEAD_DIM, HIDDEN, bias=False)
        self.cache_k = self.cache_v = None

    def forward(self, x):  # x [1, L, HIDDEN]; positions continue the cache
        B, L, _ = x.shape
        start = 0 if self.cache_k is None else self.cache_k.shape[2]
        pos = torch.arange(start, start + L)
        heads = lambda t, h: t.view(B, L, h, HEAD_DIM).transpose(1, 2)
        q = rope(heads(self.q_proj(x), Q_HEADS), pos)
        k = rope(heads(self.k_proj(x), KV_HEADS), pos)
        v = heads(self.v_proj(x), KV_HEADS)
        if self.cache_k is not None:
            k, v = torch.cat([self.cache_k, k], 2), torch.cat([self.cache_v, v], 2)
        self.cache_k, self.cache_v = k, v
        g = Q_HEADS // KV_HEADS  # repeat_kv, as Hugging Face Llama does before sdpa
        o = sdpa(q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1), causal=L > 1)
        return self.o_proj(o.transpose(1, 2).reshape(B, L, -1))


def record():
    """A seeded layer's prefill and STEPS decode steps, recorded."""
    torch.manual_seed(0)
    layer = LlamaAttention()
    rec = ct.TraceRecorder(kv_heads=KV_HEADS)
    with torch.no_grad(), rec.capture(layer):
        layer(torch.randn(1, PROMPT, HIDDEN))
        for _ in range(STEPS):
            layer(torch.randn(1, 1, HIDDEN))
    return rec


def capture(path, prompt_queries):
    t = record().save(path, prompt_queries=prompt_queries, dtype="fp32")
    assert tuple(t["k"].shape) == (PROMPT + STEPS, KV_HEADS, HEAD_DIM), t["k"].shape
    assert tuple(t["q"].shape) == (STEPS, Q_HEADS, HEAD_DIM), t["q"].shape
    assert tuple(t["o"].shape) == (STEPS, Q_HEADS, HEAD_DIM), t["o"].shape
    return t


def run(trace, strategies, out, *extra):
    cmd = [BIN, "run", "--workload", "trace:" + trace, "--strategy", strategies,
           "--accelerator", "cpu", "--accelerator-threads", "1", "--host-threads", "1",
           "--decode-steps", str(STEPS), "--warmup", "1", "--min-samples", "2",
           "--accuracy-steps", "-1", "--accelerator-memory", "256M", "--out", out, *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return json.load(open(out)), r.stderr


failures = []
with tempfile.TemporaryDirectory() as d:
    trace = os.path.join(d, "llama-gqa.safetensors")
    capture(trace, prompt_queries=32)
    report, err = run(trace, "full-gpu,cpu-only,offload", os.path.join(d, "r.json"))
    if "trace:llama-gqa" not in err:
        failures.append("no note that the trace's own shape was adopted:\n" + err)
    for p in report["points"]:
        name, acc = p["axes"]["strategy"], p["accuracy"]
        if p["axes"]["model"] != "trace:llama-gqa" or p["axes"]["family"] != "trace":
            failures.append(f"{name}: model {p['axes']['model']} family {p['axes']['family']}")
        if p["status"] != "ok":
            failures.append(f"{name}: status {p['status']} ({p['reason']})")
            continue
        cap = acc.get("captured_rel_l2")
        # fp32 trace, fp32 KV: only summation order separates them from torch's output.
        if cap is None or not cap < 1e-4:
            failures.append(f"{name}: rel L2 vs the layer's own output {cap} (want < 1e-4)")
        if acc["steps_scored"] < STEPS - 1:
            failures.append(f"{name}: only {acc['steps_scored']} steps scored")
        print(f"{name}: captured_rel_l2 {cap}, rel_l2 {acc['rel_l2']}")
    if len(report["points"]) != 3:
        failures.append(f"{len(report['points'])} points, want 3")
    # A planted needle: plant_needle places it after the first token, the metadata says where,
    # and hybridbench reads the span (a bad span would be refused with exit 2).
    ids, first = ct.plant_needle(list(range(100, 120)), [7, 8, 9], 0.5)
    if first != 10 or ids[10:13] != [7, 8, 9] or len(ids) != 23:
        failures.append(f"plant_needle put the needle at {first}: {ids}")
    if ct.plant_needle([1, 2, 3], [9], 0.0)[1] != 1:
        failures.append("plant_needle at depth 0 displaced the first token")
    rec = record()
    needled = os.path.join(d, "needle.safetensors")
    rec.save(needled, dtype="fp32", metadata={"needle_token": 5, "needle_tokens": 3})
    run(needled, "cpu-only", os.path.join(d, "n.json"))
    rec.save(needled, dtype="fp32", metadata={"needle_token": PROMPT, "needle_tokens": 3})
    r = subprocess.run([BIN, "run", "--workload", "trace:" + needled, "--strategy", "cpu-only",
                        "--accelerator", "cpu", "--out", os.path.join(d, "bad.json")],
                       capture_output=True, text=True)
    if r.returncode != 2 or "needle span" not in r.stderr:
        failures.append(f"a needle past the prompt: exit {r.returncode}, stderr {r.stderr}")
if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("ok")
