/* Bit I/O of compressed clips: the writer (clip_bits.h). */
#include "clip_bits.h"

#include <stdlib.h>

void mn_clip_put_bits64(bitbuf* b, uint64_t v, int n) {
    size_t need = (b->nbit + (size_t)n + 7) / 8 + PAD;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < need)
            cap *= 2;
        uint8_t* p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        memset(p + b->cap, 0, cap - b->cap);
        b->p = p, b->cap = cap;
    }
    /* the n low bits of v ORed in at nbit (the buffer is zero beyond what was written; the
     * PAD bytes of slack hold the fifth byte) */
    uint64_t x = (n < 64 ? v & ((1ull << n) - 1) : v) << (b->nbit & 7);
    uint8_t* o = b->p + (b->nbit >> 3);
    for (int i = 0; x; i++, x >>= 8)
        o[i] |= (uint8_t)x;
    b->nbit += (size_t)n;
}

void mn_clip_put_bits(bitbuf* b, uint32_t v, int n) {
    mn_clip_put_bits64(b, v, n);
}

void mn_clip_put_bytes(bitbuf* b, const void* src, size_t n) {
    b->nbit = (b->nbit + 7) & ~(size_t)7; /* byte-aligned */
    const uint8_t* s = src;
    for (size_t i = 0; i < n; i++)
        mn_clip_put_bits(b, s[i], 8);
}

void mn_clip_put_u16(bitbuf* b, unsigned v) {
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    mn_clip_put_bytes(b, x, 2);
}

void mn_clip_put_f32(bitbuf* b, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint8_t x[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    mn_clip_put_bytes(b, x, 4);
}
