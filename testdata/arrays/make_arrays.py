"""Writes the array files the batch-file tests read (tests/api/array_file_test.cc,
tests/tools/cli_import_test.cc), with NumPy and Hugging Face's safetensors:

    python3 -m venv /tmp/arrays && /tmp/arrays/bin/pip install numpy safetensors
    /tmp/arrays/bin/python testdata/arrays/make_arrays.py testdata/arrays

gpt2_batches.*   two steps of examples/import/gpt2.onnx's batch (4 sequences of 16 ids below its
                 vocabulary of 64) and their next-token labels, int64 as PyTorch keeps ids
mlp_batches.npz  two steps of examples/import/mlp.onnx's batch for --loss mse, float64 as NumPy
                 makes them, compressed
the rest         one small array in each .npy variant the reader accepts or refuses
"""
import os
import sys

import numpy as np
from safetensors.numpy import save_file


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
    rng = np.random.default_rng(0)

    # Sequences that count up from a random start: the next id is predictable, so the loss falls.
    starts = rng.integers(0, 64, size=(8, 1))
    ids = (starts + np.arange(17)) % 64
    gpt2 = {"input": ids[:, :16].astype(np.int64), "labels": ids[:, 1:].astype(np.int64)}
    np.savez(os.path.join(directory, "gpt2_batches.npz"), **gpt2)
    save_file(gpt2, os.path.join(directory, "gpt2_batches.safetensors"))

    x = rng.normal(size=(16, 32))
    projection = rng.normal(size=(32, 8)) / np.sqrt(32)
    np.savez_compressed(os.path.join(directory, "mlp_batches.npz"), input=x, labels=x @ projection)

    small = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.save(os.path.join(directory, "small_v1.npy"), small)
    with open(os.path.join(directory, "small_v2.npy"), "wb") as f:
        np.lib.format.write_array(f, small, version=(2, 0))
    np.save(os.path.join(directory, "flags.npy"), np.array([True, False, True]))
    np.save(os.path.join(directory, "big_endian.npy"), small.astype(">f4"))
    np.save(os.path.join(directory, "fortran.npy"), np.asfortranarray(small))


if __name__ == "__main__":
    main()
