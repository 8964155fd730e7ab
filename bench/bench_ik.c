/* marionette bench ik: robot-arm IK through the TRAC-IK protocol (Beeson and Ames,
 * "TRAC-IK: An open-source library for improved solving of generic inverse kinematics",
 * Humanoids 2015, sec. IV):
 *
 *   - N joint vectors drawn uniformly within the joint limits (continuous joints in
 *     [-pi, pi]) from a seeded generator; the targets are their tip poses;
 *   - every solve starts from the middle of the limits (0 for a continuous joint);
 *   - a solve succeeds when each of the 6 components of the twist between the target and
 *     the reached pose is within tol, as re-checked here by an independent forward
 *     kinematics (4x4 homogeneous matrices composed from the model's offsets,
 *     orientations and axes, not mn_fk), and the answer is within the limits;
 *   - a failure is charged the whole timeout.
 *
 * --near is the tracking variant: the seed is the random joint vector itself and the
 * target its pose moved by 1 cm and turned by 3 degrees about random directions (through the
 * joints, so that the target is on the seed's branch); the same queries are solved by LM and
 * by DLS, without restarts, to compare speed and joint motion.
 *
 * Speed goals are reported, never asserted. */
#include <marionette/ik.h>
#include <marionette/io.h>
#include <marionette/linalg.h>
#include <marionette/model.h>

#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "cli.h"
#include "options.h"
#include "ik_compare.h"
#include "ik_tracking.h"

const char mn_bench_ik_summary[] =
    "robot-arm IK, TRAC-IK protocol: solve rate and time per query (--compare: all methods)";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette bench ik --urdf FILE --base LINK --tip LINK [--n 10000] [--seed S]\n"
            "                           [--timeout-ms 5] [--tol 1e-5] [--method lm] [--near]\n"
            "                           [--cpu-time] [--mode speed] [--dump results.csv]\n"
            "       marionette bench ik --compare [--urdf FILE --base LINK --tip LINK] ...\n"
            "                           (every method on the same problems: Welman's 7-DOF\n"
            "                           chain, or a robot arm's; bench ik --compare --help)\n"
            "       marionette bench ik --tracking-batch ...   (tracking solves per second)\n"
            "\n"
            "Runs the TRAC-IK protocol: N joint vectors drawn uniformly within the limits\n"
            "(continuous joints in [-pi, pi]), targets by forward kinematics, every solve seeded\n"
            "from the middle of the limits, success when each of the 6 twist components is\n"
            "within tol (re-checked by an independent FK) and q is within limits; a failure\n"
            "counts the whole timeout. Prints one key=value line:\n"
            "  robot dof n method solve_rate (percent) mean_us (all queries) median_us p99_us\n"
            "  (successes) mean_iters\n"
            "--near: the seed is the random joint vector and the target its pose moved 1 cm and\n"
            "  turned 3 degrees, solved without restarts (tracking stays on the seed's branch);\n"
            "  adds the same figures for DLS (dls_solve_rate, dls_mean_us, dls_median_us) and\n"
            "  mean_joint_motion, dls_mean_joint_motion: |q - seed| averaged over the queries\n"
            "  both methods solved (both_solved).\n"
            "--cpu-time: count the timeout and the times in this thread's CPU time (on a loaded\n"
            "  machine, wall time charges preemption to the solver)\n"
            "--mode M: speed (default) | distance | manipulability (mn_ik_mode); adds\n"
            "  mean_seed_distance, |q - seed| averaged over the solved queries\n"
            "--dump FILE: one CSV row per query: target pose, returned q, status, iterations,\n"
            "  restarts, position and rotation error, microseconds.\n");
}

/* ---- an independent forward kinematics with 4x4 homogeneous matrices -------------------- */

typedef struct hmat {
    double a[16]; /* row-major */
} hmat;

static hmat h_identity(void) {
    hmat h;
    memset(&h, 0, sizeof h);
    h.a[0] = h.a[5] = h.a[10] = h.a[15] = 1;
    return h;
}

static hmat h_mul(const hmat* A, const hmat* B) {
    hmat C;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = 0;
            for (int k = 0; k < 4; k++)
                s += A->a[4 * i + k] * B->a[4 * k + j];
            C.a[4 * i + j] = s;
        }
    return C;
}

/* Rotation part from a unit quaternion (w, x, y, z), translation t. */
static hmat h_from_quat(double w, double x, double y, double z, double tx, double ty, double tz) {
    double n = sqrt(w * w + x * x + y * y + z * z);
    w /= n, x /= n, y /= n, z /= n;
    hmat h = h_identity();
    h.a[0] = w * w + x * x - y * y - z * z;
    h.a[1] = 2 * (x * y - w * z);
    h.a[2] = 2 * (x * z + w * y);
    h.a[4] = 2 * (x * y + w * z);
    h.a[5] = w * w - x * x + y * y - z * z;
    h.a[6] = 2 * (y * z - w * x);
    h.a[8] = 2 * (x * z - w * y);
    h.a[9] = 2 * (y * z + w * x);
    h.a[10] = w * w - x * x - y * y + z * z;
    h.a[3] = tx, h.a[7] = ty, h.a[11] = tz;
    return h;
}

/* Rotation by angle about unit axis (u, v, w), as a quaternion product: independent of
 * the library's Rodrigues code. */
static hmat h_axis_angle(double u, double v, double w, double angle) {
    double n = sqrt(u * u + v * v + w * w);
    double s = sin(0.5 * angle) / n;
    return h_from_quat(cos(0.5 * angle), u * s, v * s, w * s, 0, 0, 0);
}

typedef struct bench_chain {
    int base, tip, n; /* n: DOFs (hinges and slides) */
    int njnt;
    int* jnt;      /* njnt, root to tip */
    int* dof_qadr; /* n */
    double* lo;    /* n */
    double* hi;    /* n */
} bench_chain;

/* Tip frame relative to the base frame for chain values q (n). */
static hmat chain_fk(const mn_model* m, const bench_chain* bc, const double* q) {
    hmat T = h_identity();
    int k = 0;
    for (int i = 0; i < bc->njnt; i++) {
        int j = bc->jnt[i];
        mn_vec3 o = m->jnt_offset[j];
        mn_quat r = m->jnt_orient[j];
        hmat P = h_from_quat(r.w, r.x, r.y, r.z, o.x, o.y, o.z);
        T = h_mul(&T, &P);
        mn_vec3 ax = m->jnt_axis[j];
        if (m->jnt_type[j] == MN_JOINT_HINGE) {
            hmat M = h_axis_angle(ax.x, ax.y, ax.z, q[k++]);
            T = h_mul(&T, &M);
        } else if (m->jnt_type[j] == MN_JOINT_SLIDE) {
            hmat M = h_identity();
            M.a[3] = ax.x * q[k], M.a[7] = ax.y * q[k], M.a[11] = ax.z * q[k];
            k++;
            T = h_mul(&T, &M);
        }
    }
    return T;
}

/* The twist between two poses: position difference and the rotation vector of
 * R_target R^T (angle-axis from the matrix, robust near 0 and near pi). */
static void twist_between(const hmat* target, const hmat* got, double tw[6]) {
    for (int i = 0; i < 3; i++)
        tw[i] = target->a[4 * i + 3] - got->a[4 * i + 3];
    double E[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int k = 0; k < 3; k++)
                s += target->a[4 * i + k] * got->a[4 * j + k];
            E[3 * i + j] = s;
        }
    double vx = 0.5 * (E[7] - E[5]), vy = 0.5 * (E[2] - E[6]), vz = 0.5 * (E[3] - E[1]);
    double sn = sqrt(vx * vx + vy * vy + vz * vz), cs = 0.5 * (E[0] + E[4] + E[8] - 1);
    double angle = atan2(sn, cs);
    if (sn < 1e-12) {
        if (cs > 0) { /* identity: the skew part is the rotation vector */
            tw[3] = vx, tw[4] = vy, tw[5] = vz;
            return;
        }
        /* a half turn: axis from the diagonal */
        double ax = sqrt(fmax(0, (E[0] + 1) / 2)), ay = sqrt(fmax(0, (E[4] + 1) / 2)),
               az = sqrt(fmax(0, (E[8] + 1) / 2));
        tw[3] = MN_PI * ax, tw[4] = MN_PI * ay, tw[5] = MN_PI * az;
        return;
    }
    double k = angle / sn;
    tw[3] = k * vx, tw[4] = k * vy, tw[5] = k * vz;
}

/* Shepperd's method, for the target quaternion handed to the solver. */
static mn_quat quat_of(const hmat* h) {
    const double* a = h->a;
    double m00 = a[0], m11 = a[5], m22 = a[10], tr = m00 + m11 + m22;
    mn_quat q;
    if (tr > 0) {
        double s = 2 * sqrt(tr + 1);
        q = mn_q4(0.25 * s, (a[9] - a[6]) / s, (a[2] - a[8]) / s, (a[4] - a[1]) / s);
    } else if (m00 > m11 && m00 > m22) {
        double s = 2 * sqrt(1 + m00 - m11 - m22);
        q = mn_q4((a[9] - a[6]) / s, 0.25 * s, (a[1] + a[4]) / s, (a[2] + a[8]) / s);
    } else if (m11 > m22) {
        double s = 2 * sqrt(1 + m11 - m00 - m22);
        q = mn_q4((a[2] - a[8]) / s, (a[1] + a[4]) / s, 0.25 * s, (a[6] + a[9]) / s);
    } else {
        double s = 2 * sqrt(1 + m22 - m00 - m11);
        q = mn_q4((a[4] - a[1]) / s, (a[2] + a[8]) / s, (a[6] + a[9]) / s, 0.25 * s);
    }
    return q;
}

/* ---- random numbers (the bench's own: queries do not depend on the library's RNG) ----- */
static uint64_t sm_state;
static double urand(void) {
    uint64_t z = (sm_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
/* A uniformly random unit vector. */
static void rand_dir(double v[3]) {
    double z = 2 * urand() - 1, phi = 2 * MN_PI * urand(), r = sqrt(1 - z * z);
    v[0] = r * cos(phi), v[1] = r * sin(phi), v[2] = z;
}

/* ---- the chain ---------------------------------------------------------------------- */
static int chain_make(const mn_model* m, int base, int tip, bench_chain* bc) {
    int nj = 0, n = 0;
    for (int j = tip; j != base; j = m->jnt_parent[j]) {
        if (j < 0) return -1;
        int t = m->jnt_type[j];
        if (t == MN_JOINT_BALL || t == MN_JOINT_FREE) return -2;
        nj++;
        n += (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE);
    }
    bc->base = base, bc->tip = tip, bc->n = n, bc->njnt = nj;
    bc->jnt = malloc(sizeof(int) * (size_t)(nj + n + 1));
    bc->dof_qadr = bc->jnt + nj;
    bc->lo = malloc(sizeof(double) * (size_t)(2 * n + 1));
    bc->hi = bc->lo + n;
    int i = nj - 1;
    for (int j = tip; j != base; j = m->jnt_parent[j])
        bc->jnt[i--] = j;
    int k = 0;
    for (i = 0; i < nj; i++) {
        int j = bc->jnt[i], t = m->jnt_type[j];
        if (t != MN_JOINT_HINGE && t != MN_JOINT_SLIDE) continue;
        bc->dof_qadr[k] = m->jnt_qadr[j];
        if (m->jnt_limited[j]) {
            bc->lo[k] = m->jnt_range[2 * j];
            bc->hi[k] = m->jnt_range[2 * j + 1];
        } else {
            bc->lo[k] = t == MN_JOINT_HINGE ? -MN_PI : -1;
            bc->hi[k] = t == MN_JOINT_HINGE ? MN_PI : 1;
        }
        k++;
    }
    return 0;
}

static int within(const bench_chain* bc, const mn_model* m, const double* q) {
    int k = 0;
    for (int i = 0; i < bc->njnt; i++) {
        int j = bc->jnt[i], t = m->jnt_type[j];
        if (t != MN_JOINT_HINGE && t != MN_JOINT_SLIDE) continue;
        if (!isfinite(q[k])) return 0;
        if (m->jnt_limited[j] && (q[k] < m->jnt_range[2 * j] || q[k] > m->jnt_range[2 * j + 1]))
            return 0;
        k++;
    }
    return 1;
}

/* ---- CSV dump, written atomically at the end ------------------------------------------ */
typedef struct sbuf {
    char* s;
    size_t len, cap;
} sbuf;

static void sb_printf(sbuf* b, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sb_printf(sbuf* b, const char* fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 1 << 16;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char* s = realloc(b->s, cap);
        if (!s) return;
        b->s = s;
        b->cap = cap;
    }
}

/* ---- the benchmark ----------------------------------------------------------------------- */
/* Wall time, or this thread's CPU time (immune to preemption by other processes). */
static double now_ns(int cpu) {
    if (!cpu) return mn_bench_now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct run_stats {
    int ok;
    double sum_us, sum_iters, motion, seed_dist;
    int nmotion;
    double* ok_us;   /* n */
    double* motions; /* n: joint motion of each query both methods solved (--near) */
} run_stats;

static double stat_median(run_stats* s) {
    return s->ok ? mn_bench_median(s->ok_us, (size_t)s->ok) : NAN;
}
static double stat_p99(run_stats* s) {
    return s->ok ? mn_bench_quantile(s->ok_us, (size_t)s->ok, 0.99) : NAN;
}

typedef struct ik_args {
    const char *urdf, *base, *tip, *dump;
    int n, near, method, cpu, mode; /* mode: -1 unless --mode is given */
    double timeout_ms, tol, seed;
} ik_args;

static int parse_mode(const char* v, void* dest) {
    *(int*)dest = mn_ik_mode_parse(v);
    return *(int*)dest >= 0;
}

static int parse_method(const char* v, void* dest) {
    *(int*)dest = mn_ik_method_parse(v);
    return *(int*)dest >= 0;
}

#define AT(f, t) MN_CLI_AT(ik_args, f, t)
static const mn_cli_opt ik_opts[] = {
    {"--urdf", MN_CLI_STRING, AT(urdf, const char*), .bad = NULL},
    {"--base", MN_CLI_STRING, AT(base, const char*), .bad = NULL},
    {"--tip", MN_CLI_STRING, AT(tip, const char*), .bad = NULL},
    {"--dump", MN_CLI_STRING, AT(dump, const char*), .bad = NULL},
    {"--near", MN_CLI_FLAG, AT(near, int), .lo = 1},
    {"--cpu-time", MN_CLI_FLAG, AT(cpu, int), .lo = 1},
    {"--n", MN_CLI_INT, AT(n, int), 1, INT_MAX, .bad = "--n needs a positive integer"},
    {"--seed", MN_CLI_DOUBLE, AT(seed, double), 0, DBL_MAX,
     .bad = "--seed needs a non-negative integer"},
    {"--timeout-ms", MN_CLI_DOUBLE, AT(timeout_ms, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--timeout-ms needs a positive number"},
    {"--tol", MN_CLI_DOUBLE, AT(tol, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--tol needs a positive number"},
    {"--mode", MN_CLI_CALL, AT(mode, int), .bad = "unknown mode '%s'", .parse = parse_mode},
    {"--method", MN_CLI_CALL, AT(method, int), .bad = "unknown method '%s'", .parse = parse_method},
};
#undef AT
const mn_cli_table mn_bench_ik_options = {
    .cmd = "bench ik",
    MN_CLI_OPTS(ik_opts),
    .unknown = "unknown or incomplete option '%s'",
    .missing = "unknown or incomplete option '%s'",
    .dash_option = 1,
};

int mn_bench_ik(int argc, char** argv) {
    if (mn_cli_has(argc, argv, "--compare")) return mn_bench_ik_compare(argc, argv);
    if (mn_cli_has(argc, argv, "--tracking-batch")) return mn_bench_ik_tracking(argc, argv);
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    ik_args args = {NULL, NULL, NULL, NULL, 10000, 0, MN_IK_LM, 0, -1, 5, 1e-5, 42};
    int bad = mn_cli_parse(&mn_bench_ik_options, argc, argv, &args, NULL, NULL);
    if (bad) return bad;
    const char *urdf = args.urdf, *base_name = args.base, *tip_name = args.tip, *dump = args.dump;
    int n = args.n, near = args.near, method = args.method, cpu = args.cpu;
    int mode_given = args.mode >= 0, mode = mode_given ? args.mode : MN_IK_SPEED;
    double timeout_ms = args.timeout_ms, tol = args.tol, seedd = args.seed;
    if (!urdf || !base_name || !tip_name)
        return mn_cli_usage_error("bench ik", "--urdf, --base and --tip are required");

    mn_error err;
    mn_model* m = NULL;
    mn_warnings warn = {0};
    if (mn_urdf_read(urdf, &m, &warn, &err) != MN_OK) return mn_cli_input_error(&err);
    int base = mn_cli_find_joint(m, urdf, "--base", base_name);
    int tip = base < 0 ? -1 : mn_cli_find_joint(m, urdf, "--tip", tip_name);
    if (base < 0 || tip < 0) {
        mn_model_destroy(m);
        return MN_EXIT_INPUT;
    }
    bench_chain bc;
    int cs = chain_make(m, base, tip, &bc);
    if (cs != 0) {
        mn_error_set(&err, MN_ERR_ARG, urdf, 0, "--tip", "'%s' is not below '%s'%s", tip_name,
                     base_name, cs == -1 ? "" : " by hinges and slides only");
        mn_model_destroy(m);
        return mn_cli_input_error(&err);
    }
    mn_data* d = mn_data_create(m, 0);
    int nd = bc.n;
    mn_chain* near_chain = near ? mn_chain_create(m, base, tip, &err) : NULL;
    if (near && (!near_chain || near_chain->ndof != nd || nd > 16)) {
        mn_chain_destroy(near_chain);
        mn_data_destroy(d);
        mn_model_destroy(m);
        return mn_cli_usage_error("bench ik",
                                  "--near needs a chain of at most 16 hinges and slides");
    }
    double* qt = malloc(sizeof(double) * (size_t)nd * 3);
    double *qmid = qt + nd, *qs = qmid + nd;
    /* The middle of the limits; 0 for a continuous joint (sampled in [-pi, pi]). */
    for (int k = 0; k < nd; k++)
        qmid[k] = 0.5 * (bc.lo[k] + bc.hi[k]);

    run_stats st[2];
    memset(st, 0, sizeof st);
    st[0].ok_us = malloc(sizeof(double) * (size_t)n);
    st[1].ok_us = malloc(sizeof(double) * (size_t)n);
    st[0].motions = malloc(sizeof(double) * (size_t)n);
    st[1].motions = malloc(sizeof(double) * (size_t)n);
    sbuf csv = {0};
    if (dump) {
        sb_printf(&csv, "query,x,y,z,qw,qx,qy,qz");
        for (int k = 0; k < nd; k++)
            sb_printf(&csv, ",q%d", k);
        sb_printf(&csv, ",status,iters,restarts,pos_err,rot_err,us\n");
    }
    sm_state = (uint64_t)seedd;
    mn_ik_options o = mn_ik_default();
    o.method = (mn_ik_method)method;
    o.tol_pos = tol;
    o.tol_rot = tol;
    o.timeout_ms = timeout_ms;
    o.max_restarts = 1000000; /* bounded by the timeout, as in TRAC-IK */
    o.timeout_cpu = cpu;
    o.mode = (mn_ik_mode)mode;
    mn_ik_problem p = mn_ik_problem_default();
    p.base = base;
    p.tip = tip;
    p.use_orientation = 1;
    int nruns = near ? 2 : 1;

    for (int it = 0; it < n; it++) {
        for (int k = 0; k < nd; k++)
            qt[k] = bc.lo[k] + (bc.hi[k] - bc.lo[k]) * urand();
        hmat T = chain_fk(m, &bc, qt);
        if (near) {
            /* A twist of 1 cm along a random direction and 3 degrees about a random axis,
             * carried to the joints by the damped pseudoinverse at the seed: the target is
             * the pose of qt + dq (within limits). It lies 1 cm / 3 degrees from the seed
             * to first order and is reachable on the seed's branch by construction (a
             * Cartesian offset alone falls outside the arm's reach for about 1 in 10
             * uniform seeds, near a stretched elbow or a joint limit). */
            double v[3], a[3], xi[6], dq[16], J[6 * 16], work[64];
            rand_dir(v);
            rand_dir(a);
            const double ang = 3.0 * MN_PI / 180.0;
            for (int i = 0; i < 3; i++)
                xi[i] = 0.01 * v[i], xi[3 + i] = ang * a[i];
            mn_xform X;
            mn_chain_fk_jacobian(m, near_chain, qt, mn_v3(0, 0, 0), &X, J);
            mn_dls_solve(J, 6, nd, xi, 1e-3, dq, work);
            for (int k = 0; k < nd; k++) {
                double q2 = qt[k] + dq[k];
                qs[k] = q2 < bc.lo[k] ? bc.lo[k] : q2 > bc.hi[k] ? bc.hi[k] : q2;
            }
            T = chain_fk(m, &bc, qs);
        }
        p.target_pos = mn_v3(T.a[3], T.a[7], T.a[11]);
        p.target_rot = quat_of(&T);
        int lm_ok = 0;
        double lm_motion = 0;
        for (int run = 0; run < nruns; run++) {
            mn_data_reset(m, d);
            const double* seed = near ? qt : qmid;
            for (int k = 0; k < nd; k++)
                d->q[bc.dof_qadr[k]] = seed[k];
            o.method = run == 0 ? (mn_ik_method)method : MN_IK_DLS;
            /* Tracking stays on the seed's branch: no restarts. */
            if (near) o.max_restarts = 0;
            mn_ik_result r;
            double t0 = now_ns(cpu);
            mn_status s = mn_ik_solve(m, d, &p, &o, &r);
            double us = (now_ns(cpu) - t0) * 1e-3;
            for (int k = 0; k < nd; k++)
                qs[k] = d->q[bc.dof_qadr[k]];
            hmat G = chain_fk(m, &bc, qs);
            double tw[6];
            twist_between(&T, &G, tw);
            int ok = within(&bc, m, qs);
            for (int c = 0; c < 6; c++)
                if (!(fabs(tw[c]) <= tol)) ok = 0;
            run_stats* S = &st[run];
            S->sum_iters += r.iterations;
            if (ok) {
                S->ok_us[S->ok++] = us;
                S->sum_us += us;
                double sd = 0;
                for (int k = 0; k < nd; k++)
                    sd += (qs[k] - seed[k]) * (qs[k] - seed[k]);
                S->seed_dist += sqrt(sd);
                if (near) {
                    /* Joint motion is compared on the queries both methods solved. */
                    double mv = 0;
                    for (int k = 0; k < nd; k++)
                        mv += (qs[k] - qt[k]) * (qs[k] - qt[k]);
                    if (run == 0) {
                        lm_ok = 1;
                        lm_motion = sqrt(mv);
                    } else if (lm_ok) {
                        st[0].motions[st[0].nmotion] = lm_motion;
                        st[0].motion += lm_motion;
                        st[0].nmotion++;
                        S->motions[S->nmotion] = sqrt(mv);
                        S->motion += sqrt(mv);
                        S->nmotion++;
                    }
                }
            } else {
                S->sum_us += timeout_ms * 1e3;
            }
            if (dump && run == 0) {
                sb_printf(&csv, "%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g", it, p.target_pos.x,
                          p.target_pos.y, p.target_pos.z, p.target_rot.w, p.target_rot.x,
                          p.target_rot.y, p.target_rot.z);
                for (int k = 0; k < nd; k++)
                    sb_printf(&csv, ",%.17g", qs[k]);
                sb_printf(&csv, ",%s,%d,%d,%.3g,%.3g,%.3f\n",
                          ok           ? "OK"
                          : s == MN_OK ? "RECHECK"
                                       : mn_status_name(s),
                          r.iterations, r.restarts, r.pos_err, r.rot_err, us);
            }
        }
    }
    printf("robot=%s dof=%d n=%d method=%s tol=%g timeout_ms=%g clock=%s solve_rate=%.4f "
           "mean_us=%.2f median_us=%.2f p99_us=%.2f mean_iters=%.2f",
           m->name ? m->name : "?", nd, n, mn_ik_method_name((mn_ik_method)method), tol, timeout_ms,
           cpu ? "cpu" : "wall", 100.0 * st[0].ok / n, st[0].sum_us / n, stat_median(&st[0]),
           stat_p99(&st[0]), st[0].sum_iters / n);
    if (mode_given)
        printf(" mode=%s mean_seed_distance=%.5f", mn_ik_mode_name((mn_ik_mode)mode),
               st[0].ok ? st[0].seed_dist / st[0].ok : NAN);
    if (near)
        printf(" near=1 both_solved=%d mean_joint_motion=%.5f median_joint_motion=%.5f "
               "dls_solve_rate=%.4f dls_mean_us=%.2f"
               " dls_median_us=%.2f dls_mean_joint_motion=%.5f dls_median_joint_motion=%.5f",
               st[1].nmotion, st[0].nmotion ? st[0].motion / st[0].nmotion : NAN,
               st[0].nmotion ? mn_bench_median(st[0].motions, (size_t)st[0].nmotion) : NAN,
               100.0 * st[1].ok / n, st[1].sum_us / n, stat_median(&st[1]),
               st[1].nmotion ? st[1].motion / st[1].nmotion : NAN,
               st[1].nmotion ? mn_bench_median(st[1].motions, (size_t)st[1].nmotion) : NAN);
    printf("\n");
    int rc = MN_EXIT_OK;
    if (dump) {
        if (mn_write_file_atomic(dump, csv.s ? csv.s : "", csv.len, &err) != MN_OK)
            rc = mn_cli_input_error(&err);
        free(csv.s);
    }
    free(st[0].ok_us);
    free(st[1].ok_us);
    free(st[0].motions);
    free(st[1].motions);
    free(qt);
    mn_chain_destroy(near_chain);
    free(bc.jnt);
    free(bc.lo);
    mn_data_destroy(d);
    mn_model_destroy(m);
    return rc;
}
