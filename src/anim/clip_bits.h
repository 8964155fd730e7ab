/* Bit I/O of compressed clips (src/anim/clip*.c): the block is a little-endian bit stream,
 * the first bit in the lowest bit of each byte. Readers are inline (the sampler's inner loop);
 * the writer grows a buffer (the encoder only). */
#ifndef MN_ANIM_CLIP_BITS_H
#define MN_ANIM_CLIP_BITS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PAD 16       /* zero bytes after the block, for the 64-bit reads */
#define RICE_QMAX 20 /* a quotient of 20 or more is escaped: 20 zeros, then the value */
#define ESC_BITS 27  /* holds any residual of indices below 2^24 (|r| < 3 2^24) */

/* The 57 or more bits from `bit` on, the first in the lowest bit. */
static inline uint64_t read_word(const uint8_t* p, size_t bit) {
    const uint8_t* b = p + (bit >> 3);
    uint64_t w = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&w, b, 8); /* the block carries PAD bytes of padding */
#else
    for (int i = 7; i >= 0; i--)
        w = (w << 8) | b[i];
#endif
    return w >> (bit & 7);
}

static inline uint32_t read_bits(const uint8_t* p, size_t bit, int n) {
    return (uint32_t)(read_word(p, bit) & ((1ull << n) - 1));
}

static inline int low_zeros(uint64_t w) { /* w != 0 */
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(w);
#else
    int n = 0;
    while (!(w & 1))
        w >>= 1, n++;
    return n;
#endif
}

/* A Rice code of parameter k at *bit (the format: clip_internal.h); advances *bit. */
static inline uint64_t rice_get(const uint8_t* p, size_t* bit, int k) {
    uint64_t w = read_word(p, *bit);
    int q = low_zeros(w | 1ull << RICE_QMAX);
    if (q < RICE_QMAX) {
        *bit += (size_t)(q + 1 + k);
        return (uint64_t)q << k | ((w >> (q + 1)) & ((1ull << k) - 1));
    }
    *bit += RICE_QMAX + ESC_BITS;
    return (w >> RICE_QMAX) & ((1ull << ESC_BITS) - 1);
}

typedef struct bitbuf {
    uint8_t* p;
    size_t nbit, cap; /* cap in bytes */
    int oom;
} bitbuf;

void mn_clip_put_bits(bitbuf* b, uint32_t v, int n);
void mn_clip_put_bits64(bitbuf* b, uint64_t v, int n);        /* n <= 57 */
void mn_clip_put_bytes(bitbuf* b, const void* src, size_t n); /* byte-aligned first */
void mn_clip_put_u16(bitbuf* b, unsigned v);
void mn_clip_put_f32(bitbuf* b, float f);

static inline uint32_t get_u32(const uint8_t* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline double get_f32(const uint8_t* p) {
    uint32_t u = get_u32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline int bits_for(uint32_t n) { /* bits to hold 0..n (at least 1) */
    int b = 1;
    while (b < 32 && (n >> b))
        b++;
    return b;
}

static inline uint32_t f32_u(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float f32_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#endif
