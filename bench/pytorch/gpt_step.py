#!/usr/bin/python3
"""The zoo's GPT training step (src/models/gpt.h) in PyTorch, the peer `alpa run` is compared with.

Same network: token + learned position embedding; post-LN blocks y = LN1(x + Attn(x)),
LN2(y + W2 gelu_tanh(W1 y + b1) + b2) with causal multi-head attention from one fused qkv dense;
LM head tied to the token embedding plus an output bias; mean cross-entropy in f32; Adam. The
batch is the zoo's bigram pattern: token (a_r + 3 s) mod vocab, label token + 3.

Prints one JSON object: {"threads", "config", "steps": [{"step", "loss", "time_s"}]}.
Run with Debian's interpreter (/usr/bin/python3, package python3-torch); bench/pytorch/compare.sh
runs it beside alpa.
"""
import argparse
import json
import math
import time

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.out = torch.nn.Linear(hidden, hidden)
        self.ln1 = torch.nn.LayerNorm(hidden, eps=1e-5)
        self.fc1 = torch.nn.Linear(hidden, 4 * hidden)
        self.fc2 = torch.nn.Linear(4 * hidden, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x, mask):
        b, s, h = x.shape
        d = h // self.heads
        qkv = self.qkv(x).view(b, s, h, 3)  # column 3 j + {0, 1, 2}: element j of q, k, v
        q, k, v = (qkv[..., i].view(b, s, self.heads, d).transpose(1, 2) for i in range(3))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        scores = scores.masked_fill(mask, float("-inf"))
        attention = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, s, h)
        y = self.ln1(x + self.out(attention))
        return self.ln2(y + self.fc2(F.gelu(self.fc1(y), approximate="tanh")))


class Gpt(torch.nn.Module):
    def __init__(self, layers, hidden, heads, seq, vocab):
        super().__init__()
        self.wte = torch.nn.Parameter(torch.randn(vocab, hidden) * 0.02)
        self.wpe = torch.nn.Parameter(torch.randn(seq, hidden) * 0.01)
        self.blocks = torch.nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.lm_bias = torch.nn.Parameter(torch.zeros(vocab))
        self.register_buffer("mask", torch.ones(seq, seq, dtype=torch.bool).triu(1))

    def forward(self, tokens, labels):
        x = self.wte[tokens] + self.wpe
        for block in self.blocks:
            x = block(x, self.mask)
        logits = x @ self.wte.t() + self.lm_bias
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.view(-1))


def batch(rows, seq, vocab, seed):
    generator = torch.Generator().manual_seed(seed)
    start = torch.randint(0, vocab, (rows, 1), generator=generator)
    tokens = (start + 3 * torch.arange(seq)) % vocab
    return tokens, (tokens + 3) % vocab


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    for name, default in [("layers", 2), ("hidden", 256), ("heads", 4), ("seq", 128),
                          ("vocab", 1024), ("batch", 8), ("steps", 5), ("threads", 2)]:
        parser.add_argument("--" + name, type=int, default=default)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = Gpt(args.layers, args.hidden, args.heads, args.seq, args.vocab)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    steps = []
    for step in range(args.steps):
        tokens, labels = batch(args.batch, args.seq, args.vocab, step)
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = model(tokens, labels)
        loss.backward()
        optimizer.step()
        steps.append({"step": step + 1, "loss": loss.item(),
                      "time_s": time.perf_counter() - start})
    config = {k: getattr(args, k) for k in ("layers", "hidden", "heads", "seq", "vocab", "batch")}
    print(json.dumps({"threads": args.threads, "config": config, "steps": steps}))


if __name__ == "__main__":
    main()
