/* cgpu.cu -- the CUDA backend of the benchmark harness (cbench.h), built by
 * `make CUDA=1` in place of cgpu_none.c.
 *
 *   GEMM             cuBLAS cublasGemmEx, BF16 inputs and output, FP32 accumulation
 *                    (row-major C = A B computed as column-major C^T = B^T A^T);
 *   decode attention a paged-KV kernel (16-token blocks, scrambled block table):
 *                    one thread block per (head, sequence), four warps sharing the
 *                    context, an online softmax per warp merged at the end (one
 *                    pass over K and V, BF16 storage, FP32 math);
 *   prefill attention per KV head: S = Q K^T and O = P V by cuBLAS around a causal
 *                    softmax kernel (unfused, so slower than FlashAttention at long
 *                    prompts; imported FlashAttention profiles are preferable where
 *                    they exist);
 *   memory bandwidth a device-to-device cudaMemcpyAsync;
 *   launch overhead  an empty kernel, the mean of 1000 back-to-back launches.
 * Every item: warm-up runs, then each repeat timed by CUDA events around it; the
 * median is kept.  Every CUDA and cuBLAS call is checked; the first failure ends
 * the run with a message naming the call.
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "cbench.h"
}

#define BLOCK_TOKENS 16

#define CK(call)                                                                                  \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            snprintf(err, errlen, "calib gpu: %s failed: %s", #call, cudaGetErrorString(e_));     \
            goto fail;                                                                            \
        }                                                                                         \
    } while (0)

#define CB(call)                                                                                  \
    do {                                                                                          \
        cublasStatus_t s_ = (call);                                                               \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                        \
            snprintf(err, errlen, "calib gpu: %s failed: cuBLAS status %d", #call, (int)s_);      \
            goto fail;                                                                            \
        }                                                                                         \
    } while (0)

__global__ void fill_kernel(__nv_bfloat16 *v, size_t n, unsigned seed)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)(i * 2654435761u) ^ seed;
        x = x * 1664525u + 1013904223u;
        v[i] = __float2bfloat16(((x >> 9) & 0xffff) / 65536.0f - 0.5f);
    }
}

__global__ void empty_kernel(void) {}

/* Decode attention: grid (heads, batch), 128 threads = 4 warps; head_dim = 32 * DPL. */
template <int DPL>
__global__ void decode_kernel(const __nv_bfloat16 *q, const __nv_bfloat16 *kc, const __nv_bfloat16 *vc,
                              const int *table, __nv_bfloat16 *out, int heads, int kv_heads, int ctx,
                              int nblk)
{
    const int h = blockIdx.x, s = blockIdx.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int d = 32 * DPL, kh = h / (heads / kv_heads);
    const float scale = rsqrtf((float)d);
    float qv[DPL], acc[DPL];
    for (int i = 0; i < DPL; i++) {
        qv[i] = __bfloat162float(q[((size_t)s * heads + h) * d + lane * DPL + i]);
        acc[i] = 0.f;
    }
    float m = -INFINITY, l = 0.f;
    for (int t = warp; t < ctx; t += 4) {
        int blk = table[(size_t)s * nblk + t / BLOCK_TOKENS];
        size_t base = (((size_t)blk * BLOCK_TOKENS + t % BLOCK_TOKENS) * kv_heads + kh) * d + lane * DPL;
        float dot = 0.f;
        for (int i = 0; i < DPL; i++) dot += qv[i] * __bfloat162float(kc[base + i]);
        for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
        dot *= scale;
        float mn = fmaxf(m, dot), c = __expf(m - mn), p = __expf(dot - mn);
        l = l * c + p;
        for (int i = 0; i < DPL; i++) acc[i] = acc[i] * c + p * __bfloat162float(vc[base + i]);
        m = mn;
    }
    __shared__ float sm[4], sl[4], sacc[4][32 * DPL];
    if (lane == 0) { sm[warp] = m; sl[warp] = l; }
    for (int i = 0; i < DPL; i++) sacc[warp][lane * DPL + i] = acc[i];
    __syncthreads();
    if (warp == 0) {
        float M = fmaxf(fmaxf(sm[0], sm[1]), fmaxf(sm[2], sm[3])), L = 0.f;
        for (int w = 0; w < 4; w++) L += sm[w] == -INFINITY ? 0.f : sl[w] * __expf(sm[w] - M);
        for (int i = 0; i < DPL; i++) {
            float o = 0.f;
            for (int w = 0; w < 4; w++)
                if (sm[w] != -INFINITY) o += sacc[w][lane * DPL + i] * __expf(sm[w] - M);
            out[((size_t)s * heads + h) * d + lane * DPL + i] = __float2bfloat16(L > 0 ? o / L : 0.f);
        }
    }
}

/* Causal softmax over rows of S (rows = group * T, row r is query r % T), in place. */
__global__ void softmax_kernel(__nv_bfloat16 *S, int T, int rows)
{
    int r = blockIdx.x;
    if (r >= rows) return;
    int qi = r % T;
    __nv_bfloat16 *row = S + (size_t)r * T;
    __shared__ float red[32];
    float mx = -INFINITY;
    for (int j = threadIdx.x; j <= qi; j += blockDim.x) mx = fmaxf(mx, __bfloat162float(row[j]));
    for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = mx;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : -INFINITY;
        for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
        if (threadIdx.x == 0) red[0] = v;
    }
    __syncthreads();
    mx = red[0];
    __syncthreads();
    float sum = 0.f;
    for (int j = threadIdx.x; j <= qi; j += blockDim.x) sum += __expf(__bfloat162float(row[j]) - mx);
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0.f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) red[0] = v;
    }
    __syncthreads();
    float inv = 1.f / red[0];
    for (int j = threadIdx.x; j < T; j += blockDim.x)
        row[j] = __float2bfloat16(j <= qi ? __expf(__bfloat162float(row[j]) - mx) * inv : 0.f);
}

/* Device buffers of one item. */
struct dbufs {
    __nv_bfloat16 *a, *b, *c, *d;
    int *table;
};

static void dfree(dbufs *x)
{
    cudaFree(x->a);
    cudaFree(x->b);
    cudaFree(x->c);
    cudaFree(x->d);
    cudaFree(x->table);
    memset(x, 0, sizeof *x);
}

/* Runs item IT once on the stream of H. */
static int run_once(const cb_item *it, const dbufs *x, cublasHandle_t h, char *err, size_t errlen)
{
    const float one = 1.f, zero = 0.f;
    switch (it->kind) {
    case CB_GEMM:
        CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, it->n, it->m, it->k, &one, x->b, CUDA_R_16BF, it->n,
                        x->a, CUDA_R_16BF, it->k, &zero, x->c, CUDA_R_16BF, it->n, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT));
        break;
    case CB_ATTN_DECODE: {
        int nblk = (it->context + BLOCK_TOKENS - 1) / BLOCK_TOKENS;
        size_t kvsize = (size_t)nblk * it->batch * BLOCK_TOKENS * it->kv_heads * it->head_dim;
        dim3 grid(it->heads, it->batch);
        switch (it->head_dim / 32) {
        case 2: decode_kernel<2><<<grid, 128>>>(x->a, x->b, x->b + kvsize, x->table, x->c, it->heads, it->kv_heads, it->context, nblk); break;
        case 4: decode_kernel<4><<<grid, 128>>>(x->a, x->b, x->b + kvsize, x->table, x->c, it->heads, it->kv_heads, it->context, nblk); break;
        default: decode_kernel<8><<<grid, 128>>>(x->a, x->b, x->b + kvsize, x->table, x->c, it->heads, it->kv_heads, it->context, nblk); break;
        }
        CK(cudaGetLastError());
        break;
    }
    case CB_ATTN_PREFILL: {
        int T = it->tokens, d = it->head_dim, KVH = it->kv_heads, G = it->heads / KVH;
        const float sc = 1.f / sqrtf((float)d);
        for (int g = 0; g < KVH; g++) {
            /* Q of the group's heads: (G*T) x d, head-major; K, V: T x d of kv head g. */
            const __nv_bfloat16 *Q = x->a + (size_t)g * G * T * d;
            const __nv_bfloat16 *K = x->b + (size_t)g * T * d, *V = x->b + ((size_t)KVH + g) * T * d;
            CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, T, G * T, d, &sc, K, CUDA_R_16BF, d, Q, CUDA_R_16BF, d,
                            &zero, x->d, CUDA_R_16BF, T, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
            softmax_kernel<<<G * T, 256>>>(x->d, T, G * T);
            CK(cudaGetLastError());
            CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, d, G * T, T, &one, V, CUDA_R_16BF, d, x->d, CUDA_R_16BF, T,
                            &zero, x->c + (size_t)g * G * T * d, CUDA_R_16BF, d, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
        }
        break;
    }
    case CB_MEMBW:
        CK(cudaMemcpyAsync(x->b, x->a, (size_t)it->bytes, cudaMemcpyDeviceToDevice, 0));
        break;
    case CB_LAUNCH:
        for (int i = 0; i < 1000; i++) empty_kernel<<<1, 1>>>();
        CK(cudaGetLastError());
        break;
    case CB_ALLREDUCE:
        break;   /* all-reduces come from imported network profiles (NCCL) */
    }
    return 0;
fail:
    return -1;
}

static int prepare(const cb_item *it, dbufs *x, char *err, size_t errlen)
{
    size_t n1 = 0, n2 = 0, n3 = 0, n4 = 0, ntab = 0;
    int *host = NULL;
    memset(x, 0, sizeof *x);
    switch (it->kind) {
    case CB_GEMM: n1 = (size_t)it->m * it->k; n2 = (size_t)it->k * it->n; n3 = (size_t)it->m * it->n; break;
    case CB_ATTN_DECODE: {
        size_t nblk = (size_t)(it->context + BLOCK_TOKENS - 1) / BLOCK_TOKENS;
        n1 = n3 = (size_t)it->batch * it->heads * it->head_dim;
        n2 = 2 * nblk * it->batch * BLOCK_TOKENS * it->kv_heads * it->head_dim;
        ntab = nblk * it->batch;
        break;
    }
    case CB_ATTN_PREFILL:
        n1 = n3 = (size_t)it->tokens * it->heads * it->head_dim;
        n2 = 2 * (size_t)it->tokens * it->kv_heads * it->head_dim;
        n4 = (size_t)(it->heads / it->kv_heads) * it->tokens * it->tokens;
        break;
    case CB_MEMBW: n1 = n2 = (size_t)(it->bytes / 2); break;
    default: break;
    }
    if (n1) CK(cudaMalloc(&x->a, n1 * 2));
    if (n2) CK(cudaMalloc(&x->b, n2 * 2));
    if (n3) CK(cudaMalloc(&x->c, n3 * 2));
    if (n4) CK(cudaMalloc(&x->d, n4 * 2));
    if (n1) { fill_kernel<<<1024, 256>>>(x->a, n1, 1); CK(cudaGetLastError()); }
    if (n2) { fill_kernel<<<1024, 256>>>(x->b, n2, 2); CK(cudaGetLastError()); }
    if (ntab) {
        host = (int *)malloc(ntab * sizeof *host);
        if (!host) { snprintf(err, errlen, "calib gpu: out of memory"); goto fail; }
        for (size_t i = 0; i < ntab; i++) host[i] = (int)i;
        for (size_t i = ntab; i > 1; i--) {
            size_t j = (i * 2654435761u) % i;
            int t = host[i - 1]; host[i - 1] = host[j]; host[j] = t;
        }
        CK(cudaMalloc(&x->table, ntab * sizeof *host));
        CK(cudaMemcpy(x->table, host, ntab * sizeof *host, cudaMemcpyHostToDevice));
        free(host);
        host = NULL;
    }
    CK(cudaDeviceSynchronize());
    return 0;
fail:
    free(host);
    dfree(x);
    return -1;
}

extern "C" int cb_gpu_available(char *why, size_t n)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        snprintf(why, n, "calib gpu: no CUDA GPU found (%s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount: 0 devices");
        return 0;
    }
    return 1;
}

extern "C" int cb_gpu_run(cb_plan *p, cb_device *dev, char *err, size_t errlen)
{
    cublasHandle_t h = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double *t = NULL;
    dbufs x;
    memset(&x, 0, sizeof x);
    cudaDeviceProp prop;
    int drv = 0, rt = 0, cbv = 0;
    if (!cb_gpu_available(err, errlen)) return -1;
    CK(cudaSetDevice(0));
    CK(cudaGetDeviceProperties(&prop, 0));
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    CB(cublasCreate(&h));
    CB(cublasGetVersion(h, &cbv));
    snprintf(dev->device, sizeof dev->device, "%.127s", prop.name);
    snprintf(dev->driver, sizeof dev->driver, "CUDA driver %d, runtime %d, cuBLAS %d", drv, rt, cbv);
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    t = (double *)malloc((size_t)(p->repeats > 0 ? p->repeats : 1) * sizeof *t);
    if (!t) { snprintf(err, errlen, "calib gpu: out of memory"); goto fail; }
    for (size_t i = 0; i < p->n; i++) {
        cb_item *it = &p->items[i];
        if (it->kind == CB_ALLREDUCE) { it->time_ms = -1; continue; }
        if (it->kind == CB_ATTN_DECODE && (it->head_dim % 32 || it->head_dim > 256)) { it->time_ms = -1; continue; }
        if (prepare(it, &x, err, errlen) != 0) goto fail;
        for (int w = 0; w < p->warmup; w++)
            if (run_once(it, &x, h, err, errlen) != 0) goto fail;
        for (int r = 0; r < p->repeats; r++) {
            float ms = 0;
            CK(cudaEventRecord(e0, 0));
            if (run_once(it, &x, h, err, errlen) != 0) goto fail;
            CK(cudaEventRecord(e1, 0));
            CK(cudaEventSynchronize(e1));
            CK(cudaEventElapsedTime(&ms, e0, e1));
            t[r] = it->kind == CB_LAUNCH ? ms / 1000.0 : ms;
        }
        it->std_ms = cb_std(t, p->repeats);
        it->time_ms = cb_median(t, p->repeats);
        it->repeats = p->repeats;
        dfree(&x);
    }
    free(t);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cublasDestroy(h);
    return 0;
fail:
    free(t);
    dfree(&x);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (h) cublasDestroy(h);
    return -1;
}
