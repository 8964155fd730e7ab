/* kdl_peer: marionette's Levenberg-Marquardt IK against Orocos KDL on the robot-arm
 * protocol of `marionette bench ik`, in the same run, on the same queries.
 *
 * The protocol is Beeson and Ames, "TRAC-IK: An open-source library for improved solving
 * of generic inverse kinematics" (Humanoids 2015), sec. IV, as bench/bench_ik.c runs it:
 *
 *   - N joint vectors drawn uniformly within the joint limits (continuous joints in
 *     [-pi, pi]) from the bench's seeded splitmix64 generator, the same draws in the same
 *     order as bench_ik.c, so `--seed S` gives the same query set as `marionette bench ik
 *     --seed S`; the targets are their tip poses;
 *   - every solve starts from the middle of the limits (0 for a continuous joint);
 *   - a solve succeeds when each of the 6 components of the twist between the target and
 *     the reached pose is within tol, as re-checked here by an independent forward
 *     kinematics (4x4 homogeneous matrices composed from the model's offsets, orientations
 *     and axes: neither mn_chain_fk nor KDL's solver), the answer is within the limits and
 *     it came within the timeout;
 *   - a failure is charged the whole timeout.
 *
 * The solvers:
 *
 *   marionette_lm  mn_ik_solve with the default options, tol on position and rotation,
 *                  the timeout, restarts bounded by the timeout (exactly bench_ik.c).
 *   kdl_nr_jl      KDL::ChainIkSolverPos_NR_JL (Newton-Raphson with joint-limit clamping,
 *                  ChainFkSolverPos_recursive + ChainIkSolverVel_pinv), 100 iterations per
 *                  call (--kdl-iters), eps = tol, called again from its last answer until
 *                  it reports success or the timeout passes: TRAC-IK's own benchmark loop
 *                  (trac_ik_examples ik_tests.cpp, which makes 1 iteration per call), with
 *                  no random restarts.
 *   kdl_lma        KDL::ChainIkSolverPos_LMA (Levenberg-Marquardt, no limits) with unit
 *                  task-space weights and eps = tol, restarted from a random joint vector
 *                  within the limits until it returns an answer that lies within the limits
 *                  (hinge angles are first moved by whole turns into their range) or the
 *                  timeout passes.
 *   kdl_nr_jl_rr   (with --nr-jl-restarts) NR_JL one iteration per call, restarted from a
 *                  random joint vector within the limits whenever an iteration leaves q
 *                  unchanged (every component within float epsilon: stuck at a limit or
 *                  at a stationary point): the TRAC-IK paper's "KDL-RR", as its
 *                  ChainIkSolverPos_TL does it without the angle wrapping.
 *
 * The KDL chain is built from marionette's own URDF reading (one KDL::Segment per model
 * joint), and checked against mn_chain_fk and the independent FK to 1e-12 before anything
 * is timed. Times are reported, never asserted. */
#include <marionette/ik.h>
#include <marionette/io.h>
#include <marionette/model.h>

#include "fk_reference.h"

#include <kdl/chain.hpp>
#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainiksolverpos_lma.hpp>
#include <kdl/chainiksolverpos_nr_jl.hpp>
#include <kdl/chainiksolvervel_pinv.hpp>
#include <kdl/frames.hpp>
#include <kdl/jntarray.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <string>
#include <vector>

namespace {

const double kPi = 3.14159265358979323846;

/* Exit codes of the marionette command line. */
const int kExitOk = 0, kExitInput = 1, kExitUsage = 2;

void usage(FILE* f) {
    std::fprintf(f,
                 "usage: kdl_peer --urdf FILE --base LINK --tip LINK [--n 10000] [--seed 42]\n"
                 "                [--timeout-ms 5] [--tol 1e-5] [--cpu-time] [--kdl-iters 100]\n"
                 "                [--nr-jl-restarts] [--no-nr-jl]\n"
                 "\n"
                 "Runs the robot-arm IK protocol of `marionette bench ik` (TRAC-IK, Beeson & Ames\n"
                 "2015): N joint vectors drawn uniformly within the limits (the same generator and\n"
                 "seed as the bench), targets by forward kinematics, every solve seeded from the\n"
                 "middle of the limits, success when each of the 6 twist components is within tol\n"
                 "(re-checked by an independent FK), q is within limits and the answer came within\n"
                 "the timeout; a failure counts the whole timeout. Solvers, query by query:\n"
                 "  marionette_lm  mn_ik_solve, default options (as `marionette bench ik`)\n"
                 "  kdl_nr_jl      KDL ChainIkSolverPos_NR_JL + ChainIkSolverVel_pinv, 100 iterations\n"
                 "                 per call, called again from its last answer until the timeout\n"
                 "  kdl_lma        KDL ChainIkSolverPos_LMA, random restarts within the limits until\n"
                 "                 an answer within the limits or the timeout\n"
                 "Prints fk_check=ok with the largest deviation of KDL's FK from mn_chain_fk, one\n"
                 "key=value line per solver:\n"
                 "  solver robot dof n tol timeout_ms clock solve_rate (percent) mean_us (all\n"
                 "  queries) median_us p99_us (successes) late (successes past the timeout)\n"
                 "and a last line of ratios KDL / marionette of mean_us and median_us.\n"
                 "--cpu-time: the timeout and the times in this thread's CPU time.\n"
                 "--kdl-iters K: NR_JL's iterations per call (default 100; TRAC-IK's benchmark\n"
                 "  uses 1, which checks the clock after every iteration).\n"
                 "--nr-jl-restarts: adds solver=kdl_nr_jl_rr, NR_JL one iteration at a time,\n"
                 "  restarted from a random joint vector within the limits whenever an iteration\n"
                 "  leaves q unchanged (TRAC-IK's KDL-RR).\n"
                 "--no-nr-jl: leaves out kdl_nr_jl (its failures cost the whole timeout: most of the\n"
                 "  run's time), for runs that compare marionette with kdl_lma only.\n"
                 "--fk: times forward kinematics instead of IK, in 7 alternating rounds on this\n"
                 "  thread's CPU time: KDL's ChainFkSolverPos_recursive::JntToCart, mn_chain_fk and,\n"
                 "  on the Panda, the hand-unrolled reference of bench/fk_reference.c. One line:\n"
                 "  fk robot dof kdl_fk_ns mn_fk_ns ref_ns (medians, with _min and _max)\n"
                 "  mn_over_kdl mn_over_ref.\n");
}

/* One line on stderr, exit status 2 (usage). */
int usage_error(const char* fmt, const char* arg) {
    std::fprintf(stderr, "kdl_peer: ");
    std::fprintf(stderr, fmt, arg);
    std::fprintf(stderr, " (--help for usage)\n");
    return kExitUsage;
}

bool parse_double(const char* s, double* out) {
    char* end = nullptr;
    double v = std::strtod(s, &end);
    if (end == s || *end != '\0' || !std::isfinite(v)) return false;
    *out = v;
    return true;
}

bool parse_int(const char* s, int* out) {
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < -2147483647L || v > 2147483647L) return false;
    *out = (int)v;
    return true;
}

/* ---- clocks ----------------------------------------------------------------------------- */
double now_ns(bool cpu) {
    timespec ts;
    clock_gettime(cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Value at quantile p of v (reorders it): the nearest-rank rule of bench/timing.c. */
double quantile(std::vector<double>& v, double p) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    size_t n = v.size(), i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

/* ---- the independent forward kinematics: 4x4 homogeneous matrices, as bench_ik.c -------- */
struct HMat {
    double a[16]; /* row-major */
};

HMat h_identity() {
    HMat h;
    std::memset(&h, 0, sizeof h);
    h.a[0] = h.a[5] = h.a[10] = h.a[15] = 1;
    return h;
}

HMat h_mul(const HMat& A, const HMat& B) {
    HMat C;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += A.a[4 * i + k] * B.a[4 * k + j];
            C.a[4 * i + j] = s;
        }
    return C;
}

/* Rotation from a quaternion (w, x, y, z), normalised here; translation t. */
HMat h_from_quat(double w, double x, double y, double z, double tx, double ty, double tz) {
    double n = std::sqrt(w * w + x * x + y * y + z * z);
    w /= n, x /= n, y /= n, z /= n;
    HMat h = h_identity();
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

/* Rotation by angle about axis (u, v, w) as a quaternion: independent of any Rodrigues code. */
HMat h_axis_angle(double u, double v, double w, double angle) {
    double n = std::sqrt(u * u + v * v + w * w);
    double s = std::sin(0.5 * angle) / n;
    return h_from_quat(std::cos(0.5 * angle), u * s, v * s, w * s, 0, 0, 0);
}

/* The chain base -> tip as bench_ik.c describes it: its joints root to tip, its DOFs, and
 * the sampling range of each DOF (the limits; [-pi, pi] for a continuous hinge, [-1, 1]
 * for an unlimited slide). */
struct PeerChain {
    std::vector<int> jnt;      /* model joints below base down to tip, root to tip */
    std::vector<int> dof_jnt;  /* the joint of each DOF (hinges and slides), root to tip */
    std::vector<int> dof_qadr; /* its state index */
    std::vector<double> lo, hi;
};

/* 0 on success; -1 when tip is not below base, -2 when a ball or free joint is in the way. */
int chain_make(const mn_model* m, int base, int tip, PeerChain* pc) {
    std::vector<int> up;
    for (int j = tip; j != base; j = m->jnt_parent[j]) {
        if (j < 0) return -1;
        int t = m->jnt_type[j];
        if (t == MN_JOINT_BALL || t == MN_JOINT_FREE) return -2;
        up.push_back(j);
    }
    pc->jnt.assign(up.rbegin(), up.rend());
    for (int j : pc->jnt) {
        int t = m->jnt_type[j];
        if (t != MN_JOINT_HINGE && t != MN_JOINT_SLIDE) continue;
        pc->dof_jnt.push_back(j);
        pc->dof_qadr.push_back(m->jnt_qadr[j]);
        if (m->jnt_limited[j]) {
            pc->lo.push_back(m->jnt_range[2 * j]);
            pc->hi.push_back(m->jnt_range[2 * j + 1]);
        } else {
            pc->lo.push_back(t == MN_JOINT_HINGE ? -kPi : -1);
            pc->hi.push_back(t == MN_JOINT_HINGE ? kPi : 1);
        }
    }
    return 0;
}

/* Tip frame relative to the base frame for the chain's values q: T = prod over the chain
 * of Trans(offset) Rot(orient) Motion(q) (model.h). */
HMat chain_fk(const mn_model* m, const PeerChain& pc, const double* q) {
    HMat T = h_identity();
    int k = 0;
    for (int j : pc.jnt) {
        mn_vec3 o = m->jnt_offset[j];
        mn_quat r = m->jnt_orient[j];
        T = h_mul(T, h_from_quat(r.w, r.x, r.y, r.z, o.x, o.y, o.z));
        mn_vec3 ax = m->jnt_axis[j];
        if (m->jnt_type[j] == MN_JOINT_HINGE) {
            T = h_mul(T, h_axis_angle(ax.x, ax.y, ax.z, q[k++]));
        } else if (m->jnt_type[j] == MN_JOINT_SLIDE) {
            HMat M = h_identity();
            M.a[3] = ax.x * q[k], M.a[7] = ax.y * q[k], M.a[11] = ax.z * q[k];
            k++;
            T = h_mul(T, M);
        }
    }
    return T;
}

/* The twist between two poses: position difference and the rotation vector of
 * R_target R^T (angle-axis from the matrix, robust near 0 and near pi), as bench_ik.c. */
void twist_between(const HMat& target, const HMat& got, double tw[6]) {
    for (int i = 0; i < 3; i++) tw[i] = target.a[4 * i + 3] - got.a[4 * i + 3];
    double E[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int k = 0; k < 3; k++) s += target.a[4 * i + k] * got.a[4 * j + k];
            E[3 * i + j] = s;
        }
    double vx = 0.5 * (E[7] - E[5]), vy = 0.5 * (E[2] - E[6]), vz = 0.5 * (E[3] - E[1]);
    double sn = std::sqrt(vx * vx + vy * vy + vz * vz), cs = 0.5 * (E[0] + E[4] + E[8] - 1);
    double angle = std::atan2(sn, cs);
    if (sn < 1e-12) {
        if (cs > 0) {
            tw[3] = vx, tw[4] = vy, tw[5] = vz;
            return;
        }
        double ax = std::sqrt(std::fmax(0, (E[0] + 1) / 2)), ay = std::sqrt(std::fmax(0, (E[4] + 1) / 2)),
               az = std::sqrt(std::fmax(0, (E[8] + 1) / 2));
        tw[3] = kPi * ax, tw[4] = kPi * ay, tw[5] = kPi * az;
        return;
    }
    double k = angle / sn;
    tw[3] = k * vx, tw[4] = k * vy, tw[5] = k * vz;
}

/* Shepperd's method, for the target quaternion handed to mn_ik_solve. */
mn_quat quat_of(const HMat& h) {
    const double* a = h.a;
    double m00 = a[0], m11 = a[5], m22 = a[10], tr = m00 + m11 + m22;
    mn_quat q;
    if (tr > 0) {
        double s = 2 * std::sqrt(tr + 1);
        q = mn_quat{0.25 * s, (a[9] - a[6]) / s, (a[2] - a[8]) / s, (a[4] - a[1]) / s};
    } else if (m00 > m11 && m00 > m22) {
        double s = 2 * std::sqrt(1 + m00 - m11 - m22);
        q = mn_quat{(a[9] - a[6]) / s, 0.25 * s, (a[1] + a[4]) / s, (a[2] + a[8]) / s};
    } else if (m11 > m22) {
        double s = 2 * std::sqrt(1 + m11 - m00 - m22);
        q = mn_quat{(a[2] - a[8]) / s, (a[1] + a[4]) / s, 0.25 * s, (a[6] + a[9]) / s};
    } else {
        double s = 2 * std::sqrt(1 + m22 - m00 - m11);
        q = mn_quat{(a[4] - a[1]) / s, (a[2] + a[8]) / s, (a[6] + a[9]) / s, 0.25 * s};
    }
    return q;
}

/* Is q (the chain's values) finite and within the limits of the limited joints? */
bool within(const mn_model* m, const PeerChain& pc, const double* q) {
    for (size_t k = 0; k < pc.dof_jnt.size(); k++) {
        int j = pc.dof_jnt[k];
        if (!std::isfinite(q[k])) return false;
        if (m->jnt_limited[j] && (q[k] < m->jnt_range[2 * j] || q[k] > m->jnt_range[2 * j + 1])) return false;
    }
    return true;
}

/* The protocol's re-check: every twist component within tol, q within the limits. */
bool recheck(const mn_model* m, const PeerChain& pc, const HMat& target, const double* q, double tol) {
    if (!within(m, pc, q)) return false;
    HMat G = chain_fk(m, pc, q);
    double tw[6];
    twist_between(target, G, tw);
    for (double c : tw)
        if (!(std::fabs(c) <= tol)) return false;
    return true;
}

/* ---- random numbers: splitmix64, the generator and the draws of bench_ik.c -------------- */
struct SplitMix {
    uint64_t state;
    double next() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return (double)(z >> 11) * (1.0 / 9007199254740992.0);
    }
};

/* ---- the KDL chain ----------------------------------------------------------------------- */
KDL::Vector kv(mn_vec3 v) { return KDL::Vector(v.x, v.y, v.z); }

/* One KDL::Segment per model joint, base frame at the chain's root. A model joint is
 * T_parent * Trans(offset) * Rot(orient) * Motion(q); a KDL segment's pose is
 * joint.pose(q) * f_tip, the joint acting first. So each segment carries the joint's
 * placement P = (orient, offset) as f_tip and its motion as a KDL joint whose axis and
 * origin are written in the parent frame: a rotation by q about the line through `offset`
 * along orient * axis, followed by P, is P * Rot(axis, q), since
 * Rot(R a, q) R = R Rot(a, q); a translation by q along orient * axis, followed by P, is
 * P * Trans(axis q) for the same reason. This is how kdl_parser maps URDF joints. */
KDL::Chain kdl_chain(const mn_model* m, const PeerChain& pc) {
    KDL::Chain chain;
    for (int j : pc.jnt) {
        mn_quat r = m->jnt_orient[j];
        KDL::Rotation R = KDL::Rotation::Quaternion(r.x, r.y, r.z, r.w);
        KDL::Vector off = kv(m->jnt_offset[j]);
        KDL::Frame P(R, off);
        KDL::Vector axis = R * kv(m->jnt_axis[j]);
        const char* name = m->jnt_name[j];
        switch (m->jnt_type[j]) {
        case MN_JOINT_HINGE:
            chain.addSegment(KDL::Segment(name, KDL::Joint(std::string(name) + "_joint", off, axis, KDL::Joint::RotAxis), P));
            break;
        case MN_JOINT_SLIDE:
            chain.addSegment(KDL::Segment(name, KDL::Joint(std::string(name) + "_joint", off, axis, KDL::Joint::TransAxis), P));
            break;
        default:
            chain.addSegment(KDL::Segment(name, KDL::Joint(std::string(name) + "_joint", KDL::Joint::Fixed), P));
            break;
        }
    }
    return chain;
}

HMat hmat_of(const KDL::Frame& F) {
    HMat h = h_identity();
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) h.a[4 * i + j] = F.M(i, j);
        h.a[4 * i + 3] = F.p(i);
    }
    return h;
}

KDL::Frame frame_of(const HMat& h) {
    const double* a = h.a;
    return KDL::Frame(KDL::Rotation(a[0], a[1], a[2], a[4], a[5], a[6], a[8], a[9], a[10]),
                      KDL::Vector(a[3], a[7], a[11]));
}

double max_dev(const HMat& A, const HMat& B) {
    double d = 0;
    for (int i = 0; i < 12; i++) d = std::fmax(d, std::fabs(A.a[i] - B.a[i]));
    return d;
}

/* Moves each limited hinge angle by whole turns into its range when that is possible (the
 * same pose); KDL's LMA knows nothing of limits. */
void wrap_into_limits(const mn_model* m, const PeerChain& pc, KDL::JntArray& q) {
    for (size_t k = 0; k < pc.dof_jnt.size(); k++) {
        int j = pc.dof_jnt[k];
        if (m->jnt_type[j] != MN_JOINT_HINGE || !m->jnt_limited[j] || !std::isfinite(q(k))) continue;
        double lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1], v = q(k);
        if (v < lo) v += 2 * kPi * std::ceil((lo - v) / (2 * kPi));
        else if (v > hi) v -= 2 * kPi * std::ceil((v - hi) / (2 * kPi));
        if (v >= lo && v <= hi) q(k) = v;
    }
}

/* ---- statistics --------------------------------------------------------------------------- */
struct Stats {
    const char* name;
    int ok = 0, late = 0;
    double sum_us = 0, sum_iters = 0, sum_restarts = 0;
    std::vector<double> ok_us;
    explicit Stats(const char* n) : name(n) {}

    /* One query: us spent, whether the re-check passed. Failures cost the whole timeout. */
    void add(bool ok_, double us, double timeout_us) {
        if (ok_ && us > timeout_us) {
            late++;
            ok_ = false;
        }
        if (ok_) {
            ok++;
            ok_us.push_back(us);
            sum_us += us;
        } else {
            sum_us += timeout_us;
        }
    }
};

/* ---- forward kinematics timing (--fk) ------------------------------------------------------ */
double cpu_ns() { return now_ns(true); }

/* Median, min and max of v (reorders it). */
struct Spread {
    double med, lo, hi;
};
Spread spread(std::vector<double>& v) {
    double med = quantile(v, 0.5);
    return Spread{med, v.front(), v.back()};
}

void fk_timing(const mn_model* m, const mn_chain* mc, const PeerChain& pc, const KDL::Chain& chain, const char* robot,
               double seedd) {
    const int nd = (int)pc.dof_jnt.size(), reps = 20000, batches = 15, rounds = 7;
    KDL::ChainFkSolverPos_recursive fk(chain);
    std::vector<double> q(nd);
    KDL::JntArray kq(nd);
    SplitMix rng{(uint64_t)seedd ^ 0x666b74696d650000ull};
    for (int k = 0; k < nd; k++) q[k] = kq(k) = pc.lo[k] + (pc.hi[k] - pc.lo[k]) * rng.next();
    /* The reference applies when it gives the library's tip frame (the Panda). */
    bool panda = nd == 7;
    for (int t = 0; t < 100 && panda; t++) {
        double qr[7], R[9], P[3];
        for (int k = 0; k < 7; k++) qr[k] = pc.lo[k] + (pc.hi[k] - pc.lo[k]) * rng.next();
        mn_xform X;
        mn_chain_fk(m, mc, qr, &X);
        mn_bench_panda_fk_mn(qr, R, P);
        for (int i = 0; i < 9; i++) panda = panda && std::fabs(R[i] - X.R.m[i]) <= 1e-12;
        panda = panda && std::fabs(P[0] - X.p.x) <= 1e-12 && std::fabs(P[1] - X.p.y) <= 1e-12 &&
                std::fabs(P[2] - X.p.z) <= 1e-12;
    }
    volatile double sink = 0;
    std::vector<double> t_kdl, t_mn, t_ref, samples(batches);
    int k = 0;
    auto nudge = [&]() {
        q[k] += 1e-9;
        kq(k) = q[k];
        if (++k == nd) k = 0;
    };
    auto time_it = [&](auto&& body) {
        for (int b = 0; b < batches; b++) {
            double t0 = cpu_ns();
            for (int r = 0; r < reps; r++) body();
            samples[b] = (cpu_ns() - t0) / reps;
        }
        std::vector<double> s = samples;
        return quantile(s, 0.5);
    };
    KDL::Frame F;
    mn_xform X;
    double R[9], P[3];
    for (int round = 0; round < rounds; round++) {
        t_kdl.push_back(time_it([&] {
            nudge();
            fk.JntToCart(kq, F);
            sink = sink + F.p(0);
        }));
        t_mn.push_back(time_it([&] {
            nudge();
            mn_chain_fk(m, mc, q.data(), &X);
            sink = sink + X.p.x;
        }));
        if (panda)
            t_ref.push_back(time_it([&] {
                nudge();
                mn_bench_panda_fk_mn(q.data(), R, P);
                sink = sink + P[0];
            }));
    }
    Spread a = spread(t_kdl), b = spread(t_mn);
    std::printf("fk robot=%s dof=%d clock=cpu rounds=%d kdl_fk_ns=%.1f kdl_fk_ns_min=%.1f kdl_fk_ns_max=%.1f "
                "mn_fk_ns=%.1f mn_fk_ns_min=%.1f mn_fk_ns_max=%.1f mn_over_kdl=%.3f",
                robot, nd, rounds, a.med, a.lo, a.hi, b.med, b.lo, b.hi, b.med / a.med);
    if (panda) {
        Spread c = spread(t_ref);
        std::printf(" ref_ns=%.1f ref_ns_min=%.1f ref_ns_max=%.1f mn_over_ref=%.2f", c.med, c.lo, c.hi,
                    b.med / c.med);
    }
    std::printf("\n");
}

} // namespace

int main(int argc, char** argv) {
    const char *urdf = nullptr, *base_name = nullptr, *tip_name = nullptr;
    int n = 10000;
    double timeout_ms = 5, tol = 1e-5, seedd = 42;
    bool cpu = false;
    int kdl_iters = 100;
    bool nr_rr = false, nr = true;
    bool fk_only = false;
    for (int i = 1; i < argc; i++)
        if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            usage(stdout);
            return kExitOk;
        }
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        bool more = i + 1 < argc;
        if (!std::strcmp(a, "--urdf") && more) {
            urdf = argv[++i];
        } else if (!std::strcmp(a, "--base") && more) {
            base_name = argv[++i];
        } else if (!std::strcmp(a, "--tip") && more) {
            tip_name = argv[++i];
        } else if (!std::strcmp(a, "--cpu-time")) {
            cpu = true;
        } else if (!std::strcmp(a, "--no-nr-jl")) {
            nr = false;
        } else if (!std::strcmp(a, "--fk")) {
            fk_only = true;
        } else if (!std::strcmp(a, "--nr-jl-restarts")) {
            nr_rr = true;
        } else if (!std::strcmp(a, "--n") && more) {
            if (!parse_int(argv[++i], &n) || n < 1) return usage_error("--n needs a positive integer, not '%s'", argv[i]);
        } else if (!std::strcmp(a, "--kdl-iters") && more) {
            if (!parse_int(argv[++i], &kdl_iters) || kdl_iters < 1)
                return usage_error("--kdl-iters needs a positive integer, not '%s'", argv[i]);
        } else if (!std::strcmp(a, "--seed") && more) {
            if (!parse_double(argv[++i], &seedd) || seedd < 0 || seedd != std::floor(seedd) || seedd > 1.8e19)
                return usage_error("--seed needs a non-negative integer, not '%s'", argv[i]);
        } else if (!std::strcmp(a, "--timeout-ms") && more) {
            if (!parse_double(argv[++i], &timeout_ms) || !(timeout_ms > 0))
                return usage_error("--timeout-ms needs a positive number, not '%s'", argv[i]);
        } else if (!std::strcmp(a, "--tol") && more) {
            if (!parse_double(argv[++i], &tol) || !(tol > 0)) return usage_error("--tol needs a positive number, not '%s'", argv[i]);
        } else {
            return usage_error("unknown or incomplete option '%s'", a);
        }
    }
    if (!urdf || !base_name || !tip_name) return usage_error("%s", "--urdf, --base and --tip are required");

    /* ---- the model, the chain, KDL's chain ---- */
    mn_error err;
    mn_error_clear(&err);
    mn_model* m = nullptr;
    mn_warnings warn = {};
    if (mn_urdf_read(urdf, &m, &warn, &err) != MN_OK) {
        std::fprintf(stderr, "%s\n", err.message);
        return kExitInput;
    }
    int base = mn_model_find_joint(m, base_name), tip = mn_model_find_joint(m, tip_name);
    if (base < 0 || tip < 0) {
        std::fprintf(stderr, "%s: %s: no link named '%s'\n", urdf, base < 0 ? "--base" : "--tip",
                     base < 0 ? base_name : tip_name);
        mn_model_destroy(m);
        return kExitInput;
    }
    PeerChain pc;
    int cs = chain_make(m, base, tip, &pc);
    if (cs != 0 || pc.dof_jnt.empty()) {
        std::fprintf(stderr, "%s: --tip: '%s' is not below '%s'%s\n", urdf, tip_name, base_name,
                     cs == -2 ? " by hinges and slides only" : cs == 0 ? " by a moving joint" : "");
        mn_model_destroy(m);
        return kExitInput;
    }
    const int nd = (int)pc.dof_jnt.size();
    const char* robot = m->name ? m->name : "?";
    mn_chain* mc = mn_chain_create(m, base, tip, &err);
    if (!mc) {
        std::fprintf(stderr, "%s\n", err.message);
        mn_model_destroy(m);
        return kExitInput;
    }
    KDL::Chain chain = kdl_chain(m, pc);
    if ((int)chain.getNrOfJoints() != nd || mc->ndof != nd) {
        std::fprintf(stderr, "%s: --tip: the chain has %d DOFs, KDL's %u, mn_chain's %d\n", urdf, nd,
                     chain.getNrOfJoints(), mc->ndof);
        mn_chain_destroy(mc);
        mn_model_destroy(m);
        return kExitInput;
    }

    /* ---- KDL's FK against mn_chain_fk and the independent FK, on random q within the
     * sampling ranges (a generator of its own: the query set stays bench_ik.c's) ---- */
    KDL::ChainFkSolverPos_recursive fk(chain);
    {
        SplitMix rng{(uint64_t)seedd ^ 0x6b646c5f666b3030ull};
        std::vector<double> q(nd);
        KDL::JntArray kq(nd);
        double dev_kdl = 0, dev_indep = 0;
        const int samples = 1000;
        for (int s = 0; s < samples; s++) {
            for (int k = 0; k < nd; k++) q[k] = kq(k) = pc.lo[k] + (pc.hi[k] - pc.lo[k]) * rng.next();
            mn_xform X;
            mn_chain_fk(m, mc, q.data(), &X);
            HMat Hm = h_identity();
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 3; j++) Hm.a[4 * i + j] = X.R.m[3 * i + j];
            }
            Hm.a[3] = X.p.x, Hm.a[7] = X.p.y, Hm.a[11] = X.p.z;
            KDL::Frame F;
            if (fk.JntToCart(kq, F) < 0) {
                std::fprintf(stderr, "%s: --tip: KDL's forward kinematics failed on the chain\n", urdf);
                mn_chain_destroy(mc);
                mn_model_destroy(m);
                return kExitInput;
            }
            dev_kdl = std::fmax(dev_kdl, max_dev(hmat_of(F), Hm));
            dev_indep = std::fmax(dev_indep, max_dev(chain_fk(m, pc, q.data()), Hm));
        }
        if (!(dev_kdl <= 1e-12) || !(dev_indep <= 1e-12)) {
            std::fprintf(stderr,
                         "%s: --tip: forward kinematics disagree: KDL vs mn_chain_fk %.3g, independent vs "
                         "mn_chain_fk %.3g (limit 1e-12)\n",
                         urdf, dev_kdl, dev_indep);
            mn_chain_destroy(mc);
            mn_model_destroy(m);
            return kExitInput;
        }
        std::printf("fk_check=ok robot=%s dof=%d samples=%d max_dev_kdl=%.3g max_dev_independent=%.3g\n", robot, nd,
                    samples, dev_kdl, dev_indep);
        std::fflush(stdout);
    }

    if (fk_only) {
        fk_timing(m, mc, pc, chain, robot, seedd);
        mn_chain_destroy(mc);
        mn_model_destroy(m);
        return kExitOk;
    }

    /* ---- the solvers ---- */
    mn_data* d = mn_data_create(m, 0);
    mn_ik_options o = mn_ik_default();
    o.method = MN_IK_LM;
    o.tol_pos = tol;
    o.tol_rot = tol;
    o.timeout_ms = timeout_ms;
    o.max_restarts = 1000000; /* bounded by the timeout, as in TRAC-IK and bench_ik.c */
    o.timeout_cpu = cpu ? 1 : 0;
    mn_ik_problem p = mn_ik_problem_default();
    p.base = base;
    p.tip = tip;
    p.use_orientation = 1;

    /* KDL's joint limits: the model's for limited joints, none (+-1e30) otherwise. */
    KDL::JntArray qmin(nd), qmax(nd), qmid_k(nd);
    std::vector<double> qmid(nd);
    for (int k = 0; k < nd; k++) {
        int j = pc.dof_jnt[k];
        qmin(k) = m->jnt_limited[j] ? m->jnt_range[2 * j] : -1e30;
        qmax(k) = m->jnt_limited[j] ? m->jnt_range[2 * j + 1] : 1e30;
        qmid[k] = qmid_k(k) = 0.5 * (pc.lo[k] + pc.hi[k]);
    }
    KDL::ChainIkSolverVel_pinv vik(chain);
    KDL::ChainIkSolverPos_NR_JL nr_jl(chain, qmin, qmax, fk, vik, (unsigned)kdl_iters, tol);
    KDL::ChainIkSolverPos_NR_JL nr_jl_step(chain, qmin, qmax, fk, vik, 1, tol);
    Eigen::Matrix<double, 6, 1> L;
    L << 1, 1, 1, 1, 1, 1;
    KDL::ChainIkSolverPos_LMA lma(chain, L, tol);

    Stats st_lm("marionette_lm"), st_nr("kdl_nr_jl"), st_lma("kdl_lma"), st_rr("kdl_nr_jl_rr");
    for (Stats* s : {&st_lm, &st_nr, &st_lma, &st_rr}) s->ok_us.reserve(nr_rr || s != &st_rr ? (size_t)n : 0);
    const double timeout_us = timeout_ms * 1e3, timeout_ns = timeout_ms * 1e6;
    SplitMix rng{(uint64_t)seedd};              /* the queries: bench_ik.c's sequence */
    SplitMix restart_rng{(uint64_t)seedd + 1};  /* LMA's restarts */
    SplitMix rr_rng{(uint64_t)seedd + 2};       /* NR_JL's restarts */
    std::vector<double> qt(nd), qs(nd);
    KDL::JntArray kin(nd), kout(nd);

    for (int it = 0; it < n; it++) {
        for (int k = 0; k < nd; k++) qt[k] = pc.lo[k] + (pc.hi[k] - pc.lo[k]) * rng.next();
        HMat T = chain_fk(m, pc, qt.data());
        KDL::Frame FT = frame_of(T);

        /* marionette: exactly bench_ik.c's solve. */
        {
            p.target_pos = mn_vec3{T.a[3], T.a[7], T.a[11]};
            p.target_rot = quat_of(T);
            mn_data_reset(m, d);
            for (int k = 0; k < nd; k++) d->q[pc.dof_qadr[k]] = qmid[k];
            mn_ik_result r;
            double t0 = now_ns(cpu);
            mn_ik_solve(m, d, &p, &o, &r);
            double us = (now_ns(cpu) - t0) * 1e-3;
            for (int k = 0; k < nd; k++) qs[k] = d->q[pc.dof_qadr[k]];
            st_lm.sum_iters += r.iterations;
            st_lm.sum_restarts += r.restarts;
            st_lm.add(recheck(m, pc, T, qs.data(), tol), us, timeout_us);
        }

        /* KDL NR_JL: TRAC-IK's loop, again from the last answer until success or timeout. */
        if (nr) {
            kin = qmid_k;
            int calls = 0, rc;
            double t0 = now_ns(cpu), el;
            for (;;) {
                rc = nr_jl.CartToJnt(kin, FT, kout);
                calls++;
                el = now_ns(cpu) - t0;
                if (rc >= 0 || el >= timeout_ns) break;
                kin = kout;
            }
            for (int k = 0; k < nd; k++) qs[k] = kout(k);
            st_nr.sum_iters += calls;
            st_nr.add(rc >= 0 && recheck(m, pc, T, qs.data(), tol), el * 1e-3, timeout_us);
        }

        /* KDL NR_JL with random restarts (KDL-RR): one iteration per call; an iteration
         * that leaves q where it was is followed by a random joint vector within the limits. */
        if (nr_rr) {
            kin = qmid_k;
            int calls = 0, restarts = 0, rc;
            double t0 = now_ns(cpu), el;
            for (;;) {
                rc = nr_jl_step.CartToJnt(kin, FT, kout);
                calls++;
                el = now_ns(cpu) - t0;
                if (rc >= 0 || el >= timeout_ns) break;
                bool stuck = true;
                for (int k = 0; k < nd && stuck; k++)
                    stuck = std::fabs(kout(k) - kin(k)) <= (double)std::numeric_limits<float>::epsilon();
                if (stuck) {
                    for (int k = 0; k < nd; k++) kin(k) = pc.lo[k] + (pc.hi[k] - pc.lo[k]) * rr_rng.next();
                    restarts++;
                } else {
                    kin = kout;
                }
            }
            for (int k = 0; k < nd; k++) qs[k] = kout(k);
            st_rr.sum_iters += calls;
            st_rr.sum_restarts += restarts;
            st_rr.add(rc >= 0 && recheck(m, pc, T, qs.data(), tol), el * 1e-3, timeout_us);
        }

        /* KDL LMA: from the middle, then random restarts within the limits. */
        {
            kin = qmid_k;
            int restarts = 0, iters = 0;
            bool found = false;
            double t0 = now_ns(cpu), el;
            for (;;) {
                int rc = lma.CartToJnt(kin, FT, kout);
                iters += lma.lastNrOfIter;
                el = now_ns(cpu) - t0;
                if (rc >= 0) {
                    wrap_into_limits(m, pc, kout);
                    for (int k = 0; k < nd; k++) qs[k] = kout(k);
                    if (within(m, pc, qs.data())) {
                        found = true;
                        break;
                    }
                }
                if (el >= timeout_ns) break;
                for (int k = 0; k < nd; k++) kin(k) = pc.lo[k] + (pc.hi[k] - pc.lo[k]) * restart_rng.next();
                restarts++;
            }
            for (int k = 0; k < nd; k++) qs[k] = kout(k);
            st_lma.sum_iters += iters;
            st_lma.sum_restarts += restarts;
            st_lma.add(found && recheck(m, pc, T, qs.data(), tol), el * 1e-3, timeout_us);
        }
    }

    double mean[4], median[4];
    Stats* all[4] = {&st_lm, &st_nr, &st_lma, &st_rr};
    const int nsolver = nr_rr ? 4 : 3;
    for (int s = 0; s < nsolver; s++) {
        Stats& S = *all[s];
        if (s == 1 && !nr) {
            mean[s] = median[s] = NAN;
            continue;
        }
        mean[s] = S.sum_us / n;
        median[s] = quantile(S.ok_us, 0.5);
        double p99 = quantile(S.ok_us, 0.99);
        std::printf("solver=%s robot=%s dof=%d n=%d tol=%g timeout_ms=%g clock=%s solve_rate=%.4f mean_us=%.2f "
                    "median_us=%.2f p99_us=%.2f late=%d",
                    S.name, robot, nd, n, tol, timeout_ms, cpu ? "cpu" : "wall", 100.0 * S.ok / n, mean[s], median[s],
                    p99, S.late);
        if (s == 0) std::printf(" mean_iters=%.2f mean_restarts=%.3f", S.sum_iters / n, S.sum_restarts / n);
        if (s == 1) std::printf(" iters_per_call=%d mean_calls=%.2f", kdl_iters, S.sum_iters / n);
        if (s == 2) std::printf(" mean_iters=%.2f mean_restarts=%.3f", S.sum_iters / n, S.sum_restarts / n);
        if (s == 3) std::printf(" mean_iters=%.2f mean_restarts=%.3f", S.sum_iters / n, S.sum_restarts / n);
        std::printf("\n");
    }
    std::printf("ratios robot=%s kdl_nr_jl_mean_over_lm=%.2f kdl_lma_mean_over_lm=%.2f kdl_nr_jl_median_over_lm=%.2f "
                "kdl_lma_median_over_lm=%.2f",
                robot, mean[1] / mean[0], mean[2] / mean[0], median[1] / median[0], median[2] / median[0]);
    if (nr_rr)
        std::printf(" kdl_nr_jl_rr_mean_over_lm=%.2f kdl_nr_jl_rr_median_over_lm=%.2f", mean[3] / mean[0],
                    median[3] / median[0]);
    /* The speed goals, as fractions of KDL-LMA-RR's mean in this run (goal: at most 0.05
     * for marionette's mean, 0.5 for its p99). */
    std::printf(" lm_mean_over_kdl_lma_mean=%.4f lm_p99_over_kdl_lma_mean=%.4f", mean[0] / mean[2],
                quantile(st_lm.ok_us, 0.99) / mean[2]);
    std::printf("\n");

    mn_data_destroy(d);
    mn_chain_destroy(mc);
    mn_model_destroy(m);
    return kExitOk;
}
