"""attnpeer.py — attnbench for variants written in Python: a ctypes binding
of build/libattnpeer.so (bench/peer_api.c), which is attnbench's own sweep
built as a library. A Python variant is a Peer (its ops as methods);
register() adds it to the runner's table and bench() runs attnbench's
command line in this process, so that the grid, the inputs, the reference
and its tolerances, the timing modes, warm-up, stop rule, power readings
and the CSV are the C runner's, not a copy. The rules one by one
(statistics, stop and warm-up rules, FLOP and byte counts, the comparison,
the columns) are bound too, for the tests. Needs neither PyTorch nor a GPU;
the PyTorch peers themselves are in torch_peers.py.

The library is found in $ATTN_BUILD (default build/) under the repository
root, or where ATTN_PEER_LIB points."""

import ctypes
import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load():
    path = os.environ.get("ATTN_PEER_LIB") or os.path.join(
        _ROOT, os.environ.get("ATTN_BUILD", "build"), "libattnpeer.so")
    if not os.path.exists(path):
        raise OSError(f"{path}: not built (make {os.path.relpath(path, _ROOT)})")
    lib = ctypes.CDLL(path)
    d, z, i = ctypes.c_double, ctypes.c_size_t, ctypes.c_int
    dp, ip = ctypes.POINTER(d), ctypes.POINTER(i)
    lib.attn_peer_nstats.restype = i
    lib.attn_peer_summarize.argtypes = [dp, z, dp]
    lib.attn_peer_should_stop.argtypes = [z, d, d, d, z, dp, z, d, d, ip]
    lib.attn_peer_keep_warming.argtypes = [d, z, d]
    lib.attn_peer_counts.argtypes = [i, i, i, i, i, ctypes.c_char_p, dp, dp]
    lib.attn_peer_compare.argtypes = [dp, ctypes.POINTER(ctypes.c_uint16), z, ctypes.c_char_p, dp, dp, ip]
    lib.attn_peer_column_count.restype = i
    lib.attn_peer_column_name.argtypes = [i]
    lib.attn_peer_column_name.restype = ctypes.c_char_p
    for f in ("variant", "problem", "op_counts"):
        getattr(lib, "attn_peer_sizeof_" + f).restype = z
    lib.attn_peer_register.argtypes = [ctypes.c_void_p]
    lib.attn_peer_fail.argtypes = [ctypes.c_char_p]
    lib.attn_peer_set_impl.argtypes = [ctypes.c_char_p]
    lib.attn_peer_error.restype = ctypes.c_char_p
    lib.attn_peer_bench.argtypes = [i, ctypes.POINTER(ctypes.c_char_p)]
    return lib


_lib = _load()

STAT_FIELDS = ("n", "median", "min", "max", "p10", "p25", "p75", "p90", "mean", "noise_rel")
assert _lib.attn_peer_nstats() == len(STAT_FIELDS), "libattnpeer.so and attnpeer.py disagree on the statistics"


def _doubles(values):
    return (ctypes.c_double * len(values))(*values)


def summarize(ms):
    """The statistics of per-call times (ms) as the runner computes them: a dict."""
    out = (ctypes.c_double * len(STAT_FIELDS))()
    if _lib.attn_peer_summarize(_doubles(ms), len(ms), out) != 0:
        raise ValueError("summarize: no samples")
    stats = dict(zip(STAT_FIELDS, out))
    stats["n"] = int(stats["n"])
    return stats


class StopRule:
    """attnbench's stop rule: at least min_samples and min_ms of timed time,
    then stop once noise_rel <= target_noise, or at budget_ms, or max_samples."""

    def __init__(self, min_samples=10, min_ms=20.0, target_noise=0.005, budget_ms=3000.0, max_samples=5000):
        self.min_samples, self.min_ms, self.target_noise = min_samples, min_ms, target_noise
        self.budget_ms, self.max_samples = budget_ms, max_samples

    def should_stop(self, ms, timed_ms, elapsed_ms):
        """(stop, converged) after these samples."""
        conv = ctypes.c_int(0)
        r = _lib.attn_peer_should_stop(self.min_samples, self.min_ms, self.target_noise, self.budget_ms,
                                       self.max_samples, _doubles(ms), len(ms), timed_ms, elapsed_ms,
                                       ctypes.byref(conv))
        if r < 0:
            raise ValueError("should_stop: no samples")
        return bool(r), bool(conv.value)


def keep_warming(warm_ms, calls, elapsed_ms):
    """Whether the warm-up goes on (the runner's rule for --warm-ms)."""
    return bool(_lib.attn_peer_keep_warming(warm_ms, calls, elapsed_ms))


def counts(batch, heads, seq_len, head_dim, causal, dtype, varlen=""):
    """(FLOPs, bytes) of a point: the counts behind every row's tflops and
    gbps, from the C side (a ragged batch's summed over its lengths there,
    through Problem.counts)."""
    if varlen:
        if dtype not in DTYPES:
            raise ValueError(f"counts: unknown dtype {dtype!r}")
        return Problem(batch=batch, heads=heads, seq_len=seq_len, head_dim=head_dim, causal=causal,
                       dtype_id=DTYPES.index(dtype), varlen=varlen).counts()
    f, b = ctypes.c_double(), ctypes.c_double()
    if _lib.attn_peer_counts(batch, heads, seq_len, head_dim, int(causal), dtype.encode(),
                             ctypes.byref(f), ctypes.byref(b)) != 0:
        raise ValueError(f"counts: not a point: B={batch} H={heads} S={seq_len} D={head_dim} {dtype}")
    return f.value, b.value


def compare(ref, out_bits, dtype):
    """The output (16-bit patterns of dtype) against the float64 reference with
    the runner's tolerances: (ok, max_abs_err, rel_err)."""
    if len(ref) != len(out_bits):
        raise ValueError("compare: reference and output differ in length")
    bits = (ctypes.c_uint16 * len(out_bits))(*out_bits)
    mx, rel, ok = ctypes.c_double(), ctypes.c_double(), ctypes.c_int()
    if _lib.attn_peer_compare(_doubles(ref), bits, len(ref), dtype.encode(), ctypes.byref(mx),
                              ctypes.byref(rel), ctypes.byref(ok)) != 0:
        raise ValueError(f"compare: unknown dtype {dtype!r}")
    return bool(ok.value), mx.value, rel.value


def columns():
    """The results CSV's columns, in file order (common/schema.h)."""
    return [_lib.attn_peer_column_name(i).decode() for i in range(_lib.attn_peer_column_count())]


# ---------------------------------------------------------------- variants
# The return codes of common/attn.h that a Peer's ops may raise (PeerError).
OK, ERR, ERR_OOM, ERR_UNSUPPORTED = 0, -1, -2, -5
DTYPES = ("bf16", "fp16")  # enum attn_dtype's order
MODES = ("cold", "hot", "graph")  # enum attn_mode's order


class PeerError(Exception):
    """An op's failure: rc says the row's status (ERR_UNSUPPORTED: skipped,
    ERR_OOM: oom, ERR: error), the message its reason."""

    def __init__(self, rc, message):
        super().__init__(message)
        self.rc = rc


VARLEN_MAX = 96  # ATTN_VARLEN_MAX (common/attn.h): room for varlen's text, its NUL included
PASSES = ("fwd", "bwd", "fwd_bwd")  # enum attn_pass (common/attn.h), in its order


class _ProblemLayout(ctypes.Structure):
    """struct attn_problem (common/attn.h), field for field; Problem reads it."""
    _fields_ = [("batch", ctypes.c_int), ("heads", ctypes.c_int), ("seq_len", ctypes.c_int),
                ("head_dim", ctypes.c_int), ("causal", ctypes.c_bool), ("dtype_id", ctypes.c_int),
                ("scale", ctypes.c_float), ("kv_heads_or_0", ctypes.c_int),
                ("varlen", ctypes.c_char * VARLEN_MAX), ("init_sigma", ctypes.c_float),
                ("pass_id", ctypes.c_int), ("q_len_or_0", ctypes.c_int), ("page", ctypes.c_int)]


class Problem(_ProblemLayout):
    """struct attn_problem (common/attn.h). A ragged batch (varlen set) has
    its sequences' lengths from the C side (seq_lens), packed one after the
    other: Q and O [tokens, heads, head_dim], K and V [tokens, kv_heads,
    head_dim], sequence b on rows cu[b] .. cu[b+1]-1 (cu_seqlens). A
    decode's varlen instead gives each sequence's cached length
    (cache_lens): Q and O stay [B, H, q_len, D], K and V padded to seq_len.
    A paged cache (page set) holds K and V as [pages, page, kv_heads, D]
    through the C side's page table (page_table). Every fact about the
    layout (packed or not, the pages, the table, the lengths) is the C
    side's, read through its functions, never worked out again here."""

    @property
    def dtype(self):
        return DTYPES[self.dtype_id]

    @property
    def pass_name(self):
        """What the row times: "fwd", "bwd" or "fwd_bwd" (enum attn_pass)."""
        return PASSES[self.pass_id]

    @property
    def q_len(self):
        """Queries per sequence: a decode's q_len, else seq_len (attn_q_len)."""
        return self.q_len_or_0 or self.seq_len

    @property
    def kv_heads(self):
        """K and V heads (grouped-query attention when fewer than heads)."""
        return self.kv_heads_or_0 or self.heads

    @property
    def varlen(self):
        """The ragged batch's text ("uniform:F", "lens:L1+L2+..."), "" for a dense batch."""
        return _ProblemLayout.varlen.__get__(self, _ProblemLayout).decode(errors="replace")

    @varlen.setter
    def varlen(self, text):
        raw = text.encode() if isinstance(text, str) else bytes(text)
        if len(raw) >= VARLEN_MAX:
            raise ValueError(f"varlen {text!r}: longer than {VARLEN_MAX - 1} characters")
        _ProblemLayout.varlen.__set__(self, raw)

    def seq_lens(self):
        """The sequences' lengths, batch of them (seq_len each when dense):
        the C side's (attn_seq_lens), so that a uniform draw is the very one
        the runner filled and checks against. ValueError when varlen is malformed."""
        lens = (ctypes.c_int * max(self.batch, 1))()
        if _lib.attn_seq_lens(ctypes.byref(self), lens) != 0:
            raise ValueError(_lib.attn_peer_error().decode(errors="replace"))
        return list(lens[:self.batch])

    def cu_seqlens(self):
        """Where each sequence starts in the packed tokens, and the end: batch + 1 offsets from 0."""
        cu = [0]
        for n in self.seq_lens():
            cu.append(cu[-1] + n)
        return cu

    @property
    def tokens(self):
        """Rows of the packed tensors: the lengths' sum (batch·seq_len when dense)."""
        return sum(self.seq_lens())

    @property
    def is_decode(self):
        """Whether the point is a decode: q_len queries below seq_len keys (attn_is_decode)."""
        return bool(_lib.attn_is_decode(ctypes.byref(self)))

    @property
    def is_packed(self):
        """Whether Q, K, V and O are packed one sequence after another: a
        ragged batch that is not a decode (attn_is_packed)."""
        return bool(_lib.attn_is_packed(ctypes.byref(self)))

    @property
    def is_ragged_cache(self):
        """Whether a decode's sequences have their own cached lengths (varlen
        on a decode): K and V padded to seq_len, the rows past each length
        never read."""
        return bool(_lib.attn_is_varlen(ctypes.byref(self))) and self.is_decode

    def cache_lens(self):
        """Each sequence's cached length, batch of them: a ragged cache's
        lengths (seq_lens), seq_len each for a decode's dense cache."""
        return self.seq_lens()

    @property
    def is_paged(self):
        """Whether K and V are a paged cache (attn_is_paged)."""
        return bool(_lib.attn_is_paged(ctypes.byref(self)))

    @property
    def pages_per_seq(self):
        """Pages per sequence of a paged cache, ceil(seq_len / page); 0 when
        not paged (attn_pages_per_seq)."""
        return _lib.attn_pages_per_seq(ctypes.byref(self))

    def page_table(self):
        """The page table the runner laid K and V out through, a list of
        batch·pages_per_seq page indices, sequence b's pages in order from
        b·pages_per_seq: the C side's draw (attn_page_table), the very one
        the runner and the reference use. ValueError when not paged."""
        n = self.batch * self.pages_per_seq
        table = (ctypes.c_int * max(n, 1))()
        if _lib.attn_page_table(ctypes.byref(self), table) != 0:
            raise ValueError(_lib.attn_peer_error().decode(errors="replace"))
        return list(table[:n])

    @property
    def shape(self):
        """Q's and O's shape: [B, H, S, D] ([B, H, q_len, D] for a decode), or
        [tokens, H, D] when packed."""
        if self.is_packed:
            return (self.tokens, self.heads, self.head_dim)
        return (self.batch, self.heads, self.q_len, self.head_dim)

    @property
    def kv_shape(self):
        """K's and V's shape: [B, KV, S, D], [tokens, KV, D] when packed, or
        [pages, page, KV, D] when paged (batch·pages_per_seq pages)."""
        if self.is_packed:
            return (self.tokens, self.kv_heads, self.head_dim)
        if self.is_paged:
            return (self.batch * self.pages_per_seq, self.page, self.kv_heads, self.head_dim)
        return (self.batch, self.kv_heads, self.seq_len, self.head_dim)

    def counts(self):
        """(FLOPs, bytes) of the point as the C side counts them (attn_flops,
        attn_bytes: a ragged batch's over its lengths). ValueError when
        varlen is malformed."""
        if _lib.attn_varlen_check(ctypes.byref(self)) != 0:
            raise ValueError(_lib.attn_peer_error().decode(errors="replace"))
        return _lib.attn_flops(ctypes.byref(self)), _lib.attn_bytes(ctypes.byref(self))


_P_ARG = ctypes.POINTER(_ProblemLayout)
_lib.attn_seq_lens.argtypes = [_P_ARG, ctypes.POINTER(ctypes.c_int)]
_lib.attn_varlen_check.argtypes = [_P_ARG]
for _f in (_lib.attn_is_varlen, _lib.attn_is_decode, _lib.attn_is_packed, _lib.attn_is_paged):
    _f.argtypes, _f.restype = [_P_ARG], ctypes.c_bool
_lib.attn_pages_per_seq.argtypes, _lib.attn_pages_per_seq.restype = [_P_ARG], ctypes.c_int
_lib.attn_page_table.argtypes = [_P_ARG, ctypes.POINTER(ctypes.c_int)]
for _f in (_lib.attn_flops, _lib.attn_bytes):
    _f.argtypes, _f.restype = [_P_ARG], ctypes.c_double


class OpCounts(ctypes.Structure):
    """struct attn_op_counts (common/attn.h): one call's device work."""
    _fields_ = [("kernels", ctypes.c_double), ("memcpy", ctypes.c_double), ("memset", ctypes.c_double),
                ("busy_ms", ctypes.c_double), ("span_ms", ctypes.c_double)]


_V, _P = ctypes.c_void_p, ctypes.POINTER(Problem)
_SUPPORTS = ctypes.CFUNCTYPE(_V, _P, _V)
_WORKSPACE = ctypes.CFUNCTYPE(ctypes.c_size_t, _P)
_SETUP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_V), _P, _V)
_RUN = ctypes.CFUNCTYPE(ctypes.c_int, _V, _V, _V, _V, _V, _V)
_TEARDOWN = ctypes.CFUNCTYPE(None, _V)
_OUTPUT = ctypes.CFUNCTYPE(_V, _V)
_GRAPH = ctypes.CFUNCTYPE(ctypes.c_int, _V, _V, _V, _V, _V, _V, ctypes.c_bool)
_COUNT = ctypes.CFUNCTYPE(ctypes.c_int, _V, ctypes.c_int, ctypes.POINTER(OpCounts))
_GRADIENT = ctypes.CFUNCTYPE(_V, _V, ctypes.c_int)
_KEEPING_FORWARD = ctypes.CFUNCTYPE(ctypes.c_int, _V, _V, _V, _V, _V, _V)
_BACKWARD = ctypes.CFUNCTYPE(ctypes.c_int, _V, _V, _V, _V, _V, _V, _V, _V, _V, _V)


class _FrameworkOps(ctypes.Structure):
    """struct attn_framework_ops (common/attn.h)."""
    _fields_ = [("output", _OUTPUT), ("graph", _GRAPH), ("count_ops", _COUNT), ("gradient", _GRADIENT)]


class _BackwardOps(ctypes.Structure):
    """struct attn_backward_ops (common/attn.h)."""
    _fields_ = [("forward", _KEEPING_FORWARD), ("backward", _BACKWARD)]


class _Variant(ctypes.Structure):
    """struct attn_variant (common/attn.h)."""
    _fields_ = [("name", ctypes.c_char_p), ("summary", ctypes.c_char_p), ("fused", ctypes.c_bool),
                ("supports", _SUPPORTS), ("workspace_bytes", _WORKSPACE), ("setup", _SETUP),
                ("run", _RUN), ("teardown", _TEARDOWN), ("framework", ctypes.POINTER(_FrameworkOps)),
                ("backward", ctypes.POINTER(_BackwardOps))]


for _name, _struct in (("variant", _Variant), ("problem", Problem), ("op_counts", OpCounts)):
    assert getattr(_lib, "attn_peer_sizeof_" + _name)() == ctypes.sizeof(_struct), \
        f"libattnpeer.so and attnpeer.py disagree on struct attn_{_name}: rebuild (make build/libattnpeer.so)"


class Peer:
    """A variant written in Python. Subclasses set name, summary, fused and
    define the ops; the runner owns Q, K, V (device pointers of the problem's
    dtype in Problem.shape and kv_shape: [B, H, S, D], packed [tokens, H, D]
    when the batch is ragged, K and V [pages, page, KV, D] when paged) and
    calls them as it calls a C variant's. An op
    raises PeerError to fail with a status; an exception of a type in
    oom_errors (the framework's out-of-memory error) is an oom row; any other
    exception is an error row with its message."""
    name = summary = None
    fused = False
    oom_errors = ()

    def supports(self, problem):
        """None when the peer can run the point, else why not (skipped)."""
        return None

    def setup(self, problem):
        """A state object for the point's calls."""
        raise NotImplementedError

    def run(self, state, q, k, v, stream):
        """Enqueue one forward pass on the stream (a cudaStream_t as int)."""
        raise NotImplementedError

    def output(self, state):
        """Device pointer of the last call's output in Problem.shape, contiguous."""
        raise NotImplementedError

    def graph(self, state, q, k, v, stream, replay):
        """Capture one call into the peer's own CUDA graph, or replay it on the stream."""
        raise NotImplementedError

    def count_ops(self, state, mode):
        """(kernels, memcpy, memset, busy_ms, span_ms) of one call in mode ('cold', 'hot', 'graph')."""
        raise NotImplementedError

    # The backward pass (points of pass bwd and fwd_bwd), when has_backward:
    # the runner calls forward_keeping once per buffer set (untimed) before
    # timing bwd, and both in one timed call for fwd_bwd. graph and
    # count_ops then capture and count the problem's pass (Problem.pass_name).
    has_backward = False

    def forward_keeping(self, state, q, k, v, stream):
        """Enqueue the forward that keeps what the backward needs (its output is output())."""
        raise NotImplementedError

    def backward(self, state, q, k, v, dout, stream):
        """Enqueue dQ, dK, dV of the last forward_keeping's output for dO (dout: O's layout)."""
        raise NotImplementedError

    def gradient(self, state, which):
        """Device pointer of the last backward's dQ (0), dK (1) or dV (2), contiguous in Q's and K's layouts."""
        raise NotImplementedError

    def teardown(self, state):
        pass


_alive = []  # every struct, callback and string handed to C lives as long as the process


def _fail(exc, oom_errors=()):
    if isinstance(exc, PeerError):
        rc, msg = exc.rc, str(exc)
    elif isinstance(exc, oom_errors):
        rc, msg = ERR_OOM, f"out of memory: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    else:
        rc, msg = ERR, f"{type(exc).__name__}: {exc}"
    _lib.attn_peer_fail(" ".join(msg.split()).encode(errors="replace")[:900])
    return rc


def _cstring(text):
    buf = ctypes.create_string_buffer(text.encode(errors="replace"))
    _alive.append(buf)
    return ctypes.addressof(buf)


def _status(fn, oom_errors=()):
    """fn()'s outcome as an op's return code: OK, or its failure's (_fail);
    a callback must not raise into C."""
    try:
        fn()
        return OK
    except Exception as exc:  # noqa: BLE001
        return _fail(exc, oom_errors)


def _pointer(fn, oom_errors=()):
    """fn()'s device pointer, or None with its failure recorded (_fail)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001
        _fail(exc, oom_errors)
        return None


def register(peer):
    """Adds the peer to the runner's variant table (after the C variants)."""
    states, counter = {}, [0]

    def status(fn):  # an op's return code, the peer's out-of-memory type an oom
        return _status(fn, peer.oom_errors)

    def pointer(fn):
        return _pointer(fn, peer.oom_errors)

    def supports(p, _dev):
        try:
            why = peer.supports(p.contents)
            return _cstring(why) if why else None
        except Exception as exc:  # noqa: BLE001  (a callback must not raise into C)
            return _cstring(f"{type(exc).__name__}: {exc}")

    def setup(ctx, p, _ws):
        def open_state():
            counter[0] += 1
            states[counter[0]] = peer.setup(p.contents)
            ctx[0] = counter[0]
        return status(open_state)

    def run(ctx, q, k, v, _o, stream):
        return status(lambda: peer.run(states[ctx], q, k, v, stream or 0))

    def teardown(ctx):
        state = states.pop(ctx, None)
        try:
            peer.teardown(state)
        except Exception as exc:  # noqa: BLE001
            print(f"{peer.name}: teardown: {type(exc).__name__}: {exc}", file=sys.stderr)

    def output(ctx):
        return pointer(lambda: peer.output(states[ctx]))

    def graph(ctx, q, k, v, _o, stream, replay):
        return status(lambda: peer.graph(states[ctx], q, k, v, stream or 0, bool(replay)))

    def count_ops(ctx, mode, out):
        def count():
            out[0] = OpCounts(*peer.count_ops(states[ctx], MODES[mode]))
        return status(count)

    def forward_keeping(ctx, q, k, v, _o, stream):
        return status(lambda: peer.forward_keeping(states[ctx], q, k, v, stream or 0))

    def backward(ctx, q, k, v, _o, dout, _dq, _dk, _dv, stream):
        return status(lambda: peer.backward(states[ctx], q, k, v, dout, stream or 0))

    def gradient(ctx, which):
        return pointer(lambda: peer.gradient(states[ctx], which))

    ops = _FrameworkOps(_OUTPUT(output), _GRAPH(graph), _COUNT(count_ops),
                        _GRADIENT(gradient) if peer.has_backward else _GRADIENT())
    bwd = _BackwardOps(_KEEPING_FORWARD(forward_keeping), _BACKWARD(backward)) if peer.has_backward else None
    v = _Variant(peer.name.encode(), peer.summary.encode(), peer.fused, _SUPPORTS(supports),
                 _WORKSPACE(lambda _p: 0), _SETUP(setup), _RUN(run), _TEARDOWN(teardown),
                 ctypes.pointer(ops), ctypes.pointer(bwd) if bwd else None)
    _alive.extend((peer, states, ops, bwd, v))
    if _lib.attn_peer_register(ctypes.byref(v)) != 0:
        raise ValueError(f"{peer.name}: {_lib.attn_peer_error().decode()}")


def set_impl(what):
    """From a Peer's setup: what it chose to run (the row's impl column)."""
    _lib.attn_peer_set_impl(what.encode(errors="replace")[:250])


def bench(args, program="attnbench"):
    """attnbench with these arguments, in this process, over the registered
    peers: its exit status (0 ok, 1 a row failed, 2 bad input, 130 interrupted)."""
    argv = [program] + list(args)
    arr = (ctypes.c_char_p * (len(argv) + 1))(*[a.encode() for a in argv], None)
    return _lib.attn_peer_bench(len(argv), arr)
