/* The edge and tetrahedron projections of softbody_solve.c, SB_W (2, 4 or 8) at a time in
 * the lanes of a vector, once for each instruction set: the includer defines SB_W,
 * SB_TARGET (the function attribute that selects the set) and SB_NAME(f) (f with the set's
 * suffix), and the types d4 and d2. Private to softbody_solve.c, which includes it once
 * per set; no include guard. */

/* The helpers are inlined into the two passes (a batch's columns stay in registers). */
#define SB_INLINE SB_TARGET inline __attribute__((always_inline))

typedef double SB_NAME(dv) __attribute__((vector_size(8 * SB_W)));
typedef long long SB_NAME(iv) __attribute__((vector_size(8 * SB_W)));
#define dv SB_NAME(dv)
#define iv SB_NAME(iv)

#if defined(__x86_64__) && SB_W == 8
static SB_INLINE dv SB_NAME(v_sqrt)(dv a) {
    return (dv)_mm512_sqrt_pd((__m512d)a);
}
static SB_INLINE int SB_NAME(v_all)(iv m) {
    return _mm512_test_epi64_mask((__m512i)m, (__m512i)m) == 0xff;
}
#elif defined(__x86_64__)
static SB_INLINE dv SB_NAME(v_sqrt)(dv a) {
    return (dv)_mm256_sqrt_pd((__m256d)a);
}
static SB_INLINE int SB_NAME(v_all)(iv m) {
    return _mm256_movemask_pd((__m256d)m) == 15;
}
#elif SB_W == 2
static SB_INLINE dv SB_NAME(v_sqrt)(dv a) {
    return (dv)wasm_f64x2_sqrt((v128_t)a);
}
static SB_INLINE int SB_NAME(v_all)(iv m) {
    return (m[0] & m[1]) != 0;
}
#else
static SB_INLINE dv SB_NAME(v_sqrt)(dv a) {
    d2 lo = __builtin_shufflevector(a, a, 0, 1), hi = __builtin_shufflevector(a, a, 2, 3);
    lo = (d2)wasm_f64x2_sqrt((v128_t)lo);
    hi = (d2)wasm_f64x2_sqrt((v128_t)hi);
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3);
}
static SB_INLINE int SB_NAME(v_all)(iv m) {
    return (m[0] & m[1] & m[2] & m[3]) != 0;
}
#endif

static SB_INLINE dv SB_NAME(v_load)(const double* p) {
    dv v;
    memcpy(&v, p, sizeof v);
    return v;
}

static SB_INLINE dv SB_NAME(v_set1)(double a) {
#if SB_W == 8
    return (dv){a, a, a, a, a, a, a, a};
#elif SB_W == 2
    return (dv){a, a};
#else
    return (dv){a, a, a, a};
#endif
}

/* The row of vertex i in x4 (unsigned: the offset needs no sign extension). */
#define SB_ROW(x4, i) ((x4) + ((size_t)(unsigned)(i) << 2))

static SB_INLINE d4 SB_NAME(row_load)(const double* p) {
    d4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static SB_INLINE void SB_NAME(row_store)(double* p, d4 v) {
    memcpy(p, &v, sizeof v);
}

#if SB_W != 2
/* Four rows (x, y, z, w of a vertex; with 8 lanes, two vertices each: lanes l and l + 4)
 * to columns (one coordinate of every lane's vertex), and back: the 4 x 4 transpose (in
 * each half with 8 lanes) is its own inverse. */
static SB_INLINE void SB_NAME(transpose)(dv a, dv b, dv c, dv d, dv* X, dv* Y, dv* Z, dv* W) {
#if SB_W == 8
    dv t0 = __builtin_shufflevector(a, b, 0, 8, 2, 10, 4, 12, 6, 14);
    dv t1 = __builtin_shufflevector(a, b, 1, 9, 3, 11, 5, 13, 7, 15);
    dv t2 = __builtin_shufflevector(c, d, 0, 8, 2, 10, 4, 12, 6, 14);
    dv t3 = __builtin_shufflevector(c, d, 1, 9, 3, 11, 5, 13, 7, 15);
    *X = __builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);
    *Y = __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);
    *Z = __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
    *W = __builtin_shufflevector(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
#else
    dv t0 = __builtin_shufflevector(a, b, 0, 4, 2, 6);
    dv t1 = __builtin_shufflevector(a, b, 1, 5, 3, 7);
    dv t2 = __builtin_shufflevector(c, d, 0, 4, 2, 6);
    dv t3 = __builtin_shufflevector(c, d, 1, 5, 3, 7);
    *X = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
    *Y = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
    *Z = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
    *W = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
#endif
}

/* Lane q's row: the vertices of the lanes q (and q + 4). */
static SB_INLINE dv SB_NAME(lane_rows)(const double* x4, const int* i, int s, int q) {
#if SB_W == 8
    return __builtin_shufflevector(SB_NAME(row_load)(SB_ROW(x4, i[q * s])),
                                   SB_NAME(row_load)(SB_ROW(x4, i[(q + 4) * s])), 0, 1, 2, 3, 4, 5,
                                   6, 7);
#else
    return SB_NAME(row_load)(SB_ROW(x4, i[q * s]));
#endif
}

static SB_INLINE void SB_NAME(lane_store)(double* x4, const int* i, int s, int q, dv r) {
#if SB_W == 8
    SB_NAME(row_store)(SB_ROW(x4, i[q * s]), __builtin_shufflevector(r, r, 0, 1, 2, 3));
    SB_NAME(row_store)(SB_ROW(x4, i[(q + 4) * s]), __builtin_shufflevector(r, r, 4, 5, 6, 7));
#else
    SB_NAME(row_store)(SB_ROW(x4, i[q * s]), r);
#endif
}

#endif

/* The vertices i[0], i[s], ..., i[(SB_W - 1) s] of x4 as columns. */
static SB_INLINE void SB_NAME(gather)(const double* x4, const int* i, int s, dv* X, dv* Y, dv* Z,
                                      dv* W) {
#if SB_W == 2 /* the halves of the two rows: (x, y) and (z, w) */
    dv a = SB_NAME(v_load)(SB_ROW(x4, i[0])), b = SB_NAME(v_load)(SB_ROW(x4, i[s]));
    dv c = SB_NAME(v_load)(SB_ROW(x4, i[0]) + 2), d = SB_NAME(v_load)(SB_ROW(x4, i[s]) + 2);
    *X = __builtin_shufflevector(a, b, 0, 2);
    *Y = __builtin_shufflevector(a, b, 1, 3);
    *Z = __builtin_shufflevector(c, d, 0, 2);
    *W = __builtin_shufflevector(c, d, 1, 3);
#else
    SB_NAME(transpose)
    (SB_NAME(lane_rows)(x4, i, s, 0), SB_NAME(lane_rows)(x4, i, s, 1),
     SB_NAME(lane_rows)(x4, i, s, 2), SB_NAME(lane_rows)(x4, i, s, 3), X, Y, Z, W);
#endif
}

static SB_INLINE void SB_NAME(scatter)(double* x4, const int* i, int s, dv X, dv Y, dv Z, dv W) {
#if SB_W == 2
    dv a = __builtin_shufflevector(X, Y, 0, 2), b = __builtin_shufflevector(X, Y, 1, 3);
    dv c = __builtin_shufflevector(Z, W, 0, 2), d = __builtin_shufflevector(Z, W, 1, 3);
    memcpy(SB_ROW(x4, i[0]), &a, sizeof a);
    memcpy(SB_ROW(x4, i[s]), &b, sizeof b);
    memcpy(SB_ROW(x4, i[0]) + 2, &c, sizeof c);
    memcpy(SB_ROW(x4, i[s]) + 2, &d, sizeof d);
#else
    dv a, b, c, d;
    SB_NAME(transpose)(X, Y, Z, W, &a, &b, &c, &d);
    SB_NAME(lane_store)(x4, i, s, 0, a);
    SB_NAME(lane_store)(x4, i, s, 1, b);
    SB_NAME(lane_store)(x4, i, s, 2, c);
    SB_NAME(lane_store)(x4, i, s, 3, d);
#endif
}

/* A batch of SB_W edges or tetrahedra: their vertices' new positions (columns) and which
 * lanes the scalar projection would not skip. */
typedef struct SB_NAME(edge_batch) {
    dv x[2], y[2], z[2], w[2];
    iv ok;
} SB_NAME(edge_batch);

typedef struct SB_NAME(tet_batch) {
    dv x[4], y[4], z[4], w[4];
    iv ok;
} SB_NAME(tet_batch);

/* Edges E[0..2 SB_W) (pairs), rest lengths rest[0..SB_W): edges_scalar's arithmetic. */
static SB_INLINE void SB_NAME(edge_project)(const double* restrict x4, const int* E,
                                            const double* restrict rest, dv alpha,
                                            SB_NAME(edge_batch) * B) {
    const dv tiny = SB_NAME(v_set1)(1e-12), zero = SB_NAME(v_set1)(0);
    SB_NAME(gather)(x4, E, 2, &B->x[0], &B->y[0], &B->z[0], &B->w[0]);
    SB_NAME(gather)(x4, E + 1, 2, &B->x[1], &B->y[1], &B->z[1], &B->w[1]);
    dv aw = B->w[0], bw = B->w[1], w = aw + bw;
    dv d0 = B->x[0] - B->x[1], d1 = B->y[0] - B->y[1], d2 = B->z[0] - B->z[1];
    dv len = SB_NAME(v_sqrt)(d0 * d0 + d1 * d1 + d2 * d2);
    B->ok = (iv)(w != zero) & ~(iv)(len < tiny);
    dv s = (len - SB_NAME(v_load)(rest)) / ((w + alpha) * len), sa = aw * s, sb = bw * s;
    B->x[0] -= sa * d0, B->y[0] -= sa * d1, B->z[0] -= sa * d2;
    B->x[1] += sb * d0, B->y[1] += sb * d1, B->z[1] += sb * d2;
}

/* Tetrahedra T[0..4 SB_W), rest volumes rest[0..SB_W): tets_scalar's arithmetic. */
static SB_INLINE void SB_NAME(tet_project)(const double* restrict x4, const int* T,
                                           const double* restrict rest, dv alpha36,
                                           SB_NAME(tet_batch) * B) {
    const dv zero = SB_NAME(v_set1)(0), six = SB_NAME(v_set1)(6);
    SB_NAME(gather)(x4, T, 4, &B->x[0], &B->y[0], &B->z[0], &B->w[0]);
    SB_NAME(gather)(x4, T + 1, 4, &B->x[1], &B->y[1], &B->z[1], &B->w[1]);
    SB_NAME(gather)(x4, T + 2, 4, &B->x[2], &B->y[2], &B->z[2], &B->w[2]);
    SB_NAME(gather)(x4, T + 3, 4, &B->x[3], &B->y[3], &B->z[3], &B->w[3]);
    dv x0 = B->x[0], y0 = B->y[0], z0 = B->z[0];
    dv w0 = B->w[0], w1 = B->w[1], w2 = B->w[2], w3 = B->w[3];
    dv u0 = B->x[1] - x0, u1 = B->y[1] - y0, u2 = B->z[1] - z0;
    dv v0 = B->x[2] - x0, v1 = B->y[2] - y0, v2 = B->z[2] - z0;
    dv q0 = B->x[3] - x0, q1 = B->y[3] - y0, q2 = B->z[3] - z0;
    dv a0 = v1 * q2 - v2 * q1, a1 = v2 * q0 - v0 * q2, a2 = v0 * q1 - v1 * q0;
    dv b0 = q1 * u2 - q2 * u1, b1 = q2 * u0 - q0 * u2, b2 = q0 * u1 - q1 * u0;
    dv c0 = u1 * v2 - u2 * v1, c1 = u2 * v0 - u0 * v2, c2 = u0 * v1 - u1 * v0;
    dv g0 = -(a0 + b0 + c0), g1 = -(a1 + b1 + c1), g2 = -(a2 + b2 + c2);
    dv C6 = (u0 * a0 + u1 * a1 + u2 * a2) - six * SB_NAME(v_load)(rest);
    dv den = w0 * (g0 * g0 + g1 * g1 + g2 * g2) + w1 * (a0 * a0 + a1 * a1 + a2 * a2) +
             w2 * (b0 * b0 + b1 * b1 + b2 * b2) + w3 * (c0 * c0 + c1 * c1 + c2 * c2) + alpha36;
    B->ok = (iv)(den > zero);
    dv dl = -C6 / den;
    dv s0 = w0 * dl, s1 = w1 * dl, s2 = w2 * dl, s3 = w3 * dl;
    B->x[0] += s0 * g0, B->y[0] += s0 * g1, B->z[0] += s0 * g2;
    B->x[1] += s1 * a0, B->y[1] += s1 * a1, B->z[1] += s1 * a2;
    B->x[2] += s2 * b0, B->y[2] += s2 * b1, B->z[2] += s2 * b2;
    B->x[3] += s3 * c0, B->y[3] += s3 * c1, B->z[3] += s3 * c2;
}

/* A batch's new positions back into x4 (idx: its constraints' vertices, corners each). */
static SB_INLINE void SB_NAME(edge_store)(double* x4, const int* E, const SB_NAME(edge_batch) * B) {
    SB_NAME(scatter)(x4, E, 2, B->x[0], B->y[0], B->z[0], B->w[0]);
    SB_NAME(scatter)(x4, E + 1, 2, B->x[1], B->y[1], B->z[1], B->w[1]);
}

static SB_INLINE void SB_NAME(tet_store)(double* x4, const int* T, const SB_NAME(tet_batch) * B) {
    SB_NAME(scatter)(x4, T, 4, B->x[0], B->y[0], B->z[0], B->w[0]);
    SB_NAME(scatter)(x4, T + 1, 4, B->x[1], B->y[1], B->z[1], B->w[1]);
    SB_NAME(scatter)(x4, T + 2, 4, B->x[2], B->y[2], B->z[2], B->w[2]);
    SB_NAME(scatter)(x4, T + 3, 4, B->x[3], B->y[3], B->z[3], B->w[3]);
}

/* Edges [e, e1) of a run: three batches at a time (their projections are independent, and
 * with several in flight the processor overlaps one's divisions with another's loads), then
 * two, then one; up to the end or to a batch with a lane that the scalar projection skips (both
 * ends pinned, a degenerate edge): returns where it stopped. */
static SB_INLINE int SB_NAME(edges_lanes)(double* restrict x4, const int* restrict ed,
                                          const double* restrict rest, int e, int e1,
                                          double alpha_t) {
    const dv alpha = SB_NAME(v_set1)(alpha_t);
    SB_NAME(edge_batch) A, B;
#if SB_W >= 4                                   /* (with 2 lanes in WebAssembly, no faster) */
    for (; e + 3 * SB_W <= e1; e += 3 * SB_W) { /* three in flight while they last */
        SB_NAME(edge_batch) D;
        SB_NAME(edge_project)(x4, ed + 2 * e, rest + e, alpha, &A);
        SB_NAME(edge_project)(x4, ed + 2 * (e + SB_W), rest + e + SB_W, alpha, &B);
        SB_NAME(edge_project)(x4, ed + 2 * (e + 2 * SB_W), rest + e + 2 * SB_W, alpha, &D);
        if (!SB_NAME(v_all)(A.ok & B.ok & D.ok)) break;
        SB_NAME(edge_store)(x4, ed + 2 * e, &A);
        SB_NAME(edge_store)(x4, ed + 2 * (e + SB_W), &B);
        SB_NAME(edge_store)(x4, ed + 2 * (e + 2 * SB_W), &D);
    }
#endif
    for (; e + 2 * SB_W <= e1; e += 2 * SB_W) {
        SB_NAME(edge_project)(x4, ed + 2 * e, rest + e, alpha, &A);
        SB_NAME(edge_project)(x4, ed + 2 * (e + SB_W), rest + e + SB_W, alpha, &B);
        if (!SB_NAME(v_all)(A.ok & B.ok)) return e;
        SB_NAME(edge_store)(x4, ed + 2 * e, &A);
        SB_NAME(edge_store)(x4, ed + 2 * (e + SB_W), &B);
    }
    for (; e + SB_W <= e1; e += SB_W) {
        SB_NAME(edge_project)(x4, ed + 2 * e, rest + e, alpha, &A);
        if (!SB_NAME(v_all)(A.ok)) return e;
        SB_NAME(edge_store)(x4, ed + 2 * e, &A);
    }
    return e;
}

/* Tetrahedra [e, e1) of a run, as edges_lanes but two batches at most (a third ran slower:
 * more columns than registers; a degenerate tetrahedron is skipped). */
static SB_INLINE int SB_NAME(tets_lanes)(double* restrict x4, const int* restrict el,
                                         const double* restrict rest, int e, int e1,
                                         double alpha_t) {
    const dv alpha36 = SB_NAME(v_set1)(36 * alpha_t);
    SB_NAME(tet_batch) A, B;
    for (; e + 2 * SB_W <= e1; e += 2 * SB_W) {
        SB_NAME(tet_project)(x4, el + 4 * e, rest + e, alpha36, &A);
        SB_NAME(tet_project)(x4, el + 4 * (e + SB_W), rest + e + SB_W, alpha36, &B);
        if (!SB_NAME(v_all)(A.ok & B.ok)) return e;
        SB_NAME(tet_store)(x4, el + 4 * e, &A);
        SB_NAME(tet_store)(x4, el + 4 * (e + SB_W), &B);
    }
    for (; e + SB_W <= e1; e += SB_W) {
        SB_NAME(tet_project)(x4, el + 4 * e, rest + e, alpha36, &A);
        if (!SB_NAME(v_all)(A.ok)) return e;
        SB_NAME(tet_store)(x4, el + 4 * e, &A);
    }
    return e;
}

/* Edges [e0, e1) of a run: SB_W at a time, the batches with a skipped lane and the rest by
 * the scalar code. */
static SB_TARGET void SB_NAME(edges_vec)(double* restrict x4, const int* restrict ed,
                                         const double* restrict rest, int e0, int e1,
                                         double alpha_t) {
    int e = e0;
    while ((e = SB_NAME(edges_lanes)(x4, ed, rest, e, e1, alpha_t)) + SB_W <= e1) {
        edges_scalar(x4, ed, rest, e, e + SB_W, alpha_t);
        e += SB_W;
    }
    edges_scalar(x4, ed, rest, e, e1, alpha_t);
}

/* Tetrahedra [e0, e1) of a run, as edges_vec. */
static SB_TARGET void SB_NAME(tets_vec)(double* restrict x4, const int* restrict el,
                                        const double* restrict rest, int e0, int e1,
                                        double alpha_t) {
    int e = e0;
    while ((e = SB_NAME(tets_lanes)(x4, el, rest, e, e1, alpha_t)) + SB_W <= e1) {
        tets_scalar(x4, el, rest, e, e + SB_W, alpha_t);
        e += SB_W;
    }
    tets_scalar(x4, el, rest, e, e1, alpha_t);
}

#undef dv
#undef iv
#undef SB_INLINE
