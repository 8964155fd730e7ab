/* Chain IK on the robot arms of data/robots (URDF): every numeric method reaches pose
 * targets on the Franka Panda, LM reaches random pose targets from the middle of the limits
 * on all six arms of data/robots, the chain Jacobian agrees with
 * finite differences, a solve allocates nothing, and `marionette solve` prints and exits as
 * documented. */
#include <marionette/ik.h>
#include <marionette/io.h>
#include <marionette/linalg.h>
#include <marionette/model.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test.h"

typedef struct robot {
    const char* file;
    const char* base;
    const char* tip;
} robot;

static const robot robots[] = {
    {MN_DATA "/robots/franka_panda/panda.urdf", "panda_link0", "panda_link8"},
    {MN_DATA "/robots/kuka_iiwa/model.urdf", "lbr_iiwa_link_0", "lbr_iiwa_link_7"},
    {MN_DATA "/robots/ur5/ur5_robot.urdf", "base_link", "tool0"},
    {MN_DATA "/robots/xarm6/xarm6_robot.urdf", "link_base", "link6"},
    {MN_DATA "/robots/kinova_j2s6s200/j2s6s200.urdf", "j2s6s200_link_base",
     "j2s6s200_end_effector"},
    {MN_DATA "/robots/xarm7/xarm7.urdf", "link_base", "link7"},
};

static uint64_t rng_state = 2024;
static double urand(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static mn_model* load(const robot* rb, int* base, int* tip) {
    mn_model* m = NULL;
    mn_error err;
    if (mn_urdf_read(rb->file, &m, NULL, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        return NULL;
    }
    *base = mn_model_find_joint(m, rb->base);
    *tip = mn_model_find_joint(m, rb->tip);
    CHECK(*base >= 0 && *tip >= 0);
    return m;
}

static double lo_of(const mn_model* m, int j) {
    return m->jnt_limited[j] ? m->jnt_range[2 * j] : -MN_PI;
}
static double hi_of(const mn_model* m, int j) {
    return m->jnt_limited[j] ? m->jnt_range[2 * j + 1] : MN_PI;
}

/* Random joint values within limits on the chain (others at rest); returns the tip pose in
 * the base frame. */
static mn_xform random_pose(const mn_model* m, mn_data* d, int base, int tip) {
    mn_data_reset(m, d);
    for (int j = tip; j != base; j = m->jnt_parent[j])
        if (m->jnt_type[j] == MN_JOINT_HINGE)
            d->q[m->jnt_qadr[j]] = lo_of(m, j) + (hi_of(m, j) - lo_of(m, j)) * urand();
    mn_fk(m, d);
    mn_xform Bi = mn_xform_inverse(&d->xf[base]);
    return mn_xform_mul(&Bi, &d->xf[tip]);
}

static void seed_middle(const mn_model* m, mn_data* d, int base, int tip) {
    mn_data_reset(m, d);
    for (int j = tip; j != base; j = m->jnt_parent[j])
        if (m->jnt_type[j] == MN_JOINT_HINGE)
            d->q[m->jnt_qadr[j]] = 0.5 * (lo_of(m, j) + hi_of(m, j));
}

static int pose_met(const mn_model* m, const mn_data* d, int base, int tip, const mn_xform* T,
                    double tol) {
    mn_xform Bi = mn_xform_inverse(&d->xf[base]);
    mn_xform G = mn_xform_mul(&Bi, &d->xf[tip]);
    mn_vec3 w = mn_rotation_error(&T->R, &G.R);
    return mn_vec3_dist(G.p, T->p) <= tol && mn_vec3_norm(w) <= tol &&
           mn_q_within_limits(m, d->q, 0);
}

/* LM from the middle of the limits, the TRAC-IK protocol's seed, on every arm. */
static void test_lm_all_robots(void) {
    for (size_t k = 0; k < sizeof robots / sizeof robots[0]; k++) {
        int base, tip;
        mn_model* m = load(&robots[k], &base, &tip);
        CHECK(m != NULL);
        if (!m) continue;
        mn_data* d = mn_data_create(m, 0);
        int solved = 0;
        const int n = 40;
        for (int t = 0; t < n; t++) {
            mn_xform T = random_pose(m, d, base, tip);
            seed_middle(m, d, base, tip);
            mn_ik_problem p = mn_ik_problem_default();
            p.base = base;
            p.tip = tip;
            p.use_orientation = 1;
            p.target_pos = T.p;
            p.target_rot = mn_quat_from_mat3(&T.R);
            mn_ik_options o = mn_ik_default();
            o.max_restarts = 1000;
            mn_ik_result r;
            mn_status s = mn_ik_solve(m, d, &p, &o, &r);
            if (s == MN_OK && pose_met(m, d, base, tip, &T, 1.01e-5))
                solved++;
            else
                fprintf(stderr, "%s target %d: %s\n", robots[k].tip, t, r.message);
        }
        CHECK(solved == n);
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
}

/* Yoshikawa's manipulability sqrt(det(J J^T)) of the chain's 6-row Jacobian at d->q, as
 * the product of its singular values (an SVD here, the solver uses a Cholesky). */
static double manipulability(const mn_model* m, const mn_chain* c, const mn_data* d) {
    double qc[16], J[6 * 16], s[6], work[4096];
    CHECK(c->ndof <= 16 && mn_svd_work_size(6, c->ndof) <= 4096);
    mn_chain_gather(c, d->q, qc);
    mn_xform X;
    mn_chain_fk_jacobian(m, c, qc, mn_v3(0, 0, 0), &X, J);
    CHECK(mn_svd(J, 6, c->ndof, s, NULL, NULL, work) == MN_OK);
    double p = 1;
    for (int i = 0; i < 6; i++)
        p *= s[i];
    return p;
}

/* The modes (TRAC-IK's Speed, Distance, Manip1) on every arm, from random seeds: DISTANCE
 * returns an answer no farther from the seed than SPEED's (and closer on some targets),
 * MANIPULABILITY one with no lower manipulability (and higher on some), every answer within
 * tolerance and limits. */
static void test_modes(void) {
    for (size_t k = 0; k < sizeof robots / sizeof robots[0]; k++) {
        int base, tip;
        mn_model* m = load(&robots[k], &base, &tip);
        CHECK(m != NULL);
        if (!m) continue;
        mn_error err;
        mn_chain* c = mn_chain_create(m, base, tip, &err);
        CHECK(c != NULL);
        mn_data* d = mn_data_create(m, 0);
        double* seed = malloc(sizeof(double) * (size_t)m->nq);
        int closer = 0, higher = 0, speed_closed = 1;
        const int n = 12;
        for (int t = 0; t < n; t++) {
            random_pose(m, d, base, tip);
            memcpy(seed, d->q, sizeof(double) * (size_t)m->nq);
            mn_xform T = random_pose(m, d, base, tip);
            mn_ik_problem p = mn_ik_problem_default();
            p.base = base;
            p.tip = tip;
            p.use_orientation = 1;
            p.target_pos = T.p;
            p.target_rot = mn_quat_from_mat3(&T.R);
            double dist[3], manip[3];
            for (int mode = MN_IK_SPEED; mode <= MN_IK_MANIPULABILITY; mode++) {
                memcpy(d->q, seed, sizeof(double) * (size_t)m->nq);
                mn_ik_options o = mn_ik_default();
                o.mode = (mn_ik_mode)mode;
                o.max_restarts = 40;
                mn_ik_result r;
                CHECK(mn_ik_solve(m, d, &p, &o, &r) == MN_OK);
                CHECK(pose_met(m, d, base, tip, &T, 1.01e-5));
                if (mode == MN_IK_SPEED && r.iterations > 0) speed_closed = 0;
                dist[mode] = 0;
                for (int i = 0; i < c->ndof; i++) {
                    double dq = d->q[c->qadr[i]] - seed[c->qadr[i]];
                    dist[mode] += dq * dq;
                }
                manip[mode] = manipulability(m, c, d);
            }
            CHECK(dist[MN_IK_DISTANCE] <= dist[MN_IK_SPEED] + 1e-12);
            CHECK(manip[MN_IK_MANIPULABILITY] >= manip[MN_IK_SPEED] * (1 - 1e-9));
            closer += dist[MN_IK_DISTANCE] < 0.99 * dist[MN_IK_SPEED];
            higher += manip[MN_IK_MANIPULABILITY] > 1.01 * manip[MN_IK_SPEED];
        }
        /* A 6-DOF arm whose SPEED answers all came from its closed form (src/ik/closed_form.h,
         * the UR5) already gets the nearest of its finitely many answers: DISTANCE is then
         * never clearly closer. Otherwise (the iiwa's closed form fixes its third joint at the
         * seed's value: DISTANCE may move it) it is on some targets. */
        if (speed_closed && c->ndof == 6)
            CHECK(closer == 0);
        else
            CHECK(closer > 0);
        CHECK(higher > 0);
        free(seed);
        mn_data_destroy(d);
        mn_chain_destroy(c);
        mn_model_destroy(m);
    }
}

/* A mode other than SPEED needs LM; a mode out of range is refused. */
static void test_mode_args(void) {
    int base, tip;
    mn_model* m = load(&robots[0], &base, &tip);
    CHECK(m != NULL);
    if (!m) return;
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = base;
    p.tip = tip;
    p.target_pos = mn_v3(0.4, 0.1, 0.5);
    mn_ik_options o = mn_ik_default();
    o.method = MN_IK_DLS;
    o.mode = MN_IK_DISTANCE;
    mn_ik_result r;
    CHECK(mn_ik_solve(m, d, &p, &o, &r) == MN_ERR_ARG);
    CHECK(strstr(r.message, "mode") != NULL);
    o = mn_ik_default();
    o.mode = (mn_ik_mode)7;
    CHECK(mn_ik_solve(m, d, &p, &o, &r) == MN_ERR_ARG);
    CHECK(strstr(r.message, "mode") != NULL);
    CHECK(mn_ik_mode_parse("distance") == MN_IK_DISTANCE);
    CHECK(mn_ik_mode_parse("manipulability") == MN_IK_MANIPULABILITY);
    CHECK(mn_ik_mode_parse("fast") == -1);
    CHECK(!strcmp(mn_ik_mode_name(MN_IK_SPEED), "speed"));
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Every numeric method from a nearby seed (tracking), on the panda. */
static void test_panda_methods(void) {
    int base, tip;
    mn_model* m = load(&robots[0], &base, &tip);
    CHECK(m != NULL);
    if (!m) return;
    mn_data* d = mn_data_create(m, 0);
    double* seed = malloc(sizeof(double) * (size_t)m->nq);
    for (int t = 0; t < 10; t++) {
        mn_xform T = random_pose(m, d, base, tip);
        for (int j = tip; j != base; j = m->jnt_parent[j])
            if (m->jnt_type[j] == MN_JOINT_HINGE) d->q[m->jnt_qadr[j]] += 0.05 * (2 * urand() - 1);
        mn_clamp_to_limits(m, d->q);
        memcpy(seed, d->q, sizeof(double) * (size_t)m->nq);
        static const mn_ik_method meths[] = {MN_IK_LM, MN_IK_DLS, MN_IK_PINV, MN_IK_JT,
                                             MN_IK_ALTJAC};
        for (int km = 0; km < 5; km++) {
            mn_ik_method meth = meths[km];
            memcpy(d->q, seed, sizeof(double) * (size_t)m->nq);
            mn_ik_problem p = mn_ik_problem_default();
            p.base = base;
            p.tip = tip;
            p.use_orientation = meth != MN_IK_JT; /* JT: the position (linear convergence) */
            p.target_pos = T.p;
            p.target_rot = mn_quat_from_mat3(&T.R);
            mn_ik_options o = mn_ik_default();
            o.method = meth;
            o.max_restarts = 0;
            o.max_iters = meth == MN_IK_JT ? 200000 : 500;
            mn_ik_result r;
            mn_status s = mn_ik_solve(m, d, &p, &o, &r);
            if (s != MN_OK)
                fprintf(stderr, "panda %s target %d: %s\n", mn_ik_method_name(o.method), t,
                        r.message);
            CHECK(s == MN_OK);
            if (p.use_orientation)
                CHECK(pose_met(m, d, base, tip, &T, 1.01e-5));
            else
                CHECK(mn_vec3_dist(mn_xform_apply(&d->xf[base], T.p), d->xf[tip].p) <= 1.01e-5);
        }
    }
    free(seed);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* model.h's chain Jacobian against central differences of mn_fk on the panda. */
static void test_panda_jacobian(void) {
    int base, tip;
    mn_model* m = load(&robots[0], &base, &tip);
    if (!m) return;
    mn_data* d = mn_data_create(m, 0);
    int nd = mn_chain_dofs(m, base, tip, NULL, 0);
    CHECK(nd == 7);
    int dofs[16];
    mn_chain_dofs(m, base, tip, dofs, 16);
    double Jm[6 * 16];
    mn_vec3 point = mn_v3(0.01, 0.02, 0.1);
    for (int trial = 0; trial < 5; trial++) {
        random_pose(m, d, base, tip);
        mn_jacobian_chain(m, d, base, tip, point, Jm);
        const double h = 1e-6;
        for (int k = 0; k < nd; k++) {
            int qa = m->jnt_qadr[m->dof_jnt[dofs[k]]];
            double q0 = d->q[qa];
            d->q[qa] = q0 + h;
            mn_fk(m, d);
            mn_vec3 pp = mn_point_world(d, tip, point);
            mn_mat3 Rp = d->xf[tip].R;
            d->q[qa] = q0 - h;
            mn_fk(m, d);
            mn_vec3 pm = mn_point_world(d, tip, point);
            mn_mat3 Rm = d->xf[tip].R;
            d->q[qa] = q0;
            mn_vec3 v = mn_vec3_scale(mn_vec3_sub(pp, pm), 0.5 / h);
            mn_vec3 w = mn_vec3_scale(mn_rotation_error(&Rp, &Rm), 0.5 / h);
            double fd[6] = {v.x, v.y, v.z, w.x, w.y, w.z};
            for (int r = 0; r < 6; r++)
                CHECK_NEAR(Jm[r * nd + k], fd[r], 1e-6);
        }
        mn_fk(m, d);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_no_allocation(void) {
    int base, tip;
    mn_model* m = load(&robots[0], &base, &tip);
    if (!m) return;
    mn_data* d = mn_data_create(m, 0);
    for (int t = 0; t < 20; t++) {
        mn_xform T = random_pose(m, d, base, tip);
        seed_middle(m, d, base, tip);
        mn_ik_problem p = mn_ik_problem_default();
        p.base = base;
        p.tip = tip;
        p.use_orientation = 1;
        p.target_pos = T.p;
        p.target_rot = mn_quat_from_mat3(&T.R);
        mn_ik_options o = mn_ik_default();
        o.timeout_ms = 50;
        mn_ik_result r;
        long before = mn_alloc_count();
        mn_ik_solve(m, d, &p, &o, &r);
        CHECK(mn_alloc_count() == before);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Runs the command line and captures stdout; returns the exit status. */
static int run_cli(const char* args, char* out, size_t cap) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", MN_CLI, args);
    FILE* f = popen(cmd, "r");
    if (!f) return -1;
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = 0;
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli_solve(void) {
    static char out[8192];
    char args[1024];
    const char* panda = MN_DATA "/robots/franka_panda/panda.urdf";
    snprintf(args, sizeof args,
             "solve %s --base panda_link0 --tip panda_link8 --target 0.4,0.1,0.5,0,1,0,0 "
             "--timeout-ms 0 --json",
             panda);
    CHECK(run_cli(args, out, sizeof out) == 0);
    CHECK(strstr(out, "\"status\":\"OK\"") != NULL);
    CHECK(strstr(out, "\"q\":[") != NULL);
    CHECK(strstr(out, "panda_link7") != NULL);
    snprintf(args, sizeof args,
             "solve %s --base panda_link0 --tip panda_link8 --target 0.3,0.2,0.6 --method dls "
             "--timeout-ms 0 "
             "--seed-q 0,-0.785,0,-2.356,0,1.571,0.785",
             panda); /* Franka's "ready" pose */
    CHECK(run_cli(args, out, sizeof out) == 0);
    CHECK(strncmp(out, "status OK\nmethod dls\n", 21) == 0);
    /* the alternative Jacobian by name, and JT integrated by Runge-Kutta (--rk goes with jt
     * only: a usage error with another method) */
    snprintf(args, sizeof args,
             "solve %s --base panda_link0 --tip panda_link8 --target 0.3,0.2,0.6 --method altjac "
             "--timeout-ms 0 --seed-q 0,-0.785,0,-2.356,0,1.571,0.785",
             panda);
    CHECK(run_cli(args, out, sizeof out) == 0);
    CHECK(strncmp(out, "status OK\nmethod altjac\n", 24) == 0);
    snprintf(args, sizeof args,
             "solve %s --base panda_link0 --tip panda_link8 --target 0.3,0.2,0.6 --method jt --rk "
             "--iters 100000 --timeout-ms 0 --seed-q 0,-0.785,0,-2.356,0,1.571,0.785",
             panda);
    CHECK(run_cli(args, out, sizeof out) == 0);
    CHECK(strncmp(out, "status OK\nmethod jt\n", 20) == 0);
    snprintf(args, sizeof args,
             "solve %s --base panda_link0 --tip panda_link8 --target 0.3,0.2,0.6 --rk", panda);
    CHECK(run_cli(args, out, sizeof out) == 2);
    /* Unreachable: the closest pose is printed, exit 1. */
    snprintf(
        args, sizeof args,
        "solve %s --base panda_link0 --tip panda_link8 --target 3,0,0 --timeout-ms 0 --restarts 20",
        panda);
    CHECK(run_cli(args, out, sizeof out) == 1);
    CHECK(strstr(out, "status UNREACHABLE") != NULL);
    /* Bad input (exit 1) and usage: a malformed --target is a usage error (exit 2), like
     * every other malformed option. */
    const char* bad[] = {"--target 0,0,nan", "--target 1,2", "--target 0,0,0,0,0,0,0",
                         "--tip nope --target 0,0,0", "--target 0.3,0,0.5 --seed-q 1,2"};
    const int code[] = {2, 2, 2, 1, 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (!strncmp(bad[i], "--tip", 5))
            snprintf(args, sizeof args, "solve %s --base panda_link0 %s", panda, bad[i]);
        else
            snprintf(args, sizeof args, "solve %s --base panda_link0 --tip panda_link8 %s", panda,
                     bad[i]);
        CHECK(run_cli(args, out, sizeof out) == code[i]);
    }
    snprintf(args, sizeof args, "solve %s --base panda_link8 --tip panda_link0 --target 0,0,0",
             panda);
    CHECK(run_cli(args, out, sizeof out) == 1);
    CHECK(run_cli("solve", out, sizeof out) == 2);
    snprintf(args, sizeof args,
             "solve %s --base panda_link0 --tip panda_link8 --target 0,0,1 --method nope", panda);
    CHECK(run_cli(args, out, sizeof out) == 2);
    CHECK(run_cli("solve --help", out, sizeof out) == 0);
    CHECK(strstr(out, "usage: marionette solve") != NULL);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_panda_jacobian);
    RUN(test_lm_all_robots);
    RUN(test_panda_methods);
    RUN(test_modes);
    RUN(test_mode_args);
    RUN(test_no_allocation);
    RUN(test_cli_solve);
    return mn_test_report();
}
