#!/usr/bin/env python3
"""Capture one attention layer of a PyTorch model as a hybridbench trace.

Records the layer's q, k and v (after RoPE, as attention sees them) during a prefill pass and
the decode steps after it, plus the prompt's own queries (`prompt_q`) and the layer's attention
output of every decode step (`o`), and writes them in the safetensors layout
`hybridbench run --workload trace:FILE` reads (bench/trace.h, reports/README.md):

    k, v     [tokens, kv_heads, head_dim]   every position: prompt, then one row per step
    q        [steps, q_heads, head_dim]     the query of each decode step
    prompt_q [n, q_heads, head_dim]         the last n prompt positions' queries (prefill)
    o        [steps, q_heads, head_dim]     the layer's own attention output of each step

Only torch is needed (safetensors is written by hand); a Hugging Face model needs
`transformers` too.

Hugging Face causal LM (transformers installed):

    scripts/capture-trace.py --hf meta-llama/Llama-3.1-8B --layer 12 \\
        --prompt-file long.txt --decode-steps 32 --out llama-layer12.safetensors
    hybridbench run --workload trace:llama-layer12.safetensors --strategy all

Any module (the documented hook): the recorder intercepts the
torch.nn.functional.scaled_dot_product_attention calls made while `module` runs. Each call
passes q [B, q_heads, L, d] and k, v [B, kv_heads or q_heads, S, d] whose last L positions are
the new tokens (a KV cache in front of them is fine); batch row 0 is recorded. The first call
is the prefill, every later one a decode step:

    import importlib.util
    spec = importlib.util.spec_from_file_location("capture_trace", "scripts/capture-trace.py")
    ct = importlib.util.module_from_spec(spec); spec.loader.exec_module(ct)
    rec = ct.TraceRecorder(kv_heads=8)
    with rec.capture(model.layers[12].attn):
        model(prompt_ids)                    # prefill
        for tok in next_tokens:              # decode, one token per call
            model(tok)
    rec.save("layer12.safetensors", prompt_queries=64)

A module that computes attention another way calls rec.record(q, k, v, o) itself, with the same
shapes, once per forward.

A needle-in-a-haystack trace: `--needle TEXT` inserts the needle's tokens into the prompt at
`--needle-depth` (0 = start, 1 = end) and writes where it landed as metadata (needle_token,
needle_tokens); hybridbench then scores each strategy's retrieval of it
(accuracy.needle_success_rate). With your own module, pass the same two keys to
rec.save(..., metadata={"needle_token": first, "needle_tokens": n}); plant_needle() places it.
"""

import argparse
import contextlib
import json
import struct
import sys

import torch
import torch.nn.functional as F

_DTYPES = {"fp16": (torch.float16, "F16"), "bf16": (torch.bfloat16, "BF16"),
           "fp32": (torch.float32, "F32")}


def write_safetensors(path, tensors, metadata=None):
    """tensors: name -> tensor (F16, BF16 or F32). Plain safetensors: an 8-byte little-endian
    header length, the JSON header (padded with spaces to 8 bytes), then the data."""
    names = {torch.float16: "F16", torch.bfloat16: "BF16", torch.float32: "F32"}
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        if t.dtype not in names:
            raise ValueError(f"tensor {name}: dtype {t.dtype} (write F16, BF16 or F32)")
        # bf16 has no numpy type: its bits go out as int16, which is the same bytes.
        raw = t.view(torch.int16) if t.element_size() == 2 else t.view(torch.int32)
        data = raw.numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


class TraceRecorder:
    """Collects q, k, v and the attention output of one layer, call after call."""

    def __init__(self, kv_heads=None):
        self.kv_heads = kv_heads
        self.k, self.v, self.q, self.o = [], [], [], []  # per call: [L, heads, d]
        self.prompt_len = None
        self._active = False

    def record(self, q, k, v, o):
        """q, o [B, q_heads, L, d]; k, v [B, kv_heads or q_heads, S, d], S >= L, the last L
        positions new. Records batch row 0."""
        if q.dim() != 4 or k.dim() != 4 or v.shape != k.shape or o.shape != q.shape:
            raise ValueError("expected q, o [B, q_heads, L, d] and k, v [B, heads, S, d]; got "
                             f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}, "
                             f"o {tuple(o.shape)}")
        L, S = q.shape[2], k.shape[2]
        seen = sum(x.shape[0] for x in self.k)
        if S < L or S != seen + L:
            raise ValueError(f"attention over {S} positions with {L} new after {seen} recorded: "
                             "the cache is not this layer's whole history (a sliding window or "
                             "a second sequence?); record one layer of one sequence from its "
                             "first token")
        q_heads, heads = q.shape[1], k.shape[1]
        kv = self.kv_heads or heads
        if heads == q_heads and kv < heads:  # repeat_kv already applied: one copy per group
            k, v = k[:, :: heads // kv], v[:, :: heads // kv]
        elif heads != kv:
            raise ValueError(f"k has {heads} heads, expected {kv} (kv_heads) or {q_heads}")
        new = lambda t: t[0, :, -L:, :].transpose(0, 1).float().cpu()  # [L, heads, d]
        self.k.append(new(k))
        self.v.append(new(v))
        self.q.append(new(q))
        self.o.append(new(o))
        if self.prompt_len is None:
            self.prompt_len = L

    @contextlib.contextmanager
    def capture(self, module):
        """Records every scaled_dot_product_attention call made while `module` runs."""
        patched = {}
        for name in ("scaled_dot_product_attention", "_scaled_dot_product_attention"):
            if hasattr(F, name):
                patched[name] = getattr(F, name)

        def wrap(original, private):
            def sdpa(q, k, v, *args, **kwargs):
                out = original(q, k, v, *args, **kwargs)
                if self._active:
                    # torch 1.13's private form returns (output, weights).
                    self.record(q, k, v, out[0] if private else out)
                return out
            return sdpa

        pre = module.register_forward_pre_hook(lambda m, a: setattr(self, "_active", True))
        post = module.register_forward_hook(lambda m, a, r: setattr(self, "_active", False))
        for name, fn in patched.items():
            setattr(F, name, wrap(fn, name.startswith("_")))
        try:
            yield self
        finally:
            for name, fn in patched.items():
                setattr(F, name, fn)
            pre.remove()
            post.remove()
            self._active = False

    def tensors(self, prompt_queries=64, dtype="fp16"):
        if not self.k:
            raise ValueError("nothing recorded: did the module call scaled_dot_product_attention "
                             "(or rec.record) while capture() was active?")
        P = self.prompt_len
        k, v = torch.cat(self.k), torch.cat(self.v)
        q, o = torch.cat(self.q), torch.cat(self.o)
        if k.shape[0] == P:
            raise ValueError("only the prefill was recorded: run at least one decode step")
        n = min(prompt_queries, P)
        dt = _DTYPES[dtype][0]
        out = {"k": k.to(dt), "v": v.to(dt), "q": q[P:].to(dt), "o": o[P:].to(dt)}
        if n > 0:
            out["prompt_q"] = q[P - n:P].to(dt)
        return out

    def save(self, path, prompt_queries=64, dtype="fp16", metadata=None):
        t = self.tensors(prompt_queries, dtype)
        meta = {"format": "hybridbench-trace", "prompt_tokens": self.prompt_len,
                "decode_steps": t["q"].shape[0]}
        meta.update(metadata or {})
        write_safetensors(path, t, meta)
        return t


def plant_needle(ids, needle_ids, depth):
    """ids with needle_ids inserted at `depth` (0..1) of the prompt, never before its first token
    (a tokenizer's BOS): (new ids, position of the needle's first token)."""
    if not 0 <= depth <= 1:
        raise ValueError(f"needle depth {depth} is outside 0..1")
    if len(needle_ids) == 0:
        raise ValueError("the needle has no tokens")
    first = min(max(1, round(depth * len(ids))), len(ids))
    return list(ids[:first]) + list(needle_ids) + list(ids[first:]), first


def capture_hf(args):
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        sys.exit("capture-trace: --hf needs transformers (pip install transformers); without it "
                 "use TraceRecorder on your own module (see this file's docstring)")
    dtype = _DTYPES[args.dtype][0]
    model = AutoModelForCausalLM.from_pretrained(args.hf, torch_dtype=dtype,
                                                 attn_implementation="sdpa")
    model.to(args.device).eval()
    tok = AutoTokenizer.from_pretrained(args.hf)
    text = open(args.prompt_file).read() if args.prompt_file else args.prompt
    ids = tok(text).input_ids
    needle_meta = {}
    if args.needle:
        needle_ids = tok(args.needle, add_special_tokens=False).input_ids
        ids, first = plant_needle(ids, needle_ids, args.needle_depth)
        needle_meta = {"needle_token": first, "needle_tokens": len(needle_ids)}
    ids = torch.tensor([ids], device=args.device)
    layers = model.get_decoder().layers
    if not 0 <= args.layer < len(layers):
        sys.exit(f"capture-trace: --layer {args.layer} is out of range (0-{len(layers) - 1})")
    cfg = model.config
    rec = TraceRecorder(kv_heads=getattr(cfg, "num_key_value_heads", cfg.num_attention_heads))
    with torch.no_grad(), rec.capture(layers[args.layer].self_attn):
        out = model(ids, use_cache=True)
        for _ in range(args.decode_steps):
            nxt = out.logits[:, -1:].argmax(-1)
            out = model(nxt, past_key_values=out.past_key_values, use_cache=True)
    rec.save(args.out, args.prompt_queries, args.dtype,
             {"model": args.hf, "layer": args.layer, "hidden_size": cfg.hidden_size,
              "intermediate_size": getattr(cfg, "intermediate_size", ""),
              "num_hidden_layers": cfg.num_hidden_layers, **needle_meta})


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hf", required=True, help="Hugging Face model name or path")
    p.add_argument("--layer", type=int, default=0, help="decoder layer to record")
    p.add_argument("--prompt", default="The quick brown fox jumps over the lazy dog. " * 64)
    p.add_argument("--prompt-file", help="read the prompt from this file")
    p.add_argument("--decode-steps", type=int, default=32, help="greedy decode steps recorded")
    p.add_argument("--prompt-queries", type=int, default=64,
                   help="prompt positions whose queries are kept as prompt_q (0 = none)")
    p.add_argument("--needle", help="text planted in the prompt; its span is written as "
                   "metadata and hybridbench scores its retrieval")
    p.add_argument("--needle-depth", type=float, default=0.5,
                   help="where the needle goes, 0 (start) to 1 (end) of the prompt")
    p.add_argument("--dtype", choices=sorted(_DTYPES), default="fp16")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--out", required=True, help="the .safetensors file to write")
    args = p.parse_args()
    if args.decode_steps < 1:
        sys.exit("capture-trace: --decode-steps must be >= 1")
    if not 0 <= args.needle_depth <= 1:
        sys.exit("capture-trace: --needle-depth must be in 0..1 (0 = start, 1 = end)")
    capture_hf(args)


if __name__ == "__main__":
    main()
