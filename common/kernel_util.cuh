/* kernel_util.cuh — the small device helpers our fused attention kernels
 * share (flash_mma, flash_hopper, flash_decode): which 16-bit type a template runs on, the
 * shared-memory address of a pointer, the MUFU exp2, packing two floats
 * into one register of 16-bit values (the layout tensor-core operands use),
 * fp32 reductions into global memory (the backward's dQ accumulators) and
 * one float to the 16-bit type. */
#ifndef ATTN_KERNEL_UTIL_CUH
#define ATTN_KERNEL_UTIL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

/* is_bf16<T>::value: bf16 or fp16 operands (selects the PTX type suffix). */
template <typename T> struct is_bf16;
template <> struct is_bf16<__nv_bfloat16> { static constexpr bool value = true; };
template <> struct is_bf16<__half> { static constexpr bool value = false; };

/* The 32-bit shared-memory address PTX wants for a generic pointer into it. */
static __device__ __forceinline__ uint32_t smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* 2^x on the MUFU unit (approximate, flushes denormals): the softmax's exp
 * with log2(e)·scale folded into its argument. */
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

/* *p += a, p[1] += b in global memory, without a result (the backward's
 * fp32 dQ accumulator): one 8-byte reduction on sm_90, two 4-byte ones
 * before it. p is 8-byte aligned. */
static __device__ __forceinline__ void red_add_f32x2(float *p, float a, float b)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p), "f"(a), "f"(b) : "memory");
#else
    asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(p), "f"(a) : "memory");
    asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(p + 1), "f"(b) : "memory");
#endif
}

/* Four fp32 adds to p[0..3] (16-byte aligned): one 16-byte vector red.global.add on
 * sm_90, two 8-byte ones (four scalar) before. */
static __device__ __forceinline__ void red_add_f32x4(float *p, float a, float b, float c, float d)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d)
                 : "memory");
#else
    red_add_f32x2(p, a, b);
    red_add_f32x2(p + 2, c, d);
#endif
}

/* One float to the 16-bit type, rounded to nearest. */
static __device__ __forceinline__ __nv_bfloat16 from_float(float x, __nv_bfloat16 *) { return __float2bfloat16_rn(x); }
static __device__ __forceinline__ __half from_float(float x, __half *) { return __float2half_rn(x); }

#endif
