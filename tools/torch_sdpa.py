#!/usr/bin/env python3
"""torch_sdpa.py — PyTorch's scaled_dot_product_attention on this GPU, per
backend (cuDNN, FlashAttention-2), at the default grid's points, so that
cudnn_sdpa and our kernels can be set beside PyTorch measured in the same
session (../shared/anchors.md was one such run). Timing as in anchors.md:
L2 flushed before every sample, CUDA events around one call, median.
usage: python3 tools/torch_sdpa.py [--seq 2048,16384] [--reps 30]"""
import argparse
import statistics

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F


def time_call(fn, reps, flush):
    for _ in range(5):
        fn()
    times = []
    for _ in range(reps):
        flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq", default="2048,4096,8192,16384")
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}")
    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash2": SDPBackend.FLASH_ATTENTION}
    for d in (128, 64):
        for causal in (False, True):
            for s in (int(x) for x in args.seq.split(",")):
                b, h = 16384 // s, 2048 // d
                q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
                flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
                line = f"D={d:<3} {'causal' if causal else 'full  '} S={s:<5} B={b:<2} H={h:<2}"
                for name, be in backends.items():
                    with sdpa_kernel(be):
                        ms = time_call(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                                       args.reps, flush)
                    line += f"  {name} {ms:8.4f} ms {flops / ms / 1e9:6.1f} TFLOP/s"
                print(line, flush=True)


if __name__ == "__main__":
    main()
