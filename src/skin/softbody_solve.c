/* The soft body's edge and tetrahedron passes (the bulk of a step: softbody.c has the
 * model), on a working copy x4 of the positions with each vertex's inverse mass beside
 * them: (x, y, z, w), 32 bytes a vertex, so that one load brings all a projection needs of
 * a vertex.
 *
 * The constraints are projected one after the other (Gauss-Seidel, XPBD eq. 18 with
 * lambda = 0 at a substep's start: Macklin, Mueller & Chentanez 2016) in a fixed order in
 * which runs of consecutive constraints share no vertex (the colouring of
 * mn_softbody_add_elements). Inside such a run, consecutive projections touch distinct
 * vertices and none reads what another writes, so they are computed side by side in the
 * lanes of a vector (softbody_vec.h: 8 doubles with AVX-512, 4 with AVX2, chosen when the
 * process runs; 2 with WebAssembly's SIMD), the vertices' rows turned into columns on the
 * way in and back on the way out. The lanes do the scalar projection's operations in the
 * same order (no fused multiply-add), so every lane's result is the scalar one to the last
 * bit and a step gives the same bits with vectors or without, on any of these machines
 * (test_softbody_vec). A batch in which a lane would be skipped (both ends pinned, a
 * degenerate edge or tetrahedron) is done by the scalar code instead. Build with
 * -DSB_NOVEC for the scalar code alone. */
#include <marionette/skin.h>

#include "skin/softbody_internal.h"

#include <stdlib.h>
#include <string.h>

/* The lanes and the scalar code must round the same products (GCC in ISO C mode fuses
 * nothing; clang would fuse a * b + c within an expression). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__wasm_simd128__)) && !defined(SB_NOVEC)
#define SB_VEC 1
typedef double d4 __attribute__((vector_size(32)));
typedef double d2 __attribute__((vector_size(16)));
#if defined(__x86_64__)
#include <immintrin.h>
#else
#include <wasm_simd128.h>
#endif
#else
#define SB_VEC 0
#endif

static int vectors_max = 2;

void mn_sb_set_vectors(int most) {
    vectors_max = most;
}

/* 0: scalar; 1: AVX2 or WebAssembly's SIMD; 2: AVX-512 (x86-64). mn_sb_set_vectors
 * caps it (the tests compare the levels). */
int mn_sb_vectors(void) {
    int v = 0;
#if SB_VEC && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f"))
        v = 2;
    else if (__builtin_cpu_supports("avx2"))
        v = 1;
#else
    v = SB_VEC;
#endif
    return v < vectors_max ? v : vectors_max;
}

/* ---- the scalar projections ---------------------------------------------------------- */

/* Distance constraints C = |x_a - x_b| - L: dlambda = -C / (w_a + w_b + alpha / h^2),
 * dx_a = w_a dlambda n, edges [e0, e1). */
static void edges_scalar(double* restrict x4, const int* restrict ed, const double* restrict rest,
                         int e0, int e1, double alpha_t) {
    for (int e = e0; e < e1; e++) {
        double* xa = x4 + 4 * ed[2 * e];
        double* xb = x4 + 4 * ed[2 * e + 1];
        double wa = xa[3], wb = xb[3], w = wa + wb;
        if (w == 0) continue;
        double d0 = xa[0] - xb[0], d1 = xa[1] - xb[1], d2 = xa[2] - xb[2];
        double len = sqrt(d0 * d0 + d1 * d1 + d2 * d2);
        if (len < 1e-12) continue;
        /* -dlambda / len */
        double s = (len - rest[e]) / ((w + alpha_t) * len), sa = wa * s, sb_ = wb * s;
        xa[0] -= sa * d0, xa[1] -= sa * d1, xa[2] -= sa * d2;
        xb[0] += sb_ * d0, xb[1] += sb_ * d1, xb[2] += sb_ * d2;
    }
}

/* Tetrahedra: C = V(x) - V0 (Mueller et al. 2007, 3.4). With the gradients kept at 6 times
 * their size, g_k = 6 dV/dx_k, and 6 V = u . (v x q) for the edges u, v, q from corner 0:
 * dlambda = -C / (sum w |dV/dx|^2 + alpha / h^2) and dx_k = w_k dlambda dV/dx_k become
 * dlambda' = -(6 V - 6 V0) / (sum w |g|^2 + 36 alpha / h^2), dx_k = w_k dlambda' g_k (one
 * division); tetrahedra [e0, e1). */
static void tets_scalar(double* restrict x4, const int* restrict el, const double* restrict rest,
                        int e0, int e1, double alpha_t) {
    double alpha36 = 36 * alpha_t;
    for (int e = e0; e < e1; e++) {
        const int* T = el + 4 * e;
        double *p0 = x4 + 4 * T[0], *p1 = x4 + 4 * T[1], *p2 = x4 + 4 * T[2], *p3 = x4 + 4 * T[3];
        double w0 = p0[3], w1 = p1[3], w2 = p2[3], w3 = p3[3];
        double u0 = p1[0] - p0[0], u1 = p1[1] - p0[1], u2 = p1[2] - p0[2];
        double v0 = p2[0] - p0[0], v1 = p2[1] - p0[1], v2 = p2[2] - p0[2];
        double q0 = p3[0] - p0[0], q1 = p3[1] - p0[1], q2 = p3[2] - p0[2];
        double a0 = v1 * q2 - v2 * q1, a1 = v2 * q0 - v0 * q2, a2 = v0 * q1 - v1 * q0; /* v x q */
        double b0 = q1 * u2 - q2 * u1, b1 = q2 * u0 - q0 * u2, b2 = q0 * u1 - q1 * u0; /* q x u */
        double c0 = u1 * v2 - u2 * v1, c1 = u2 * v0 - u0 * v2, c2 = u0 * v1 - u1 * v0; /* u x v */
        double g0 = -(a0 + b0 + c0), g1 = -(a1 + b1 + c1), g2 = -(a2 + b2 + c2);
        double C6 = (u0 * a0 + u1 * a1 + u2 * a2) - 6 * rest[e];
        double den = w0 * (g0 * g0 + g1 * g1 + g2 * g2) + w1 * (a0 * a0 + a1 * a1 + a2 * a2) +
                     w2 * (b0 * b0 + b1 * b1 + b2 * b2) + w3 * (c0 * c0 + c1 * c1 + c2 * c2) +
                     alpha36;
        if (!(den > 0)) continue;
        double dl = -C6 / den;
        double s0 = w0 * dl, s1 = w1 * dl, s2 = w2 * dl, s3 = w3 * dl;
        p0[0] += s0 * g0, p0[1] += s0 * g1, p0[2] += s0 * g2;
        p1[0] += s1 * a0, p1[1] += s1 * a1, p1[2] += s1 * a2;
        p2[0] += s2 * b0, p2[1] += s2 * b1, p2[2] += s2 * b2;
        p3[0] += s3 * c0, p3[1] += s3 * c1, p3[2] += s3 * c2;
    }
}

/* ---- the same, 2, 4 or 8 at a time --------------------------------------------------- */

#if SB_VEC

/* The kernels (softbody_vec.h) for each instruction set: AVX2, 4 lanes; AVX-512, 8 lanes;
 * WebAssembly's SIMD, 2 lanes (4 in two 128-bit halves ran 9 % slower in Node: more
 * registers than the engine's code generator keeps). */
#if defined(__x86_64__)
#define SB_W 4
#define SB_TARGET __attribute__((target("avx2")))
#define SB_NAME(f) f##_avx2
#include "skin/softbody_vec.h"
#undef SB_W
#undef SB_TARGET
#undef SB_NAME
#define SB_W 8
#define SB_TARGET __attribute__((target("avx2,avx512f")))
#define SB_NAME(f) f##_avx512
#include "skin/softbody_vec.h"
#else
#define SB_W 2
#define SB_TARGET
#define SB_NAME(f) f##_wasm
#include "skin/softbody_vec.h"
#endif

#endif /* SB_VEC */

/* ---- the passes ----------------------------------------------------------------------- */

typedef void (*pass_fn)(double* restrict, const int* restrict, const double* restrict, int, int,
                        double);

/* Constraints [0, n) of a kind: the runs that share no vertex by fn_run, the rest by
 * fn_one, in their order. */
static void pass(const mn_softbody* sb, int kind, int n, const int* idx, const double* rest,
                 double alpha_t, pass_fn fn_one, pass_fn fn_run) {
    int e = 0;
    for (int r = 0; r < sb->nruns; r++) {
        const int* R = sb->runs + 3 * r;
        if (R[0] != kind) continue;
        fn_one(sb->x4, idx, rest, e, R[1], alpha_t);
        fn_run(sb->x4, idx, rest, R[1], R[2], alpha_t);
        e = R[2];
    }
    fn_one(sb->x4, idx, rest, e, n, alpha_t);
}

void mn_sb_solve_edges_tets(mn_softbody* sb, double h, int packed) {
    int tets = sb->nelem > 0 && sb->elem_corners == 4;
    if (sb->nedges == 0 && !tets) return;
    double* restrict x4 = sb->x4;
    const double* restrict x = sb->x;
    for (int i = 0; i < sb->nverts && !packed; i++) {
        x4[4 * i] = x[3 * i];
        x4[4 * i + 1] = x[3 * i + 1];
        x4[4 * i + 2] = x[3 * i + 2];
        x4[4 * i + 3] = sb->inv_mass[i];
    }
    pass_fn edges_run = edges_scalar, tets_run = tets_scalar;
#if SB_VEC && defined(__x86_64__)
    int v = mn_sb_vectors();
    if (v == 1) edges_run = edges_vec_avx2, tets_run = tets_vec_avx2;
    if (v == 2) edges_run = edges_vec_avx512, tets_run = tets_vec_avx512;
#elif SB_VEC
    if (mn_sb_vectors()) edges_run = edges_vec_wasm, tets_run = tets_vec_wasm;
#endif
    double h2 = h * h;
    pass(sb, 0, sb->nedges, sb->edges, sb->rest_len, sb->opt.edge_compliance / h2, edges_scalar,
         edges_run);
    if (tets)
        pass(sb, 1, sb->nelem, sb->elem, sb->elem_rest, sb->opt.element_compliance / h2,
             tets_scalar, tets_run);
    for (int i = 0; i < sb->nverts; i++) {
        sb->x[3 * i] = x4[4 * i];
        sb->x[3 * i + 1] = x4[4 * i + 1];
        sb->x[3 * i + 2] = x4[4 * i + 2];
    }
}

int mn_sb_alloc_x4(mn_softbody* sb) {
    free(sb->x4_block);
    sb->x4_block = malloc((size_t)sb->nverts * 4 * sizeof(double) + 32);
    if (!sb->x4_block) return 0;
    uintptr_t p = (uintptr_t)sb->x4_block;
    sb->x4 = (double*)(p + ((32 - p % 32) % 32));
    return 1;
}

int mn_sb_add_run(mn_softbody* sb, int kind, int start, int end) {
    if (end - start < 4) return 1; /* too short for a vector */
    int* r = realloc(sb->runs, (size_t)(sb->nruns + 1) * 3 * sizeof(int));
    if (!r) return 0;
    sb->runs = r;
    r[3 * sb->nruns] = kind;
    r[3 * sb->nruns + 1] = start;
    r[3 * sb->nruns + 2] = end;
    sb->nruns++;
    return 1;
}
