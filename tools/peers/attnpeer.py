"""attnpeer.py — the rules of a row, for the PyTorch peers: a ctypes binding
of build/libattnpeer.so (bench/peer_api.c), the same C code the runner
uses, so that statistics, the stop rule, the warm-up rule, FLOP and byte
counts, the output comparison and the results columns cannot drift between
the C variants and the Python ones. Needs neither PyTorch nor a GPU.

The library is found in $ATTN_BUILD (default build/) under the repository
root, or where ATTN_PEER_LIB points."""

import ctypes
import os

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


def counts(batch, heads, seq_len, head_dim, causal, dtype):
    """(FLOPs, bytes) of a point: the counts behind every row's tflops and gbps."""
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
