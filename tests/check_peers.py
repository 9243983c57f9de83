"""check_peers.py — the PyTorch peers (tools/peers/): attnpeer.py over
build/libattnpeer.so, tested with neither PyTorch nor a GPU: the statistics,
the stop and warm-up rules, the FLOP and byte counts, the output comparison
give the values the C tests hold the runner to; an op's exception becomes
its row's status (the framework's out-of-memory type an oom row); a ragged batch's Problem
built in Python gets its lengths and counts from the C side, a paged
decode's its page table (a permutation of the pages, where attn_kv_offset
puts each token) and a ragged cache its cached lengths; a row written by Python
with attnpeer.columns() is read and gated by the C tools unchanged; a Peer
registered from Python is a variant of attnbench's own command line (--list,
--dry-run), and a bad one is refused; without PyTorch, torch_peers.py and
make bench PEERS=torch (bench/peers.sh) say so in one line and the C
variants run. With PyTorch and a GPU (else skipped): make bench PEERS=torch
on three points (one past the flash and cuDNN backends' head_dim), cold,
hot and graph, writes every C variant's and every peer's rows into one
run: refusals skipped with PyTorch's reason, the seed's 7 vs 6 ops in both
pairs; and in the backward passes every peer's gradients validated, the
seed's backward ops the same in both pairs; decode points (q_len below
kv_len, causal bottom-right) by every peer; a paged decode with a partial
last page and a ragged cache with a length-1 sequence (paged and not): the
eager peers, flex (contiguous and paged) and the SDPA math backend ok, SDPA
skipped on a paged cache with its reason. With flash-attn-4 too
(else skipped): its peer in every pass, and on the paged and ragged caches. Prints `peers: N passed, N failed, N
skipped`; run from the repository root after `make build/libattnpeer.so
build/regress build/attnbench`."""

import csv
import ctypes
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "peers"))
import attnpeer  # noqa: E402  (the path above first)

BUILD = os.environ.get("ATTN_BUILD", "build")


class Statistics(unittest.TestCase):
    def test_summary_of_five(self):
        s = attnpeer.summarize([5.0, 1.0, 4.0, 2.0, 3.0])
        self.assertEqual(s["n"], 5)
        for key, want in (("median", 3.0), ("min", 1.0), ("max", 5.0), ("p10", 1.4), ("p25", 2.0),
                          ("p75", 4.0), ("p90", 4.6), ("mean", 3.0), ("noise_rel", 2.0 / 3.0)):
            self.assertAlmostEqual(s[key], want, places=12, msg=key)

    def test_no_samples_refused(self):
        with self.assertRaises(ValueError):
            attnpeer.summarize([])

    def test_stop_rule(self):
        rule = attnpeer.StopRule()  # attnbench's defaults: 10 samples, 20 ms, 0.5%, 3 s
        self.assertEqual(rule.should_stop([3.0] * 5, 15.0, 100.0), (False, False))
        self.assertEqual(rule.should_stop([3.0] * 10, 30.0, 100.0), (True, True))
        noisy = [1.0, 2.0] * 10
        self.assertEqual(rule.should_stop(noisy, 30.0, 100.0), (False, False))
        self.assertEqual(rule.should_stop(noisy, 30.0, 3001.0), (True, False))

    def test_warm_up_rule(self):
        self.assertTrue(attnpeer.keep_warming(500.0, 5, 100.0))
        self.assertFalse(attnpeer.keep_warming(500.0, 5, 600.0))
        self.assertTrue(attnpeer.keep_warming(0.0, 1, 0.0))  # at least 3 calls


class Counts(unittest.TestCase):
    def test_flops_and_bytes(self):
        f, b = attnpeer.counts(1, 16, 16384, 128, False, "bf16")
        self.assertEqual(f, 4.0 * 16 * 16384 ** 2 * 128)
        self.assertEqual(b, 4.0 * 16 * 16384 * 128 * 2)
        fc, bc = attnpeer.counts(1, 16, 16384, 128, True, "bf16")
        self.assertEqual(fc, f / 2)
        self.assertEqual(bc, b)

    def test_bad_point_refused(self):
        with self.assertRaises(ValueError):
            attnpeer.counts(0, 16, 1024, 64, False, "bf16")
        with self.assertRaises(ValueError):
            attnpeer.counts(1, 16, 1024, 64, False, "fp32")


class RaggedProblem(unittest.TestCase):
    """attnpeer.Problem is struct attn_problem: the C side (attn_seq_lens,
    attn_flops) reads a Problem built in Python, its varlen text after
    kv_heads, and gives the lengths the runner packs; counts come from C."""

    @staticmethod
    def problem(batch, seq_len, varlen, heads=4, kv_heads=0, causal=False):
        return attnpeer.Problem(batch=batch, heads=heads, seq_len=seq_len, head_dim=64, causal=causal,
                                dtype_id=0, scale=0.125, kv_heads_or_0=kv_heads, varlen=varlen)

    def test_listed_lengths(self):
        p = self.problem(3, 1000, "lens:1+17+1000", kv_heads=2)
        self.assertEqual(p.varlen, "lens:1+17+1000")
        self.assertEqual(p.seq_lens(), [1, 17, 1000])
        self.assertEqual(p.cu_seqlens(), [0, 1, 18, 1018])
        self.assertEqual((p.shape, p.kv_shape), ((1018, 4, 64), (1018, 2, 64)))

    def test_uniform_lengths(self):
        lens = self.problem(4, 100, "uniform:0.5").seq_lens()
        self.assertEqual(len(lens), 4)
        self.assertTrue(all(50 <= n <= 100 for n in lens), lens)
        self.assertEqual(self.problem(4, 100, "uniform:0.5").seq_lens(), lens)  # the same draw every time

    def test_dense_batch(self):
        p = self.problem(2, 77, "")
        self.assertEqual(p.varlen, "")
        self.assertEqual(p.seq_lens(), [77, 77])
        self.assertEqual((p.shape, p.kv_shape), ((2, 4, 77, 64), (2, 4, 77, 64)))

    def test_malformed_refused(self):
        for bad, message in (("lens:1+17", "2 lengths for batch 3"), ("uniform:2", "fraction"),
                             ("zipf:1", "unknown distribution")):
            with self.assertRaisesRegex(ValueError, message):
                self.problem(3, 1000, bad).seq_lens()
        with self.assertRaisesRegex(ValueError, "longer than 95"):
            self.problem(3, 1000, "lens:" + "1+" * 46 + "1")

    def test_counts_from_c(self):
        """A ragged batch's counts are its sequences' summed, each a dense batch of one."""
        p = self.problem(3, 1000, "lens:1+17+1000", causal=True)
        parts = [attnpeer.counts(1, 4, n, 64, True, "bf16") for n in (1, 17, 1000)]
        self.assertEqual(p.counts(), (sum(f for f, _ in parts), sum(b for _, b in parts)))
        self.assertEqual(attnpeer.counts(3, 4, 1000, 64, True, "bf16", varlen="lens:1+17+1000"), p.counts())
        with self.assertRaises(ValueError):
            attnpeer.counts(2, 4, 1000, 64, True, "bf16", varlen="lens:1+17+1000")


class PagedProblem(unittest.TestCase):
    """A paged or ragged decode's Problem built in Python: the shapes the
    runner's buffers have, the page table the runner laid K and V out
    through and the cached lengths, all from the C side."""

    @staticmethod
    def problem(batch=3, seq_len=100, page=16, varlen="", kv_heads=2, q_len=4):
        return attnpeer.Problem(batch=batch, heads=4, seq_len=seq_len, head_dim=64, causal=True, dtype_id=0,
                                scale=0.125, kv_heads_or_0=kv_heads, varlen=varlen, q_len_or_0=q_len,
                                page=page)

    def test_shapes_of_a_paged_decode(self):
        p = self.problem()  # 100 tokens in pages of 16: 7 a sequence, the last holding 4
        self.assertTrue(p.is_paged and p.is_decode)
        self.assertFalse(p.is_packed or p.is_ragged_cache)
        self.assertEqual(p.pages_per_seq, 7)
        self.assertEqual(p.shape, (3, 4, 4, 64))
        self.assertEqual(p.kv_shape, (21, 16, 2, 64))
        dense = self.problem(page=0)
        self.assertEqual((dense.is_paged, dense.pages_per_seq), (False, 0))
        self.assertEqual(dense.kv_shape, (3, 2, 100, 64))

    def test_page_table_is_a_permutation_drawn_by_the_point(self):
        table = self.problem().page_table()
        self.assertEqual(sorted(table), list(range(21)))
        self.assertNotEqual(table, list(range(21)))  # shuffled, as an allocator leaves pages
        self.assertEqual(self.problem().page_table(), table)  # the same draw every time
        self.assertNotEqual(self.problem(page=20).page_table(), self.problem(page=20, seq_len=101).page_table())
        with self.assertRaisesRegex(ValueError, "without a paged cache"):
            self.problem(page=0).page_table()

    def test_page_table_is_where_the_runner_puts_each_token(self):
        """Token t of sequence b, K/V head h, lies where attn_kv_offset (the
        runner's fill and reference) puts it: page table[b·pages_per_seq +
        t / page], slot t % page of the [pages, page, KV, D] cache."""
        lib = attnpeer._lib
        lib.attn_kv_offset.argtypes = [ctypes.POINTER(attnpeer._ProblemLayout), ctypes.POINTER(ctypes.c_int),
                                       ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.attn_kv_offset.restype = ctypes.c_size_t
        p = self.problem()
        table = p.page_table()
        c_table = (ctypes.c_int * len(table))(*table)
        pages, page, kv, d = p.kv_shape
        for b in range(p.batch):
            for h in range(kv):
                for t in range(p.seq_len):
                    want = ((table[b * p.pages_per_seq + t // page] * page + t % page) * kv + h) * d
                    self.assertEqual(lib.attn_kv_offset(ctypes.byref(p), c_table, b, h, t), want, (b, h, t))

    def test_ragged_cache(self):
        """A decode's varlen: each sequence's cached length, Q and K not packed."""
        p = self.problem(page=0, varlen="lens:1+100+50", q_len=1)
        self.assertTrue(p.is_ragged_cache)
        self.assertFalse(p.is_packed)
        self.assertEqual(p.cache_lens(), [1, 100, 50])
        self.assertEqual((p.shape, p.kv_shape), ((3, 4, 1, 64), (3, 2, 100, 64)))
        paged = self.problem(varlen="lens:1+100+50", q_len=1)
        self.assertEqual(paged.kv_shape, (21, 16, 2, 64))
        self.assertEqual(paged.page_table(), self.problem(q_len=1).page_table())  # lengths do not redraw it
        self.assertEqual(self.problem(page=0).cache_lens(), [100, 100, 100])
        self.assertFalse(self.problem(page=0).is_ragged_cache)


class Compare(unittest.TestCase):
    BF16 = {1.0: 0x3F80, 2.0: 0x4000, 2.5: 0x4020}

    def test_exact_output_passes(self):
        ok, mx, rel = attnpeer.compare([1.0, 2.0], [self.BF16[1.0], self.BF16[2.0]], "bf16")
        self.assertTrue(ok)
        self.assertEqual(mx, 0.0)
        self.assertEqual(rel, 0.0)

    def test_wrong_output_fails(self):
        ok, mx, _ = attnpeer.compare([1.0, 2.0], [self.BF16[1.0], self.BF16[2.5]], "bf16")
        self.assertFalse(ok)
        self.assertAlmostEqual(mx, 0.5)

    def test_nan_output_fails(self):
        ok, _, _ = attnpeer.compare([1.0], [0x7FC0], "bf16")
        self.assertFalse(ok)


class Failures(unittest.TestCase):
    """An op's exception as the row's status: a PeerError's own, the peer's
    out-of-memory type (oom_errors, PyTorch's in torch_peers) an oom row at
    any call, anything else an error row."""

    class FrameworkOom(RuntimeError):
        pass

    def raising(self, exc):
        def op():
            raise exc
        return op

    def test_status_of_each_kind(self):
        ooms = (self.FrameworkOom,)
        self.assertEqual(attnpeer._status(lambda: None, ooms), attnpeer.OK)
        self.assertEqual(attnpeer._status(self.raising(self.FrameworkOom("CUDA out of memory.\nmore")), ooms),
                         attnpeer.ERR_OOM)
        self.assertEqual(attnpeer._status(self.raising(self.FrameworkOom("x"))), attnpeer.ERR)
        self.assertEqual(attnpeer._status(self.raising(ValueError("x")), ooms), attnpeer.ERR)
        self.assertEqual(attnpeer._status(self.raising(attnpeer.PeerError(attnpeer.ERR_UNSUPPORTED, "no")), ooms),
                         attnpeer.ERR_UNSUPPORTED)
        self.assertIsNone(attnpeer._pointer(self.raising(self.FrameworkOom("y")), ooms))

    def test_a_peer_has_no_oom_type_unless_it_says(self):
        self.assertEqual(attnpeer.Peer.oom_errors, ())


class Fa4Install(unittest.TestCase):
    def test_pth_files_on_pythonpath_are_read(self):
        """A `pip install --target DIR` on PYTHONPATH: its .pth files (the
        CuTe DSL's puts `cutlass` on the path) are read when fa4_peers loads."""
        with tempfile.TemporaryDirectory() as d:
            extra = os.path.join(d, "dsl_packages")
            os.mkdir(extra)
            with open(os.path.join(d, "a.pth"), "w") as fh:
                fh.write(extra + "\n")
            with open(os.path.join(d, "torch.py"), "w") as fh:  # no PyTorch needed: fa4_peers only loads
                fh.write("raise ImportError('shadowed')\n")
            code = f"import sys; sys.path.insert(0, {PEERS_DIR!r}); import fa4_peers; print({extra!r} in sys.path)"
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=d), cwd=ROOT)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), "True")


class Schema(unittest.TestCase):
    def test_key_columns(self):
        cols = attnpeer.columns()
        key = ["variant", "dtype", "batch", "heads", "kv_heads", "seq_len", "q_len", "head_dim", "causal", "varlen", "page",
               "init", "pass", "mode", "regime"]
        start = cols.index("variant")
        self.assertEqual(cols[start:start + len(key)], key)
        for c in ("status", "ms_median", "samples", "noise_rel", "tflops", "kernels_per_call", "settled_mhz",
                  "compare_run", "shard"):
            self.assertIn(c, cols)

    def _write_run(self, path, run_id, ms):
        cols = attnpeer.columns()
        f, _ = attnpeer.counts(1, 16, 1024, 64, True, "bf16")
        row = dict.fromkeys(cols, "")
        row.update(run_id=run_id, timestamp="2026-12-01T00:00:00Z", git_rev="abc", gpu="h200",
                   variant="torch_sdpa_flash", dtype="bf16", batch=1, heads=16, seq_len=1024, head_dim=64,
                   causal=1, mode="cold", status="ok", samples=10, ms_median=ms, noise_rel=0.001,
                   tflops=f / (ms * 1e-3) / 1e12, shard="1/1")
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols, lineterminator="\n")
            w.writeheader()
            w.writerow(row)

    def test_c_gate_reads_a_python_row(self):
        with tempfile.TemporaryDirectory() as d:
            base, cur = os.path.join(d, "A.csv"), os.path.join(d, "B.csv")
            self._write_run(base, "A", 1.0)
            self._write_run(cur, "B", 1.0)
            r = subprocess.run([os.path.join(BUILD, "regress"), "--results", cur, "--baseline", base],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("1 compared", r.stdout)
            self._write_run(cur, "B", 1.2)  # 20% slower: the same gate fails it
            r = subprocess.run([os.path.join(BUILD, "regress"), "--results", cur, "--baseline", base],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS_DIR = os.path.join(ROOT, "tools", "peers")


def run_python(code, env=None):
    """A snippet in a fresh interpreter (the runner's table is per process)."""
    e = dict(os.environ, ATTN_BUILD=BUILD, **(env or {}))
    return subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {PEERS_DIR!r})\n" + code],
                          capture_output=True, text=True, env=e, cwd=ROOT)


FAKE_PEER = """
import attnpeer
class P(attnpeer.Peer):
    name, summary = "py_fake", "a test peer"
    def supports(self, p):
        return "a test peer never runs"
attnpeer.register(P())
"""


class PythonVariants(unittest.TestCase):
    def test_listed_as_a_variant(self):
        r = run_python(FAKE_PEER + "sys.exit(attnpeer.bench(['--list']))")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"py_fake +a test peer")

    def test_list_names_the_peer_modules(self):
        """--list names each MODULE_peers.py and the variants its classes name, without importing it."""
        r = run_python(FAKE_PEER + "sys.exit(attnpeer.bench(['--list']))")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"Python peers in {os.path.realpath(PEERS_DIR)} (make bench PEERS=MODULE", r.stdout)
        self.assertRegex(r.stdout, r"\ntorch +torch_naive, torch_inplace, torch_sdpa_math, .*torch_flex "
                                   r"\(make bench PEERS=torch\)\n")
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "foo_peers.py"), "w") as fh:
                fh.write("import torch_that_is_not_there\nclass Foo:\n    name, summary = 'foo_one', 'x'\n")
            r = run_python(FAKE_PEER + "sys.exit(attnpeer.bench(['--list']))", env={"ATTN_PEERS_DIR": d})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"Python peers in {d} (", r.stdout)
        self.assertIn("\nfoo          foo_one (make bench PEERS=foo)\n", r.stdout)
        self.assertNotIn("torch_naive", r.stdout)

    def test_dry_run_plans_its_rows(self):
        r = run_python(FAKE_PEER + "sys.exit(attnpeer.bench(['--dry-run', '--point', "
                                   "'batch=2 heads=3 seq=77,128 dim=64 causal=1', '--mode', 'cold,graph']))")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = list(csv.DictReader(r.stdout.splitlines()))
        self.assertEqual([(x["variant"], x["seq_len"], x["mode"]) for x in rows],
                         [("py_fake", "77", "cold"), ("py_fake", "77", "graph"),
                          ("py_fake", "128", "cold"), ("py_fake", "128", "graph")])

    def test_bad_variants_refused(self):
        r = run_python(FAKE_PEER + "attnpeer.register(P())")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("registered twice", r.stderr)
        r = run_python(FAKE_PEER + "P.name = 'Bad-Name'\nattnpeer.register(P())")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("is not [a-z0-9_]+", r.stderr)
        # the results reader takes 63 characters: a longer name is refused here, not when read
        r = run_python(FAKE_PEER + "P.name = 'p' * 64\nattnpeer.register(P())")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("is 64 characters long, more than the results reader takes (63)", r.stderr)
        r = run_python(FAKE_PEER + "P.name = 'p' * 63\nattnpeer.register(P())\nsys.exit(attnpeer.bench(['--list']))")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("p" * 63 + " ", r.stdout)

    def test_extend_and_run_id_checked(self):
        for args, message in ((["--extend", "A", "--resume", "A"], "--resume and --extend contradict each other"),
                              (["--extend", "x/y"], "--extend: 'x/y' is not a run id"),
                              (["--run-id", "A", "--extend", "B"], "--run-id names a new run")):
            r = run_python(FAKE_PEER + f"sys.exit(attnpeer.bench({args + ['--dry-run']!r}))")
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(message, r.stderr)


class PeerModules(unittest.TestCase):
    """Every tools/peers/NAME_peers.py, as make bench PEERS=NAME takes it: the
    variants attnbench --list reads from it are [a-z0-9_] names of at most 63
    characters, each in one module only and none a C variant's; the module
    itself runs `--list`, exiting 0 with every one of those names listed, or
    3 with one line saying what it lacks here (its framework, a GPU)."""

    @classmethod
    def setUpClass(cls):
        r = subprocess.run([os.path.join(BUILD, "attnbench"), "--list"], capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == 0, r.stderr
        c_part, _, peer_part = r.stdout.partition("\nPython peers in ")
        cls.c_variants = {line.split()[0] for line in c_part.splitlines()[1:] if line.strip()}
        cls.listed = {}
        for line in peer_part.splitlines()[2:]:
            module, _, rest = line.partition(" ")
            names = rest.strip().rsplit(" (make bench", 1)[0]
            cls.listed[module] = [n.strip() for n in names.split(",") if n.strip()]
        cls.modules = sorted(f[:-len("_peers.py")] for f in os.listdir(PEERS_DIR) if f.endswith("_peers.py"))

    def test_every_module_is_listed_with_valid_names(self):
        self.assertEqual(sorted(self.listed), self.modules)
        seen = {}
        for module, names in self.listed.items():
            self.assertTrue(names, f"{module}_peers.py names no variant")
            for n in names:
                self.assertRegex(n, r"^[a-z0-9_]{1,63}$", f"{module}_peers.py: {n!r}")
                self.assertNotIn(n, self.c_variants, f"{module}_peers.py: {n} is a C variant's name")
                self.assertNotIn(n, seen, f"{n} in both {seen.get(n)}_peers.py and {module}_peers.py")
                seen[n] = module

    def test_every_module_lists_its_peers_or_says_why_not(self):
        for module in self.modules:
            r = subprocess.run([sys.executable, os.path.join(PEERS_DIR, f"{module}_peers.py"), "--list"],
                               capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, ATTN_BUILD=BUILD),
                               timeout=120)
            if r.returncode == 3:
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, f"{module}: {r.stderr}")
                continue
            self.assertEqual(r.returncode, 0, f"{module}_peers.py --list: {r.stderr}")
            for n in self.listed[module]:
                self.assertRegex(r.stdout, rf"(?m)^{n} ", f"{module}_peers.py --list lacks {n}")


def torch_on_gpu():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


class WithoutTorch(unittest.TestCase):
    """PyTorch shadowed by a module that fails to import, as where it is missing."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        with open(os.path.join(self.tmp.name, "torch.py"), "w") as fh:
            fh.write("raise ImportError('No module named torch (shadowed by check_peers.py)')\n")
        self.fake = os.path.join(self.tmp.name, "attnbench")
        with open(self.fake, "w") as fh:
            fh.write(f"#!/bin/sh\necho \"$@\" > {self.tmp.name}/args\nexit 0\n")
        os.chmod(self.fake, 0o755)
        self.env = dict(os.environ, PYTHONPATH=self.tmp.name, ATTNBENCH=self.fake, PYTHON=sys.executable,
                        ATTN_BUILD=BUILD)

    def tearDown(self):
        self.tmp.cleanup()

    def test_torch_peers_says_so(self):
        r = subprocess.run([sys.executable, os.path.join(PEERS_DIR, "torch_peers.py"), "--grid", "seed"],
                           capture_output=True, text=True, env=self.env, cwd=ROOT)
        self.assertEqual(r.returncode, 3)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("PyTorch is not importable", r.stderr)

    def test_make_bench_peers_runs_the_c_variants(self):
        r = subprocess.run(["bench/peers.sh", "torch", "--grid", "seed", "--variants", "naive,inplace"],
                           capture_output=True, text=True, env=self.env, cwd=ROOT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("torch_peers.py cannot run here (torch_peers: PyTorch is not importable", r.stderr)
        self.assertIn("the C variants run without peers", r.stderr)
        with open(os.path.join(self.tmp.name, "args")) as fh:
            self.assertEqual(fh.read().split(), ["--grid", "seed", "--variants", "naive,inplace"])

    def test_peer_variants_go_to_their_own_module(self):
        """Two modules, one of whose variants is named like a module (fa4's
        fa4): each module is given only its own variants, not the names of
        the modules listed after its table."""
        peers = os.path.join(self.tmp.name, "peers")
        os.mkdir(peers)
        listing = ("\n\nPython peers in {d} (make bench PEERS=MODULE adds them to the run):\n"
                   "module       variants\nalpha        alpha (make bench PEERS=alpha)\n"
                   "beta         b1 (make bench PEERS=beta)\n").format(d=peers)
        for module, variant in (("alpha", "alpha"), ("beta", "b1")):
            with open(os.path.join(peers, module + "_peers.py"), "w") as fh:
                fh.write("import sys\n"
                         "if '--list' in sys.argv:\n"
                         f"    print('variant      summary\\n{variant:12s} a fake peer' + {listing!r})\n"
                         "    sys.exit(0)\n"
                         f"open({os.path.join(self.tmp.name, module)!r}, 'w').write(' '.join(sys.argv[1:]))\n")
        env = dict(self.env, ATTN_PEER_DIR=peers, PEER_VARIANTS="alpha,b1")
        r = subprocess.run(["bench/peers.sh", "alpha,beta", "--grid", "seed", "--variants", "naive"],
                           capture_output=True, text=True, env=env, cwd=ROOT)
        self.assertEqual(r.returncode, 0, r.stderr)
        for module, variant in (("alpha", "alpha"), ("beta", "b1")):
            with open(os.path.join(self.tmp.name, module)) as fh:
                args = fh.read().split()
            self.assertEqual(args[args.index("--variants") + 1], variant, args)

    def test_resume_continues_every_part(self):
        """A run the peers extended holds their rows: its C part continues it
        with --extend (a --resume refuses rows not of its own sweep), and
        each module extends it again."""
        peers = os.path.join(self.tmp.name, "peers")
        os.mkdir(peers)
        with open(os.path.join(peers, "alpha_peers.py"), "w") as fh:
            fh.write("import sys\n"
                     "if '--list' in sys.argv:\n    print('variant      summary\\nalpha        a fake peer\\n')\n"
                     "    sys.exit(0)\n"
                     f"open({os.path.join(self.tmp.name, 'alpha')!r}, 'w').write(' '.join(sys.argv[1:]))\n")
        env = dict(self.env, ATTN_PEER_DIR=peers)
        r = subprocess.run(["bench/peers.sh", "alpha", "--grid", "seed", "--resume", "20261207T150024Z"],
                           capture_output=True, text=True, env=env, cwd=ROOT)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "args")) as fh:
            self.assertEqual(fh.read().split(), ["--grid", "seed", "--extend", "20261207T150024Z"])
        with open(os.path.join(self.tmp.name, "alpha")) as fh:
            self.assertEqual(fh.read().split(), ["--grid", "seed", "--extend", "20261207T150024Z"])

    def test_options_it_sets_refused(self):
        r = subprocess.run(["bench/peers.sh", "torch", "--shard", "1/2"], capture_output=True, text=True,
                           env=self.env, cwd=ROOT)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--shard is set by make bench PEERS= itself", r.stderr)
        r = subprocess.run(["bench/peers.sh", "jax"], capture_output=True, text=True, env=self.env, cwd=ROOT)
        self.assertEqual(r.returncode, 2)
        known = " ".join(sorted(f[:-len("_peers.py")] for f in os.listdir(PEERS_DIR) if f.endswith("_peers.py")))
        self.assertIn(f"unknown peer module 'jax': no tools/peers/jax_peers.py (known: {known})", r.stderr)


SEED_POINT = "batch=8 heads=16 seq=1024 dim=64 causal=1"
ODD_POINT = "batch=2 heads=3 seq=77 dim=64 causal=1"
WIDE_POINT = "batch=1 heads=2 seq=64 dim=512 causal=0"  # past the flash and cuDNN backends' 256
TORCH_PEERS = ("torch_naive", "torch_inplace", "torch_sdpa_math", "torch_sdpa_efficient", "torch_sdpa_flash",
               "torch_sdpa_cudnn", "torch_flex")


class PeersRun(unittest.TestCase):
    """One make bench PEERS=MODULE run (bench/peers.sh) over POINTS in MODES,
    with naive and inplace beside the peers: its process, CSV and rows."""
    POINTS, MODES, MODULE = (), "", "torch"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        env = dict(os.environ, ATTNBENCH=os.path.join(BUILD, "attnbench"), ATTN_BUILD=BUILD)
        points = [arg for point in cls.POINTS for arg in ("--point", point)]
        cls.proc = subprocess.run(["bench/peers.sh", cls.MODULE] + points +
                                  ["--variants", "naive,inplace", "--mode", cls.MODES, "--warm-ms", "0",
                                   "--budget-ms", "100", "--out", cls.tmp.name, "--quiet"],
                                  capture_output=True, text=True, env=env, cwd=ROOT)
        runs = sorted(f for f in os.listdir(cls.tmp.name) if f.endswith(".csv") and ".samples" not in f)
        cls.csv = os.path.join(cls.tmp.name, runs[0]) if len(runs) == 1 else None
        cls.rows = list(csv.DictReader(open(cls.csv))) if cls.csv else []

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check_row(self, r, must_run, rel_err_limit, what):
        """A row of a variant in must_run is ok; any other ok or skipped with
        PyTorch's reason; an ok row within rel_err_limit of the reference."""
        if r["variant"] in must_run:
            self.assertEqual(r["status"], "ok", what)
        elif r["status"] == "skipped":
            self.assertTrue(r["reason"].startswith("PyTorch"), what)
        else:
            self.assertEqual(r["status"], "ok", what)
        if r["status"] == "ok":
            self.assertLess(float(r["rel_err"]), rel_err_limit, what)
            self.assertGreater(float(r["ms_median"]), 0, what)


@unittest.skipUnless(torch_on_gpu(), "needs PyTorch and a GPU")
class TorchOnGpu(PeersRun):
    """make bench PEERS=torch on three points, cold, hot and graph."""
    POINTS, MODES = (SEED_POINT, ODD_POINT, WIDE_POINT), "cold,hot,graph"

    def row(self, variant, seq, mode):
        found = [r for r in self.rows if r["variant"] == variant and r["seq_len"] == str(seq) and r["mode"] == mode]
        self.assertEqual(len(found), 1, f"{variant} S={seq} {mode}: {len(found)} rows")
        return found[0]

    def test_one_run_every_row(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr[-3000:])
        self.assertIsNotNone(self.csv, "not exactly one run written")
        self.assertEqual(len(self.rows), (2 + len(TORCH_PEERS)) * 3 * 3)
        self.assertEqual(len({r["run_id"] for r in self.rows}), 1)

    def test_rows_ok_or_skipped_with_pytorchs_reason(self):
        for r in self.rows:
            self.check_row(r, ("naive", "inplace", "torch_naive", "torch_inplace", "torch_sdpa_math"), 0.02,
                           f"{r['variant']} {r['seq_len']} {r['mode']}: {r['reason']}")

    def test_backend_refusal_is_skipped_with_its_reason(self):
        for v in ("torch_sdpa_flash", "torch_sdpa_cudnn"):
            for mode in ("cold", "graph"):
                r = self.row(v, 64, mode)
                self.assertEqual(r["status"], "skipped", f"{v} {mode}")
                self.assertTrue(r["reason"].startswith("PyTorch: "), r["reason"])
                self.assertIn("256", r["reason"])

    def test_seed_op_counts_in_both_pairs(self):
        for mode in ("cold", "graph"):
            ops = {}
            for v in ("naive", "inplace", "torch_naive", "torch_inplace"):
                r = self.row(v, 1024, mode)
                ops[v] = sum(float(r[c]) for c in ("kernels_per_call", "memcpy_per_call", "memset_per_call"))
                self.assertEqual(float(r["memcpy_per_call"]), 1.0 if "naive" in v else 0.0, f"{v} {mode}")
            self.assertEqual(ops["naive"] - ops["inplace"], 1, ops)
            self.assertEqual(ops["torch_naive"] - ops["torch_inplace"], 1, ops)

    def test_the_gate_reads_the_run(self):
        """The run against a copy of itself under another run id: every row compared, none slower."""
        base = self.csv[:-4] + "-copy.csv"
        with open(self.csv) as src, open(base, "w", newline="") as dst:
            rows = list(csv.DictReader(src))
            w = csv.DictWriter(dst, fieldnames=list(rows[0].keys()), lineterminator="\n")
            w.writeheader()
            for r in rows:
                w.writerow(dict(r, run_id="copy"))
        r = subprocess.run([os.path.join(BUILD, "regress"), "--results", self.csv, "--baseline", base],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        ok = sum(1 for x in self.rows if x["status"] == "ok")
        self.assertIn(f"{ok} compared, 0 slower", r.stdout)
        with open(self.csv[:-4] + ".env") as fh:
            self.assertIn("extended=", fh.read())


DECODE_POINT = "batch=2 heads=8 kv_heads=2 seq=300 q_len=1,4 dim=64 causal=0,1"


@unittest.skipUnless(torch_on_gpu(), "needs PyTorch and a GPU")
class TorchDecodeOnGpu(PeersRun):
    """make bench PEERS=torch on decode points (1 and 4 queries, the
    sequence's last, against 300 keys, grouped heads, causal bottom-right
    and not), cold and graph: naive, inplace and the eager and math peers
    ok, the other backends ok or skipped with PyTorch's reason, each output
    against the reference."""
    POINTS, MODES = (DECODE_POINT,), "cold,graph"

    def test_decode_rows_ok_or_skipped_with_pytorchs_reason(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr[-3000:])
        self.assertEqual(len(self.rows), (2 + len(TORCH_PEERS)) * 4 * 2)
        self.assertEqual({r["q_len"] for r in self.rows}, {"1", "4"})
        for r in self.rows:
            what = f"{r['variant']} q_len={r['q_len']} causal={r['causal']} {r['mode']}: {r['reason']}"
            self.check_row(r, ("naive", "inplace", "torch_naive", "torch_inplace", "torch_sdpa_math"), 0.02, what)


RAGGED_POINT = "batch=3 heads=4 kv_heads=2 seq=300 dim=64 causal=1 varlen=lens:1+300+129"


@unittest.skipUnless(torch_on_gpu(), "needs PyTorch and a GPU")
class TorchBackwardOnGpu(PeersRun):
    """make bench PEERS=torch in passes bwd and fwd_bwd: the seed's point,
    an odd grouped point and a ragged batch with a length-1 sequence, cold
    and graph (graph first). Every peer's dQ, dK, dV validated by the runner (ok, or
    skipped with PyTorch's reason); the seed's study for training: naive's
    and inplace's backward the same ops, torch_naive's and torch_inplace's
    too, and in fwd_bwd the out-of-place mask's one copy in both pairs."""

    PASSES = " pass=bwd,fwd_bwd"
    POINTS = (SEED_POINT + PASSES, "batch=1 heads=6 kv_heads=2 seq=17 dim=64 causal=0" + PASSES,
              RAGGED_POINT + PASSES)
    MODES = "graph,cold"  # graph first: its capture must leave the next mode's backward as it was

    def test_one_run_every_row(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr[-3000:])
        self.assertEqual(len(self.rows), (2 + len(TORCH_PEERS)) * 3 * 2 * 2)
        self.assertEqual({r["pass"] for r in self.rows}, {"bwd", "fwd_bwd"})

    def test_gradients_ok_or_skipped_with_pytorchs_reason(self):
        for r in self.rows:
            what = f"{r['variant']} {r['pass']} S={r['seq_len']} {r['varlen']} {r['mode']}: {r['reason']}"
            # the math backend takes no causal nested (ragged) batch: PyTorch says so
            eager = ("naive", "inplace", "torch_naive", "torch_inplace") + (() if r["varlen"] else ("torch_sdpa_math",))
            self.check_row(r, eager, 0.04, what)

    def test_seed_backward_op_counts(self):
        for mode in ("cold", "graph"):
            ops = {}
            for v in ("naive", "inplace", "torch_naive", "torch_inplace"):
                for pas in ("bwd", "fwd_bwd"):
                    found = [r for r in self.rows if r["variant"] == v and r["seq_len"] == "1024"
                             and r["mode"] == mode and r["pass"] == pas]
                    self.assertEqual(len(found), 1, f"{v} {pas} {mode}")
                    r = found[0]
                    ops[v, pas] = sum(float(r[c]) for c in ("kernels_per_call", "memcpy_per_call",
                                                            "memset_per_call"))
                    ops[v, pas, "memcpy"] = float(r["memcpy_per_call"])
            for eager in ("", "torch_"):
                naive, inplace = eager + "naive", eager + "inplace"
                self.assertEqual(ops[naive, "bwd"], ops[inplace, "bwd"], (mode, ops))
                self.assertEqual(ops[naive, "fwd_bwd"] - ops[inplace, "fwd_bwd"], 1, (mode, ops))
                self.assertEqual(ops[naive, "fwd_bwd", "memcpy"] - ops[inplace, "fwd_bwd", "memcpy"], 1,
                                 (mode, ops))


# 300 tokens in pages of 16: 19 a sequence, the last holding 12 (its spare slots attn_cache_tail's)
PAGED_DECODE_POINT = "batch=2 heads=8 kv_heads=2 kv_len=300 q_len=1,4 dim=64 causal=1 page=16"
# cached lengths 1, 300 and 129 (the rows past each attn_cache_tail's), contiguous and in pages of 16
RAGGED_CACHE_POINT = "heads=8 kv_heads=2 kv_lens=1+300+129 q_len=1 dim=64 causal=0,1 page=0,16"


@unittest.skipUnless(torch_on_gpu(), "needs PyTorch and a GPU")
class TorchCacheOnGpu(PeersRun):
    """make bench PEERS=torch on a paged decode with a partial last page and
    a ragged cache with a length-1 sequence (contiguous and paged), cold and
    graph: the eager peers (pages gathered, each sequence against its own
    cached rows), flex (a block mask on the lengths, moved to the physical
    pages when paged) and the SDPA math backend's loop over the sequences ok
    against the reference; SDPA skipped on a paged cache with its one-line
    reason; the other SDPA backends ok or skipped with PyTorch's reason."""
    POINTS, MODES = (PAGED_DECODE_POINT, RAGGED_CACHE_POINT), "cold,graph"

    def test_every_row(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr[-3000:])
        self.assertEqual(len(self.rows), (2 + len(TORCH_PEERS)) * (2 + 4) * 2)
        self.assertEqual({r["page"] for r in self.rows}, {"0", "16"})

    def test_cache_rows(self):
        for r in self.rows:
            if r["variant"] in ("naive", "inplace"):
                continue  # the C variants' own tests hold them
            what = f"{r['variant']} q_len={r['q_len']} page={r['page']} {r['varlen']} {r['mode']}: {r['reason']}"
            paged = r["page"] != "0"
            if paged and r["variant"].startswith("torch_sdpa"):
                self.assertEqual(r["status"], "skipped", what)
                self.assertRegex(r["reason"], r"^PyTorch SDPA takes no paged cache", what)
                self.assertEqual(len(r["reason"].splitlines()), 1, what)
                continue
            self.check_row(r, ("torch_naive", "torch_inplace", "torch_sdpa_math", "torch_flex"), 0.02, what)


def fa4_on_gpu():
    if not torch_on_gpu():
        return False
    try:
        import flash_attn.cute  # noqa: F401
        return True
    except ImportError:
        return False


@unittest.skipUnless(fa4_on_gpu(), "needs PyTorch, a GPU and flash-attn-4")
class Fa4OnGpu(unittest.TestCase):
    """make bench PEERS=fa4 in every pass, cold and graph, on an odd grouped
    point, a causal one and a ragged batch with a length-1 sequence, and a
    causal decode (bottom-right): its output and gradients validated by the
    runner (ok, or skipped with flash-attn-4's reason; the dense points ok
    in every pass)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        env = dict(os.environ, ATTNBENCH=os.path.join(BUILD, "attnbench"), ATTN_BUILD=BUILD)
        passes = " pass=fwd,bwd,fwd_bwd"
        points = ("batch=1 heads=6 kv_heads=2 seq=17 dim=64 causal=0" + passes,
                  "batch=2 heads=4 seq=1000 dim=128 causal=1" + passes, RAGGED_POINT + passes,
                  "batch=2 heads=8 kv_heads=2 seq=300 q_len=4 dim=64 causal=1")  # a decode, forward only
        cls.proc = subprocess.run(["bench/peers.sh", "fa4"] + [a for p in points for a in ("--point", p)] +
                                  ["--variants", "naive", "--mode", "cold,graph", "--warm-ms", "0",
                                   "--budget-ms", "100", "--out", cls.tmp.name, "--quiet"],
                                  capture_output=True, text=True, env=env, cwd=ROOT)
        runs = sorted(f for f in os.listdir(cls.tmp.name) if f.endswith(".csv") and ".samples" not in f)
        cls.rows = list(csv.DictReader(open(os.path.join(cls.tmp.name, runs[0])))) if len(runs) == 1 else []

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_pass_validated(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr[-3000:])
        rows = [r for r in self.rows if r["variant"] == "fa4"]
        self.assertEqual(len(rows), 3 * 3 * 2 + 2)
        for r in rows:
            what = f"fa4 {r['pass']} S={r['seq_len']} {r['varlen']} {r['mode']}: {r['reason']}"
            if r["status"] == "skipped" and r["varlen"]:
                self.assertTrue(r["reason"].startswith(("flash-attn-4", "PyTorch: flash_attn.cute")), what)
                continue
            self.assertEqual(r["status"], "ok", what)
            self.assertGreater(float(r["ms_median"]), 0, what)


@unittest.skipUnless(fa4_on_gpu(), "needs PyTorch, a GPU and flash-attn-4")
class Fa4CacheOnGpu(PeersRun):
    """make bench PEERS=fa4 on the paged decode with a partial last page and
    the ragged cache with a length-1 sequence (contiguous and paged), cold
    and graph: page_table and seqused_k through flash_attn_varlen_func, every
    row ok against the reference."""
    POINTS, MODES, MODULE = (PAGED_DECODE_POINT, RAGGED_CACHE_POINT), "cold,graph", "fa4"

    def test_every_row_ok(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr[-3000:])
        rows = [r for r in self.rows if r["variant"] == "fa4"]
        self.assertEqual(len(rows), (2 + 4) * 2)
        for r in rows:
            what = f"fa4 q_len={r['q_len']} page={r['page']} {r['varlen']} {r['mode']}: {r['reason']}"
            self.check_row(r, ("fa4",), 0.02, what)


if __name__ == "__main__":
    result = unittest.TextTestRunner(verbosity=2).run(unittest.defaultTestLoader.loadTestsFromModule(
        sys.modules[__name__]))
    failed = len(result.failures) + len(result.errors)
    skipped = len(result.skipped)
    print(f"peers: {result.testsRun - failed - skipped} passed, {failed} failed, {skipped} skipped")
    sys.exit(1 if failed else 0)
