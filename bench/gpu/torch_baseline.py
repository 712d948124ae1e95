#!/usr/bin/env python3
"""The vendor baseline of bench/gpu/device_check.sh: PyTorch on the GPU, fp32,
TF32 off, timed with CUDA events (warm-up, then the median of repeats of
`number` calls each, as Kiln's runner times a candidate).

  torch_baseline.py gemm B N M K   # torch.matmul of (B,N,K) x (B,K,M): cuBLAS
  torch_baseline.py gemm_fp16 B N M K  # the same in float16 (tensor cores; cuBLAS
                                       # accumulates in fp32, the output is fp16)
  torch_baseline.py softmax M N    # torch.softmax over the last axis of (M,N)

Prints one JSON line: {"op", "shape", "median_seconds", "library"}.
"""
import json
import statistics
import sys

import torch


def time_op(fn, number=50, repeat=9):
    fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    secs = []
    for _ in range(repeat):
        start.record()
        for _ in range(number):
            fn()
        stop.record()
        stop.synchronize()
        secs.append(start.elapsed_time(stop) / 1000.0 / number)
    return statistics.median(secs)


def main():
    if not torch.cuda.is_available():
        sys.exit("torch_baseline: PyTorch sees no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    op, dims = sys.argv[1], [int(x) for x in sys.argv[2:]]
    dev = torch.device("cuda")
    if op == "gemm":
        b, n, m, k = dims
        a = torch.rand(b, n, k, device=dev, dtype=torch.float32)
        w = torch.rand(b, k, m, device=dev, dtype=torch.float32)
        out = torch.empty(b, n, m, device=dev, dtype=torch.float32)
        secs = time_op(lambda: torch.matmul(a, w, out=out))
        lib = "cuBLAS (torch.matmul, fp32, TF32 off)"
    elif op == "gemm_fp16":
        b, n, m, k = dims
        a = torch.rand(b, n, k, device=dev, dtype=torch.float16)
        w = torch.rand(b, k, m, device=dev, dtype=torch.float16)
        out = torch.empty(b, n, m, device=dev, dtype=torch.float16)
        secs = time_op(lambda: torch.matmul(a, w, out=out))
        lib = "cuBLAS (torch.matmul, fp16 in and out, tensor cores)"
    elif op == "softmax":
        m, n = dims
        x = torch.rand(m, n, device=dev, dtype=torch.float32)
        secs = time_op(lambda: torch.softmax(x, dim=-1))
        lib = "torch.softmax (fp32)"
    else:
        sys.exit("torch_baseline: unknown op " + op)
    print(json.dumps({"op": op, "shape": dims, "median_seconds": secs, "library": lib,
                      "device": torch.cuda.get_device_name(0), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
