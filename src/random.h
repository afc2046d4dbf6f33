/* The counter-based generator behind coal_random_uniform, coal_bvec_set_random (the blas.fill
 * entry of every backend) and the random generators: number i of stream seed is a pure function
 * of (seed, i), splitmix64's finaliser of seed * phi + i * c, so any entry can be drawn alone, in
 * any order, by host code or a GPU thread, and every backend draws the same bits. Core header:
 * compiled as C on the host and, with __host__ __device__, by nvcc. */
#ifndef COAL_RANDOM_H
#define COAL_RANDOM_H

#include <stdint.h>

#if defined(__CUDACC__)
#define COAL_HOST_DEVICE __host__ __device__
#else
#define COAL_HOST_DEVICE
#endif

/* Uniform in [-1, 1): the top 53 bits of the mixed counter times 2^-52, minus 1. The product is
 * exact (a power of two), so a fused multiply-add gives the same bits as the two operations. */
static inline COAL_HOST_DEVICE double coal_random_at(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

#endif
