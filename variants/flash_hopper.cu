/* flash_hopper.cu — fused attention forward for Hopper (sm_90a): TMA loads
 * into 128B-swizzled shared memory, a warp-specialized producer/consumer
 * pipeline on mbarriers, wgmma tensor-core MMAs, fp32 online softmax.
 * bf16 and fp16 in, fp32 accumulation; head_dim 64 and 128; any B, H, S.
 *
 * STATUS: issue 7, v1 draft: compiled (SASS holds HGMMA and UTMALDG), NOT yet
 * run on a GPU. Registered only by `make EXPERIMENTAL=1` (ATTN_EXPERIMENTAL in
 * common/registry.c) until the GPU tests pass on the H200. Built with
 * -DATTN_HOPPER_DEBUG every mbarrier wait gives up after 2^30 tries or ~4 s,
 * prints which barrier it was stuck on and traps, so a bad run cannot hang.
 * Bring-up on the H200:
 *   make EXPERIMENTAL=1 build/test_gpu && CK_FORK=no ./build/test_gpu
 *   make EXPERIMENTAL=1 && build/attnbench --variants flash_mma,flash_hopper \
 *       --point 'batch=4 heads=16 seq=4096 dim=64,128 causal=0,1'
 *   debug build: rm build/variants/flash_hopper.o && make EXPERIMENTAL=1 \
 *       NVCCFLAGS=-DATTN_HOPPER_DEBUG (make does not track flag changes)
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
 * Not yet: intra-warpgroup overlap of softmax with the next QKᵀ, ping-pong
 * scheduling between the consumers, a persistent grid, N = D for P·V,
 * a TMA store of O. */
#include "../common/errors.h"
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

#define HOP_BLOCK_M 128   /* query rows per block (2 consumers × 64) */
#define HOP_BLOCK_N 128   /* keys per tile */
#define HOP_STAGES 2      /* K/V ring depth */
#define HOP_THREADS 384   /* producer + 2 consumer warpgroups */
#define HOP_CHUNK_COLS 64 /* 16-bit elements in one 128-byte swizzled row */
#define HOP_CHUNK_BYTES (128 * 128) /* one TMA box: 128 rows × 128 bytes */
#define HOP_CONSUMER_WARPS 8
#define HOP_PRODUCER_REGS 24
#define HOP_CONSUMER_REGS 240 /* 24 + 2·240 = 3·168: what 384 threads start with */

#ifndef ATTN_HOPPER_SPIN_LIMIT
#define ATTN_HOPPER_SPIN_LIMIT (1u << 30)
#endif
#ifndef ATTN_HOPPER_TIMEOUT_NS
#define ATTN_HOPPER_TIMEOUT_NS 4000000000ull
#endif

/* Bytes of one 128-row tile of Q, K or V. */
#define HOP_TILE_BYTES(D) ((D) / HOP_CHUNK_COLS * HOP_CHUNK_BYTES)
/* Q + K and V per stage + barriers, plus slack to align the base to 1024. */
#define HOP_SMEM_BYTES(D) ((size_t)HOP_TILE_BYTES(D) * (1 + 2 * HOP_STAGES) + 64 + 1024)

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HOP_DEVICE 1
#else
#define HOP_DEVICE 0
#endif

template <typename T> struct hop_type;
template <> struct hop_type<__nv_bfloat16> { static constexpr bool bf16 = true; };
template <> struct hop_type<__half> { static constexpr bool bf16 = false; };

#if HOP_DEVICE
/* ---------------------------------------------------- PTX: sm_90a only */

static __device__ __forceinline__ uint32_t smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

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

/* d (64×128, f32) = A·B (+ d when accumulate): A and B K-major in shared memory. */
template <typename T>
static __device__ __forceinline__ void wgmma_ss_n128(float (&d)[64], uint64_t da, uint64_t db,
                                                     int accumulate)
{
    if constexpr (hop_type<T>::bf16)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " HOP_REGS64
                     ", %64, %65, p, 1, 1, 0, 0;\n}\n"
                     : HOP_ACC64(d)
                     : "l"(da), "l"(db), "r"(accumulate));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " HOP_REGS64
                     ", %64, %65, p, 1, 1, 0, 0;\n}\n"
                     : HOP_ACC64(d)
                     : "l"(da), "l"(db), "r"(accumulate));
}

/* d (64×64, f32) += A·B: A from registers, B N-major in shared memory (trans-b 1). */
template <typename T>
static __device__ __forceinline__ void wgmma_rs_n64_tb(float (&d)[32], const uint32_t (&a)[4],
                                                       uint64_t db)
{
    if constexpr (hop_type<T>::bf16)
        asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " HOP_REGS32
                     ", {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"
                     : HOP_ACC32(d)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
    else
        asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " HOP_REGS32
                     ", {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"
                     : HOP_ACC32(d)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

static __device__ __forceinline__ float ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* Two floats to one register of 16-bit values, lo in the low half. */
static __device__ __forceinline__ uint32_t pack2(float lo, float hi, __nv_bfloat16 *)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
static __device__ __forceinline__ uint32_t pack2(float lo, float hi, __half *)
{
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
#endif /* HOP_DEVICE */

/* ------------------------------------------------------------- kernel */

template <typename T, int D>
static __global__ void __launch_bounds__(HOP_THREADS, 1)
flash_hopper_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                    const __grid_constant__ CUtensorMap tm_v, T *__restrict__ o, int S, int causal,
                    float scale_log2)
{
#if HOP_DEVICE
    constexpr int CHUNKS = D / HOP_CHUNK_COLS;
    constexpr uint32_t TILE = HOP_TILE_BYTES(D);
    constexpr int OC = D / 64; /* 64-column pieces of O, one m64n64 accumulator each */

    extern __shared__ unsigned char smem_raw[];
    const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const uint32_t s_q = base;
    const uint32_t s_k = base + TILE;                    /* + stage·TILE */
    const uint32_t s_v = base + TILE * (1 + HOP_STAGES); /* + stage·TILE */
    const uint32_t bars = base + TILE * (1 + 2 * HOP_STAGES);
#define FULL_BAR(s) (bars + 8u * (s))
#define EMPTY_BAR(s) (bars + 8u * (HOP_STAGES + (s)))
#define Q_BAR (bars + 16u * HOP_STAGES)

    const int m_block = causal ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;
    const int m0 = m_block * HOP_BLOCK_M;
    const int bh = blockIdx.y;
    const int n_end = causal ? min(S, m0 + HOP_BLOCK_M) : S;
    const int n_tiles = (n_end + HOP_BLOCK_N - 1) / HOP_BLOCK_N;
    const int wg = threadIdx.x / 128;

    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < HOP_STAGES; s++) {
            mbar_init(FULL_BAR(s), 1);
            mbar_init(EMPTY_BAR(s), HOP_CONSUMER_WARPS);
        }
        mbar_init(Q_BAR, 1);
        mbar_init_fence();
    }
    __syncthreads();

    if (wg == 0) {
        /* ------------------------------------------------ producer */
        setmaxnreg_dec<HOP_PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            mbar_arrive_expect_tx(Q_BAR, TILE);
#pragma unroll
            for (int c = 0; c < CHUNKS; c++)
                tma_load_3d(s_q + c * HOP_CHUNK_BYTES, &tm_q, Q_BAR, c * HOP_CHUNK_COLS, m0, bh);
            for (int it = 0; it < n_tiles; it++) {
                const int s = it % HOP_STAGES;
                const uint32_t round = (uint32_t)(it / HOP_STAGES);
                mbar_wait(EMPTY_BAR(s), (round & 1u) ^ 1u, "empty");
                mbar_arrive_expect_tx(FULL_BAR(s), 2 * TILE);
#pragma unroll
                for (int c = 0; c < CHUNKS; c++)
                    tma_load_3d(s_k + s * TILE + c * HOP_CHUNK_BYTES, &tm_k, FULL_BAR(s),
                                c * HOP_CHUNK_COLS, it * HOP_BLOCK_N, bh);
#pragma unroll
                for (int c = 0; c < CHUNKS; c++)
                    tma_load_3d(s_v + s * TILE + c * HOP_CHUNK_BYTES, &tm_v, FULL_BAR(s),
                                c * HOP_CHUNK_COLS, it * HOP_BLOCK_N, bh);
            }
        }
        return;
    }

    /* ---------------------------------------------------- consumers */
    setmaxnreg_inc<HOP_CONSUMER_REGS>();
    const int cw = wg - 1; /* consumer 0 or 1: 64-row half of the block */
    const int tid = threadIdx.x % 128;
    const int warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, t = lane % 4;
    const int warp_row0 = m0 + 64 * cw + 16 * warp; /* first row of this warp */
    const int row0 = warp_row0 + g;                   /* this thread's rows: row0, row0 + 8 */

    float acc_o[OC][32];
#pragma unroll
    for (int c = 0; c < OC; c++)
#pragma unroll
        for (int i = 0; i < 32; i++) acc_o[c][i] = 0.f;
    float acc_s[64];
#pragma unroll
    for (int i = 0; i < 64; i++) acc_s[i] = 0.f;
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};

    /* this consumer's 64 Q rows start 64·128 bytes into every Q chunk */
    const uint64_t desc_q = make_desc(s_q + cw * 64 * 128, 16, 1024);

    mbar_wait(Q_BAR, 0, "qfull");

    for (int it = 0; it < n_tiles; it++) {
        const int s = it % HOP_STAGES;
        mbar_wait(FULL_BAR(s), (uint32_t)(it / HOP_STAGES) & 1u, "full");
        const uint32_t sk = s_k + s * TILE, sv = s_v + s * TILE;
        const uint64_t desc_k = make_desc(sk, 16, 1024);

        /* S = Q·Kᵀ: k-step kk is chunk kk/4, 32 bytes per 16 columns within it */
        fence_regs(acc_s);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) {
            const uint64_t off = (uint64_t)(((kk / 4) * HOP_CHUNK_BYTES + (kk % 4) * 32) >> 4);
            wgmma_ss_n128<T>(acc_s, desc_q + off, desc_k + off, kk > 0);
        }
        wgmma_commit();
        wgmma_wait<0>();
        fence_regs(acc_s);

        /* mask keys past S, and above the diagonal on tiles that cross it */
        const int n0 = it * HOP_BLOCK_N;
        if (n0 + HOP_BLOCK_N > S || (causal && n0 + HOP_BLOCK_N - 1 > warp_row0)) {
#pragma unroll
            for (int j = 0; j < HOP_BLOCK_N / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int key = n0 + 8 * j + 2 * t + (e & 1);
                    const int row = row0 + 8 * (e >> 1);
                    if (key >= S || (causal && key > row)) acc_s[4 * j + e] = -INFINITY;
                }
        }

        /* online softmax over rows row0 (e = 0,1) and row0 + 8 (e = 2,3) */
        float new_max[2] = {row_max[0], row_max[1]};
#pragma unroll
        for (int j = 0; j < HOP_BLOCK_N / 8; j++) {
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
            const float rescale = ex2(fmaf(row_max[h], scale_log2, neg_base[h]));
            row_max[h] = new_max[h];
            row_sum[h] *= rescale;
#pragma unroll
            for (int c = 0; c < OC; c++)
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    acc_o[c][4 * j + 2 * h] *= rescale;
                    acc_o[c][4 * j + 2 * h + 1] *= rescale;
                }
        }
        uint32_t p[HOP_BLOCK_N / 16][4];
#pragma unroll
        for (int kk = 0; kk < HOP_BLOCK_N / 16; kk++)
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int i = 8 * kk + 2 * r; /* accumulator pair → A register r of k-step kk */
                const float lo = ex2(fmaf(acc_s[i], scale_log2, neg_base[r & 1]));
                const float hi = ex2(fmaf(acc_s[i + 1], scale_log2, neg_base[r & 1]));
                row_sum[r & 1] += lo + hi;
                p[kk][r] = pack2(lo, hi, (T *)nullptr);
            }

        /* O += P·V: k-step kk = keys 16kk.., 2048 bytes apart; piece c = chunk c of V */
#pragma unroll
        for (int c = 0; c < OC; c++) fence_regs(acc_o[c]);
#pragma unroll
        for (int kk = 0; kk < HOP_BLOCK_N / 16; kk++) fence_regs(p[kk]);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < HOP_BLOCK_N / 16; kk++)
#pragma unroll
            for (int c = 0; c < OC; c++)
                wgmma_rs_n64_tb<T>(acc_o[c], p[kk],
                                   make_desc(sv + c * HOP_CHUNK_BYTES + kk * 2048, 1024, 1024));
        wgmma_commit();
        wgmma_wait<0>();
#pragma unroll
        for (int c = 0; c < OC; c++) fence_regs(acc_o[c]);

        /* every read of stage s by this warp is complete: hand it back */
        __syncwarp();
        if (lane == 0) mbar_arrive(EMPTY_BAR(s));
    }

    /* finish the row sums across the quad, normalise, store rows < S */
#pragma unroll
    for (int h = 0; h < 2; h++) {
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 1);
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 2);
    }
    T *oh = o + (size_t)bh * S * D;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int row = row0 + 8 * h;
        if (row >= S) continue;
        const float inv = 1.f / row_sum[h];
#pragma unroll
        for (int c = 0; c < OC; c++)
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const uint32_t pair = pack2(acc_o[c][4 * j + 2 * h] * inv,
                                            acc_o[c][4 * j + 2 * h + 1] * inv, (T *)nullptr);
                *reinterpret_cast<uint32_t *>(oh + (size_t)row * D + 64 * c + 8 * j + 2 * t) = pair;
            }
    }
#undef FULL_BAR
#undef EMPTY_BAR
#undef Q_BAR
#elif defined(__CUDA_ARCH__)
    /* built for a target without wgmma/TMA: supports() never lets this run */
    (void)tm_q, (void)tm_k, (void)tm_v, (void)o, (void)S, (void)causal, (void)scale_log2;
    __trap();
#endif
}

/* ------------------------------------------------------------ the variant */

struct hopper_ctx {
    struct attn_problem p;
    PFN_cuTensorMapEncodeTiled_v12000 encode;
    const void *q, *k, *v; /* the tensors the maps below describe */
    CUtensorMap tm_q, tm_k, tm_v;
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

/* The tensor [B·H, S, D] as TMA sees it: (D, S, B·H), boxes of 64 × 128 × 1. */
static int encode_map(const struct hopper_ctx *c, CUtensorMap *map, const void *ptr)
{
    const struct attn_problem *p = &c->p;
    if ((uintptr_t)ptr % 16) return ATTN_FAIL(ATTN_ERR, "flash_hopper: tensor not 16-byte aligned");
    const cuuint64_t elem = 2;
    const cuuint64_t dims[3] = {(cuuint64_t)p->head_dim, (cuuint64_t)p->seq_len,
                                (cuuint64_t)p->batch * (cuuint64_t)p->heads};
    const cuuint64_t strides[2] = {(cuuint64_t)p->head_dim * elem,
                                   (cuuint64_t)p->seq_len * (cuuint64_t)p->head_dim * elem};
    const cuuint32_t box[3] = {HOP_CHUNK_COLS, HOP_BLOCK_N, 1};
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

/* The kernel of a problem's dtype and head_dim, as a function pointer. */
static const void *kernel_for(const struct attn_problem *p)
{
    if (p->dtype == ATTN_FP16)
        return p->head_dim == 64 ? (const void *)flash_hopper_kernel<__half, 64>
                                 : (const void *)flash_hopper_kernel<__half, 128>;
    return p->head_dim == 64 ? (const void *)flash_hopper_kernel<__nv_bfloat16, 64>
                             : (const void *)flash_hopper_kernel<__nv_bfloat16, 128>;
}

static const char *hopper_supports(const struct attn_problem *p, const struct device_info *dev)
{
    if (!dev->present) return "no CUDA device";
    if (dev->cc_major != 9 || dev->cc_minor != 0)
        return "needs compute capability 9.0 (sm_90a: wgmma, TMA, setmaxnreg)";
    if (p->head_dim != 64 && p->head_dim != 128) return "head_dim 64 and 128 only";
    if (p->seq_len < 1) return "seq_len must be at least 1";
    if (HOP_SMEM_BYTES(p->head_dim) > dev->smem_optin_bytes) return "not enough shared memory per block";
    if ((size_t)p->batch * p->heads > 65535) return "batch*heads above 65535";
    struct cudaFuncAttributes a;
    if (cudaFuncGetAttributes(&a, kernel_for(p)) != cudaSuccess) {
        (void)cudaGetLastError();
        return "no sm_90a code in this build (compile with -gencode=arch=compute_90a,code=sm_90a)";
    }
    return NULL;
}

static size_t hopper_workspace_bytes(const struct attn_problem *p)
{
    (void)p;
    return 0;
}

static int hopper_setup(void **ctx, const struct attn_problem *p, void *workspace)
{
    (void)workspace;
    PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    ATTN_TRY(get_encode(&encode));
    CUDA_TRY(cudaFuncSetAttribute(kernel_for(p), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)HOP_SMEM_BYTES(p->head_dim)));
    struct hopper_ctx *c = (struct hopper_ctx *)calloc(1, sizeof *c);
    if (!c) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    c->p = *p;
    c->encode = encode;
    *ctx = c;
    return ATTN_OK;
}

template <typename T, int D>
static int launch(const struct hopper_ctx *c, void *o, cudaStream_t s)
{
    const struct attn_problem *p = &c->p;
    dim3 grid((unsigned)((p->seq_len + HOP_BLOCK_M - 1) / HOP_BLOCK_M), (unsigned)(p->batch * p->heads));
    const float scale_log2 = p->scale * 1.4426950408889634f; /* exp(x·scale) = exp2(x·scale·log2 e) */
    flash_hopper_kernel<T, D><<<grid, HOP_THREADS, HOP_SMEM_BYTES(D), s>>>(
        c->tm_q, c->tm_k, c->tm_v, (T *)o, p->seq_len, p->causal ? 1 : 0, scale_log2);
    LAUNCH_TRY("flash_hopper_kernel");
    return ATTN_OK;
}

static int hopper_run(void *ctx, const void *q, const void *k, const void *v, void *o,
                      attn_stream_t stream)
{
    struct hopper_ctx *c = (struct hopper_ctx *)ctx;
    const struct attn_problem *p = &c->p;
    cudaStream_t s = (cudaStream_t)stream;
    /* host-side only (no stream work): safe under graph capture */
    if (q != c->q || k != c->k || v != c->v) {
        c->q = c->k = c->v = NULL;
        ATTN_TRY(encode_map(c, &c->tm_q, q));
        ATTN_TRY(encode_map(c, &c->tm_k, k));
        ATTN_TRY(encode_map(c, &c->tm_v, v));
        c->q = q, c->k = k, c->v = v;
    }
    attn_range_push("flash_hopper_fwd");
    int rc;
    if (p->dtype == ATTN_FP16)
        rc = p->head_dim == 64 ? launch<__half, 64>(c, o, s) : launch<__half, 128>(c, o, s);
    else
        rc = p->head_dim == 64 ? launch<__nv_bfloat16, 64>(c, o, s) : launch<__nv_bfloat16, 128>(c, o, s);
    attn_range_pop();
    return rc;
}

static void hopper_teardown(void *ctx) { free(ctx); }

extern "C" const struct attn_variant attn_variant_flash_hopper = {
    .name = "flash_hopper",
    .summary = "fused Hopper kernel (experimental): TMA + mbarrier ring, producer/consumer "
               "warpgroups, wgmma, online softmax",
    .fused = true,
    .supports = hopper_supports,
    .workspace_bytes = hopper_workspace_bytes,
    .setup = hopper_setup,
    .run = hopper_run,
    .teardown = hopper_teardown,
};
