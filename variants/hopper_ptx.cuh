/* hopper_ptx.cuh — the sm_90a instructions flash_hopper is built from, one
 * small inline wrapper each: mbarriers (arrivals on another CTA's of the
 * cluster too), TMA tensor loads (multicast too), the cluster's rank and
 * barrier, setmaxnreg,
 * bulk copies, wgmma (fence, commit, wait, the shapes we issue) and its
 * shared-memory descriptors, named barriers, the async-proxy fence. Shared
 * by the shipped kernel (flash_hopper_kernel.cuh) and the tuning lab
 * (lab/flash_hopper_lab_kernel.cuh).
 *
 * Everything here exists only in the sm_90a device pass: HOP_DEVICE is 1
 * there (__CUDA_ARCH_FEAT_SM90_ALL) and 0 in the host pass and for any
 * other target, whose kernels compile to a trap.
 *
 * Built with -DATTN_HOPPER_DEBUG, every mbarrier wait gives up after
 * ATTN_HOPPER_SPIN_LIMIT tries or ATTN_HOPPER_TIMEOUT_NS, prints which
 * barrier it was stuck on and traps, so that a wrong protocol cannot hang
 * the GPU: rm build/variants/flash_hopper.o && make
 * NVCCFLAGS=-DATTN_HOPPER_DEBUG (make does not track flag changes). */
#ifndef ATTN_HOPPER_PTX_CUH
#define ATTN_HOPPER_PTX_CUH

#include "../common/kernel_util.cuh"

#include <cuda.h> /* CUtensorMap */
#include <stdint.h>
#include <stdio.h>

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

#define HOP_CHUNK_COLS 64 /* 16-bit elements in one 128-byte swizzled row */

#if HOP_DEVICE
/* ------------------------------------------------------------ mbarriers */

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

/* count arrivals at once (the producer arriving for consumers that do not
 * read a slot) */
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

/* Blocks until the phase of `bar` with this parity has completed; `what`
 * names the barrier in the debug build's message. */
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

/* ------------------------------------------------------------- clusters */

/* This CTA's rank in its cluster. */
static __device__ __forceinline__ uint32_t cluster_rank(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

/* Every thread of every CTA of the cluster: the barriers each CTA has
 * initialised are visible to the others after it (the multicast loads and
 * remote arrivals that follow target them). */
static __device__ __forceinline__ void cluster_sync(void)
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/* One arrival on the mbarrier at this CTA's address `bar` in the cluster's
 * CTA `rank` (this one included). Release at CTA scope, as mbar_arrive: a
 * consumer arrives once the wgmmas that read a slot are complete, and what
 * follows in the other CTA is a TMA write into that slot. (.release.cluster
 * compiles to MEMBAR.ALL.GPU and two error barriers before every arrival,
 * and .acquire.cluster on the producer's wait to an L1 invalidation after
 * it: 22-52% slower; variants/NOTES-flash_hopper.md, 'K/V multicast to a
 * 2-CTA cluster'.) */
static __device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank)
{
    asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
                 " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar), "r"(rank)
                 : "memory");
}

/* Orders this thread's generic-proxy shared-memory accesses before later
 * async-proxy ones (a TMA write into a buffer the thread read or wrote). */
static __device__ __forceinline__ void fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* ------------------------------------------------------------------ TMA */

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

/* tma_load_3d into the same shared-memory offset of every CTA of the
 * cluster in cta_mask (bit r: rank r), each CTA's barrier at offset `bar`
 * counting the bytes that land in it. */
static __device__ __forceinline__ void tma_load_3d_multicast(uint32_t dst, const CUtensorMap *map, uint32_t bar,
                                                             int c0, int c1, int c2, uint16_t cta_mask)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask)
                 : "memory");
}

/* bytes (a multiple of 16) from global src to shared dst (both 16-byte
 * aligned) by the bulk-copy engine, counted in bytes on `bar` */
static __device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(src)), "r"(bytes), "r"(bar)
                 : "memory");
}

/* dst[i] += src[i] for bytes / 4 floats, global dst and shared src (16-byte
 * aligned, bytes a multiple of 16), by the bulk-copy engine in whole lines;
 * issued into the thread's bulk group (commit it, wait for its reads before
 * src is written again) */
static __device__ __forceinline__ void bulk_reduce_add_f32(float *dst, uint32_t src, uint32_t bytes)
{
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst),
                 "r"(src), "r"(bytes)
                 : "memory");
}

/* One box of shared memory (the layout a tma_load_3d of the same map
 * writes) to the 3-D tensor of `map`; elements outside the tensor are not
 * written. Issued into the thread's bulk group: commit it, then wait for
 * its reads before the buffer is written again. */
static __device__ __forceinline__ void tma_store_3d(const CUtensorMap *map, uint32_t src, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(src), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
static __device__ __forceinline__ void bulk_commit_group(void)
{
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
/* this thread's committed bulk stores have read their shared memory (all
 * but the PENDING most recent groups) */
template <int PENDING = 0> static __device__ __forceinline__ void bulk_wait_reads(void)
{
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(PENDING) : "memory");
}
/* ... and have written global memory */
static __device__ __forceinline__ void bulk_wait_writes(void)
{
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

/* ------------------------------------------------------------ registers */

template <int N> static __device__ __forceinline__ void setmaxnreg_dec(void)
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> static __device__ __forceinline__ void setmaxnreg_inc(void)
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
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

/* A shared store of v to an unused word: it keeps every instruction that v
 * depends on above the next volatile asm (ptxas otherwise hoists a
 * wgmma wait above the softmax that computes v). Lane 0 of each warp
 * stores, each warp to its own word of the scratch area (HOP_SCRATCH_WORDS),
 * so that no two threads write one address: compute-sanitizer's racecheck
 * reports any such pair, even of a word never read. */
#define HOP_SCRATCH_WORDS 16
static __device__ __forceinline__ void pin_above(uint32_t scratch, float v)
{
    const uint32_t warp = (threadIdx.x >> 5) % HOP_SCRATCH_WORDS, lane = threadIdx.x & 31;
    asm volatile("{\n .reg .pred first;\n setp.eq.u32 first, %2, 0;\n @first st.shared.f32 [%0], %1;\n}\n"
                 ::"r"(scratch + 4 * warp), "f"(v), "r"(lane) : "memory");
}

/* ------------------------------------------------ the epilogue's copies */

/* Four 8x8 matrices of 16-bit elements to shared memory, one warp: lanes
 * 8m..8m+7 give the addresses of matrix m's rows (16 bytes each), and
 * every lane's register m holds its two elements of matrix m in the mma
 * accumulator layout (row lane / 4, columns 2·(lane % 4) + {0, 1}). */
static __device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0),
                 "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

/* 16 bytes from shared memory to global memory (both 16-byte aligned) in
 * one load and one store: written as C, the compiler splits the store
 * into four 4-byte ones */
static __device__ __forceinline__ void copy16_shared_to_global(void *dst, uint32_t src)
{
    uint32_t v0, v1, v2, v3;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3)
                 : "r"(src)
                 : "memory");
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst), "r"(v0), "r"(v1), "r"(v2), "r"(v3)
                 : "memory");
}

/* ---------------------------------------------------------------- wgmma */

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

/* Shared-memory matrix descriptor, 128-byte swizzle, base offset 0: bits
 * 0-13 start address >> 4, 16-29 leading byte offset >> 4, 32-45 stride
 * byte offset >> 4, 62-63 swizzle mode (1 = 128B). */
static __device__ __forceinline__ uint64_t make_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((saddr & 0x3FFFFu) >> 4) | ((uint64_t)((lbo & 0x3FFFFu) >> 4) << 16) |
           ((uint64_t)((sbo & 0x3FFFFu) >> 4) << 32) | (1ull << 62);
}

#define HOP_ACC8(d, i)                                                                             \
    "+f"(d[i + 0]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define HOP_ACC32(d) HOP_ACC8(d, 0), HOP_ACC8(d, 8), HOP_ACC8(d, 16), HOP_ACC8(d, 24)
#define HOP_ACC40(d) HOP_ACC32(d), HOP_ACC8(d, 32)
#define HOP_ACC48(d) HOP_ACC32(d), HOP_ACC8(d, 32), HOP_ACC8(d, 40)
#define HOP_ACC64(d) HOP_ACC32(d), HOP_ACC8(d, 32), HOP_ACC8(d, 40), HOP_ACC8(d, 48), HOP_ACC8(d, 56)
#define HOP_REGS32                                                                                 \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "   \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define HOP_REGS40                                                                                 \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "   \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "   \
    "%38, %39}"
#define HOP_REGS48                                                                                 \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "   \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "   \
    "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47}"
#define HOP_REGS64                                                                                 \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "   \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "   \
    "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "   \
    "%56, %57, %58, %59, %60, %61, %62, %63}"

/* The asm of one wgmma, written once for both 16-bit types (TY "bf16" or
 * "f16"): N columns, accumulator operands REGS / ACC(d). SS: A and B in
 * shared memory, K-major (TRANS "0, 0": trans-a, trans-b) or both MN-major
 * ("1, 1"), operands %QA, %QB the descriptors, %QP the accumulate flag.
 * RS_TB: A from registers (%A0..%A3), B N-major in shared memory (trans-b
 * 1, descriptor %QB), always accumulating. */
#define HOP_WGMMA_SS(TY, N, REGS, ACC, TRANS, d, da, db, acc, QA, QB, QP)                         \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #QP ", 0;\n"                                \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " " REGS              \
                 ", %" #QA ", %" #QB ", p, 1, 1, " TRANS ";\n}\n"                                 \
                 : ACC(d)                                                                          \
                 : "l"(da), "l"(db), "r"(acc))
#define HOP_WGMMA_RS_TB(TY, N, REGS, ACC, d, a, db, A0, A1, A2, A3, QB)                          \
    asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " " REGS              \
                 ", {%" #A0 ", %" #A1 ", %" #A2 ", %" #A3 "}, %" #QB ", 1, 1, 1, 1;\n"             \
                 : ACC(d)                                                                          \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db))

/* wgmma_ss_nN<T>(d, da, db, accumulate): d (64×N, f32) = A·B (+ d when
 * accumulate), A and B K-major in shared memory; d is N/2 floats of the
 * thread's accumulator. N = 64, 80, 96 and 128 (the Q·Kᵀ widths). */
#define HOP_DEF_WGMMA_SS(N, REGS, ACC, QA, QB, QP)                                                 \
    template <typename T>                                                                          \
    static __device__ __forceinline__ void wgmma_ss_n##N(float *d, uint64_t da, uint64_t db, int accumulate) \
    {                                                                                              \
        if constexpr (is_bf16<T>::value)                                                           \
            HOP_WGMMA_SS("bf16", N, REGS, ACC, "0, 0", d, da, db, accumulate, QA, QB, QP);         \
        else                                                                                       \
            HOP_WGMMA_SS("f16", N, REGS, ACC, "0, 0", d, da, db, accumulate, QA, QB, QP);          \
    }
HOP_DEF_WGMMA_SS(64, HOP_REGS32, HOP_ACC32, 32, 33, 34)
HOP_DEF_WGMMA_SS(80, HOP_REGS40, HOP_ACC40, 40, 41, 42)
HOP_DEF_WGMMA_SS(96, HOP_REGS48, HOP_ACC48, 48, 49, 50)
HOP_DEF_WGMMA_SS(128, HOP_REGS64, HOP_ACC64, 64, 65, 66)

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

/* The backward's dQ = dS·K: A (dS) and B (K) both MN-major in shared memory
 * (trans-a and trans-b 1), d (64×N, f32) = A·B (+ d when accumulate); N =
 * 64 (a consumer's 64 columns of dQ at every head_dim). */
template <typename T, int N>
static __device__ __forceinline__ void wgmma_ss_tt(float *d, uint64_t da, uint64_t db, int accumulate)
{
    static_assert(N == 64, "dQ's width");
    if constexpr (is_bf16<T>::value)
        HOP_WGMMA_SS("bf16", 64, HOP_REGS32, HOP_ACC32, "1, 1", d, da, db, accumulate, 32, 33, 34);
    else
        HOP_WGMMA_SS("f16", 64, HOP_REGS32, HOP_ACC32, "1, 1", d, da, db, accumulate, 32, 33, 34);
}

/* ------------------------------------------------------- named barriers */

/* id 0 is __syncthreads; `threads` is a multiple of 32 */
static __device__ __forceinline__ void named_sync(uint32_t id, uint32_t threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
static __device__ __forceinline__ void named_arrive(uint32_t id, uint32_t threads)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

#endif /* HOP_DEVICE */
#endif
