#!/usr/bin/env python3
"""fa4_peers.py — FlashAttention-4 (the flash-attn-4 package, flash_attn.cute:
its CuTe DSL kernels; on Hopper its sm90 forward and backward) as an
attnbench peer, `fa4`, run inside attnbench's own runner like
torch_peers.py (the same grid, inputs, float64 reference, timing modes,
stop rule and CSV). Its backward is flash_attn.cute's autograd function,
reached through torch.autograd.grad as torch_peers.py's are (the gradients
of the transposed views flow back to the runner's [B, H, S, D] leaves).

Layout. attnbench's buffers are [B, H, S, D] (K and V [B, KV, S, D]);
FlashAttention takes [B, S, H, D]. The peer hands flash_attn_func the
transposed view q.transpose(1, 2) of the runner's own buffer, no copy:
flash_attn.cute builds its tensor descriptors from the strides and needs
only the head dimension contiguous and the other strides 16-byte aligned
(cute_dsl_utils.maybe_contiguous keeps such a view as it is), so the timed
call is the kernel alone and not a transpose that a [B, S, H, D] model
would never pay. Its output, [B, S, H, D] and contiguous, is seen as
[B, H, S, D] by the view back (copied only for validation). Grouped K/V
heads go in as they are (FlashAttention's own GQA/MQA).

A decode point (q_len below kv_len) goes in as it is: FlashAttention's
causal mask aligns bottom-right when the queries are fewer than the keys,
as attnbench's does.

A decode's cache may be paged, ragged, or both, and goes in as a serving
engine hands it to FlashAttention: through flash_attn_varlen_func (in
flash-attn-4, flash_attn_func takes neither a page table nor cached
lengths), Q as its [B, q_len, H, D] view, with seqused_k (int32 [B]: each
sequence's cached length, Problem.cache_lens) and max_seqlen_k = kv_len.
A paged cache, [pages, page, KV, D], is FlashAttention's own paged layout
and goes in as it is, with page_table (int32 [B, pages_per_seq], the
runner's table, Problem.page_table); seqused_k then bounds each sequence
even when every length is kv_len, since without it the kernel reads a
sequence to the end of its last page, spare slots included. Both tensors
are made once per point (setup, untimed). Causal aligns bottom-right on
each sequence's own length, as attnbench's does. flash_attn.cute's
refusal of a point (a page size it has no kernel for, by assertion) is a
skipped row with its reason. On sm90 a page of tile_n tokens (the
forward's key tile, 128 for head_dim 128) loads by TMA, other sizes by
cp.async; with TMA, flash_attn.cute's docstring says, a tile loads the rows
past a sequence's length in its last page and needs them finite (its zero
probabilities times a NaN row are NaN). A contiguous cache's tiles load by
TMA too (over each sequence's whole padded rows), so the same holds for a
ragged one; the runner's rows past a length are finite (attn_cache_tail),
as a serving engine's stale cache rows are.

A ragged batch (varlen) is packed [tokens, H, D], one sequence after
another, which is flash_attn_varlen_func's own layout: the tensors go in as
they are, with cu_seqlens (int32, made once per point) and the longest
length as max_seqlen, so that no call reads lengths back from the device.

The first call of each shape class compiles the kernel (seconds, untimed:
the runner's first call validates). Every run starts a fresh process (a
compare run's worker, make bench's peer run), so the module turns on
flash_attn.cute's disk cache of compiled kernels unless the environment
says otherwise (FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED; its directory
FLASH_ATTENTION_CUTE_DSL_CACHE_DIR, default under the system's temporary
directory): a shape compiles once per machine, not once per run. The impl
column names the flash-attn-4 and CUTLASS DSL (nvidia-cutlass-dsl)
versions.

usage: python3 tools/peers/fa4_peers.py [attnbench options]
  (make bench PEERS=torch,fa4; make compare VARIANTS=flash_hopper,fa4,...)
Without PyTorch, a GPU or flash-attn-4 it says so in one line and exits 3."""

import glob
import os
import site
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_peers  # noqa: E402  (PyTorch's side of a peer: tensors, graphs, op counts)
from torch_peers import TorchPeer, torch  # noqa: E402

os.environ.setdefault("FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED", "1")  # read when flash_attn.cute loads


def site_dirs_from_pythonpath():
    """flash-attn-4 installed with `pip install --target DIR` and found through
    PYTHONPATH=DIR: Python reads .pth files only in site directories, and
    nvidia-cutlass-dsl puts its `cutlass` package on the path through one
    (nvidia_cutlass_dsl_packages.pth). Each PYTHONPATH directory that holds
    .pth files is made a site directory, so that they are read."""
    for d in filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)):
        if glob.glob(os.path.join(glob.escape(d), "*.pth")):
            site.addsitedir(d)


site_dirs_from_pythonpath()
try:
    from importlib.metadata import PackageNotFoundError, version

    from flash_attn.cute import flash_attn_func, flash_attn_varlen_func
    IMPORT_ERROR = None
except ImportError as exc:  # the caller (bench/peers.sh, build/ab) says what then runs
    IMPORT_ERROR = str(exc)


def _version(package):
    try:
        return version(package)
    except PackageNotFoundError:
        return "?"


class Fa4(TorchPeer):
    name = "fa4"
    summary = "FlashAttention-4 (flash-attn-4, CuTe DSL; its sm90 kernels on Hopper)"
    fused = True

    def supports(self, problem):
        major, _ = torch.cuda.get_device_capability()
        if major < 9:
            return f"flash-attn-4 runs on sm90 and newer; this GPU is sm{major}x"
        return None

    def prepare(self, st):
        if st.packed:
            st.extra["cu_seqlens"] = torch.tensor(st.cu, dtype=torch.int32, device="cuda")
            st.extra["max_seqlen"] = max(st.lens)
        if st.paged or st.cache_lens is not None:  # a cache's lengths bound every sequence's keys
            st.extra["seqused_k"] = torch.tensor(st.p.cache_lens(), dtype=torch.int32, device="cuda")

    def impl(self, st):
        cache = " and page_table" if st.paged else ""
        path = "flash_attn_varlen_func, packed [tokens, H, D]" if st.packed else \
            f"flash_attn_varlen_func, seqused_k{cache}, [B, q_len, H, D] views of Q and O" \
            if "seqused_k" in st.extra else "flash_attn_func, [B, S, H, D] views of the [B, H, S, D] buffers"
        return (f"flash-attn-4 {_version('flash-attn-4')}, nvidia-cutlass-dsl {_version('nvidia-cutlass-dsl')}, "
                f"{st.extra['versions']}, {path}")

    def views(self, st, q, k, v):
        if st.packed:
            return q, k, v
        if st.paged:  # [pages, page, KV, D]: FlashAttention's paged layout already
            return q.transpose(1, 2), k, v
        return tuple(t.transpose(1, 2) for t in (q, k, v))

    def refused(self, st, exc):
        # flash_attn.cute refuses a shape it has no kernel for by assertion
        return isinstance(exc, (AssertionError, NotImplementedError, ValueError))

    def refusal(self, st, exc, caught, logged):
        return f"flash-attn-4: {torch_peers._brief(exc)}"

    def capture_refused(self, st):
        return "flash_attn.cute"

    def call(self, st, q, k, v):
        if st.packed:
            cu, longest = st.extra["cu_seqlens"], st.extra["max_seqlen"]
            out, _ = flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=longest,
                                            max_seqlen_k=longest, softmax_scale=st.p.scale,
                                            causal=bool(st.p.causal))
            return out
        if "seqused_k" in st.extra:
            out, _ = flash_attn_varlen_func(q, k, v, seqused_k=st.extra["seqused_k"], page_table=st.page_table,
                                            max_seqlen_q=st.p.q_len, max_seqlen_k=st.p.seq_len,
                                            softmax_scale=st.p.scale, causal=bool(st.p.causal))
            return out.transpose(1, 2)
        out, _ = flash_attn_func(q, k, v, softmax_scale=st.p.scale, causal=bool(st.p.causal))
        return out.transpose(1, 2)


PEERS = (Fa4,)


def main(argv):
    if torch is None:
        print(f"fa4_peers: PyTorch is not importable ({torch_peers.IMPORT_ERROR}): no peers run", file=sys.stderr)
        return 3
    if IMPORT_ERROR is not None:
        print(f"fa4_peers: flash-attn-4 is not importable ({IMPORT_ERROR}): pip install flash-attn-4; no peers run",
              file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("fa4_peers: PyTorch sees no GPU (torch.cuda.is_available() is False): no peers run", file=sys.stderr)
        return 3
    for peer in PEERS:
        torch_peers.attnpeer.register(peer())
    return torch_peers.attnpeer.bench(argv + ["--no-trace"], program="fa4_peers")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
