/* The JIT's runtime: the caching allocator, the result capsules' destructor and NumPy's
 * pairwise sums (see runtime.h). */
#include "runtime.h"
#include "released.h"
#include "tools.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <malloc.h>
#include <sys/mman.h>
#define USABLE_SIZE(p) malloc_usable_size(p)
#elif defined(__APPLE__)
#include <malloc/malloc.h>
#define USABLE_SIZE(p) malloc_size(p)
#endif

#define BIG_BLOCK (256 * 1024)              /* bytes: glibc's malloc maps blocks this large afresh */
#define CACHE_SLOTS 16
#define CACHE_BYTES (256LL * 1024 * 1024)  /* the most memory freed blocks keep */
#define SNUG 4                              /* a cached block serves requests down to 3/4 of its size */
#define PAGE 4096

/* ---- the caching allocator ---- */

#ifdef USABLE_SIZE
static void *cache[CACHE_SLOTS];
static int64_t cached_bytes;
#endif

/* madvise(MADV_HUGEPAGE) for the whole pages inside a fresh big block (Linux only) */
static void
huge_pages(void *block, uint64_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    uint64_t skip = (uint64_t)(-(uintptr_t)block) & (PAGE - 1);
    if (skip < n) {
        (void)madvise((char *)block + skip, (n - skip) & ~(uint64_t)(PAGE - 1), MADV_HUGEPAGE);
    }
#else
    (void)block;
    (void)n;
#endif
}

/* malloc(n), or a cached block that holds n bytes and is at most a quarter larger */
static void *
runtime_alloc_block(uint64_t n)
{
    int big = n >= BIG_BLOCK;
#ifdef USABLE_SIZE
    for (int i = 0; big && i < CACHE_SLOTS; i++) {
        void *block = __atomic_exchange_n(&cache[i], NULL, __ATOMIC_ACQ_REL);
        if (block == NULL) {
            continue;
        }
        uint64_t size = USABLE_SIZE(block);
        if (size >= n && size - n <= size / SNUG) {
            __atomic_sub_fetch(&cached_bytes, (int64_t)size, __ATOMIC_ACQ_REL);
            return block;
        }
        void *empty = NULL;      /* put it back, unless another thread filled the slot meanwhile */
        if (!__atomic_compare_exchange_n(&cache[i], &empty, block, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            __atomic_sub_fetch(&cached_bytes, (int64_t)size, __ATOMIC_ACQ_REL);
            free(block);
        }
    }
#endif
    void *fresh = malloc(n);
    if (fresh != NULL && big) {
        huge_pages(fresh, n);
    }
    return fresh;
}

/* free(p), or keep p in the cache (a big block, while the cache has a slot and room) */
static void
runtime_free_block(void *p)
{
    if (p == NULL) {
        return;
    }
#ifdef USABLE_SIZE
    uint64_t size = USABLE_SIZE(p);
    if (size >= BIG_BLOCK) {
        int64_t after = __atomic_add_fetch(&cached_bytes, (int64_t)size, __ATOMIC_ACQ_REL);
        if (after <= CACHE_BYTES) {
            for (int i = 0; i < CACHE_SLOTS; i++) {
                void *empty = NULL;
                if (__atomic_compare_exchange_n(&cache[i], &empty, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
                    return;
                }
            }
        }
        __atomic_sub_fetch(&cached_bytes, (int64_t)size, __ATOMIC_ACQ_REL);
    }
#endif
    free(p);
}

static void
runtime_free_capsule(PyObject *capsule)
{
    runtime_free_block(PyCapsule_GetPointer(capsule, NULL));
}

/* ---- NumPy's pairwise sums ----
 *
 *   n < 8:       -0.0 + a[0] + a[1] + ... (in order)
 *   n <= 128:    8 running sums r[j] = a[j] + a[j+8] + ..., then ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)),
 *                then the last n % 8 elements in order
 *   else:        sum(first n2) + sum(the rest), n2 = n/2 rounded down to a multiple of 8
 *
 * Where `interrupted` is not NULL, a run longer than POLL_RUN checks for signals between its
 * halves; if a handler raised, it notes 1 there and returns at once.  Elements one after another
 * are read 8 at a time as one vector: its lanes are the 8 running sums, the same adds in the
 * same order.  Float16 elements are added in float32, as NumPy's HALF_pairwise_sum adds them. */

#define BLOCK 128            /* NumPy's PW_BLOCKSIZE */
#define POLL_RUN (1 << 20)

#if defined(__x86_64__) && defined(__GNUC__) && defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define WIDEST __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef WIDEST
#define WIDEST
#endif

typedef double f64x8 __attribute__((vector_size(64)));
typedef float f32x8 __attribute__((vector_size(32)));

static inline double
f64_at(const char *data, int64_t i, int64_t stride)
{
    double x;
    memcpy(&x, data + i * stride, sizeof x);
    return x;
}

static inline float
f32_at(const char *data, int64_t i, int64_t stride)
{
    float x;
    memcpy(&x, data + i * stride, sizeof x);
    return x;
}

/* float16 bits to float32, exactly, in integer arithmetic (no floating-point flag raised) */
static inline float
f16_at(const char *data, int64_t i, int64_t stride)
{
    uint16_t h;
    memcpy(&h, data + i * stride, sizeof h);
    uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = (h >> 10) & 31, mantissa = h & 0x3FF, bits;
    float x;
    if (exponent == 0) {                                 /* zero and subnormal: mantissa * 2**-24 */
        x = (float)mantissa * 0x1p-24f;
        memcpy(&bits, &x, sizeof bits);
        bits |= sign;
    } else {                                             /* normal, inf and NaN (payload kept) */
        bits = sign | (exponent == 31 ? 255u : exponent + 112) << 23 | mantissa << 13;
    }
    memcpy(&x, &bits, sizeof x);
    return x;
}

#define PAIRWISE(NAME, T, AT, VECTOR)                                                              \
    WIDEST static T                                                                              \
    NAME(const char *data, int64_t n, int64_t stride, int32_t *interrupted)                      \
    {                                                                                            \
        if (n < 8) {                                                                             \
            T total = (T)-0.0;                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                    \
                total += AT(data, i, stride);                                                    \
            }                                                                                    \
            return total;                                                                        \
        }                                                                                        \
        if (n <= BLOCK) {                                                                        \
            int64_t whole = n - n % 8, i;                                                        \
            T r[8];                                                                              \
            if (VECTOR && stride == (int64_t)sizeof(T)) {                                        \
                T lanes __attribute__((vector_size(8 * sizeof(T)))), row                         \
                    __attribute__((vector_size(8 * sizeof(T))));                                 \
                memcpy(&lanes, data, sizeof lanes);                                              \
                for (i = 8; i < whole; i += 8) {                                                 \
                    memcpy(&row, data + i * stride, sizeof row);                                 \
                    lanes += row;                                                                \
                }                                                                                \
                for (int j = 0; j < 8; j++) {                                                    \
                    r[j] = lanes[j];                                                             \
                }                                                                                \
            } else {                                                                             \
                for (int j = 0; j < 8; j++) {                                                    \
                    r[j] = AT(data, j, stride);                                                  \
                }                                                                                \
                for (i = 8; i < whole; i += 8) {                                                 \
                    for (int j = 0; j < 8; j++) {                                                \
                        r[j] += AT(data, i + j, stride);                                         \
                    }                                                                            \
                }                                                                                \
            }                                                                                    \
            T total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));         \
            for (i = whole; i < n; i++) {                                                        \
                total += AT(data, i, stride);                                                    \
            }                                                                                    \
            return total;                                                                        \
        }                                                                                        \
        int64_t half = n / 2;                                                                    \
        half -= half % 8;                                                                        \
        T first = NAME(data, half, stride, interrupted);                                         \
        if (interrupted != NULL && n > POLL_RUN) {                                               \
            int32_t status = released_check_signals();                                           \
            if ((status | *interrupted) != 0) {                                                  \
                *interrupted = 1;                                                                \
                return (T)0.0;                                                                   \
            }                                                                                    \
        }                                                                                        \
        return first + NAME(data + half * stride, n - half, stride, interrupted);                \
    }

PAIRWISE(runtime_pairwise_sum_f64, double, f64_at, 1)
PAIRWISE(runtime_pairwise_sum_f32, float, f32_at, 1)
PAIRWISE(runtime_pairwise_sum_f16, float, f16_at, 0)

int
runtime_module_init(PyObject *module)
{
    if (tools_add_address(module, "alloc_block_address", (void *)(uintptr_t)&runtime_alloc_block) < 0
            || tools_add_address(module, "free_block_address", (void *)(uintptr_t)&runtime_free_block) < 0
            || tools_add_address(module, "free_capsule_address", (void *)(uintptr_t)&runtime_free_capsule) < 0
            || tools_add_address(module, "pairwise_sum_f64_address", (void *)(uintptr_t)&runtime_pairwise_sum_f64) < 0
            || tools_add_address(module, "pairwise_sum_f32_address", (void *)(uintptr_t)&runtime_pairwise_sum_f32) < 0
            || tools_add_address(module, "pairwise_sum_f16_address", (void *)(uintptr_t)&runtime_pairwise_sum_f16) < 0) {
        return -1;
    }
    return 0;
}
