#!/usr/bin/env python3
"""Exports the small PyTorch models that examples/import/ commits, as a PyTorch user would.

    /usr/bin/python3 examples/import/export_models.py examples/import
    /usr/bin/python3 examples/import/export_models.py examples/import --large

Needs torch (Debian's python3-torch 1.13 made the committed files) and numpy; the test suite
reads the committed files and does not need PyTorch. For each model it writes NAME.onnx (the
weights inside the file) and NAME.expected.json: one batch, PyTorch's forward output on it (in
float32, and in float64 as the exact result to judge rounding by) and PyTorch's parameter count,
which tests/onnx compares our import against.
"""
import copy
import json
import math
import os
import sys

import torch
from torch import nn

OPSET = 17  # LayerNormalization is an ONNX operator from opset 17 on


class Mlp(nn.Module):
    """Four Linear + ReLU layers, a regression head."""

    def __init__(self, width=32, depth=4, outputs=8):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, outputs)

    def forward(self, x):
        return self.head(self.body(x))


class EncoderLm(nn.Module):
    """A language model on nn.TransformerEncoder: embeddings, encoder layers, a vocabulary head."""

    def __init__(self, vocab=64, hidden=32, heads=4, layers=8, seq=16):
        super().__init__()
        self.token = nn.Embedding(vocab, hidden)
        self.position = nn.Parameter(torch.randn(seq, hidden) * 0.02)
        layer = nn.TransformerEncoderLayer(hidden, heads, dim_feedforward=4 * hidden,
                                           dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        # TransformerEncoder deep-copies one layer, so every layer starts with the same weights,
        # and the exporter then stores them once for all layers. Give each layer its own draw,
        # as training from scratch would, so the file holds every layer's weights.
        for encoder_layer in self.encoder.layers:
            for parameter in encoder_layer.parameters():
                if parameter.dim() > 1:
                    nn.init.xavier_uniform_(parameter)
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        x = self.token(tokens) + self.position
        return self.head(self.norm(self.encoder(x)))


class CausalSelfAttention(nn.Module):
    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(x).split(h, dim=2)
        q = q.view(b, s, self.heads, h // self.heads).transpose(1, 2)
        k = k.view(b, s, self.heads, h // self.heads).transpose(1, 2)
        v = v.view(b, s, self.heads, h // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(h // self.heads))
        att = att.masked_fill(self.mask[:, :, :s, :s] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, s, h)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = CausalSelfAttention(hidden, heads, seq)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.out = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x))))


class Gpt2(nn.Module):
    """A GPT-2-style decoder in plain torch.nn (nanoGPT's layout), head tied to the embedding."""

    def __init__(self, vocab=64, hidden=32, heads=4, layers=4, seq=16):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList([Block(hidden, heads, seq) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], dtype=torch.long).unsqueeze(0)
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.t()


class AlpaGptBlock(nn.Module):
    """A block of Alpa's benchmark GPT (its Flax model, the zoo's gpt family): post-LN, fused
    QKV, tanh-approximated GELU."""

    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.attn = CausalSelfAttention(hidden, heads, seq)
        self.ln1 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, 4 * hidden)
        self.fc2 = nn.Linear(4 * hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)

    def forward(self, x):
        y = self.ln1(x + self.attn(x))
        return self.ln2(y + self.fc2(nn.functional.gelu(self.fc1(y), approximate="tanh")))


class AlpaGpt(nn.Module):
    """Alpa's benchmark GPT written in PyTorch, at the sizes of the zoo's gpt-tiny with 8 layers
    (`alpa plan gpt-tiny --layers 8`): the LM head tied to the embedding, with a bias."""

    def __init__(self, vocab=64, hidden=32, heads=4, layers=8, seq=16):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList([AlpaGptBlock(hidden, heads, seq) for _ in range(layers)])
        self.lm_bias = nn.Parameter(torch.zeros(vocab))

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], dtype=torch.long).unsqueeze(0)
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return x @ self.wte.weight.t() + self.lm_bias


class BasicBlock(nn.Module):
    """torchvision's ResNet BasicBlock."""

    def __init__(self, inputs, outputs, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.relu = nn.ReLU()
        self.downsample = None
        if stride != 1 or inputs != outputs:
            self.downsample = nn.Sequential(nn.Conv2d(inputs, outputs, 1, stride, bias=False),
                                            nn.BatchNorm2d(outputs))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(y)) + identity)


class ResNet(nn.Module):
    """torchvision's ResNet layout (stem, four stages of BasicBlocks, pooled head), narrow."""

    def __init__(self, width=8, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        stages, inputs = [], width
        for i, stride in enumerate([1, 2, 2, 2]):
            outputs = width * 2**i
            stages.append(nn.Sequential(BasicBlock(inputs, outputs, stride),
                                        BasicBlock(outputs, outputs, 1)))
            inputs = outputs
        self.layers = nn.Sequential(*stages)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(inputs, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = torch.flatten(self.avgpool(self.layers(x)), 1)
        return self.fc(x)


def short(example):
    """A float batch rounded to 3 decimals, so that the JSON holds it in a few characters a
    value and reads back as the same float32 values (the nearest float32 to each decimal)."""
    return torch.round(example * 1000) / 1000 if example.is_floating_point() else example


def forward_flops(model, example):
    """FLOPs of one forward call in matmuls and convolutions, as PyTorch counts them: its
    FlopCounterMode (torch 2.1 on), or on an older torch the same formulas over the aten
    operators the forward dispatches (2 m k n a matrix product, 2 |output| c_in/groups k_h k_w a
    convolution)."""
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        FlopCounterMode = None
    with torch.no_grad():
        if FlopCounterMode is not None:
            counter = FlopCounterMode(display=False)
            with counter:
                model(example)
            return counter.get_total_flops()
        from torch.utils._python_dispatch import TorchDispatchMode
        aten = torch.ops.aten

        def product(a, b):  # [..., m, k] x [..., k, n]
            return 2 * math.prod(a.shape) * b.shape[-1]

        class Counter(TorchDispatchMode):
            flops = 0

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                packet = func._overloadpacket
                if packet in (aten.mm, aten.bmm):
                    Counter.flops += product(args[0], args[1])
                elif packet in (aten.addmm, aten.baddbmm):
                    Counter.flops += product(args[1], args[2])
                elif packet is aten.convolution:
                    weight = args[1]
                    Counter.flops += 2 * out.numel() * math.prod(weight.shape[1:])
                return out

        with Counter():
            model(example)
        return Counter.flops


def export(directory, name, model, example):
    """Exports for training, as one exports a model to train it elsewhere: in training mode,
    BatchNormalization stays (batch statistics) instead of being folded into the convolutions,
    no weight is pre-transposed or otherwise folded into a new constant, and each parameter is
    stored under its own name, so the file has exactly the parameters PyTorch trains."""
    model.train()
    example = short(example)
    path = os.path.join(directory, name + ".onnx")
    torch.onnx.export(model, (example,), path, opset_version=OPSET, input_names=["input"],
                      output_names=["output"], training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
    with torch.no_grad():
        output = model(example)
        # The exact result, to judge float32 rounding by: the same model in float64.
        exact = copy.deepcopy(model).double()(example if not example.is_floating_point()
                                              else example.double())
    expected = {
        "model": name + ".onnx",
        "made_by": f"torch {torch.__version__}, opset {OPSET}, examples/import/export_models.py",
        "parameters": sum(p.numel() for p in model.parameters()),
        "forward_flops": forward_flops(model, example),
        "input_shape": list(example.shape),
        "input": [round(v, 3) if example.is_floating_point() else v
                  for v in example.flatten().tolist()],
        "output_shape": list(output.shape),
        "output": [round(v, 7) for v in output.flatten().tolist()],
        "output_float64": [round(v, 9) for v in exact.flatten().tolist()],
    }
    with open(os.path.join(directory, name + ".expected.json"), "w") as f:
        json.dump(expected, f)
        f.write("\n")
    print(f"wrote {path}: {expected['parameters']} parameters")


def export_for_planning(directory, name, model, example, count_flops=True):
    """Exports a large model as PyTorch users keep one: the graph in NAME.onnx and the weights
    beside it in NAME.onnx.data (ONNX's external data, as torch.onnx.export writes any model
    over 2 GiB). Planning reads only the graph; the repository commits only that.
    NAME.expected.json holds the parameter count, PyTorch's forward FLOPs and the data file's size.

    The graph is exported without the weights (export_params=False: each parameter and buffer
    becomes a graph input named after it), and each is then written to the data file and turned
    back into an initializer pointing at it: the file torch writes for a large model, without
    holding a second copy of 5 GiB in a protobuf. Exporting traces one forward pass: give torch a
    real BLAS (apt-get install libopenblas0-pthread; Debian's reference libblas3 runs a matmul at
    1.5 GFLOP/s, and gpt-1.3b's trace did not end in 23 minutes), and gpt-1.3b exports in 2.6
    minutes on two cores."""
    import tempfile

    import onnx
    from onnx import numpy_helper

    model.train()
    path = os.path.join(directory, name + ".onnx")
    data = os.path.join(directory, name + ".onnx.data")
    with tempfile.TemporaryDirectory() as scratch:
        graph_only = os.path.join(scratch, "graph.onnx")
        # A dynamic batch: planning picks the micro-batch size.
        torch.onnx.export(model, (example,), graph_only, opset_version=OPSET,
                          input_names=["input"], output_names=["output"],
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                          export_params=False, dynamic_axes={"input": {0: "batch"}})
        proto = onnx.load(graph_only)
    tensors = dict(model.named_parameters())
    tensors.update(dict(model.named_buffers()))
    kept_inputs = []
    with open(data, "wb") as f:
        for graph_input in proto.graph.input:
            if graph_input.name not in tensors:
                kept_inputs.append(graph_input)
                continue
            values = tensors[graph_input.name].detach().numpy()
            initializer = numpy_helper.from_array(values[()] if values.ndim == 0 else values[:0],
                                                  graph_input.name)
            del initializer.dims[:]
            initializer.dims.extend(values.shape)
            initializer.ClearField("raw_data")
            initializer.data_location = onnx.TensorProto.EXTERNAL
            for key, value in (("location", name + ".onnx.data"), ("offset", str(f.tell())),
                               ("length", str(values.nbytes))):
                entry = initializer.external_data.add()
                entry.key, entry.value = key, value
            f.write(values.tobytes())
            proto.graph.initializer.append(initializer)
    del proto.graph.input[:]
    proto.graph.input.extend(kept_inputs)
    onnx.save_model(proto, path)
    onnx.checker.check_model(path)  # by path: it finds the data file beside the model
    expected = {
        "model": name + ".onnx",
        "made_by": f"torch {torch.__version__}, opset {OPSET}, examples/import/export_models.py",
        "parameters": sum(p.numel() for p in model.parameters()),
        "forward_flops": forward_flops(model, example) if count_flops else None,
        "input_shape": list(example.shape),
        "external_data": name + ".onnx.data",
        "external_data_bytes": os.path.getsize(data),
    }
    with open(os.path.join(directory, name + ".expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    print(f"wrote {path} and its weights: {expected['parameters']} parameters")


def main():
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    directory = arguments[0] if arguments else os.path.dirname(__file__)
    torch.manual_seed(0)
    if "--large" in sys.argv:
        # Alpa's GPT at real sizes, for planning: 8 layers of gpt-125m's width (the graph is
        # committed, its 400 MiB of weights not) and gpt-1.3b (5 GiB of weights; its FLOPs are
        # not counted, which takes long on a CPU).
        export_for_planning(directory, "alpa_gpt_8x768",
                            AlpaGpt(vocab=51200, hidden=768, heads=12, layers=8, seq=1024),
                            torch.randint(0, 51200, (1, 1024)))
        export_for_planning(directory, "alpa_gpt_1.3b",
                            AlpaGpt(vocab=51200, hidden=2048, heads=32, layers=24, seq=1024),
                            torch.randint(0, 51200, (1, 1024)), count_flops=False)
        return
    export(directory, "mlp", Mlp(), torch.randn(8, 32))
    export(directory, "encoder_lm", EncoderLm(), torch.randint(0, 64, (4, 16)))
    export(directory, "gpt2", Gpt2(), torch.randint(0, 64, (4, 16)))
    export(directory, "alpa_gpt", AlpaGpt(), torch.randint(0, 64, (4, 16)))
    export(directory, "resnet", ResNet(), torch.randn(8, 3, 32, 32))


if __name__ == "__main__":
    main()
