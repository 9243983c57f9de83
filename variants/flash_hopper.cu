/* flash_hopper.cu — fused attention forward for Hopper (sm_90a): TMA loads
 * into 128B-swizzled shared memory, a warp-specialized producer/consumer
 * pipeline on mbarriers, wgmma tensor-core MMAs, fp32 online softmax.
 * bf16 and fp16 in, fp32 accumulation; head_dim 64 and 128; any B, H, S.
 *
 * STATUS: issue 7, v9. Registered. Every configuration in
 * cfgs[] ran correct on the H200 (S = 1, 17, 1000 with B·H = 3, also with
 * the persistent grid capped at 3 CTAs so that CTAs run several tiles; the
 * default grid's S = 2048…16384; fp16), and so did v4's kv_* / pers_kv_*
 * (separate K and V rings; same checks, bf16 and fp16). Faster than cuDNN
 * at every S >= 2048 of the default grid in the v9 run; variants/NOTES.md
 * has the A/Bs.
 * Built with
 * -DATTN_HOPPER_DEBUG every mbarrier wait gives up after 2^30 tries or ~4 s,
 * prints which barrier it was stuck on and traps, so a bad run cannot hang.
 * A/B on the H200: ATTN_FLASH_HOPPER_CFG=NAME build/attnbench --variants \
 *   flash_hopper --grid tune; debug build: rm build/variants/flash_hopper.o
 *   && make NVCCFLAGS=-DATTN_HOPPER_DEBUG (make does not track flag changes).
 *
 * Device code exists only in the sm_90a pass (__CUDA_ARCH_FEAT_SM90_ALL):
 * any other target compiles a kernel that traps, and supports() refuses
 * every device that is not compute capability 9.0, so it is never launched.
 *
 * ---------------------------------------------------------------- design
 * Grid (ceil(S/128), B·H); causal grids run the heaviest (last) row blocks
 * first. Block = 384 threads = 3 warpgroups, 128 query rows of one head:
 *   WG0  producer. setmaxnreg.dec to 24; thread 0 alone issues every TMA
 *        load (cp.async.bulk.tensor.3d); the other 127 threads exit.
 *   WG1  consumer 0, query rows m0 .. m0+63    } setmaxnreg.inc to 240
 *   WG2  consumer 1, query rows m0+64 .. m0+127 }
 * Q, K, V are seen by TMA as 3-D tensors (D, S, B·H) (innermost first), so a
 * box never straddles two heads and rows >= S of a head arrive as zeros.
 * One box = 64 columns (128 bytes) × 128 rows, CU_TENSOR_MAP_SWIZZLE_128B:
 * a 16 KiB "chunk" in which row r's 16-byte piece i sits at piece i ^ (r%8).
 * A tile of 128 rows × D is D/64 chunks one after another.
 *
 * Shared memory (from a 1024-byte-aligned base; every chunk 1024-aligned, as
 * the swizzle pattern repeats every 1024 bytes and wgmma assumes that phase):
 *   Q                       D/64 chunks          loaded once
 *   K[stage], V[stage]      D/64 chunks each     STAGES = 2 ring
 *   full[2], empty[2], qfull                     8-byte mbarriers
 *   D=64: 80 KiB + 1 KiB slack, D=128: 160 KiB + 1 KiB slack.
 *
 * Per key tile j (128 keys), per consumer warpgroup:
 *   S = Q·Kᵀ  64×128 fp32: D/16 × wgmma.m64n128k16, A = Q and B = K both
 *             from shared memory, K-major (trans 0): K's rows are Kᵀ's columns.
 *   mask      keys >= S and (causal) key > row set to -inf, only on tiles that
 *             reach past S or cross the diagonal.
 *   softmax   online, fp32, exp2 with scale·log2(e) folded into one FFMA; a
 *             row is spread over the 4 threads of a quad (shfl.xor 1, 2).
 *   O += P·V  P packed to 16-bit in registers as the A operand; V from shared
 *             memory as B. V is [keys, D] row-major, i.e. B (K=keys × N=D) is
 *             N-major: trans-b = 1. 8 k-steps × D/64 × wgmma.m64n64k16.
 * Causal: tiles past the block's last row are never loaded (n_tiles stops at
 * the diagonal tile), only tiles crossing the diagonal are masked.
 * Epilogue: O / rowsum straight from registers to global, rows < S only.
 *
 * ----------------------------------------- register layouts (PTX ISA 9.7.15)
 * wgmma m64nNk16 accumulator, f32: warp w of the warpgroup owns rows 16w..16w+15;
 * lane = 4g + t; d[4j + 2h + e] = D[16w + g + 8h][8j + 2t + e]  (h, e in {0,1}).
 * wgmma m64nNk16 A from registers, 16-bit: four .b32 registers, two elements
 * each; register r holds A[16w + g + 8(r&1)][8(r>>1) + 2t + {0,1}], which is
 * the accumulator layout of an m64n16 tile (CUTLASS: ALayout_64x16 ==
 * CLayout_64x16). So P's k-step kk (keys 16kk..16kk+15) is accumulator
 * columns 16kk..16kk+15 = d[8kk .. 8kk+7], and a[r] = pack(d[8kk+2r],
 * d[8kk+2r+1]), low half = lower key: no shuffles, as for mma.sync m16n8k16.
 *
 * ---------------------------------- shared-memory matrix descriptors (64 bit)
 * bits 0-13 start address >> 4, 16-29 leading byte offset (LBO) >> 4,
 * 32-45 stride byte offset (SBO) >> 4, 49-51 base offset (0: every pattern
 * starts on a 1024-byte boundary), 62-63 swizzle (1 = 128B).
 *   Q, K (K-major, 128B swizzle): SBO = 1024 (8 rows × 128 B to the next 8
 *        rows), LBO unused for swizzled K-major ("assumed 1": we put 16 B).
 *        k-step kk: chunk kk/4, plus (kk%4)·32 bytes on the start address;
 *        the hardware applies the XOR to the final address bits, which is
 *        where TMA put the data.
 *   V (MN-major, 128B swizzle, N = 64 per instruction = one swizzle atom
 *        wide): SBO = 1024 = offset between groups of 8 keys; LBO would be
 *        the offset to the next 64 columns, never used with N = 64; we set
 *        LBO = SBO = 1024 so the value is right whichever field the
 *        hardware reads. k-step kk (16 keys): start + kk·2048; chunk c of
 *        D: start + c·16384.
 *
 * ------------------------------------------------- synchronisation protocol
 * mbarriers (arrival counts): full[s] 1 (+ transaction bytes), empty[s] 8
 * (one arrive per consumer warp), qfull 1 (+ bytes). Thread 0 initialises
 * them, fence.mbarrier_init, __syncthreads(), then the roles split; no block-
 * wide barrier after that. Tile i uses stage s = i % 2, round r = i / 2.
 *   producer, Q   : arrive.expect_tx(qfull, 128·D·2 B); TMA Q chunks → qfull.
 *   producer, i   : wait(empty[s], parity (r&1)^1)   — round 0 passes at once:
 *                   a fresh barrier is in phase 0 and parity 1 names the
 *                   "preceding" phase, complete by definition;
 *                   arrive.expect_tx(full[s], 2·128·D·2 B);
 *                   TMA K chunks, V chunks of tile i → full[s].
 *   consumer      : wait(qfull, 0) once.
 *   consumer, i   : wait(full[s], parity r&1); S = QKᵀ (wgmma, wait_group 0);
 *                   softmax; O += PV (wgmma, wait_group 0) — all reads of
 *                   stage s are complete — then lane 0 of each warp arrives
 *                   on empty[s] (8 arrivals complete phase r of empty[s]).
 * full[s] can complete phase r+1 only after empty[s] completed phase r, and
 * vice versa, so no waiter ever sees a barrier two phases ahead. TMA bytes
 * of a ragged tile still count a full box (zero-filled), so expect_tx is
 * always the full tile. wgmma.fence precedes each batch of wgmmas (their
 * registers were written by ordinary instructions); the "+f" fence operands
 * around commit/wait keep the compiler from touching accumulators in flight.
 *
 * ------------------------------------------------------------- v2 (configs)
 * v2 templates the kernel on hop_cfg<NCW, STAGES, PIPE, PP, PVN, EPI>; the
 * table cfgs[] lists the compiled ones, default_cfg() names the default per
 * (head_dim, causal), ATTN_FLASH_HOPPER_CFG=NAME picks another (setup records
 * "cfg NAME" with attn_set_impl). "v1" is the design above.
 *   NCW    consumer warpgroups (2 or 3; 3 = 192 query rows, 512 threads,
 *          setmaxnreg 24 / 160). Q is loaded as 64-row boxes (its own tensor
 *          map), consumer w's Q at s_q + w·(D/64)·8 KiB, chunk stride 8 KiB.
 *   STAGES K/V ring depth (D=128: 3 fits in 227 KiB; D=64: 4).
 *   PIPE   intra-warpgroup overlap (FA3): issue S(j) = Q·K(j)ᵀ and
 *          O += P(j-1)·V(j-1), wait_group 1 (S ready), mask + softmax of j
 *          while P·V runs, wait_group 0, release stage j-1, rescale O, P(j)
 *          = packed exp values. One S accumulator suffices: P is packed out
 *          of it before the next QKᵀ is issued. ptxas hoisted the
 *          wait_group 0 above the softmax; a dummy st.shared of a value
 *          that depends on every exp2 keeps it below (checked in the SASS).
 *   PP     ping-pong: consumer w issues its GEMMs between bar.sync(1+w, 256)
 *          and bar.arrive(1+(w+1)%NCW, 256); the last consumer opens the
 *          first round and skips its last arrive (every consumer of a block
 *          runs the same n_tiles, so syncs and arrives balance).
 *   PVN    P·V as one m64n128k16 per k-step at D=128: V MN-major 128B
 *          swizzle, LBO = 16384 (next 64-column atom), SBO = 1024 (CUTLASS
 *          canonical layout ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))).
 *   EPI    O normalised into the consumer's own Q slice (same swizzle,
 *          bank-conflict free), bar.sync(8+w, 128), then 16-byte coalesced
 *          loads/stores of rows < S.
 *
 * ------------------------------------------------------- v3 (persistent)
 * hop_cfg's 7th parameter PERS: grid = min(#SMs, tiles) CTAs (setup reads
 * cudaDevAttrMultiProcessorCount; ATTN_FLASH_HOPPER_CTAS=N overrides it, for
 * tests that want several tiles per CTA at small shapes). A work tile is
 * (row block, head); n_mb·B·H of them. Static schedule, no workspace, one
 * launch: CTA x takes in round k the tile k·G + (k odd ? G-1-x : x) (G CTAs;
 * a snake, so the CTAs that got the heavier tile of a round get the lighter
 * one of the next). Tile index → section of sec_heads heads (v3: as many as
 * have K and V in 5/8 of the L2; v5: one, see setup) → row block → head: the
 * CTAs running at one time share a few heads' K/V in L2; causal row blocks
 * run last-first in each section (heaviest first, light tiles at the tail).
 * Barrier protocol across tiles (all phase counters run on over tiles):
 *   K/V ring: producer and consumers count K/V tiles over all work tiles of
 *     the CTA (producer gi, consumer kv0 + it): stage = n % STAGES, round =
 *     n / STAGES, exactly as v1's protocol on one long sequence.
 *   Q: QB buffers (2 where smem allows: D=64; 1 at D=128 with 3 stages),
 *     one per consumer warpgroup each: qfull[b][w] (count 1 + tx bytes) and
 *     qempty[b][w] (count 4, one per warp). Tile k uses buffer b = k % QB,
 *     use u = k / QB: consumer waits qfull[b][w] parity u&1; after its
 *     epilogue (O is staged in its own Q slice) every thread does
 *     fence.proxy.async (generic accesses before the next TMA write),
 *     __syncwarp, lane 0 arrives on qempty[b][w]. Producer waits qempty[b][w]
 *     parity (u&1)^1 (round 0 passes at once) before loading Q into it.
 *     With QB = 1 the producer first issues the tile's first min(n, STAGES)
 *     K/V tiles (their slots free up while the previous tile finishes), then
 *     the Q wait + load, then the rest; with QB = 2 Q goes first.
 *   ping-pong: one chain over all tiles: the last consumer opens it once at
 *     the start and skips only its very last arrive (final_tile); every
 *     consumer runs the same tiles with the same n_tiles, so it balances.
 * Non-persistent configs run the same code with one tile per CTA (QB = 1).
 * Defaults per (head_dim, causal) in default_cfg() (v2 measurements; the
 * persistent configs are to be A/B'd: pers_pp, pers_ip, pers_n64,
 * pers_ip_n64 at D=128; pers_pp3, pers_ip3, pers_pp at D=64).
 *
 * ------------------------------------------- v4 (separate K and V rings)
 * hop_cfg's 8th parameter KV > 0 (C::SEPKV): K and V get rings of their
 * own, K STAGES deep, V KV deep (VSTAGES), each slot with its own full/empty
 * mbarrier pair (full count 1 + TILE bytes, empty count 4·NCW), so a K load
 * waits only for a K slot and Q·Kᵀ only for K. NOT YET RUN ON A GPU: A/B
 * and a correctness pass (ragged S, causal, ATTN_FLASH_HOPPER_CTAS=3,
 * debug build) are due before any of these becomes a default.
 * Layout: Q (QB·NCW slices), K[STAGES], V[VSTAGES], then 512 bytes of
 * mbarriers (full[STAGES] = K full, empty[STAGES] = K empty, vfull[VSTAGES],
 * vempty[VSTAGES], qfull[QB][NCW], qempty[QB][NCW]; scratch word last).
 * Ring positions: K/V tile n of the CTA (n = kv0 + it, over all its work
 * tiles) is K slot n % STAGES round n / STAGES and V slot n % VSTAGES round
 * n / VSTAGES; parities as in v1 (producer waits empty with (round&1)^1).
 *   producer, per work tile, step it = 0 .. n_tiles: [Q when it == q_at];
 *     it < n_tiles: wait kempty(n), expect_tx(kfull, TILE), TMA K(it);
 *     it > 0: wait vempty(n-1), expect_tx(vfull, TILE), TMA V(it-1).
 *     V lags K by one tile (FA3's order): consumers need V(j) one step
 *     after K(j), and K(j+1) is not queued behind a wait for a V slot.
 *   consumer, step it >= 1 (PIPE only, static_assert): wait kfull(it),
 *     pp_sync, issue Q·K(it)ᵀ, wait vfull(it-1), issue P·V(it-1), pp_arrive,
 *     wait_group 1 (Q·Kᵀ done: groups complete in order) → arrive
 *     kempty(it); softmax; wait_group 0 → arrive vempty(it-1). Prologue:
 *     Q·K(0)ᵀ, wait_group 0, arrive kempty(0); tail: wait vfull(last), P·V,
 *     wait_group 0, arrive vempty(last).
 * No deadlock for any depth >= 1: the producer's K(it) needs only slots the
 * consumers free at step it - STAGES (K) or it - 1 - VSTAGES (V, via the
 * V(it-2) issued before it), and a consumer at step it needs only K(it)
 * and V(it-1), which precede any load that waits on step it.
 * What it buys: at D=128 2 K + 2 V stages still prefetch (K(j) is issued
 * as soon as Q·K(j-2)ᵀ is done), which leaves room for two Q buffers in
 * the persistent kernel: 2·32 + 2·32 + 2·32 KiB = 192 KiB, so the next
 * tile's Q loads during this tile's epilogue. Configs: D=128 kv_pp (2+2),
 * kv_pp_s3 (3+3), kv_n64, pers_kv_pp (2 Q, 2+2), pers_kv_pp_k3 (2 Q,
 * 3 K + 2 V, 225.5 KiB), pers_kv_n64, pers_kv_ip; D=64 kv_pp3 (4+4),
 * pers_kv_pp3 (2 Q, 4+4), pers_kv_pp3_s5 (2 Q, 5+5), pers_kv_ip3.
 *
 * ---------------------------------------------------------------- v5
 * hop_cfg's 9th parameter PE: of the 16 column groups of a tile, PE take
 * their exponentials from ex2_poly() (FMA pipe) instead of MUFU.EX2 (A/B:
 * slower, kept as kv_pp3_e2 / pp_e4 to reproduce it). 10th, XT (persistent
 * + separate rings + 2 Q buffers): at the end of a work tile the consumer
 * waits for the next tile's Q and first K, issues that Q·K(0)ᵀ together
 * with this tile's last P·V (one ping-pong turn), runs the next tile's
 * first softmax under that P·V, and only then writes this tile's O
 * (epilogue() with the finished tile's rows, head, Q buffer and row sums)
 * and zeroes the accumulator; the tensor cores see no drain between work
 * tiles. The producer is unchanged (its order already loads the next
 * tile's Q and K(0) before the consumers need them). Ring positions in the
 * consumer are absolute (kv0 + it) so a tile can start inside the previous
 * one's last step. Persistent sections are one head (setup;
 * ATTN_FLASH_HOPPER_SEC=N sets N heads per section, for A/B; v7: plain
 * grids too).
 *
 * ---------------------------------------------------------------- v6
 * hop_cfg's 11th parameter BN: keys per K/V tile, 128, 192 or 256 (the
 * "128" of the v1 text above is BN). A K or V box is BN rows × 128 bytes
 * (the K and V tensor maps use BN-row boxes, cfgs[].bn); Q·Kᵀ is one
 * m64n128k16 per 128 keys (descriptor moved 128 rows on) plus one m64n64k16
 * for a remaining 64, into acc_s[BN/2]; P·V takes BN/16 k-steps; masking
 * and softmax run over BN/8 column groups. D=128 with BN=192 and the
 * overlap fits in 240 registers with no spill (acc_s 96, P 48, O 64).
 * A consumer whose 64 rows all lie past S (the third consumer of the last
 * row block when S is not a multiple of 192) takes a path of its own that
 * keeps every barrier wait, ping-pong turn and release but issues no
 * wgmma and no softmax (non-XT configs). The Makefile fails the build if
 * ptxas reports a spill or serialised wgmmas (C75xx) for any instance: an
 * early return inside the GEMM helpers did that to all of them, silently
 * costing 30%.
 *
 * ---------------------------------------------------------------- v7
 * The plain (non-persistent) grid takes the persistent kernel's tile order
 * over its linear block index: sections of sec_heads heads, row blocks
 * heaviest first across the section's heads. With one head per section
 * (the old order) the last CTAs of the grid are every head's light row
 * blocks interleaved with heavy ones; with 4–16 the light ones come last
 * and the tail is short. default_sec() sets it per shape from the A/B.
 *
 * ---------------------------------------------------------------- v8
 * The warpgroup and warp indices are broadcast from lane 0 (shfl): ptxas
 * then treats the consumer index, its rows and the idle test as warp-
 * uniform, keeps ring positions and wgmma descriptors in uniform
 * registers and needs no convergence code (WARPSYNC, ENDCOLLECTIVE) around
 * the warpgroup-wide instructions; every kernel ran 2–7% faster.
 * Run-time options (kernel argument opts, HOP_OPT_*, all on by default;
 * ATTN_FLASH_HOPPER_OPTS=N for A/B):
 *   SKIP   causal: a consumer computes only the tiles up to its own last
 *          row (n_mine); the block's later tiles, masked for all its rows,
 *          get the idle path's barrier turns and releases. With 192-row
 *          blocks of 128-key tiles this drops 5.5% of the work at S = 2048.
 *   SHORT  BN > 128: a last tile with at most 128 useful keys issues only
 *          the first 128 keys' wgmmas (the mask sets the rest of S to
 *          -inf; the branch closes after the wait, see the loop).
 *   RAGGED_LAST  non-causal, S not a multiple of the row block: the short
 *          last blocks of all heads come after the full ones.
 *   RAGGED_FIRST causal, S % 64 == 0 but not a multiple of the row block:
 *          the blocks are laid to end at S, so the block with idle
 *          consumers starts before row 0 (their Q is not loaded, the
 *          producer only arrives) and is the lightest block of the head,
 *          one key tile, instead of the heaviest (at S = 2048, 192-row
 *          blocks: 2 of 3 consumers busy for 16 key tiles).
 * hop_cfg's XT_ == 2 ("XE"): at the switch between work tiles both GEMMs
 * are waited for, the finished tile's epilogue runs, then the new tile's
 * first softmax — fewer registers live than XT_ == 1, so the 3-consumer
 * D=64 kernel fits in 160 without spilling. XT kernels now take the idle
 * path too: a consumer whose next tile is idle drains as without XT.
 *
 * ---------------------------------------------------------------- v9
 * hop_cfg's SPAN_ (pers_kv_pp3_xs, D=64 non-causal): the persistent grid's
 * work is the sequence of every head's 64-row slices, NCW consecutive
 * slices per work tile, so a tile may span two heads (three when a head is
 * one slice) and only the grid's last tile can leave a consumer idle.
 * Step it loads one K and one V tile per head h of the work tile into ring
 * position kv0 + ns·it + h; a consumer waits for and releases its own
 * head's slots only, and the producer, after its empty wait, arrives on
 * that barrier for the consumers of the other heads (mbarrier.arrive with
 * a count, 4 per warp), so every phase still completes at 4·NCW arrivals.
 * (A first version had every consumer wait for and release every head's
 * slots: runtime-length loops around the waits in the GEMM loop, 10%
 * slower at every S.) Idle consumers keep head 0's protocol.
 * Not yet: a dynamic (atomic) scheduler, a TMA store of O. */
#include "../common/errors.h"
#include "../common/kernel_util.cuh"
#include "../common/nvtx.h"

#include <cuda.h> /* CUtensorMap and its enums only: no -lcuda, see get_encode() */
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#define HOP_CHUNK_COLS 64 /* 16-bit elements in one 128-byte swizzled row */

#ifndef ATTN_HOPPER_SPIN_LIMIT
#define ATTN_HOPPER_SPIN_LIMIT (1u << 30)
#endif
#ifndef ATTN_HOPPER_TIMEOUT_NS
#define ATTN_HOPPER_TIMEOUT_NS 4000000000ull
#endif


#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HOP_DEVICE 1
#else
#define HOP_DEVICE 0
#endif


#if HOP_DEVICE
/* ---------------------------------------------------- PTX: sm_90a only */

static __device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

/* Makes the initialised barriers visible to the other threads and to the
 * async proxy (TMA's complete_tx). */
static __device__ __forceinline__ void mbar_init_fence(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

static __device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}

static __device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* count arrivals at once (v9: the producer arriving for the consumers
 * that do not read a slot) */
static __device__ __forceinline__ void mbar_arrive_n(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

static __device__ __forceinline__ uint32_t mbar_try_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done;
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n"
                 "}\n"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return done;
}

#ifdef ATTN_HOPPER_DEBUG
static __device__ __forceinline__ uint64_t global_ns(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}
#endif

/* Blocks until the phase of `bar` with this parity has completed. */
static __device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity, const char *what)
{
#ifdef ATTN_HOPPER_DEBUG
    const uint64_t t0 = global_ns();
    uint32_t tries = 0;
    while (!mbar_try_wait(bar, parity)) {
        ++tries;
        if (tries >= ATTN_HOPPER_SPIN_LIMIT ||
            ((tries & 1023u) == 0 && global_ns() - t0 > ATTN_HOPPER_TIMEOUT_NS)) {
            printf("flash_hopper: block (%d,%d) thread %d stuck on %s (parity %u) after %u tries\n",
                   blockIdx.x, blockIdx.y, threadIdx.x, what, parity, tries);
            __trap();
        }
    }
#else
    (void)what;
    while (!mbar_try_wait(bar, parity)) {
    }
#endif
}

/* One TMA box of a 3-D tensor map into shared memory; completion is counted
 * in bytes on `bar`. Coordinates innermost first: column, row, batch·head. */
static __device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap *map, uint32_t bar,
                                                   int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

template <int N> static __device__ __forceinline__ void setmaxnreg_dec(void)
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> static __device__ __forceinline__ void setmaxnreg_inc(void)
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

static __device__ __forceinline__ void wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
static __device__ __forceinline__ void wgmma_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> static __device__ __forceinline__ void wgmma_wait(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* Ties the registers to this point of the program: the compiler may neither
 * read accumulators of an in-flight wgmma nor sink writes past its issue. */
template <int N> static __device__ __forceinline__ void fence_regs(float (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N> static __device__ __forceinline__ void fence_regs(uint32_t (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+r"(r[i])::"memory");
}

/* Shared-memory matrix descriptor, 128-byte swizzle, base offset 0. */
static __device__ __forceinline__ uint64_t make_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((saddr & 0x3FFFFu) >> 4) | ((uint64_t)((lbo & 0x3FFFFu) >> 4) << 16) |
           ((uint64_t)((sbo & 0x3FFFFu) >> 4) << 32) | (1ull << 62);
}

#define HOP_ACC8(d, i)                                                                             \
    "+f"(d[i + 0]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define HOP_ACC32(d) HOP_ACC8(d, 0), HOP_ACC8(d, 8), HOP_ACC8(d, 16), HOP_ACC8(d, 24)
#define HOP_ACC64(d) HOP_ACC32(d), HOP_ACC8(d, 32), HOP_ACC8(d, 40), HOP_ACC8(d, 48), HOP_ACC8(d, 56)
#define HOP_REGS32                                                                                 \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "   \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define HOP_REGS64                                                                                 \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "   \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "   \
    "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "   \
    "%56, %57, %58, %59, %60, %61, %62, %63}"

/* The asm of one wgmma, written once for both 16-bit types (TY "bf16" or
 * "f16"): N columns, accumulator operands REGS / ACC(d). SS: A and B K-major
 * in shared memory, operands %QA, %QB the descriptors, %QP the accumulate
 * flag. RS_TB: A from registers (%A0..%A3), B N-major in shared memory
 * (trans-b 1, descriptor %QB), always accumulating. */
#define HOP_WGMMA_SS(TY, N, REGS, ACC, d, da, db, acc, QA, QB, QP)                                \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #QP ", 0;\n"                                \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " " REGS              \
                 ", %" #QA ", %" #QB ", p, 1, 1, 0, 0;\n}\n"                                      \
                 : ACC(d)                                                                          \
                 : "l"(da), "l"(db), "r"(acc))
#define HOP_WGMMA_RS_TB(TY, N, REGS, ACC, d, a, db, A0, A1, A2, A3, QB)                          \
    asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " " REGS              \
                 ", {%" #A0 ", %" #A1 ", %" #A2 ", %" #A3 "}, %" #QB ", 1, 1, 1, 1;\n"             \
                 : ACC(d)                                                                          \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db))

/* d (64×128, f32) = A·B (+ d when accumulate): A and B K-major in shared memory. */
template <typename T>
static __device__ __forceinline__ void wgmma_ss_n128(float *d, uint64_t da, uint64_t db, int accumulate)
{
    if constexpr (is_bf16<T>::value)
        HOP_WGMMA_SS("bf16", 128, HOP_REGS64, HOP_ACC64, d, da, db, accumulate, 64, 65, 66);
    else
        HOP_WGMMA_SS("f16", 128, HOP_REGS64, HOP_ACC64, d, da, db, accumulate, 64, 65, 66);
}

/* d (64×64, f32) = A·B (+ d when accumulate): A and B K-major in shared memory. */
template <typename T>
static __device__ __forceinline__ void wgmma_ss_n64(float *d, uint64_t da, uint64_t db, int accumulate)
{
    if constexpr (is_bf16<T>::value)
        HOP_WGMMA_SS("bf16", 64, HOP_REGS32, HOP_ACC32, d, da, db, accumulate, 32, 33, 34);
    else
        HOP_WGMMA_SS("f16", 64, HOP_REGS32, HOP_ACC32, d, da, db, accumulate, 32, 33, 34);
}

/* d (64×64, f32) += A·B: A from registers, B N-major in shared memory
 * (trans-b 1); d is 32 floats of the thread's accumulator. */
template <typename T>
static __device__ __forceinline__ void wgmma_rs_n64_tb(float *d, const uint32_t (&a)[4], uint64_t db)
{
    if constexpr (is_bf16<T>::value)
        HOP_WGMMA_RS_TB("bf16", 64, HOP_REGS32, HOP_ACC32, d, a, db, 32, 33, 34, 35, 36);
    else
        HOP_WGMMA_RS_TB("f16", 64, HOP_REGS32, HOP_ACC32, d, a, db, 32, 33, 34, 35, 36);
}

/* d (64×128, f32) += A·B: A from registers, B N-major in shared memory (trans-b 1),
 * N = 128 = two 64-column swizzle atoms, LBO bytes apart. */
template <typename T>
static __device__ __forceinline__ void wgmma_rs_n128_tb(float *d, const uint32_t (&a)[4], uint64_t db)
{
    if constexpr (is_bf16<T>::value)
        HOP_WGMMA_RS_TB("bf16", 128, HOP_REGS64, HOP_ACC64, d, a, db, 64, 65, 66, 67, 68);
    else
        HOP_WGMMA_RS_TB("f16", 128, HOP_REGS64, HOP_ACC64, d, a, db, 64, 65, 66, 67, 68);
}

/* Named barriers (id 0 is __syncthreads). */
static __device__ __forceinline__ void named_sync(uint32_t id, uint32_t threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
static __device__ __forceinline__ void named_arrive(uint32_t id, uint32_t threads)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* v5: 2^x on the FMA pipe, for x <= 0 (the softmax's exponents), so that
 * part of a tile's exponentials leave the MUFU unit (16 per clock per SM,
 * as many as the tensor cores need at D = 64). floor(x) by adding 1.5·2^23
 * rounding down (its low mantissa bits are then floor(x) in two's
 * complement), f = x - floor(x) in [0, 1), 2^f by a degree-3 polynomial
 * (fitted by us for relative error: max 8.6e-5, under bf16's 3.9e-3), and
 * floor(x) added to the exponent field. x is clamped at -127, where the
 * result is 0 exactly, as ex2.approx gives for -inf. */
static __device__ __forceinline__ float ex2_poly(float x)
{
    const float magic = 12582912.f; /* 1.5·2^23 */
    x = fmaxf(x, -127.f);
    float t;
    asm("add.rm.f32 %0, %1, %2;\n" : "=f"(t) : "f"(x), "f"(magic));
    const float f = x - (t - magic);
    float p = fmaf(f, 0.0770652f, 0.2276470f);
    p = fmaf(p, f, 0.6951163f);
    p = fmaf(p, f, 1.f);
    return __int_as_float(__float_as_int(p) + (__float_as_int(t) << 23));
}

#endif /* HOP_DEVICE */

/* ------------------------------------------------------------- kernel */

/* One compiled configuration (see the table cfgs[] and the header comment). */
template <int NCW_, int STAGES_, bool PIPE_, bool PP_, bool PVN_, bool EPI_, bool PERS_ = false, int KV_ = 0,
          int PE_ = 0, int XT_ = 0, int BN_ = 128, bool SPAN_ = false>
struct hop_cfg {
    static constexpr int NCW = NCW_;       /* consumer warpgroups, 64 query rows each */
    static constexpr int STAGES = STAGES_; /* K/V ring depth */
    static constexpr bool PIPE = PIPE_;    /* issue QK(j+1) before softmax(j) */
    static constexpr bool PP = PP_;        /* ping-pong the consumers' GEMMs (named barriers) */
    static constexpr bool PVN = PVN_;      /* P·V as one m64nDk16 per k-step (D = 128) */
    static constexpr bool EPI = EPI_;      /* O through shared memory, 16-byte stores */
    static constexpr bool PERS = PERS_;    /* persistent: grid = SMs, each CTA loops over tiles */
    /* v4: KV_ > 0: separate K and V rings (own full/empty barriers), K ring
     * STAGES deep, V ring KV_ deep; 0: K and V of a tile share one stage */
    static constexpr bool SEPKV = KV_ > 0;
    static constexpr int VSTAGES = SEPKV ? KV_ : STAGES;
    /* v5: PE_ of the 16 column groups (8 keys each) of a 128-key tile take
     * their exponentials from ex2_poly (FMA pipe) instead of MUFU */
    static constexpr int PE = PE_;
    /* v5: XT_ (persistent, separate rings, two Q buffers): the next work
     * tile's first Q·Kᵀ and softmax run while the last P·V of this one is
     * in flight, and this tile's epilogue follows them; the pipeline does
     * not drain between work tiles */
    static constexpr bool XT = XT_ != 0;
    /* v8: XT_ == 2: at the switch both GEMMs are waited for, then the
     * finished tile's epilogue, then the new tile's first softmax (fewer
     * registers live than XT_ == 1, which runs that softmax under P·V) */
    static constexpr bool XT_EARLY = XT_ == 2;
    /* v6: keys per K/V tile (128, 192 or 256): Q·Kᵀ as one m64n128 wgmma
     * per 128 keys plus one m64n64 for a remainder of 64 */
    static constexpr int BN = BN_;
    static_assert(BN_ % 64 == 0 && BN_ >= 128 && BN_ <= 256, "BN: 128, 192 or 256");
    /* v9: SPAN_ (non-causal, persistent, separate rings): a work tile is
     * NCW consecutive 64-row slices of the sequence of all heads' slices,
     * so it may span up to NCW heads; each step loads one K (and V) tile
     * per head of the work tile ("streams"), and every work tile but the
     * grid's last is full (no block with an idle consumer per head) */
    static constexpr bool SPAN = SPAN_;
    static_assert(!SPAN_ || (PERS_ && KV_ >= NCW_ && STAGES_ >= NCW_ && XT_ != 0),
                  "SPAN: persistent XT kernel, K and V rings at least NCW deep");
    static constexpr int BM = 64 * NCW;
    static constexpr int THREADS = 128 * (NCW + 1);
    static constexpr int PREG = 24;
    /* 2 consumers: 24 + 2·240 = 3·168; 3 consumers: 24 + 3·160 <= 4·128 */
    static constexpr int CREG = NCW == 2 ? 240 : 160;
};

#define HOP_Q_CHUNK (64 * 128)   /* one Q box: 64 rows × 128 bytes */
#define HOP_SMEM_OPTIN 232448    /* 227 KiB, the sm_90 opt-in limit per block */
#define HOP_BAR_BYTES 256        /* mbarriers; the last 16 bytes hold the scratch word */

/* v8 run-time options (kernel argument opts; ATTN_FLASH_HOPPER_OPTS=N for A/B) */
#define HOP_OPT_SHORT 1       /* BN > 128: a last tile with <= 128 useful keys issues 128 keys' wgmmas */
#define HOP_OPT_SKIP 2        /* causal: a consumer skips the math of tiles past its last row */
#define HOP_OPT_RAGGED_LAST 4 /* non-causal: the short last row blocks run after all full ones */
#define HOP_OPT_RAGGED_FIRST 8 /* causal, S % 64 == 0: row blocks end at S, the short one is the first */
#define HOP_OPT_DEFAULT (HOP_OPT_SHORT | HOP_OPT_SKIP | HOP_OPT_RAGGED_LAST | HOP_OPT_RAGGED_FIRST)

/* Bytes for the mbarriers + scratch word: v4 (separate K/V rings) has twice
 * as many ring barriers, so it gets 512; older configs keep 256. */
template <typename C> static constexpr __host__ __device__ uint32_t hop_bar_bytes(void)
{
    return C::SEPKV ? 2 * HOP_BAR_BYTES : HOP_BAR_BYTES;
}
template <int D, typename C> static constexpr __host__ __device__ size_t hop_smem_with(int qbufs)
{
    return (size_t)qbufs * C::NCW * (D / HOP_CHUNK_COLS) * HOP_Q_CHUNK +
           (size_t)(C::STAGES + C::VSTAGES) * (D / HOP_CHUNK_COLS) * C::BN * 128 + hop_bar_bytes<C>() + 1024;
}
/* Q buffers: persistent configs double-buffer Q where it fits (the next
 * tile's Q loads while this tile's epilogue still uses the current one). */
template <int D, typename C> static constexpr __host__ __device__ int hop_qbufs(void)
{
    return C::PERS && hop_smem_with<D, C>(2) <= HOP_SMEM_OPTIN ? 2 : 1;
}
template <int D, typename C> static constexpr __host__ __device__ size_t hop_smem_bytes(void)
{
    return hop_smem_with<D, C>(hop_qbufs<D, C>());
}

template <typename T, int D, typename C>
static __global__ void __launch_bounds__(C::THREADS, 1)
flash_hopper_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                    const __grid_constant__ CUtensorMap tm_v, T *__restrict__ o, int S, int causal,
                    float scale_log2, int n_bh, int sec_heads, int opts)
{
#if HOP_DEVICE
    constexpr int CHUNKS = D / HOP_CHUNK_COLS;
    constexpr int BN = C::BN;
    constexpr uint32_t KCH = BN * 128;          /* one K or V box: BN rows × 128 bytes */
    constexpr uint32_t TILE = CHUNKS * KCH;      /* one K or V tile */
    constexpr uint32_t QWG = CHUNKS * HOP_Q_CHUNK; /* one consumer's 64 Q rows */
    constexpr int NCW = C::NCW, STAGES = C::STAGES, VSTAGES = C::VSTAGES;
    constexpr int QB = hop_qbufs<D, C>();
    constexpr uint32_t BARB = hop_bar_bytes<C>();
    constexpr int NRING = C::SEPKV ? 2 * (STAGES + VSTAGES) : 2 * STAGES; /* ring mbarriers */
    static_assert((NRING + 2 * QB * NCW) * 8 <= (int)BARB - 16, "mbarriers must end before the scratch word");
    static_assert(!C::SEPKV || C::PIPE, "separate K/V rings are written for the PIPE schedule");
    static_assert(hop_smem_bytes<D, C>() <= HOP_SMEM_OPTIN, "shared memory above the opt-in limit");

    extern __shared__ unsigned char smem_raw[];
    const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const uint32_t s_q = base;                    /* + (buffer·NCW + consumer)·QWG + chunk·HOP_Q_CHUNK */
    const uint32_t s_k = base + QB * NCW * QWG;   /* + stage·TILE + chunk·KCH */
    const uint32_t s_v = s_k + STAGES * TILE;     /* + stage·TILE + chunk·KCH */
    const uint32_t bars = s_v + VSTAGES * TILE;
    const uint32_t scratch = bars + BARB - 16;
    /* FULL/EMPTY: the shared K+V ring, or (SEPKV) the K ring; VFULL/VEMPTY: the V ring */
#define FULL_BAR(s) (bars + 8u * (s))
#define EMPTY_BAR(s) (bars + 8u * (STAGES + (s)))
#define VFULL_BAR(s) (bars + 8u * (2 * STAGES + (s)))
#define VEMPTY_BAR(s) (bars + 8u * (2 * STAGES + VSTAGES + (s)))
#define QFULL_BAR(b, w) (bars + 8u * (NRING + (b) * NCW + (w)))
#define QEMPTY_BAR(b, w) (bars + 8u * (NRING + QB * NCW + (b) * NCW + (w)))

    /* Work tiles (row block, head). Persistent: n_mb·n_bh tiles; CTA x takes
     * in round k the tile k·G + (k odd ? G-1-x : x) (G = gridDim.x), a snake
     * that evens out the heaviest-first order. Tile index → (section of
     * sec_heads heads, then row block, then head within the section): a
     * section's K/V fits in L2; causal row blocks run last-first (heaviest
     * first). Not persistent: one tile, the same order over the linear
     * block index. */
    const int n_mb = (S + C::BM - 1) / C::BM;
    const int n_sl = (S + 63) / 64; /* SPAN: 64-row slices per head */
    const int n_work = C::SPAN ? (n_sl * n_bh + NCW - 1) / NCW : C::PERS ? n_mb * n_bh : 1;
    auto tile_at = [&](int k) -> int {
        if constexpr (C::PERS) {
            const int G = (int)gridDim.x, x = (int)blockIdx.x;
            return k * G + ((k & 1) ? G - 1 - x : x);
        } else {
            return k;
        }
    };
    auto decode = [&](int tile, int w, int &m0, int &bh, int &n_tiles) {
        if constexpr (C::SPAN) {
            /* v9: consumer w's slice g of the sequence of every head's
             * slices, as rows m0 + 64·w of head bh (m0 itself may be below
             * 0); past the last slice: rows from S, an idle consumer */
            const int g = tile * NCW + w;
            if (g < n_sl * n_bh) {
                bh = g / n_sl;
                m0 = (g - bh * n_sl - w) * 64;
            } else {
                bh = n_bh - 1;
                m0 = S - 64 * w;
            }
            n_tiles = (S + BN - 1) / BN;
            return;
        }
        /* not persistent: the CTA's linear index, the order the hardware
         * dispatches them in; with sections of one head this is (row block,
         * head) = (blockIdx.x, blockIdx.y), the order before v7 */
        const int lin = C::PERS ? tile : (int)(blockIdx.x + blockIdx.y * gridDim.x);
        /* v8 (HOP_OPT_RAGGED_LAST): non-causal, S not a multiple of the
         * row block: every head's short last block after all full ones,
         * so that the grid's tail is made of the short blocks */
        int mb_sec = n_mb;
        if (!causal && (opts & HOP_OPT_RAGGED_LAST) && n_mb > 1 && n_mb * C::BM > S) {
            mb_sec = n_mb - 1;
            if (lin >= mb_sec * n_bh) {
                bh = lin - mb_sec * n_bh;
                m0 = mb_sec * C::BM;
                n_tiles = (S + BN - 1) / BN;
                return;
            }
        }
        const int sec_tiles = sec_heads * mb_sec;
        const int sec = lin / sec_tiles;
        const int r = lin - sec * sec_tiles;
        const int h0 = sec * sec_heads;
        const int nh = min(sec_heads, n_bh - h0);
        const int mi = r / nh;
        bh = h0 + (r - mi * nh);
        const int m_block = causal ? n_mb - 1 - mi : mi; /* causal: mb_sec == n_mb */
        m0 = m_block * C::BM;
        /* v8 (HOP_OPT_RAGGED_FIRST): causal blocks aligned to end at S, so
         * that the block with idle consumers (rows < 0) is the lightest one
         * (one key tile) instead of the heaviest */
        if (causal && (opts & HOP_OPT_RAGGED_FIRST) && S % 64 == 0) m0 -= n_mb * C::BM - S;
        const int n_end = causal ? min(S, m0 + C::BM) : S;
        n_tiles = (n_end + BN - 1) / BN;
    };
    /* the first head of a work tile and how many heads its rows span
     * (SPAN: up to NCW; otherwise the tile's one head) */
    auto tile_heads = [&](int tile, int bh, int &h0, int &ns) {
        h0 = bh;
        ns = 1;
        if constexpr (C::SPAN) {
            const int g0 = tile * NCW;
            h0 = g0 / n_sl;
            ns = (min(g0 + NCW, n_sl * n_bh) - 1) / n_sl - h0 + 1;
        }
    };
    /* warpgroup index broadcast from lane 0: the compiler then knows it is
     * warp-uniform, and so is everything derived from it (the consumer
     * index, its rows, the idle test), which keeps ring positions and wgmma
     * descriptors in uniform registers (v8: without it, a branch on idle
     * moved them to vector registers, +R2UR in the loop, -5%) */
    const int wg = __shfl_sync(0xffffffffu, (int)(threadIdx.x / 128), 0);

    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; s++) {
            mbar_init(FULL_BAR(s), 1);
            mbar_init(EMPTY_BAR(s), 4 * NCW);
        }
        if constexpr (C::SEPKV) {
#pragma unroll
            for (int s = 0; s < VSTAGES; s++) {
                mbar_init(VFULL_BAR(s), 1);
                mbar_init(VEMPTY_BAR(s), 4 * NCW);
            }
        }
#pragma unroll
        for (int b = 0; b < QB; b++)
#pragma unroll
            for (int w = 0; w < NCW; w++) {
                mbar_init(QFULL_BAR(b, w), 1);
                mbar_init(QEMPTY_BAR(b, w), 4);
            }
        mbar_init_fence();
    }
    __syncthreads();

    if (wg == 0) {
        /* ------------------------------------------------ producer */
        setmaxnreg_dec<C::PREG>();
        if (threadIdx.x == 0) {
            int gi = 0; /* K/V tiles issued so far, over all work tiles: the ring position */
            for (int k = 0;; k++) {
                const int tile = tile_at(k);
                if (tile >= n_work) break;
                int m0, bh, n_tiles, h0, ns;
                decode(tile, 0, m0, bh, n_tiles);
                tile_heads(tile, bh, h0, ns);
                const int b = k % QB;
                const uint32_t qpar = ((uint32_t)(k / QB) & 1u) ^ 1u;
                /* one Q buffer: the first STAGES K/V tiles go ahead of Q, whose
                 * buffer is free only once the previous tile's epilogue is done */
                const int q_at = (QB == 2 || k == 0) ? 0 : min(n_tiles, STAGES);
                /* each consumer's 64 Q rows: m0 + 64·w of head bh (SPAN: its own slice) */
                auto load_q = [&]() {
#pragma unroll
                    for (int w = 0; w < NCW; w++) {
                        int q_m0 = m0, q_bh = bh, q_n;
                        if constexpr (C::SPAN) decode(tile, w, q_m0, q_bh, q_n);
                        mbar_wait(QEMPTY_BAR(b, w), qpar, "qempty");
                        if (q_m0 + 64 * w < 0) { /* RAGGED_FIRST: rows before 0, an idle consumer */
                            mbar_arrive(QFULL_BAR(b, w));
                            continue;
                        }
                        mbar_arrive_expect_tx(QFULL_BAR(b, w), QWG);
#pragma unroll
                        for (int c = 0; c < CHUNKS; c++)
                            tma_load_3d(s_q + (b * NCW + w) * QWG + c * HOP_Q_CHUNK, &tm_q,
                                        QFULL_BAR(b, w), c * HOP_CHUNK_COLS, q_m0 + 64 * w, q_bh);
                    }
                };
                /* v9 (SPAN): the arrivals on an empty barrier of stream h's
                 * slot that the consumers of the other streams do not make
                 * (idle consumers, past the last slice, keep stream 0's) */
                auto stand_in = [&](int h) -> uint32_t {
                    const int g0 = tile * NCW, g_end = min(g0 + NCW, n_sl * n_bh);
                    int users = min(g_end, (h0 + h + 1) * n_sl) - max(g0, (h0 + h) * n_sl);
                    if (h == 0) users += g0 + NCW - g_end;
                    return 4u * (uint32_t)(NCW - users);
                };
                if constexpr (C::SEPKV) {
                    /* v4: step it loads K(it), then V(it-1) (V lags one tile,
                     * as the consumers use it one step later); K slot n = gi+it
                     * of the K ring, V slot n of the V ring, each with its own
                     * full/empty pair: a K load waits only for a K slot.
                     * v9 (SPAN): a step loads one K (V) tile per head of the
                     * work tile, head h0 + h into slot gi + ns·it + h, and
                     * stands in for the consumers of the other heads */
                    for (int it = 0; it <= n_tiles; it++) {
                        if (it == q_at) load_q();
                        if (it < n_tiles) {
                            for (int h = 0; h < ns; h++) {
                                const int n = gi + ns * it + h;
                                const int s = n % STAGES;
                                mbar_wait(EMPTY_BAR(s), ((uint32_t)(n / STAGES) & 1u) ^ 1u, "kempty");
                                if (C::SPAN && ns > 1) mbar_arrive_n(EMPTY_BAR(s), stand_in(h));
                                mbar_arrive_expect_tx(FULL_BAR(s), TILE);
#pragma unroll
                                for (int c = 0; c < CHUNKS; c++)
                                    tma_load_3d(s_k + s * TILE + c * KCH, &tm_k, FULL_BAR(s),
                                                c * HOP_CHUNK_COLS, it * BN, h0 + h);
                            }
                        }
                        if (it > 0) {
                            for (int h = 0; h < ns; h++) {
                                const int n = gi + ns * (it - 1) + h;
                                const int s = n % VSTAGES;
                                mbar_wait(VEMPTY_BAR(s), ((uint32_t)(n / VSTAGES) & 1u) ^ 1u, "vempty");
                                if (C::SPAN && ns > 1) mbar_arrive_n(VEMPTY_BAR(s), stand_in(h));
                                mbar_arrive_expect_tx(VFULL_BAR(s), TILE);
#pragma unroll
                                for (int c = 0; c < CHUNKS; c++)
                                    tma_load_3d(s_v + s * TILE + c * KCH, &tm_v, VFULL_BAR(s),
                                                c * HOP_CHUNK_COLS, (it - 1) * BN, h0 + h);
                            }
                        }
                    }
                    gi += ns * n_tiles;
                } else {
                    for (int it = 0;; it++) {
                        if (it == q_at) load_q();
                        if (it == n_tiles) break;
                        const int s = gi % STAGES;
                        const uint32_t round = (uint32_t)(gi / STAGES);
                        mbar_wait(EMPTY_BAR(s), (round & 1u) ^ 1u, "empty");
                        mbar_arrive_expect_tx(FULL_BAR(s), 2 * TILE);
#pragma unroll
                        for (int c = 0; c < CHUNKS; c++)
                            tma_load_3d(s_k + s * TILE + c * KCH, &tm_k, FULL_BAR(s),
                                        c * HOP_CHUNK_COLS, it * BN, bh);
#pragma unroll
                        for (int c = 0; c < CHUNKS; c++)
                            tma_load_3d(s_v + s * TILE + c * KCH, &tm_v, FULL_BAR(s),
                                        c * HOP_CHUNK_COLS, it * BN, bh);
                        gi++;
                    }
                }
            }
        }
        return;
    }

    /* ---------------------------------------------------- consumers */
    setmaxnreg_inc<C::CREG>();
    const int cw = wg - 1; /* consumer 0 .. NCW-1: its 64-row slice of the block */
    const int tid = threadIdx.x % 128;
    /* warp-uniform too (broadcast): the mask test on warp_row0 is a uniform branch */
    const int warp = __shfl_sync(0xffffffffu, tid / 32, 0), lane = tid % 32;
    const int g = lane / 4, t = lane % 4;

    /* per work tile: */
    int m0 = 0, bh = 0, n_tiles = 0;
    /* v8: tiles this consumer computes (causal, HOP_OPT_SKIP: its last row's
     * tile; the block's later tiles are masked for all its rows and get
     * barrier turns only), and whether its last one needs only its first
     * 128 keys (BN > 128, HOP_OPT_SHORT: the rest lie past S or past its
     * last row, so their wgmmas are not issued) */
    int n_mine = 0;
    bool short_last = false;
    int warp_row0 = 0, row0 = 0; /* first row of this warp; this thread's rows: row0, row0 + 8 */
    int kv0 = 0;                 /* ring position of the tile's first K/V tile */
    int span_ns = 1, span_sig = 0; /* v9 SPAN: the work tile's heads (K/V streams), and this
                                      consumer's: its head minus the tile's first head */
    int qb = 0;                  /* the tile's Q buffer */
    bool idle = false;           /* v6: all of this consumer's rows are >= S (a ragged last
                                    row block): it keeps the barrier protocol, skips the math */
    bool final_tile = true;      /* no work tile after this one (ping-pong's last arrive) */
    bool next_idle = false;      /* XT: the next work tile is idle for this consumer */
    uint64_t desc_q = 0;

    float acc_o[D / 2]; /* m64nD accumulator; 64-column piece c is acc_o[32c .. 32c+31] */
    float acc_s[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; i++) acc_s[i] = 0.f;
    uint32_t p[BN / 16][4];
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
        for (int r = 0; r < 4; r++) p[kk][r] = 0u;
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};

    /* Ring positions n below count K/V tiles over all of this CTA's work
     * tiles (tile it of the current work tile is n = kv0 + it). */
    /* S = Q·Kᵀ of K tile n: k-step kk is chunk kk/4, 32 bytes per 16 columns within it */
    auto issue_qk = [&](int n, auto short_c) {
        /* short_c: std::true_type: only the tile's first 128 keys (the
         * rest of acc_s keeps stale values that the mask sets to -inf) */
        constexpr bool SHORT = decltype(short_c)::value;
        const uint64_t desc_k = make_desc(s_k + (n % STAGES) * TILE, 16, 1024);
        fence_regs(acc_s);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) {
            const uint64_t oq = (uint64_t)(((kk / 4) * HOP_Q_CHUNK + (kk % 4) * 32) >> 4);
            const uint64_t ok = (uint64_t)(((kk / 4) * KCH + (kk % 4) * 32) >> 4);
            /* keys 128·c.. of the tile: 128 rows of 128 bytes further on */
#pragma unroll
            for (int c = 0; c < (SHORT ? 1 : BN / 128); c++)
                wgmma_ss_n128<T>(acc_s + 64 * c, desc_q + oq, desc_k + ok + (uint64_t)((c * 128 * 128) >> 4), kk > 0);
            if constexpr (BN % 128 != 0 && !SHORT)
                wgmma_ss_n64<T>(acc_s + 64 * (BN / 128), desc_q + oq,
                                desc_k + ok + (uint64_t)(((BN / 128) * 128 * 128) >> 4), kk > 0);
        }
        wgmma_commit();
    };
    auto fence_p = [&]() {
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) fence_regs(p[kk]);
    };
    /* O += P·V of V tile n: k-step kk = keys 16kk.., 2048 bytes apart */
    auto issue_pv = [&](int n, auto short_c) {
        /* short_c: std::true_type: keys 0..127 only (P is 0 beyond them) */
        constexpr int KSTEPS = decltype(short_c)::value ? 128 / 16 : BN / 16;
        const uint32_t sv = s_v + (n % VSTAGES) * TILE;
        fence_regs(acc_o);
        fence_p();
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KSTEPS; kk++) {
            if constexpr (C::PVN && D == 128) {
                /* MN-major SW128: LBO = bytes between 64-column atoms, SBO = 8 keys */
                wgmma_rs_n128_tb<T>(acc_o, p[kk], make_desc(sv + kk * 2048, KCH, 1024));
            } else {
#pragma unroll
                for (int c = 0; c < D / 64; c++)
                    wgmma_rs_n64_tb<T>(acc_o + 32 * c, p[kk],
                                         make_desc(sv + c * KCH + kk * 2048, 1024, 1024));
            }
        }
        wgmma_commit();
    };
    auto pv_tile = [&](int n, bool sh) {
        if (C::BN > 128 && sh)
            issue_pv(n, std::true_type{});
        else
            issue_pv(n, std::false_type{});
    };
    /* mask tile it of the current work tile, online softmax: acc_s becomes
     * exp2 values in place, rescale gets the factor for O; rows row0
     * (e = 0,1) and row0 + 8 (e = 2,3) */
    auto softmax = [&](int it, float (&rescale)[2]) {
        const int n0 = it * BN;
        if (n0 + BN > S || (causal && n0 + BN - 1 > warp_row0)) {
#pragma unroll
            for (int j = 0; j < BN / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int key = n0 + 8 * j + 2 * t + (e & 1);
                    const int row = row0 + 8 * (e >> 1);
                    if (key >= S || (causal && key > row)) acc_s[4 * j + e] = -INFINITY;
                }
        }
        float new_max[2] = {row_max[0], row_max[1]};
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
            new_max[0] = fmaxf(new_max[0], fmaxf(acc_s[4 * j], acc_s[4 * j + 1]));
            new_max[1] = fmaxf(new_max[1], fmaxf(acc_s[4 * j + 2], acc_s[4 * j + 3]));
        }
        float neg_base[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            new_max[h] = fmaxf(new_max[h], __shfl_xor_sync(0xffffffffu, new_max[h], 1));
            new_max[h] = fmaxf(new_max[h], __shfl_xor_sync(0xffffffffu, new_max[h], 2));
            /* a row with nothing unmasked yet keeps max -inf: use 0 as its base */
            neg_base[h] = new_max[h] == -INFINITY ? 0.f : -new_max[h] * scale_log2;
            rescale[h] = ex2(fmaf(row_max[h], scale_log2, neg_base[h]));
            row_max[h] = new_max[h];
            row_sum[h] *= rescale[h];
        }
#pragma unroll
        for (int j = 0; j < BN / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float arg = fmaf(acc_s[4 * j + e], scale_log2, neg_base[e >> 1]);
                /* v5: PE of the 16 groups, spread evenly, on the FMA pipe */
                const float x = (j * C::PE) % 16 < C::PE ? ex2_poly(arg) : ex2(arg);
                acc_s[4 * j + e] = x;
                row_sum[e >> 1] += x;
            }
    };
    auto rescale_o = [&](const float (&rescale)[2]) {
#pragma unroll
        for (int j = 0; j < D / 8; j++) {
            acc_o[4 * j + 0] *= rescale[0];
            acc_o[4 * j + 1] *= rescale[0];
            acc_o[4 * j + 2] *= rescale[1];
            acc_o[4 * j + 3] *= rescale[1];
        }
    };
    /* P's k-step kk = accumulator columns 16kk.. = acc_s[8kk .. 8kk+7] */
    auto convert_p = [&]() {
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
            for (int r = 0; r < 4; r++)
                p[kk][r] = pack2(acc_s[8 * kk + 2 * r], acc_s[8 * kk + 2 * r + 1], (T *)nullptr);
    };
    /* shared ring: K and V of ring tile n; SEPKV: V of n (release_k frees K) */
    auto release = [&](int n) {
        __syncwarp();
        if constexpr (C::SEPKV) {
            if (lane == 0) mbar_arrive(VEMPTY_BAR(n % VSTAGES));
        } else {
            if (lane == 0) mbar_arrive(EMPTY_BAR(n % STAGES));
        }
    };
    auto release_k = [&](int n) {
        if constexpr (C::SEPKV) {
            __syncwarp();
            if (lane == 0) mbar_arrive(EMPTY_BAR(n % STAGES));
        }
    };
    /* Ping-pong: consumer w issues its GEMMs between sync(1 + w) and
     * arrive(1 + next); the last consumer opens the first round and skips its
     * final arrive, so every barrier gets as many arrives as syncs. */
    auto pp_sync = [&]() {
        if constexpr (C::PP) named_sync(1 + cw, 256);
    };
    auto pp_arrive = [&](bool last) {
        if constexpr (C::PP)
            if (!(last && final_tile && cw == NCW - 1)) named_arrive(1 + (cw + 1) % NCW, 256);
    };
    /* shared ring: K and V of ring tile n; SEPKV: K only */
    auto full_wait = [&](int n) {
        mbar_wait(FULL_BAR(n % STAGES), (uint32_t)(n / STAGES) & 1u, "full");
    };
    auto vfull_wait = [&](int n) {
        if constexpr (C::SEPKV) mbar_wait(VFULL_BAR(n % VSTAGES), (uint32_t)(n / VSTAGES) & 1u, "vfull");
    };
    /* v9: step it of the current work tile has one K/V tile per stream
     * (head), at ring positions kv0 + ns·it + h; this consumer waits for
     * and releases only its own stream's, and the producer arrives on a
     * slot's empty barrier for the consumers of the other streams (without
     * SPAN ns = 1: kv0 + it) */
    auto n_streams = [&]() -> int { return C::SPAN ? span_ns : 1; };
    auto slot = [&](int it) -> int { return kv0 + n_streams() * it + (C::SPAN ? span_sig : 0); };
    /* Work tile k becomes the current one: its rows, Q buffer and length;
     * waits until its Q has arrived. false: no work tile k. */
    auto begin_tile = [&](int k) -> bool {
        const int tile = tile_at(k);
        if (tile >= n_work) return false;
        decode(tile, cw, m0, bh, n_tiles);
        if constexpr (C::SPAN) {
            int h0;
            tile_heads(tile, bh, h0, span_ns);
            span_sig = m0 + 64 * cw >= S ? 0 : bh - h0;
        }
        final_tile = tile_at(k + 1) >= n_work;
        if constexpr (C::XT) {
            /* v8: whether the next tile's rows are all past S for this consumer */
            next_idle = false;
            if (!final_tile) {
                int nx_m0, nx_bh, nx_n;
                decode(tile_at(k + 1), cw, nx_m0, nx_bh, nx_n);
                next_idle = nx_m0 + 64 * cw >= S || nx_m0 + 64 * cw < 0;
            }
        }
        qb = k % QB;
        desc_q = make_desc(s_q + (qb * NCW + cw) * QWG, 16, 1024);
        warp_row0 = m0 + 64 * cw + 16 * warp;
        row0 = warp_row0 + g;
        /* rows past S, or (RAGGED_FIRST) before 0: with S % 64 == 0 a slice
         * is either wholly outside or wholly inside */
        idle = m0 + 64 * cw >= S || m0 + 64 * cw < 0;
        /* keys this consumer's rows can see: all of S, or (causal) up to
         * its last row */
        const int own_end = causal ? min(S, m0 + 64 * cw + 64) : S;
        n_mine = n_tiles;
        if (C::PIPE && causal && (opts & HOP_OPT_SKIP)) n_mine = min(n_tiles, (own_end + BN - 1) / BN);
        short_last = !C::XT && BN > 128 && (opts & HOP_OPT_SHORT) && (n_mine - 1) * BN + 128 >= own_end;
        row_max[0] = row_max[1] = -INFINITY;
        row_sum[0] = row_sum[1] = 0.f;
        mbar_wait(QFULL_BAR(qb, cw), (uint32_t)(k / QB) & 1u, "qfull");
        return true;
    };
    /* O / row sums of a finished work tile (rows e_m0 + 64·cw.., head e_bh)
     * to global, rows < S only; then its Q buffer e_qb goes back to the
     * producer */
    auto epilogue = [&](int e_m0, int e_bh, int e_qb, const float (&sum)[2]) {
        float inv[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float s = sum[h];
            s += __shfl_xor_sync(0xffffffffu, s, 1);
            s += __shfl_xor_sync(0xffffffffu, s, 2);
            inv[h] = 1.f / s;
        }
        T *oh = o + (size_t)e_bh * S * D;
        const uint32_t s_qw = s_q + (e_qb * NCW + cw) * QWG; /* the tile's Q, now free for its O */
        if constexpr (C::EPI) {
            /* this consumer's Q slice (all its wgmma reads are complete) takes
             * its O in the same swizzled layout: piece j of row r at j ^ (r%8),
             * which spreads a warp's 4-byte stores over all 32 banks */
            const uint32_t s_o = s_qw;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = 16 * warp + g + 8 * h;
#pragma unroll
                for (int j = 0; j < D / 8; j++) {
                    const uint32_t pair = pack2(acc_o[4 * j + 2 * h] * inv[h],
                                                acc_o[4 * j + 2 * h + 1] * inv[h], (T *)nullptr);
                    const uint32_t addr =
                        s_o + (j / 8) * HOP_Q_CHUNK + r * 128 + (((j % 8) ^ (r % 8)) * 16) + 4 * t;
                    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(pair) : "memory");
                }
            }
            named_sync(8 + cw, 128);
            constexpr int PIECES_PER_ROW = D / 8; /* 16-byte pieces */
            const int r_base = e_m0 + 64 * cw;
#pragma unroll
            for (int i = 0; i < 64 * PIECES_PER_ROW / 128; i++) {
                const int piece = 128 * i + tid;
                const int r = piece / PIECES_PER_ROW, cp = piece % PIECES_PER_ROW;
                if (r_base + r >= S) continue;
                const uint32_t addr = s_o + (cp / 8) * HOP_Q_CHUNK + r * 128 + (((cp % 8) ^ (r % 8)) * 16);
                uint32_t v0, v1, v2, v3;
                asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                             : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3)
                             : "r"(addr)
                             : "memory");
                *reinterpret_cast<uint4 *>(oh + (size_t)(r_base + r) * D + 8 * cp) = make_uint4(v0, v1, v2, v3);
            }
        } else {
            const int e_row0 = e_m0 + 64 * cw + 16 * warp + g;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int row = e_row0 + 8 * h;
                if (row >= S) continue;
#pragma unroll
                for (int j = 0; j < D / 8; j++) {
                    const uint32_t pair = pack2(acc_o[4 * j + 2 * h] * inv[h],
                                                acc_o[4 * j + 2 * h + 1] * inv[h], (T *)nullptr);
                    *reinterpret_cast<uint32_t *>(oh + (size_t)row * D + 8 * j + 2 * t) = pair;
                }
            }
        }
        /* this consumer's Q buffer (read by its wgmmas, then O's staging) is
         * free: order the generic-proxy accesses before the next TMA write */
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncwarp();
        if (lane == 0) mbar_arrive(QEMPTY_BAR(e_qb, cw));
    };

    if constexpr (C::PP)
        if (cw == NCW - 1) named_arrive(1, 256);

    float rescale[2];
    /* XT: the current work tile's first Q·Kᵀ and softmax were done at the
     * previous tile's end (P holds its first tile, O is zero) */
    bool carried = false;
    for (int k = 0; carried || begin_tile(k);) {
    if (idle) {
        /* v6: every row of this consumer is past S (a ragged last row
         * block): no math, but the same waits, ping-pong turns and
         * releases as the path below, so that the other consumers and the
         * producer see the usual barrier counts. A separate path, not
         * early returns in the GEMM helpers: those made ptxas serialise
         * the wgmmas of every configuration (C7514). */
        if constexpr (C::PIPE) {
            full_wait(slot(0));
            pp_sync();
            pp_arrive(n_tiles == 1);
            release_k(slot(0));
            for (int it = 1; it < n_tiles; it++) {
                full_wait(slot(it));
                pp_sync();
                vfull_wait(slot(it - 1));
                pp_arrive(it == n_tiles - 1);
                release_k(slot(it));
                release(slot(it - 1));
            }
            vfull_wait(slot(n_tiles - 1));
            release(slot(n_tiles - 1));
        } else {
            for (int it = 0; it < n_tiles; it++) {
                full_wait(slot(it));
                pp_sync();
                pp_arrive(it == n_tiles - 1);
                release(slot(it));
            }
        }
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncwarp();
        if (lane == 0) mbar_arrive(QEMPTY_BAR(qb, cw));
        kv0 += n_streams() * n_tiles;
        k++;
        continue;
    }
    if constexpr (C::PIPE) {
        if (!carried) {
#pragma unroll
            for (int i = 0; i < D / 2; i++) acc_o[i] = 0.f;
            full_wait(slot(0));
            pp_sync();
            /* a short Q·Kᵀ leaves part of acc_s to the mask: the branch
             * closes after the wait, or ptxas serialises the wgmmas (C7515) */
            if (C::BN > 128 && short_last && n_mine == 1) {
                issue_qk(slot(0), std::true_type{});
                pp_arrive(n_tiles == 1);
                wgmma_wait<0>();
            } else {
                issue_qk(slot(0), std::false_type{});
                pp_arrive(n_tiles == 1);
                wgmma_wait<0>();
            }
            fence_regs(acc_s);
            release_k(slot(0));
            softmax(0, rescale); /* O is still 0: nothing to rescale */
            convert_p();
        }
        carried = false;
        for (int it = 1; it < n_mine; it++) {
            full_wait(slot(it));
            pp_sync();
            /* S of tile it is ready after wait_group 1, P·V of it-1 may
             * still run; short Q·Kᵀ: the branch closes after that wait */
            if (C::BN > 128 && short_last && it == n_mine - 1) {
                issue_qk(slot(it), std::true_type{});
                vfull_wait(slot(it - 1)); /* SEPKV: V arrives after K of the next tile */
                issue_pv(slot(it - 1), std::false_type{});
                pp_arrive(it == n_tiles - 1);
                wgmma_wait<1>();
            } else {
                issue_qk(slot(it), std::false_type{});
                vfull_wait(slot(it - 1));
                issue_pv(slot(it - 1), std::false_type{});
                pp_arrive(it == n_tiles - 1);
                wgmma_wait<1>();
            }
            fence_regs(acc_s);
            release_k(slot(it)); /* SEPKV: Q·Kᵀ of tile it has read its K */
            softmax(it, rescale);
            /* ptxas hoists the wait below above the whole softmax (seen in
             * the SASS), which serialises it with P·V; a shared store of a
             * value that depends on every exp2 pins it here (the word is an
             * unused slot after the mbarriers, never read) */
            asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(scratch), "f"(row_sum[0] + row_sum[1])
                         : "memory");
            wgmma_wait<0>();
            fence_regs(acc_o);
            fence_p();
            release(slot(it - 1));
            rescale_o(rescale);
            convert_p();
        }
        const int last = n_mine - 1; /* the step of this consumer's last P·V */
        vfull_wait(slot(last));
        if constexpr (C::XT) {
            static_assert(C::PERS && C::SEPKV && QB == 2, "XT needs the persistent kernel, K/V rings, 2 Q buffers");
            /* v8: a next tile whose rows are all past S for this consumer
             * takes the idle path, so this one drains as without XT; so
             * does a consumer that skips this tile's last tiles (causal) */
            if (!final_tile && !next_idle && n_mine == n_tiles) {
                /* the next work tile's Q·K(0)ᵀ goes with this tile's last
                 * P·V; its softmax runs under that P·V; then this tile's
                 * epilogue, while the other consumers run their GEMMs */
                [[maybe_unused]] const int e_m0 = m0, e_bh = bh, e_qb = qb;
                const float e_sum[2] = {row_sum[0], row_sum[1]};
                const int last_v = slot(last); /* this tile's last V */
                kv0 += n_streams() * n_tiles;
                k++;
                begin_tile(k);
                full_wait(slot(0));
                pp_sync();
                issue_qk(slot(0), std::false_type{});
                issue_pv(last_v, std::false_type{});
                pp_arrive(n_tiles == 1);
                if constexpr (C::XT_EARLY) {
                    wgmma_wait<0>();
                    fence_regs(acc_s);
                    fence_regs(acc_o);
                    fence_p();
                    release_k(slot(0));
                    release(last_v);
                    /* the finished tile's rows and head again from its index
                     * (fewer registers live across the switch than keeping them) */
                    int f_m0, f_bh, f_n;
                    decode(tile_at(k - 1), cw, f_m0, f_bh, f_n);
                    epilogue(f_m0, f_bh, (k - 1) % QB, e_sum);
#pragma unroll
                    for (int i = 0; i < D / 2; i++) acc_o[i] = 0.f;
                    softmax(0, rescale);
                } else {
                    wgmma_wait<1>();
                    fence_regs(acc_s);
                    release_k(slot(0));
                    softmax(0, rescale);
                    asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(scratch), "f"(row_sum[0] + row_sum[1])
                                 : "memory");
                    wgmma_wait<0>();
                    fence_regs(acc_o);
                    fence_p();
                    release(last_v);
                    epilogue(e_m0, e_bh, e_qb, e_sum);
#pragma unroll
                    for (int i = 0; i < D / 2; i++) acc_o[i] = 0.f;
                }
                convert_p();
                carried = true;
                continue;
            }
        }
        pv_tile(slot(last), short_last);
        wgmma_wait<0>();
        fence_regs(acc_o);
        fence_p();
        release(slot(last));
        /* v8: tiles past this consumer's last row (causal): every key is
         * masked for its rows, so only the barrier protocol, as on the idle
         * path: K's turn and release, then V's */
        for (int it = n_mine; it < n_tiles; it++) {
            full_wait(slot(it));
            pp_sync();
            pp_arrive(it == n_tiles - 1);
            release_k(slot(it));
            vfull_wait(slot(it));
            release(slot(it));
        }
    } else {
#pragma unroll
        for (int i = 0; i < D / 2; i++) acc_o[i] = 0.f;
        for (int it = 0; it < n_tiles; it++) {
            full_wait(slot(it));
            pp_sync();
            issue_qk(slot(it), std::false_type{});
            pp_arrive(it == n_tiles - 1);
            wgmma_wait<0>();
            fence_regs(acc_s);
            softmax(it, rescale);
            rescale_o(rescale);
            convert_p();
            issue_pv(slot(it), std::false_type{});
            wgmma_wait<0>();
            fence_regs(acc_o);
            fence_p();
            release(slot(it));
        }
    }
    epilogue(m0, bh, qb, row_sum);
    kv0 += n_streams() * n_tiles;
    k++;
    } /* work tiles */
#undef FULL_BAR
#undef EMPTY_BAR
#undef VFULL_BAR
#undef VEMPTY_BAR
#undef QFULL_BAR
#undef QEMPTY_BAR
#elif defined(__CUDA_ARCH__)
    /* built for a target without wgmma/TMA: supports() never lets this run */
    (void)tm_q, (void)tm_k, (void)tm_v, (void)o, (void)S, (void)causal, (void)scale_log2, (void)n_bh, (void)sec_heads, (void)opts;
    __trap();
#endif
}

/* ------------------------------------------------------------ the variant */

template <typename T, int D, typename C> static int prepare_cfg(void)
{
    CUDA_TRY(cudaFuncSetAttribute(flash_hopper_kernel<T, D, C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)hop_smem_bytes<D, C>()));
    return ATTN_OK;
}

/* Launch geometry: n_sm CTAs at most for persistent configs; sec_heads heads
 * per L2 section of the persistent schedule. */
struct hop_launch {
    int S, causal, n_sm, sec_heads;
    int opts; /* HOP_OPT_* */
    size_t bh;
    float scale_log2;
};

template <typename T, int D, typename C>
static int launch_cfg(const CUtensorMap *tm, void *o, const struct hop_launch *l, cudaStream_t s)
{
    const unsigned n_mb = (unsigned)((l->S + C::BM - 1) / C::BM);
    dim3 grid(n_mb, (unsigned)l->bh);
    if (C::PERS) {
        /* SPAN: work tiles of NCW 64-row slices over every head's slices */
        const size_t work = C::SPAN ? ((size_t)((l->S + 63) / 64) * l->bh + C::NCW - 1) / C::NCW
                                    : (size_t)n_mb * l->bh;
        grid = dim3((unsigned)(work < (size_t)l->n_sm ? work : (size_t)l->n_sm), 1);
    }
    flash_hopper_kernel<T, D, C><<<grid, C::THREADS, hop_smem_bytes<D, C>(), s>>>(
        tm[0], tm[1], tm[2], (T *)o, l->S, l->causal, l->scale_log2, (int)l->bh, l->sec_heads, l->opts);
    LAUNCH_TRY("flash_hopper_kernel");
    return ATTN_OK;
}

template <typename T, int D, typename C> static const void *kernel_ptr(void)
{
    return (const void *)flash_hopper_kernel<T, D, C>;
}

/* Every compiled configuration; default_cfg() picks the default per
 * (head_dim, causal), ATTN_FLASH_HOPPER_CFG=NAME another (tuning, A/B). */
struct hopper_cfg {
    const char *name;
    enum attn_dtype dtype;
    int head_dim;
    int bn; /* keys per K/V tile: the K and V tensor maps' box rows */
    bool pers; /* persistent grid */
    bool span; /* work tiles span heads: non-causal only */
    size_t smem;
    const void *(*kernel)(void);
    int (*prepare)(void);
    int (*launch)(const CUtensorMap *, void *, const struct hop_launch *, cudaStream_t);
};

/*          consumers, stages, pipe, ping-pong, P·V N=D, smem epilogue */
typedef hop_cfg<2, 2, false, false, false, false> cfg_v1;
typedef hop_cfg<2, 3, true, true, true, true> cfg_pp;
typedef hop_cfg<2, 3, true, false, true, true> cfg_ip;
typedef hop_cfg<2, 2, true, true, true, true> cfg_pp_s2;
typedef hop_cfg<2, 3, true, true, false, true> cfg_pp_n64;
typedef hop_cfg<2, 3, true, true, true, false> cfg_pp_gst;
typedef hop_cfg<2, 4, true, true, false, true> cfg_pp_s4; /* D = 64 */
typedef hop_cfg<3, 4, true, true, false, true> cfg_pp3;   /* D = 64 */
typedef hop_cfg<3, 4, true, false, false, true> cfg_ip3;  /* D = 64 */
typedef hop_cfg<3, 2, true, true, false, true> cfg_pp3_s2;
/*          v3: persistent (last parameter) */
typedef hop_cfg<2, 3, true, true, true, true, true> cfg_pers_pp;
typedef hop_cfg<2, 3, true, false, true, true, true> cfg_pers_ip;
typedef hop_cfg<2, 3, true, true, false, true, true> cfg_pers_n64;
typedef hop_cfg<2, 3, true, false, false, true, true> cfg_pers_ip_n64;
typedef hop_cfg<3, 4, true, true, false, true, true> cfg_pers_pp3; /* D = 64 */
typedef hop_cfg<3, 4, true, false, false, true, true> cfg_pers_ip3; /* D = 64 */
typedef hop_cfg<2, 4, true, true, false, true, true> cfg_pers_pp_s4; /* D = 64 */
/*          v4: separate K and V rings (last parameter: V ring depth; K ring = stages) */
typedef hop_cfg<2, 2, true, true, true, true, false, 2> cfg_kv_pp;        /* D = 128: 2 K + 2 V */
typedef hop_cfg<2, 3, true, true, true, true, false, 3> cfg_kv_pp_s3;     /* D = 128: 3 K + 3 V */
typedef hop_cfg<2, 2, true, true, false, true, false, 2> cfg_kv_n64;      /* D = 128 */
typedef hop_cfg<2, 2, true, true, true, true, true, 2> cfg_pers_kv_pp;    /* D = 128: 2 Q bufs */
typedef hop_cfg<2, 3, true, true, true, true, true, 2> cfg_pers_kv_pp_k3; /* D = 128: 2 Q, 3 K, 2 V */
typedef hop_cfg<2, 2, true, true, false, true, true, 2> cfg_pers_kv_n64;  /* D = 128: 2 Q bufs */
typedef hop_cfg<2, 2, true, false, true, true, true, 2> cfg_pers_kv_ip;   /* D = 128: 2 Q bufs */
typedef hop_cfg<3, 4, true, true, false, true, false, 4> cfg_kv_pp3;      /* D = 64: 4 K + 4 V */
typedef hop_cfg<3, 4, true, true, false, true, true, 4> cfg_pers_kv_pp3;  /* D = 64: 2 Q bufs */
typedef hop_cfg<3, 5, true, true, false, true, true, 5> cfg_pers_kv_pp3_s5; /* D = 64: 2 Q, 5 K + 5 V */
typedef hop_cfg<3, 4, true, false, false, true, true, 4> cfg_pers_kv_ip3; /* D = 64: 2 Q bufs */
/*          v5: exponentials partly on the FMA pipe (9th: groups of 16), no drain
 *          between persistent work tiles (10th) */
typedef hop_cfg<3, 4, true, true, false, true, false, 4, 2> cfg_kv_pp3_e2;   /* D = 64 */
typedef hop_cfg<2, 3, true, true, true, true, false, 0, 4> cfg_pp_e4;        /* D = 128 */
typedef hop_cfg<2, 2, true, true, true, true, true, 2, 0, true> cfg_pers_kv_pp_xt;   /* D = 128 */
typedef hop_cfg<2, 2, true, true, false, true, true, 2, 0, true> cfg_pers_kv_n64_xt; /* D = 128 */
typedef hop_cfg<2, 2, true, false, true, true, true, 2, 0, true> cfg_pers_kv_ip_xt;  /* D = 128 */
/*          v6: keys per tile (11th) */
typedef hop_cfg<2, 4, true, true, false, true, false, 4, 0, false, 192> cfg_kv2_n192;  /* D = 64: 4 K + 4 V */
typedef hop_cfg<2, 3, false, true, false, true, false, 0, 0, false, 256> cfg_pp2_n256; /* D = 64: no overlap */
typedef hop_cfg<2, 2, true, true, true, true, false, 2, 0, false, 192> cfg_kv_pp_n192; /* D = 128 */
typedef hop_cfg<3, 4, true, true, false, true, true, 4, 0, 2> cfg_pers_kv_pp3_xe; /* D = 64, v8 */
typedef hop_cfg<2, 2, true, true, true, true, true, 2, 0, 2> cfg_pers_kv_pp_xe;   /* D = 128, v8 */
/*          v9: work tiles spanning heads (12th) */
typedef hop_cfg<3, 4, true, true, false, true, true, 4, 0, 2, 128, true> cfg_pers_kv_pp3_xs; /* D = 64 */

#define HCFG(NAME, TYPE, DTYPE, D, C)                                                                 \
    {NAME, DTYPE, D, C::BN, C::PERS, C::SPAN, hop_smem_bytes<D, C>(), kernel_ptr<TYPE, D, C>, prepare_cfg<TYPE, D, C>, \
     launch_cfg<TYPE, D, C>}
#define HCFG_BF16(NAME, D, C) HCFG(NAME, __nv_bfloat16, ATTN_BF16, D, C)
#define HCFG_FP16(NAME, D, C) HCFG(NAME, __half, ATTN_FP16, D, C)

static const struct hopper_cfg cfgs[] = {
    HCFG_BF16("pp", 128, cfg_pp),
    HCFG_BF16("v1", 128, cfg_v1),
    HCFG_BF16("ip", 128, cfg_ip),
    HCFG_BF16("pp_s2", 128, cfg_pp_s2),
    HCFG_BF16("pp_n64", 128, cfg_pp_n64),
    HCFG_BF16("pp_gst", 128, cfg_pp_gst),
    HCFG_BF16("pp3", 64, cfg_pp3),
    HCFG_BF16("v1", 64, cfg_v1),
    HCFG_BF16("ip3", 64, cfg_ip3),
    HCFG_BF16("pp", 64, cfg_pp_s4),
    HCFG_BF16("ip", 64, cfg_ip),
    HCFG_BF16("pp3_s2", 64, cfg_pp3_s2),
    HCFG_BF16("pers_pp", 128, cfg_pers_pp),
    HCFG_BF16("pers_ip", 128, cfg_pers_ip),
    HCFG_BF16("pers_n64", 128, cfg_pers_n64),
    HCFG_BF16("pers_ip_n64", 128, cfg_pers_ip_n64),
    HCFG_BF16("pers_pp3", 64, cfg_pers_pp3),
    HCFG_BF16("pers_ip3", 64, cfg_pers_ip3),
    HCFG_BF16("pers_pp", 64, cfg_pers_pp_s4),
    HCFG_BF16("kv_pp", 128, cfg_kv_pp),
    HCFG_BF16("kv_pp_s3", 128, cfg_kv_pp_s3),
    HCFG_BF16("kv_n64", 128, cfg_kv_n64),
    HCFG_BF16("pers_kv_pp", 128, cfg_pers_kv_pp),
    HCFG_BF16("pers_kv_pp_k3", 128, cfg_pers_kv_pp_k3),
    HCFG_BF16("pers_kv_n64", 128, cfg_pers_kv_n64),
    HCFG_BF16("pers_kv_ip", 128, cfg_pers_kv_ip),
    HCFG_BF16("kv_pp3", 64, cfg_kv_pp3),
    HCFG_BF16("pers_kv_pp3", 64, cfg_pers_kv_pp3),
    HCFG_BF16("pers_kv_pp3_s5", 64, cfg_pers_kv_pp3_s5),
    HCFG_BF16("pers_kv_ip3", 64, cfg_pers_kv_ip3),
    HCFG_BF16("kv_pp3_e2", 64, cfg_kv_pp3_e2),
    HCFG_BF16("pp_e4", 128, cfg_pp_e4),
    HCFG_BF16("pers_kv_pp_xt", 128, cfg_pers_kv_pp_xt),
    HCFG_BF16("pers_kv_n64_xt", 128, cfg_pers_kv_n64_xt),
    HCFG_BF16("pers_kv_ip_xt", 128, cfg_pers_kv_ip_xt),
    HCFG_BF16("kv2_n192", 64, cfg_kv2_n192),
    HCFG_BF16("pp2_n256", 64, cfg_pp2_n256),
    HCFG_BF16("kv_pp_n192", 128, cfg_kv_pp_n192),
    HCFG_BF16("pers_kv_pp3_xe", 64, cfg_pers_kv_pp3_xe),
    HCFG_BF16("pers_kv_pp_xe", 128, cfg_pers_kv_pp_xe),
    HCFG_BF16("pers_kv_pp3_xs", 64, cfg_pers_kv_pp3_xs),
    HCFG_FP16("pp", 128, cfg_pp),
    HCFG_FP16("v1", 128, cfg_v1),
    HCFG_FP16("ip", 128, cfg_ip),
    HCFG_FP16("pp_n64", 128, cfg_pp_n64),
    HCFG_FP16("pers_ip", 128, cfg_pers_ip),
    HCFG_FP16("pers_n64", 128, cfg_pers_n64),
    HCFG_FP16("pp3", 64, cfg_pp3),
    HCFG_FP16("v1", 64, cfg_v1),
    HCFG_FP16("ip3", 64, cfg_ip3),
    HCFG_FP16("pers_pp3", 64, cfg_pers_pp3),
    HCFG_FP16("pers_ip3", 64, cfg_pers_ip3),
    HCFG_FP16("kv_pp", 128, cfg_kv_pp),
    HCFG_FP16("kv_pp_s3", 128, cfg_kv_pp_s3),
    HCFG_FP16("kv_n64", 128, cfg_kv_n64),
    HCFG_FP16("pers_kv_pp", 128, cfg_pers_kv_pp),
    HCFG_FP16("pers_kv_pp_k3", 128, cfg_pers_kv_pp_k3),
    HCFG_FP16("pers_kv_n64", 128, cfg_pers_kv_n64),
    HCFG_FP16("pers_kv_ip", 128, cfg_pers_kv_ip),
    HCFG_FP16("kv_pp3", 64, cfg_kv_pp3),
    HCFG_FP16("pers_kv_pp3", 64, cfg_pers_kv_pp3),
    HCFG_FP16("pers_kv_pp3_s5", 64, cfg_pers_kv_pp3_s5),
    HCFG_FP16("pers_kv_ip3", 64, cfg_pers_kv_ip3),
    HCFG_FP16("pers_kv_pp_xt", 128, cfg_pers_kv_pp_xt),
    HCFG_FP16("kv_pp_n192", 128, cfg_kv_pp_n192),
    HCFG_FP16("pers_kv_pp3_xe", 64, cfg_pers_kv_pp3_xe),
    HCFG_FP16("pers_kv_pp3_xs", 64, cfg_pers_kv_pp3_xs),
};
#define N_CFGS (sizeof cfgs / sizeof cfgs[0])

/* The default per (head_dim, causal, seq_len), both dtypes, from the A/Bs
 * on the H200 (variants/NOTES.md, issue 7, v4–v6). Edit here after an A/B. */
static const char *default_cfg(int head_dim, bool causal, int seq_len)
{
    if (head_dim == 128 && causal) {
        /* v5: at S <= 4096 the persistent kernel that does not drain between
         * work tiles (533 / 593 against kv_n64's 507 / 581); v6: 192-key
         * tiles pay once the diagonal's extra masked keys are amortised
         * (S = 16384: 707 against 618 and pp's 688; S = 8192: 579 vs 614) */
        if (seq_len <= 4096) return "pers_kv_pp_xt";
        return seq_len <= 8192 ? "kv_n64" : "kv_pp_n192";
    }
    /* v6: 192-key tiles, mean of two passes 617 667 694 674 against pp's
     * 597 622 639 648 at S = 2048…16384; v7: below 2048 they waste up to
     * 12.5% of the keys (pp 438 / 516 against 402 / 485 at S = 512 / 1024);
     * v8 (warp-uniform indices): the persistent pp 599 / 602 and 622 / 620
     * at S = 2048 / 4096 against kv_pp_n192's 569 / 575 and 608 / 608 */
    if (head_dim == 128) return seq_len < 2048 ? "pp" : seq_len < 8192 ? "pers_kv_pp" : "kv_pp_n192";
    /* v8: D=64 non-causal up to S = 4096 the persistent kernel that does
     * not drain between work tiles (XE), 378 427 471 498 against kv_pp3's
     * 331 405 463 493 at S = 512…4096; beyond, level (514 / 513 against
     * 513 / 517) and kv_pp3 stays; v9: XE with work tiles spanning heads
     * (xs), 404 457 489 508 against XE's 386 433 476 503 at S = 512…4096,
     * level at 8192 (518 / 519) */
    if (!causal && seq_len <= 4096) return "pers_kv_pp3_xs";
    return "kv_pp3";
}

/* Heads per schedule section (see the kernel's tile order). Persistent
 * configs: one (v5). Plain causal grids, v7 A/B (two passes each, TFLOP/s):
 * the heaviest row blocks of several heads first instead of one head at a
 * time shortens the tail of light blocks — D=64 kv_pp3 with 16 heads
 * 378 430 478 494 and with 4 heads 371 426 477 503 against 369 422 463 490
 * at S = 2048…16384; D=128 kv_n64 (S = 8192) 4 heads 595 against 577;
 * kv_pp_n192 (S = 16384) 627 with 4, 635 with 1. */
static int default_sec(const struct hopper_cfg *c, const struct attn_problem *p)
{
    if (c->pers || !p->causal) return 1;
    if (p->head_dim == 64) return p->seq_len <= 8192 ? 16 : 4;
    return c->bn == 128 ? 4 : 1;
}

/* ATTN_FLASH_HOPPER_CFG when set (NULL if it names none compiled for p's
 * dtype and head_dim), else default_cfg(), else the first of p's dtype and
 * head_dim. */
static const struct hopper_cfg *pick_cfg(const struct attn_problem *p)
{
    const char *want = getenv("ATTN_FLASH_HOPPER_CFG");
    const bool by_env = want && *want;
    if (!by_env) want = default_cfg(p->head_dim, p->causal, p->seq_len);
    const struct hopper_cfg *first = NULL;
    for (size_t i = 0; i < N_CFGS; i++) {
        const struct hopper_cfg *c = &cfgs[i];
        if (c->dtype != p->dtype || c->head_dim != p->head_dim) continue;
        if (strcmp(want, c->name) == 0) return c;
        if (!first) first = c;
    }
    return by_env ? NULL : first;
}

struct hopper_ctx {
    struct attn_problem p;
    const struct hopper_cfg *cfg;
    PFN_cuTensorMapEncodeTiled_v12000 encode;
    const void *q, *k, *v; /* the tensors the maps below describe */
    CUtensorMap tm[3];     /* Q (boxes of 64 rows), K, V (boxes of 128 rows) */
    struct hop_launch launch;
};

/* cuTensorMapEncodeTiled through the runtime's driver entry point, so that
 * attnbench does not link libcuda directly. */
static int get_encode(PFN_cuTensorMapEncodeTiled_v12000 *out)
{
    static PFN_cuTensorMapEncodeTiled_v12000 fn;
    if (!fn) {
        void *p = NULL;
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                  cudaEnableDefault, &q));
        if (q != cudaDriverEntryPointSuccess || !p)
            return ATTN_FAIL(ATTN_ERR, "cuTensorMapEncodeTiled not found in the driver (%d)", (int)q);
        fn = (PFN_cuTensorMapEncodeTiled_v12000)p;
    }
    *out = fn;
    return ATTN_OK;
}

/* The tensor [B·H, S, D] as TMA sees it: (D, S, B·H), boxes of 64 × rows × 1. */
static int encode_map(const struct hopper_ctx *c, CUtensorMap *map, const void *ptr, unsigned rows)
{
    const struct attn_problem *p = &c->p;
    if ((uintptr_t)ptr % 16) return ATTN_FAIL(ATTN_ERR, "flash_hopper: tensor not 16-byte aligned");
    const cuuint64_t elem = 2;
    const cuuint64_t dims[3] = {(cuuint64_t)p->head_dim, (cuuint64_t)p->seq_len,
                                (cuuint64_t)p->batch * (cuuint64_t)p->heads};
    const cuuint64_t strides[2] = {(cuuint64_t)p->head_dim * elem,
                                   (cuuint64_t)p->seq_len * (cuuint64_t)p->head_dim * elem};
    const cuuint32_t box[3] = {HOP_CHUNK_COLS, rows, 1};
    const cuuint32_t estr[3] = {1, 1, 1};
    CUresult r = c->encode(map,
                           p->dtype == ATTN_FP16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                           3, const_cast<void *>(ptr), dims, strides, box, estr,
                           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return ATTN_FAIL(ATTN_ERR, "cuTensorMapEncodeTiled failed (CUresult %d)", (int)r);
    return ATTN_OK;
}

static const char *hopper_supports(const struct attn_problem *p, const struct device_info *dev)
{
    if (!dev->present) return "no CUDA device";
    if (dev->cc_major != 9 || dev->cc_minor != 0)
        return "needs compute capability 9.0 (sm_90a: wgmma, TMA, setmaxnreg)";
    if (p->head_dim != 64 && p->head_dim != 128) return "head_dim 64 and 128 only";
    if (p->seq_len < 1) return "seq_len must be at least 1";
    const struct hopper_cfg *c = pick_cfg(p);
    if (!c) return "ATTN_FLASH_HOPPER_CFG names no configuration compiled for this dtype and head_dim";
    if (c->span && p->causal) return "ATTN_FLASH_HOPPER_CFG names a non-causal configuration (work tiles span heads)";
    if (c->smem > dev->smem_optin_bytes) return "not enough shared memory per block";
    if ((size_t)p->batch * p->heads > 65535) return "batch*heads above 65535";
    struct cudaFuncAttributes a;
    if (cudaFuncGetAttributes(&a, c->kernel()) != cudaSuccess) {
        (void)cudaGetLastError();
        return "no sm_90a code in this build (compile with -gencode=arch=compute_90a,code=sm_90a)";
    }
    return NULL;
}

static int hopper_setup(void **ctx, const struct attn_problem *p, void *workspace)
{
    (void)workspace;
    const struct hopper_cfg *cfg = pick_cfg(p);
    if (!cfg) return ATTN_FAIL(ATTN_ERR, "flash_hopper: no configuration for this dtype and head_dim");
    PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    ATTN_TRY(get_encode(&encode));
    ATTN_TRY(cfg->prepare());
    struct hopper_ctx *c = (struct hopper_ctx *)calloc(1, sizeof *c);
    if (!c) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    c->p = *p;
    c->cfg = cfg;
    c->encode = encode;
    /* persistent configs: one CTA per SM; a section of the schedule is one
     * head (v5 A/B: sections sized to fill 5/8 of the L2, 31 heads at
     * S = 2048, ran 531 TFLOP/s at D = 128 against 611 with one head: the
     * CTAs of a round then share few heads' K/V, as in the plain grid) */
    int dev = 0, n_sm = 132;
    if (cudaGetDevice(&dev) == cudaSuccess) {
        if (cudaDeviceGetAttribute(&n_sm, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n_sm < 1)
            n_sm = 132;
    }
    (void)cudaGetLastError();
    /* testing: fewer CTAs, so that small shapes run several tiles per CTA */
    const char *ctas = getenv("ATTN_FLASH_HOPPER_CTAS");
    if (ctas && atoi(ctas) > 0) n_sm = atoi(ctas);
    const size_t bh = (size_t)p->batch * p->heads;
    size_t sec = (size_t)default_sec(cfg, p);
    /* A/B: heads per section of the schedule */
    const char *sec_env = getenv("ATTN_FLASH_HOPPER_SEC");
    if (sec_env && atoi(sec_env) > 0) sec = (size_t)atoi(sec_env);
    if (sec < 1) sec = 1;
    if (sec > bh) sec = bh;
    c->launch.S = p->seq_len;
    c->launch.causal = p->causal ? 1 : 0;
    c->launch.n_sm = n_sm;
    c->launch.sec_heads = (int)sec;
    /* A/B: HOP_OPT_* bits */
    c->launch.opts = HOP_OPT_DEFAULT;
    const char *opts_env = getenv("ATTN_FLASH_HOPPER_OPTS");
    if (opts_env && *opts_env) c->launch.opts = atoi(opts_env) & HOP_OPT_DEFAULT;
    char opts_note[16] = "";
    if (c->launch.opts != HOP_OPT_DEFAULT) snprintf(opts_note, sizeof opts_note, " opts %d", c->launch.opts);
    if (sec > 1)
        attn_set_impl("cfg %s sec %zu%s", cfg->name, sec, opts_note);
    else
        attn_set_impl("cfg %s%s", cfg->name, opts_note);
    c->launch.bh = bh;
    c->launch.scale_log2 = p->scale * 1.4426950408889634f; /* exp(x·scale) = exp2(x·scale·log2 e) */
    *ctx = c;
    return ATTN_OK;
}

static int hopper_run(void *ctx, const void *q, const void *k, const void *v, void *o,
                      attn_stream_t stream)
{
    struct hopper_ctx *c = (struct hopper_ctx *)ctx;
    /* host-side only (no stream work): safe under graph capture */
    if (q != c->q || k != c->k || v != c->v) {
        c->q = c->k = c->v = NULL;
        ATTN_TRY(encode_map(c, &c->tm[0], q, 64));
        ATTN_TRY(encode_map(c, &c->tm[1], k, (unsigned)c->cfg->bn));
        ATTN_TRY(encode_map(c, &c->tm[2], v, (unsigned)c->cfg->bn));
        c->q = q, c->k = k, c->v = v;
    }
    attn_range_push("flash_hopper_fwd");
    const int rc = c->cfg->launch(c->tm, o, &c->launch, (cudaStream_t)stream);
    attn_range_pop();
    return rc;
}

static void hopper_teardown(void *ctx) { free(ctx); }

extern "C" const struct attn_variant attn_variant_flash_hopper = {
    .name = "flash_hopper",
    .summary = "fused Hopper kernel (sm_90a): TMA + mbarrier ring, producer/consumer "
               "warpgroups, wgmma, softmax overlapped with the GEMMs, ping-pong",
    .fused = true,
    .supports = hopper_supports,
    .workspace_bytes = attn_no_workspace,
    .setup = hopper_setup,
    .run = hopper_run,
    .teardown = hopper_teardown,
};
