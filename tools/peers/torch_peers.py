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

A decode point (q_len below kv_len: each sequence's last q_len tokens
against all its keys) aligns causal bottom-right, as attnbench defines it:
the eager peers' mask is the triangle shifted by kv_len − q_len, SDPA takes
torch.nn.attention.bias.causal_lower_right (its is_causal aligns top-left),
FlexAttention a block mask with the same shift.

The backward (points of pass bwd and fwd_bwd) is torch.autograd.grad, as
training runs it: Q, K and V are autograd leaves over the runner's buffers
(no copy), the forward that keeps the graph runs once per buffer set
(untimed) for bwd, and each timed call is torch.autograd.grad(O, (Q, K, V),
dO) with the graph retained; fwd_bwd times the forward and the grad in one
call. The gradients are PyTorch's own tensors, validated where they lie.

Ragged batches (varlen; Q, K, V, O packed [tokens, heads, head_dim], one
sequence after another) run as a PyTorch user runs packed sequences: the
eager peers loop over the sequences in Python; SDPA takes them as nested
jagged tensors (PyTorch's own varlen path), a backend's refusal skipped with
PyTorch's reason; FlexAttention sees one sequence of all the tokens with a
document block mask.

A decode's cache may be paged ([pages, page, KV, D] through the runner's
page table, Problem.page_table) or ragged (each sequence its own cached
length, K and V padded to kv_len, Problem.cache_lens), or both. The eager
peers gather the pages through the table inside the timed call
(k_cache[block_table], as engine eager code and our naive and inplace do)
and loop over a ragged cache's sequences, each against its own cached rows;
SDPA has no paged cache (skipped) and runs a ragged cache as that loop too,
one call per sequence; FlexAttention takes a ragged cache as a mask_mod on
the cached lengths and a paged one as a block mask on the physical pages
(each peer's docstring says how).

usage: python3 tools/peers/torch_peers.py [attnbench options]
  e.g. --extend RUN_ID, which adds the peers' rows to a run of the C
  variants (make bench PEERS=torch does that); --variants picks peers.
Without PyTorch or a GPU it says so in one line and exits 3."""

import inspect
import logging
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


def _reason(exc, caught, logged=(), path=""):
    """PyTorch's own reason for refusing a point: the warnings it raised and
    the lines it logged (the 'not used because' headers and 'runtime
    disabled' lines dropped), else the exception; path names the route
    refused ("nested jagged tensors")."""
    lines = []
    for text in [str(w.message) for w in caught] + list(logged):
        text = text.split(" (Triggered internally")[0].strip()
        if text and not text.endswith("because:") and "runtime disabled" not in text and text not in lines:
            lines.append(text)
    why = "; ".join(lines) if lines else f"{type(exc).__name__}: {exc}"
    return "PyTorch: " + (f"{path}: " if path else "") + why


def _section(lines, header):
    """The lines logged under one backend's 'X not used because:' header:
    nested tensors' SDPA logs every backend's checks, enabled or not."""
    kept, inside = [], False
    for line in lines:
        if line.rstrip().endswith("because:"):
            inside = line.startswith(header)
        elif inside:
            kept.append(line)
    return kept


class _Logged(logging.Handler):
    """The lines PyTorch logs through `logger` while the handler is
    installed, kept from the console as catch_warnings keeps the warnings
    (nested tensors' SDPA logs why each backend refused rather than warn)."""

    def __init__(self, logger="torch.nested"):
        super().__init__(logging.WARNING)
        self.logger, self.lines = logging.getLogger(logger), []

    def emit(self, record):
        self.lines.append(record.getMessage())

    def __enter__(self):
        self.saved_propagate = self.logger.propagate
        self.logger.addHandler(self)
        self.logger.propagate = False
        return self

    def __exit__(self, *exc):
        self.logger.removeHandler(self)
        self.logger.propagate = self.saved_propagate
        return False


def _brief(exc, limit=240):
    """An exception in one line: its type and message, whitespace collapsed, cut at limit."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text if len(text) <= limit else text[:limit - 3] + '...'}"


def _capture_error(exc):
    """A failed capture's error and the one it followed: an error inside
    torch.cuda.graph makes ending the capture fail too, and that second
    error is the one raised; the first says why."""
    ctx = exc.__context__
    return _brief(exc) + (f" (after {_brief(ctx)})" if ctx is not None else "")


def each_cache(st, q, k, v, attend):
    """A ragged cache as PyTorch code without a cached-lengths argument runs
    it: a loop over the sequences, attend(b, n, q[b], k[b, :, :n], v[b, :, :n])
    for sequence b of cached length n ([H, q_len, D] queries against its own
    [KV, n, D] rows), the outputs stacked into [B, H, q_len, D]: only the
    cached rows are read, one attention call per sequence."""
    return torch.stack([attend(b, n, q[b], k[b, :, :n], v[b, :, :n]) for b, n in enumerate(st.cache_lens)])


class State:
    """One point's tensors, stream, output and graph; a packed ragged
    batch's lengths and offsets (cu: batch + 1 of them from 0) from the C
    side, None otherwise; a decode's cached lengths (cache_lens: a ragged
    cache's, None when every sequence caches seq_len) and a paged cache's
    table (page_table: the runner's, [batch, pages_per_seq] int32 on the
    device, made here once per point, untimed; None when not paged)."""

    def __init__(self, problem):
        self.p = problem
        self.dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[problem.dtype]
        self.packed = problem.is_packed
        self.lens = problem.seq_lens() if self.packed else None
        self.cu = problem.cu_seqlens() if self.packed else None
        self.cache_lens = problem.cache_lens() if problem.is_ragged_cache else None
        self.paged = problem.is_paged
        self.page_table = torch.tensor(problem.page_table(), dtype=torch.int32, device="cuda").view(
            problem.batch, problem.pages_per_seq) if self.paged else None
        self.inputs = None  # ((q_ptr, k_ptr, v_ptr), the peer's views of them)
        self.stream_ptr = None
        self.out = None
        self.contiguous_out = None
        self.graph = self.graph_out = None
        self.called = set()  # the calls made once already ("fwd", "bwd"): refusals come at the first
        self.grad_inputs = None  # ((q_ptr, k_ptr, v_ptr), Q, K, V as autograd leaves, call()'s views of them)
        self.dout = None  # (dout_ptr, dO as a tensor in O's layout)
        self.kept = None  # the output of the last forward that keeps its autograd graph
        self.graph_kept = None  # bwd's graph mode: the forward whose saved tensors its graph reads
        self.grads = self.contiguous_grads = None
        self.extra = {}  # what a peer keeps per point (mask, backend guard, offsets, block mask)


class TorchPeer(Peer):
    """The PyTorch side of every peer: tensors over the runner's buffers
    (Problem.shape: [B, H, S, D], or packed [tokens, H, D] when ragged), its
    stream made current, the first call's refusals and OOM turned into row
    statuses (an OOM of any later call too: oom_errors), graph capture and
    replay, op counts from torch.profiler."""
    oom_errors = (torch.cuda.OutOfMemoryError,) if torch is not None else ()

    def call(self, st, q, k, v):
        """One forward pass over views(); returns O in Problem.shape (a view is fine)."""
        raise NotImplementedError

    def prepare(self, st):
        """Per-point setup of a peer (masks, backend selection)."""

    def views(self, st, q, k, v):
        """What call() takes, made from the runner's tensors once per buffer
        set, so that every call (and a captured graph) sees the same tensor
        objects and none is built in a timed call: the tensors themselves
        unless a peer reshapes them."""
        return q, k, v

    def refused(self, st, exc):
        """Whether the first call's exception is PyTorch refusing the point (skipped)."""
        return self.refusals_skip or (isinstance(exc, RuntimeError) and "No available kernel" in str(exc))

    def refusal(self, st, exc, caught, logged):
        """The skipped row's reason: PyTorch's own (_reason)."""
        return _reason(exc, caught)

    def capture_refused(self, st):
        """The route whose failed CUDA-graph capture is a refusal of graph
        mode only (skipped), or None: a failed capture is an error."""
        return None

    def setup(self, problem):
        st = State(problem)
        st.extra["versions"] = f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}"
        attnpeer.set_impl(self.impl(st))
        self.prepare(st)
        torch.cuda.synchronize()  # what prepare made on its stream, ready before the runner's reads it
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
            st.inputs = ((q, k, v), self.views(st, *ts), ts)
        return st.inputs[1]

    def _guarded(self, st, what, fn):
        """fn(), its first time (what: "fwd" or "bwd") turning PyTorch's refusal
        into a skipped row with PyTorch's reason and an OOM into an oom row."""
        if what in st.called:
            return fn()
        with warnings.catch_warnings(record=True) as caught, _Logged() as logged:
            warnings.simplefilter("always")
            try:
                result = fn()
            except torch.cuda.OutOfMemoryError as exc:
                raise PeerError(ERR_OOM, f"PyTorch: out of memory: {str(exc).splitlines()[0]}") from exc
            except Exception as exc:  # noqa: BLE001
                if self.refused(st, exc):
                    why = self.refusal(st, exc, caught, logged.lines)
                    raise PeerError(ERR_UNSUPPORTED, why + (" (in the backward)" if what == "bwd" else "")) from exc
                raise
        st.called.add(what)
        return result

    def run(self, st, q, k, v, stream):
        qt, kt, vt = self._tensors(st, q, k, v, stream)
        st.out = self._guarded(st, "fwd", lambda: self.call(st, qt, kt, vt))

    # ------------------------------------------------------------ backward
    has_backward = True

    def _grad_inputs(self, st, q, k, v, stream):
        """Q, K, V as autograd leaves over the runner's buffers (detached
        views, no copy) and call()'s views of them, made once per buffer set."""
        self._tensors(st, q, k, v, stream)
        if not st.grad_inputs or st.grad_inputs[0] != (q, k, v):
            leaves = tuple(t.detach().requires_grad_() for t in st.inputs[2])
            with torch.enable_grad():
                st.grad_inputs = ((q, k, v), leaves, self.views(st, *leaves))
        return st.grad_inputs[1], st.grad_inputs[2]

    def _dout(self, st, dout):
        if not st.dout or st.dout[0] != dout:
            st.dout = (dout, torch.as_tensor(_Cuda(dout, tuple(st.p.shape)), device="cuda").view(st.dtype))
        return st.dout[1]

    def forward_keeping(self, st, q, k, v, stream):
        _, views = self._grad_inputs(st, q, k, v, stream)

        def forward():
            with torch.enable_grad():
                return self.call(st, *views)
        st.kept = st.out = self._guarded(st, "fwd", forward)

    def _grad(self, st, out=None):
        """dQ, dK, dV of out (the kept forward's output unless given) for dO, the
        graph retained for the next call."""
        return torch.autograd.grad(st.kept if out is None else out, st.grad_inputs[1], st.dout[1],
                                   retain_graph=True)

    def backward(self, st, q, k, v, dout, stream):
        self._grad_inputs(st, q, k, v, stream)
        self._dout(st, dout)
        st.grads = self._guarded(st, "bwd", lambda: self._grad(st))

    def gradient(self, st, which):
        g = st.grads[which]
        g = g if g.is_contiguous() else g.contiguous()
        torch.cuda.current_stream().synchronize()  # the runner copies it out on another stream
        st.contiguous_grads = g
        return g.data_ptr()

    def _pass_call(self, st, kept=None):
        """One call of the problem's pass over the last call's tensors (a graph's
        capture, the op count); bwd's is the grad of kept (default: the kept
        forward's output)."""
        if st.p.pass_name == "fwd":
            return self.call(st, *st.inputs[1])
        if st.p.pass_name == "fwd_bwd":
            with torch.enable_grad():
                kept = self.call(st, *st.grad_inputs[2])
        return self._grad(st, kept)

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
        self._tensors(st, q, k, v, stream)
        st.graph = st.graph_out = None
        torch.cuda.current_stream().synchronize()
        g = torch.cuda.CUDAGraph()
        capture = {}
        if st.p.pass_name == "bwd":
            # the backward's ops run on the stream their forward ran on: a
            # forward of the graph's own, untimed, on the stream that captures
            # (kept while the graph lives: its saved tensors are the graph's
            # inputs; st.kept stays the runner stream's, for the other modes)
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side), torch.enable_grad():
                st.graph_kept = self.call(st, *st.grad_inputs[2])
            side.synchronize()
            capture["stream"] = side
        try:
            with torch.cuda.graph(g, **capture):
                st.graph_out = self._pass_call(st, st.graph_kept if capture else None)
        except Exception as exc:  # noqa: BLE001
            path = self.capture_refused(st)
            if path is None or isinstance(exc, torch.cuda.OutOfMemoryError):
                raise
            # an older torch.cuda.graph leaves its capture stream current when
            # ending the capture fails: the runner's stream again, for the next modes
            st.graph_out = None
            del g
            torch.cuda.set_stream(torch.cuda.ExternalStream(stream))
            st.stream_ptr = stream
            torch.cuda.synchronize()
            raise PeerError(ERR_UNSUPPORTED, f"PyTorch: {path}: a CUDA graph cannot capture the call: "
                                             f"{_capture_error(exc)}") from exc
        st.graph = g

    def count_ops(self, st, mode):
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile
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
                self._pass_call(st)
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
        st.grad_inputs = st.dout = st.kept = st.graph_kept = st.grads = st.contiguous_grads = None
        st.extra.clear()
        torch.cuda.synchronize()
        torch.cuda.set_stream(torch.cuda.default_stream())
        torch.cuda.empty_cache()  # the runner allocates the next point's tensors itself


class Eager(TorchPeer):
    """The seed's eager attention: matmul, scale, masked_fill, softmax,
    matmul, with the mask an input made once per point, as the seed passes
    it in: the causal triangle, or all false when the point is not causal
    (the seed's code still calls masked_fill; our naive and inplace do the
    same). A ragged batch as eager code runs packed sequences: a Python loop
    over them, each one's attention with the same ops on its rows of the
    packed tensors ([L, H, D] seen as [H, L, D]) and the mask's top-left
    [L, L] (causal within the sequence), written into its rows of a packed
    output.

    A paged cache as an engine's eager code reads it, and as our naive and
    inplace do: inside the call, K and V gathered through the page table
    (k_cache[block_table], one copy each) into [B, S, KV, D] and seen as
    [B, KV, S, D], the last page's spare slots cut off; then the dense ops.
    A ragged cache (a decode's cached lengths): a loop over the sequences
    (each_cache), each one's queries against its own n cached rows with the
    mask's last n columns, which are the causal triangle aligned
    bottom-right on n (query i sees keys up to n − q_len + i)."""
    in_place = False

    def prepare(self, st):
        s, ql = st.p.seq_len, st.p.q_len  # a decode's q_len rows are the sequence's last
        ones = torch.ones(ql, s, dtype=torch.bool, device="cuda")
        st.extra["mask"] = torch.triu(ones, s - ql + 1) if st.p.causal else torch.zeros_like(ones)
        if st.paged:  # the table as indexing takes it without a conversion in the call
            st.extra["page_index"] = st.page_table.long()

    def impl(self, st):
        paths = ([", a loop over the sequences"] if st.packed else []) + \
            ([", pages gathered through the table"] if st.paged else []) + \
            ([", a loop over the sequences' caches"] if st.cache_lens is not None else [])
        return st.extra["versions"] + "".join(paths)

    @staticmethod
    def gathered(st, cache):
        """A paged cache's K or V, [pages, page, KV, D], gathered through the
        table into sequence order and seen as [B, KV, S, D]."""
        pages = cache[st.extra["page_index"]]  # [B, pages_per_seq, page, KV, D]
        return pages.flatten(1, 2)[:, :st.p.seq_len].transpose(1, 2)

    def attend(self, st, q, k, v, mask):
        """The seed's ops on [..., heads, seq, dim] tensors."""
        if st.p.kv_heads != st.p.heads:  # as eager code does it: each K/V head repeated for its group
            group = st.p.heads // st.p.kv_heads
            k, v = k.repeat_interleave(group, dim=-3), v.repeat_interleave(group, dim=-3)
        scores = torch.matmul(q, k.transpose(-2, -1))
        scores = scores * st.p.scale
        if self.in_place:
            scores.masked_fill_(mask, float("-inf"))
        else:
            scores = scores.masked_fill(mask, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)

    def call(self, st, q, k, v):
        mask = st.extra["mask"]
        if st.paged:
            k, v = self.gathered(st, k), self.gathered(st, v)
        if st.cache_lens is not None:
            s = st.p.seq_len
            return each_cache(st, q, k, v, lambda _b, n, qb, kb, vb: self.attend(st, qb, kb, vb, mask[:, s - n:]))
        if not st.packed:
            return self.attend(st, q, k, v, mask)
        out = torch.empty_like(q)
        for start, end in zip(st.cu, st.cu[1:]):
            n = end - start
            o = self.attend(st, q[start:end].transpose(0, 1), k[start:end].transpose(0, 1),
                            v[start:end].transpose(0, 1), mask[:n, :n])
            out[start:end] = o.transpose(0, 1)
        return out


class TorchNaive(Eager):
    name = "torch_naive"
    summary = "PyTorch eager, the seed's code: out-of-place masked_fill (a D2D copy)"


class TorchInplace(Eager):
    name = "torch_inplace"
    summary = "PyTorch eager, the seed's fix: in-place masked_fill_"
    in_place = True


class Sdpa(TorchPeer):
    """F.scaled_dot_product_attention held to one backend (sdpa_kernel). A
    ragged batch goes in as nested jagged tensors, PyTorch's own varlen
    path: the packed tensors themselves are their values (no copy), with the
    batch's offsets and its shortest and longest lengths given, so that no
    call reads them back from the device (a sync in every timed call, and no
    graph capture); [B, j, H, D] transposed to [B, H, j, D], made once per
    point. The output's values are O packed. Whatever PyTorch refuses on
    that path (a backend without nested tensors, is_causal on the math
    backend, grouped-query heads) is skipped with its reason, as is graph
    mode when a CUDA graph cannot capture the call.

    SDPA takes no paged cache (no page-table argument): paged points are
    skipped (the eager peers gather the pages, as code around SDPA would).
    It takes no cached lengths either: a ragged cache runs as a loop over
    the sequences (each_cache), one SDPA call per sequence on its own cached
    rows, causal through causal_lower_right on its length; a backend's
    refusal of a call is skipped with PyTorch's reason."""
    backend = None
    log_header = None  # how nested tensors' SDPA heads its lines on this backend
    fused = True

    def supports(self, problem):
        if problem.is_paged:
            return ("PyTorch SDPA takes no paged cache (no page-table argument; "
                    "torch_naive and torch_inplace gather the pages first)")
        if problem.is_packed and not (hasattr(torch, "jagged") and "max_seqlen" in inspect.signature(
                torch.nested.nested_tensor_from_jagged).parameters):
            return (f"PyTorch {torch.__version__}: torch.nested.nested_tensor_from_jagged takes no "
                    "min_seqlen/max_seqlen: ragged batches not run (every call would read them back "
                    "from the device)")
        return None

    def prepare(self, st):
        guard = sdpa_kernel(getattr(SDPBackend, self.backend))
        guard.__enter__()
        st.extra["backend"] = guard
        if st.packed:
            st.extra["offsets"] = torch.tensor(st.cu, dtype=torch.int64, device="cuda")
        st.extra["mask"] = self.mask_args(st.p.q_len, st.p.seq_len, st.p.causal)
        if st.cache_lens is not None:
            st.extra["cache_masks"] = [self.mask_args(st.p.q_len, n, st.p.causal) for n in st.cache_lens]

    @staticmethod
    def mask_args(q_len, kv_len, causal):
        """SDPA's mask arguments for q_len queries, the last of kv_len keys:
        a decode's causal aligned bottom-right (causal_lower_right), since
        is_causal aligns top-left (the same only when q_len is kv_len)."""
        if causal and q_len != kv_len:
            from torch.nn.attention.bias import causal_lower_right
            return {"attn_mask": causal_lower_right(q_len, kv_len)}
        return {"is_causal": bool(causal)}

    def impl(self, st):
        path = ", nested jagged tensors" if st.packed else \
            ", a loop over the sequences' caches" if st.cache_lens is not None else ""
        return f"{st.extra['versions']}, SDPBackend.{self.backend}{path}"

    def views(self, st, q, k, v):
        if not st.packed:
            return q, k, v
        offsets, shortest, longest = st.extra["offsets"], min(st.lens), max(st.lens)
        return tuple(torch.nested.nested_tensor_from_jagged(t, offsets, min_seqlen=shortest,
                                                            max_seqlen=longest).transpose(1, 2)
                     for t in (q, k, v))

    def refused(self, st, exc):
        # how the nested path refuses (TypeError: a keyword its PyTorch lacks,
        # enable_gqa), and the causal bias of a decode's, the loop over a ragged cache's
        if st.packed or st.cache_lens is not None or "attn_mask" in st.extra["mask"]:
            return isinstance(exc, (RuntimeError, ValueError, NotImplementedError, TypeError))
        return super().refused(st, exc)

    def refusal(self, st, exc, caught, logged):
        if not st.packed:
            return super().refusal(st, exc, caught, logged)
        if isinstance(exc, RuntimeError) and "No viable backend" in str(exc):  # why: its checks' lines
            return _reason(exc, caught, _section(logged, self.log_header), "nested jagged tensors")
        return f"PyTorch: nested jagged tensors: {_brief(exc)}"  # chosen, then refused: the error says why

    def capture_refused(self, st):
        return "nested jagged tensors" if st.packed else None

    def call(self, st, q, k, v):
        # enable_gqa only when grouped: a keyword older nested SDPA lacks (False is its default)
        gqa = {"enable_gqa": True} if st.p.kv_heads != st.p.heads else {}
        if st.cache_lens is not None:
            masks = st.extra["cache_masks"]
            return each_cache(st, q, k, v, lambda b, _n, qb, kb, vb: F.scaled_dot_product_attention(
                qb.unsqueeze(0), kb.unsqueeze(0), vb.unsqueeze(0), scale=st.p.scale, **masks[b], **gqa)[0])
        out = F.scaled_dot_product_attention(q, k, v, scale=st.p.scale, **st.extra["mask"], **gqa)
        return out.transpose(1, 2).values() if st.packed else out


class SdpaMath(Sdpa):
    name, backend, fused = "torch_sdpa_math", "MATH", False
    log_header = "Math attention kernel"
    summary = "PyTorch SDPA, math backend (unfused composite ops)"


class SdpaEfficient(Sdpa):
    name, backend = "torch_sdpa_efficient", "EFFICIENT_ATTENTION"
    log_header = "Memory efficient kernel"
    summary = "PyTorch SDPA, memory-efficient backend (xFormers/CUTLASS kernel)"


class SdpaFlash(Sdpa):
    name, backend = "torch_sdpa_flash", "FLASH_ATTENTION"
    log_header = "Flash attention kernel"
    summary = "PyTorch SDPA, flash backend (FlashAttention-2)"


class SdpaCudnn(Sdpa):
    name, backend = "torch_sdpa_cudnn", "CUDNN_ATTENTION"
    log_header = "cuDNN attention kernel"
    summary = "PyTorch SDPA, cuDNN backend (PyTorch's own cuDNN)"


class Flex(TorchPeer):
    """FlexAttention compiled by torch.compile for each point (its first,
    untimed, call compiles); causal through a block mask made once per
    point. Dynamo's caches are reset per point: past its recompile limit (8
    shapes) it would fall back to eager flex_attention, a slow unfused
    path, and our rows would time that instead; a fallback anyway is an
    error row, not a number. A ragged batch is one sequence of all its
    tokens, [1, H, tokens, D] over the packed tensors, with a document mask:
    a query attends to the keys of its own sequence (and, causal, to those
    not after it: q_idx and kv_idx are token indices of the packed batch, so
    within a sequence kv_idx <= q_idx is causal from its first token).

    A ragged cache (a decode's cached lengths) is a mask_mod over the padded
    [B, KV, S, D] cache: key kv_idx of sequence b is seen when kv_idx <
    lens[b], and, causal, when kv_idx <= lens[b] − q_len + q_idx (bottom-right
    on its own length, which implies the first), the lengths a device tensor
    and the block mask made once per point, so that the blocks past a
    sequence's length are skipped. The block holding a sequence's last
    cached row loads whole and its masked probabilities (zeros) multiply its
    V rows past the length too, as a serving engine's stale cache rows
    would be (the runner's are finite, attn_cache_tail).

    A paged cache is read where it lies, as PyTorch's paged FlexAttention
    (torch.nn.attention.experimental._paged_attention) reads one: the pages
    seen as one [1, KV, pages·page, D] sequence that every batch entry's
    queries share, and a block mask of page-sized key blocks made in
    logical order (the mask above, or kv_idx < kv_len with a partial last
    page) and then moved to the physical pages through the runner's page
    table: each block's index becomes its page's, and the mask_mod maps a
    physical key back to its sequence's logical position (a page another
    sequence owns is masked). The table and the mask are made once per
    point; the timed call is flex_attention alone."""
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
        if st.packed:
            tokens = st.cu[-1]
            doc = torch.repeat_interleave(torch.arange(len(st.lens), dtype=torch.int32),
                                          torch.tensor(st.lens)).to("cuda")

            def same_document(b, h, q_idx, kv_idx):
                return doc[q_idx] == doc[kv_idx]

            def causal_document(b, h, q_idx, kv_idx):
                return (doc[q_idx] == doc[kv_idx]) & (kv_idx <= q_idx)

            st.extra["document"] = doc
            st.extra["block_mask"] = create_block_mask(causal_document if st.p.causal else same_document,
                                                       None, None, tokens, tokens, device="cuda")
        elif st.paged:
            st.extra["block_mask"] = paged_block_mask(st, create_block_mask)
        elif st.cache_lens is not None:
            lens, ql = torch.tensor(st.cache_lens, dtype=torch.int32, device="cuda"), st.p.q_len

            def cached(b, h, q_idx, kv_idx):
                return kv_idx < lens[b]

            def causal_cached(b, h, q_idx, kv_idx):
                return kv_idx <= lens[b] - ql + q_idx

            st.extra["cache_lens"] = lens
            st.extra["block_mask"] = create_block_mask(causal_cached if st.p.causal else cached, st.p.batch,
                                                       None, ql, st.p.seq_len, device="cuda")
        elif st.p.causal:  # bottom-right: query qi is token s - ql + qi (a prefill: ql = s)
            s, ql = st.p.seq_len, st.p.q_len
            st.extra["block_mask"] = create_block_mask(lambda b, h, qi, ki: qi + (s - ql) >= ki, None, None,
                                                       ql, s, device="cuda")

    def impl(self, st):
        return f"{st.extra['versions']}, torch.compile(flex_attention)" + (
            ", document block mask" if st.packed else
            ", physical-page block mask" if st.paged else
            ", cached-lengths block mask" if st.cache_lens is not None else "")

    def views(self, st, q, k, v):
        if st.paged:  # [pages, page, KV, D] as one [1, KV, pages·page, D] sequence
            return (q,) + tuple(t.flatten(0, 1).unsqueeze(0).transpose(1, 2) for t in (k, v))
        if not st.packed:
            return q, k, v
        return tuple(t.transpose(0, 1).unsqueeze(0) for t in (q, k, v))  # [tokens, H, D] as [1, H, tokens, D]

    def call(self, st, q, k, v):
        out = st.extra["compiled"](q, k, v, block_mask=st.extra.get("block_mask"), scale=st.p.scale,
                                   enable_gqa=st.p.kv_heads != st.p.heads)
        return out[0].transpose(0, 1) if st.packed else out


def paged_block_mask(st, create_block_mask):
    """torch_flex's block mask for a paged cache (Flex's docstring): made
    over the logical [B, q_len, pages_per_seq·page] keys in blocks of one
    page, then each block index mapped through the page table to its page,
    and the mask_mod given physical keys mapped back to logical ones."""
    from torch.nn.attention.flex_attention import BlockMask
    p, ql, page = st.p, st.p.q_len, st.p.page
    n_pages = p.batch * p.pages_per_seq
    table = st.page_table  # [B, pages_per_seq] int32, sequence b's pages in logical order
    dev = table.device
    lens = torch.tensor(st.cache_lens if st.cache_lens is not None else [p.seq_len] * p.batch,
                        dtype=torch.int32, device=dev)
    # the logical page index of each physical page for its owner, -1 for the others
    logical = torch.full((p.batch, n_pages), -1, dtype=torch.int32, device=dev)
    logical.scatter_(1, table.long(), torch.arange(p.pages_per_seq, dtype=torch.int32,
                                                   device=dev).expand(p.batch, -1).contiguous())

    def seen(b, h, q_idx, kv_idx):  # logical keys: the cached rows; causal bottom-right on the length
        return (kv_idx <= lens[b] - ql + q_idx) if p.causal else (kv_idx < lens[b])

    def seen_physical(b, h, q_idx, kv_idx):
        lp = logical[b, kv_idx // page]
        return (lp >= 0) & seen(b, h, q_idx, lp * page + kv_idx % page)

    lm = create_block_mask(seen, p.batch, None, ql, p.pages_per_seq * page, device=dev, BLOCK_SIZE=(128, page))

    def physical(indices):  # [B, 1, rows, pages_per_seq] logical block indices to pages, widened to n_pages
        if indices is None:
            return None
        out = torch.zeros(indices.shape[:3] + (n_pages,), dtype=torch.int32, device=dev)
        out[..., :indices.shape[-1]] = torch.gather(table.long(), 1, indices.flatten(1).long()).view(
            indices.shape).to(torch.int32)
        return out

    st.extra["paged_masks"] = (lens, logical)
    return BlockMask.from_kv_blocks(lm.kv_num_blocks, physical(lm.kv_indices), lm.full_kv_num_blocks,
                                    physical(lm.full_kv_indices), lm.BLOCK_SIZE, seen_physical,
                                    seq_lengths=(ql, n_pages * page))


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
