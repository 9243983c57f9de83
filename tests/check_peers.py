"""check_peers.py — the PyTorch peers' shared rules (tools/peers/attnpeer.py
over build/libattnpeer.so), tested with neither PyTorch nor a GPU: the
statistics, the stop and warm-up rules, the FLOP and byte counts, the
output comparison give the values the C tests hold the runner to, and a
row written by Python with attnpeer.columns() is read and gated by the C
tools unchanged. Prints `peers: N passed, N failed, N skipped`; run from the
repository root after `make build/libattnpeer.so build/regress`."""

import csv
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


class Schema(unittest.TestCase):
    def test_key_columns(self):
        cols = attnpeer.columns()
        key = ["variant", "dtype", "batch", "heads", "seq_len", "head_dim", "causal", "mode"]
        start = cols.index("variant")
        self.assertEqual(cols[start:start + 8], key)
        for c in ("status", "ms_median", "samples", "noise_rel", "tflops", "kernels_per_call", "shard"):
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


if __name__ == "__main__":
    result = unittest.TextTestRunner(verbosity=2).run(unittest.defaultTestLoader.loadTestsFromModule(
        sys.modules[__name__]))
    failed = len(result.failures) + len(result.errors)
    skipped = len(result.skipped)
    print(f"peers: {result.testsRun - failed - skipped} passed, {failed} failed, {skipped} skipped")
    sys.exit(1 if failed else 0)
