#!/usr/bin/env python3
"""torch_peers.py — PyTorch's attention as attnbench variants (the seed
article's study): torch_naive and torch_inplace (the seed's eager code, with
out-of-place and in-place masked_fill), torch_sdpa_math / _efficient /
_flash / _cudnn (scaled_dot_product_attention held to one backend) and
torch_flex (FlexAttention under torch.compile). They run inside attnbench's
own runner (attnpeer.py, build/libattnpeer.so): the same grid, inputs,
float64 reference and tolerances, cold / hot / graph timing, warm-up, stop
rule, power readings and CSV as the C variants. Graph mode replays a
torch.cuda.CUDAGraph; op counts come from torch.profiler.

usage: python3 tools/peers/torch_peers.py [attnbench options]
  e.g. --extend RUN_ID, which adds the peers' rows to a run of the C
  variants (make bench PEERS=torch does that); --variants picks peers.
Without PyTorch or a GPU it says so in one line and exits 3."""

import math
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnpeer  # noqa: E402
from attnpeer import ERR_OOM, ERR_UNSUPPORTED, Peer, PeerError  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError as exc:  # the caller (bench/peers.sh) says what then runs
    torch = None
    IMPORT_ERROR = str(exc)


class _Cuda:
    """A device buffer the runner owns, seen by torch without a copy."""

    def __init__(self, ptr, shape):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<u2", "data": (ptr, False),
                                         "version": 3, "strides": None}


def _reason(exc, caught):
    """PyTorch's own reason for refusing a point: the warnings it raised
    (the 'not used because' headers and 'runtime disabled' lines dropped),
    else the exception."""
    lines = []
    for w in caught:
        text = str(w.message).split(" (Triggered internally")[0].strip()
        if text and not text.endswith("because:") and "runtime disabled" not in text and text not in lines:
            lines.append(text)
    return "PyTorch: " + ("; ".join(lines) if lines else f"{type(exc).__name__}: {exc}")


class State:
    """One point's tensors, stream, output and graph."""

    def __init__(self, problem):
        self.p = problem
        self.dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[problem.dtype]
        self.inputs = None  # (q_ptr, k_ptr, v_ptr, (q, k, v))
        self.stream_ptr = None
        self.out = None
        self.contiguous_out = None
        self.graph = self.graph_out = None
        self.called = False
        self.extra = {}  # what a peer keeps per point (mask, backend guard, block mask)


class TorchPeer(Peer):
    """The PyTorch side of every peer: tensors over the runner's buffers, its
    stream made current, the first call's refusals and OOM turned into row
    statuses, graph capture and replay, op counts from torch.profiler."""

    def call(self, st, q, k, v):
        raise NotImplementedError

    def prepare(self, st):
        """Per-point setup of a peer (masks, backend selection)."""

    def setup(self, problem):
        st = State(problem)
        st.extra["versions"] = f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}"
        attnpeer.set_impl(self.impl(st))
        self.prepare(st)
        return st

    def impl(self, st):
        return st.extra["versions"]

    def _tensors(self, st, q, k, v, stream):
        if st.stream_ptr != stream:
            torch.cuda.set_stream(torch.cuda.ExternalStream(stream))
            st.stream_ptr = stream
        if not st.inputs or st.inputs[0] != (q, k, v):
            shapes = (tuple(st.p.shape), tuple(st.p.kv_shape), tuple(st.p.kv_shape))
            ts = tuple(torch.as_tensor(_Cuda(ptr, shape), device="cuda").view(st.dtype)
                       for ptr, shape in zip((q, k, v), shapes))
            st.inputs = ((q, k, v), ts)
        return st.inputs[1]

    def run(self, st, q, k, v, stream):
        qt, kt, vt = self._tensors(st, q, k, v, stream)
        if st.called:
            st.out = self.call(st, qt, kt, vt)
            return
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                st.out = self.call(st, qt, kt, vt)
            except torch.cuda.OutOfMemoryError as exc:
                raise PeerError(ERR_OOM, f"PyTorch: out of memory: {str(exc).splitlines()[0]}") from exc
            except Exception as exc:  # noqa: BLE001
                if self.refusals_skip or (isinstance(exc, RuntimeError) and "No available kernel" in str(exc)):
                    raise PeerError(ERR_UNSUPPORTED, _reason(exc, caught)) from exc
                raise
        st.called = True

    refusals_skip = False  # torch_flex: a failure of its first (compiling) call means "not here"

    def output(self, st):
        out = st.out if st.out.is_contiguous() else st.out.contiguous()
        torch.cuda.current_stream().synchronize()  # the runner copies it out on another stream
        st.contiguous_out = out
        return out.data_ptr()

    def graph(self, st, q, k, v, stream, replay):
        if replay:
            st.graph.replay()
            return
        qt, kt, vt = self._tensors(st, q, k, v, stream)
        st.graph = st.graph_out = None
        torch.cuda.current_stream().synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            st.graph_out = self.call(st, qt, kt, vt)
        st.graph = g

    def count_ops(self, st, mode):
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile
        (qt, kt, vt) = st.inputs[1]
        if mode == "cold":  # as the runner's tracer: the L2 flushed, not counted
            flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8,
                                device="cuda")
            flush.zero_()
            del flush
        torch.cuda.current_stream().synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            if mode == "graph":
                st.graph.replay()
            else:
                self.call(st, qt, kt, vt)
            torch.cuda.current_stream().synchronize()
        kernels = memcpy = memset = 0
        busy, start, end = 0.0, math.inf, -math.inf
        for e in prof.events():
            if e.device_type != DeviceType.CUDA:
                continue
            if e.name.startswith("Memcpy"):
                memcpy += 1
            elif e.name.startswith("Memset"):
                memset += 1
            else:
                kernels += 1
            busy += e.time_range.end - e.time_range.start
            start, end = min(start, e.time_range.start), max(end, e.time_range.end)
        if kernels + memcpy + memset == 0:
            raise PeerError(attnpeer.ERR, "torch.profiler saw no device activity in the call")
        return kernels, memcpy, memset, busy / 1e3, (end - start) / 1e3

    def teardown(self, st):
        if st is None:
            return
        guard = st.extra.pop("backend", None)
        if guard is not None:
            guard.__exit__(None, None, None)
        st.graph = st.graph_out = st.out = st.contiguous_out = st.inputs = None
        st.extra.clear()
        torch.cuda.synchronize()
        torch.cuda.set_stream(torch.cuda.default_stream())
        torch.cuda.empty_cache()  # the runner allocates the next point's tensors itself


class Eager(TorchPeer):
    """The seed's eager attention: matmul, scale, masked_fill, softmax,
    matmul, with the mask an input made once per point, as the seed passes
    it in: the causal triangle, or all false when the point is not causal
    (the seed's code still calls masked_fill; our naive and inplace do the
    same)."""
    in_place = False

    def prepare(self, st):
        s = st.p.seq_len
        ones = torch.ones(s, s, dtype=torch.bool, device="cuda")
        st.extra["mask"] = torch.triu(ones, 1) if st.p.causal else torch.zeros_like(ones)

    def call(self, st, q, k, v):
        if st.p.kv_heads != st.p.heads:  # as eager code does it: each K/V head repeated for its group
            group = st.p.heads // st.p.kv_heads
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = torch.matmul(q, k.transpose(-2, -1))
        scores = scores * st.p.scale
        if self.in_place:
            scores.masked_fill_(st.extra["mask"], float("-inf"))
        else:
            scores = scores.masked_fill(st.extra["mask"], float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


class TorchNaive(Eager):
    name = "torch_naive"
    summary = "PyTorch eager, the seed's code: out-of-place masked_fill (a D2D copy)"


class TorchInplace(Eager):
    name = "torch_inplace"
    summary = "PyTorch eager, the seed's fix: in-place masked_fill_"
    in_place = True


class Sdpa(TorchPeer):
    """F.scaled_dot_product_attention held to one backend (sdpa_kernel)."""
    backend = None
    fused = True

    def prepare(self, st):
        guard = sdpa_kernel(getattr(SDPBackend, self.backend))
        guard.__enter__()
        st.extra["backend"] = guard

    def impl(self, st):
        return f"{st.extra['versions']}, SDPBackend.{self.backend}"

    def call(self, st, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=bool(st.p.causal), scale=st.p.scale,
                                              enable_gqa=st.p.kv_heads != st.p.heads)


class SdpaMath(Sdpa):
    name, backend, fused = "torch_sdpa_math", "MATH", False
    summary = "PyTorch SDPA, math backend (unfused composite ops)"


class SdpaEfficient(Sdpa):
    name, backend = "torch_sdpa_efficient", "EFFICIENT_ATTENTION"
    summary = "PyTorch SDPA, memory-efficient backend (xFormers/CUTLASS kernel)"


class SdpaFlash(Sdpa):
    name, backend = "torch_sdpa_flash", "FLASH_ATTENTION"
    summary = "PyTorch SDPA, flash backend (FlashAttention-2)"


class SdpaCudnn(Sdpa):
    name, backend = "torch_sdpa_cudnn", "CUDNN_ATTENTION"
    summary = "PyTorch SDPA, cuDNN backend (PyTorch's own cuDNN)"


class Flex(TorchPeer):
    """FlexAttention compiled by torch.compile for each point (its first,
    untimed, call compiles); causal through a block mask made once per
    point. Dynamo's caches are reset per point: past its recompile limit (8
    shapes) it would fall back to eager flex_attention, a slow unfused
    path, and our rows would time that instead; a fallback anyway is an
    error row, not a number."""
    name = "torch_flex"
    summary = "PyTorch FlexAttention under torch.compile (Triton kernel)"
    fused = True
    refusals_skip = True

    def prepare(self, st):
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        torch._dynamo.reset()
        if hasattr(torch._dynamo.config, "fail_on_recompile_limit_hit"):
            torch._dynamo.config.fail_on_recompile_limit_hit = True
        st.extra["compiled"] = torch.compile(flex_attention, dynamic=False)
        if st.p.causal:
            s = st.p.seq_len
            st.extra["block_mask"] = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, s, s,
                                                       device="cuda")

    def impl(self, st):
        return f"{st.extra['versions']}, torch.compile(flex_attention)"

    def call(self, st, q, k, v):
        return st.extra["compiled"](q, k, v, block_mask=st.extra.get("block_mask"), scale=st.p.scale,
                                    enable_gqa=st.p.kv_heads != st.p.heads)


PEERS = (TorchNaive, TorchInplace, SdpaMath, SdpaEfficient, SdpaFlash, SdpaCudnn, Flex)


def main(argv):
    if torch is None:
        print(f"torch_peers: PyTorch is not importable ({IMPORT_ERROR}): no peers run", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("torch_peers: PyTorch sees no GPU (torch.cuda.is_available() is False): no peers run",
              file=sys.stderr)
        return 3
    for peer in PEERS:
        attnpeer.register(peer())
    return attnpeer.bench(argv + ["--no-trace"], program="torch_peers")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
