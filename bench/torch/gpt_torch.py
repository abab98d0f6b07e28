#!/usr/bin/python3
"""PyTorch (CPU, fp32) reference of zrun's GPT, for side-by-side timing.

The model mirrors executor/model/gpt.h / gpt_block.cc: token + learned position
embeddings, pre-LN blocks (LayerNorm eps 1e-5, fused qkv linear with bias,
causal multi-head attention, output projection with bias, LayerNorm, MLP of
width ffn_hidden with tanh-approximated GELU and biases), final LayerNorm, LM
head tied to the token embedding (no bias), mean cross-entropy, AdamW
(lr 3e-4, betas 0.9/0.999, eps 1e-8, weight decay 0).

Modes:
  step    : time full training steps (zero_grad, forward, backward, AdamW step)
  kernels : time linear / attention / layernorm fwd+bwd on the model's shapes
  all     : both

Output: human-readable lines plus one machine-readable line per measurement,
prefixed with "RESULT " and made of key=value pairs.

Run with Debian's interpreter (/usr/bin/python3) and python3-torch.
"""

import argparse
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def read_model_yaml(path):
    """Flat `key: value` parser (the zinf model YAMLs are flat)."""
    cfg = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip()
            if not line.strip() or line.lstrip().startswith("#") or ":" not in line:
                continue
            key, val = line.split(":", 1)
            key, val = key.strip(), val.strip().strip('"')
            try:
                cfg[key] = int(val)
            except ValueError:
                cfg[key] = val
    for k in ("n_layer", "hidden", "n_head", "vocab", "seq_len"):
        if k not in cfg:
            sys.exit(f"{path}: missing key {k}")
    cfg.setdefault("ffn_hidden", 4 * cfg["hidden"])
    return cfg


class Block(nn.Module):
    def __init__(self, c, n_head, ffn, attn_impl):
        super().__init__()
        self.n_head = n_head
        self.attn_impl = attn_impl
        self.ln1 = nn.LayerNorm(c, eps=1e-5)
        self.qkv = nn.Linear(c, 3 * c, bias=True)
        self.proj = nn.Linear(c, c, bias=True)
        self.ln2 = nn.LayerNorm(c, eps=1e-5)
        self.fc = nn.Linear(c, ffn, bias=True)
        self.fc2 = nn.Linear(ffn, c, bias=True)

    def forward(self, x):
        x = x + self.proj(causal_attention(self.qkv(self.ln1(x)), self.n_head, self.attn_impl))
        x = x + self.fc2(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return x


def causal_attention(qkv, n_head, impl):
    """qkv: [B, T, 3C] -> [B, T, C]."""
    b, t, c3 = qkv.shape
    c = c3 // 3
    d = c // n_head
    q, k, v = qkv.split(c, dim=2)
    q = q.view(b, t, n_head, d).transpose(1, 2)
    k = k.view(b, t, n_head, d).transpose(1, 2)
    v = v.view(b, t, n_head, d).transpose(1, 2)
    if impl == "sdpa":
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:  # explicit scores / mask / softmax / weighted sum
        s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
        mask = torch.ones(t, t, dtype=torch.bool, device=qkv.device).triu(1)
        s = s.masked_fill(mask, float("-inf"))
        y = torch.softmax(s, dim=-1) @ v
    return y.transpose(1, 2).contiguous().view(b, t, c)


class Gpt(nn.Module):
    def __init__(self, cfg, attn_impl):
        super().__init__()
        c, v, t = cfg["hidden"], cfg["vocab"], cfg["seq_len"]
        self.wte = nn.Embedding(v, c)
        self.wpe = nn.Embedding(t, c)
        self.blocks = nn.ModuleList(
            Block(c, cfg["n_head"], cfg["ffn_hidden"], attn_impl) for _ in range(cfg["n_layer"]))
        self.lnf = nn.LayerNorm(c, eps=1e-5)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
                if getattr(m, "bias", None) is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, tokens, targets):
        b, t = tokens.shape
        pos = torch.arange(t, device=tokens.device)
        x = self.wte(tokens) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        logits = F.linear(self.lnf(x), self.wte.weight)  # tied head, no bias
        return F.cross_entropy(logits.view(b * t, -1), targets.reshape(b * t))


def load_batches(corpus, batch, seq, n, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    if corpus and os.path.exists(corpus):
        data = torch.frombuffer(bytearray(open(corpus, "rb").read()), dtype=torch.uint8).long()
        data = data % vocab
    else:
        data = torch.randint(0, vocab, (1 << 16,), generator=g)
    if data.numel() < seq + 2:
        sys.exit("corpus too small")
    out = []
    for _ in range(n):
        starts = torch.randint(0, data.numel() - seq - 1, (batch,), generator=g)
        x = torch.stack([data[s:s + seq] for s in starts.tolist()])
        y = torch.stack([data[s + 1:s + seq + 1] for s in starts.tolist()])
        out.append((x, y))
    return out


def fmt_result(**kv):
    return "RESULT " + " ".join(f"{k}={v}" for k, v in kv.items())


def bench_step(cfg, args):
    torch.manual_seed(args.seed)
    model = Gpt(cfg, args.attn)
    nparams = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.0)
    seq = args.seq_len
    batches = load_batches(args.corpus, args.micro_batch, seq, args.warmup + args.steps,
                           cfg["vocab"], args.seed)
    times, losses = [], []
    for i, (x, y) in enumerate(batches):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = model(x, y)
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        losses.append(loss.item())
        if i >= args.warmup:
            times.append(dt)
    mean = sum(times) / len(times)
    tokens = args.micro_batch * seq
    print(f"torch step: {cfg.get('name', '?')} params {nparams} batch {args.micro_batch}x{seq} "
          f"threads {torch.get_num_threads()} attn {args.attn}: mean {mean * 1e3:.2f} ms "
          f"min {min(times) * 1e3:.2f} ms over {len(times)} steps (+{args.warmup} warm-up), "
          f"{tokens / mean:.0f} tokens/s, loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    print(fmt_result(kind="step", model=cfg.get("name", "?"), params=nparams, batch=args.micro_batch,
                     seq=seq, tokens=tokens, mean_s=f"{mean:.6f}", min_s=f"{min(times):.6f}",
                     tokens_per_s=f"{tokens / mean:.1f}", steps=len(times)))


def time_fn(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return sum(ts) / len(ts), ts[0]


def bench_kernels(cfg, args):
    torch.manual_seed(args.seed)
    b, t, c, h, ffn = args.micro_batch, args.seq_len, cfg["hidden"], cfg["n_head"], cfg["ffn_hidden"]
    m = b * t
    reps, warm = args.kernel_reps, max(2, args.warmup)
    rows = []

    def linear_case(name, k_in, n_out):
        x = torch.randn(m, k_in, requires_grad=True)
        lin = nn.Linear(k_in, n_out, bias=True)
        dy = torch.randn(m, n_out)

        def fn():
            x.grad = None
            lin.zero_grad(set_to_none=True)
            lin(x).backward(dy)
        flops = 3 * 2 * m * k_in * n_out  # fwd + dX + dW
        rows.append((name, f"[{m}x{k_in}]x[{k_in}x{n_out}]", flops) + time_fn(fn, warm, reps))

    linear_case("linear qkv", c, 3 * c)
    linear_case("linear proj", c, c)
    linear_case("linear fc", c, ffn)
    linear_case("linear fc2", ffn, c)
    linear_case("lm head", c, cfg["vocab"])

    impls = ("sdpa", "manual") if hasattr(F, "scaled_dot_product_attention") else ("manual",)
    for impl in impls:
        qkv = torch.randn(b, t, 3 * c, requires_grad=True)
        dy = torch.randn(b, t, c)

        def fn(impl=impl):
            qkv.grad = None
            causal_attention(qkv, h, impl).backward(dy)
        d = c // h
        flops = 3 * 2 * 2 * b * h * t * t * d  # QK^T and PV, fwd + 2x bwd (dense count)
        rows.append((f"attention {impl}", f"B{b} H{h} T{t} D{d}", flops) + time_fn(fn, warm, reps))

    x = torch.randn(m, c, requires_grad=True)
    ln = nn.LayerNorm(c, eps=1e-5)
    dy = torch.randn(m, c)

    def ln_fn():
        x.grad = None
        ln.zero_grad(set_to_none=True)
        ln(x).backward(dy)
    rows.append(("layernorm", f"[{m}x{c}]", 0) + time_fn(ln_fn, warm, reps))

    print(f"torch kernels (fwd+bwd): {cfg.get('name', '?')} batch {b}x{t} threads "
          f"{torch.get_num_threads()}, mean of {reps}")
    print(f"  {'kernel':<18} {'shape':<26} {'mean ms':>9} {'min ms':>9} {'GFLOP/s':>9}")
    for name, shape, flops, mean, mn in rows:
        gf = f"{flops / mean / 1e9:9.2f}" if flops else f"{'-':>9}"
        print(f"  {name:<18} {shape:<26} {mean * 1e3:9.3f} {mn * 1e3:9.3f} {gf}")
        print(fmt_result(kind="kernel", model=cfg.get("name", "?"), kernel=name.replace(" ", "_"),
                         mean_s=f"{mean:.6f}", min_s=f"{mn:.6f}",
                         gflops=f"{flops / mean / 1e9:.2f}" if flops else "-"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="zinf model YAML (e.g. models/small.yaml)")
    ap.add_argument("--micro-batch", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=0, help="default: the model's seq_len")
    ap.add_argument("--steps", type=int, default=7, help="timed steps (after warm-up)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--corpus", default="", help="byte corpus (default: random tokens)")
    ap.add_argument("--attn", choices=("sdpa", "manual"), default="sdpa",
                    help="sdpa = F.scaled_dot_product_attention (falls back to manual on torch < 2.0)")
    ap.add_argument("--mode", choices=("step", "kernels", "all"), default="step")
    ap.add_argument("--kernel-reps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    cfg = read_model_yaml(args.model)
    if args.seq_len <= 0:
        args.seq_len = cfg["seq_len"]
    if args.seq_len > cfg["seq_len"]:
        sys.exit("seq_len exceeds the model's (learned positions)")
    if args.attn == "sdpa" and not hasattr(F, "scaled_dot_product_attention"):
        args.attn = "manual"
    if args.mode in ("step", "all"):
        bench_step(cfg, args)
    if args.mode in ("kernels", "all"):
        bench_kernels(cfg, args)


if __name__ == "__main__":
    main()
