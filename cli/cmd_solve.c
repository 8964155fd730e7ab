/* marionette solve MODEL --base B --tip T --target x,y,z[,qw,qx,qy,qz] ...: one chain IK
 * solve, printing status, the chain's joint values, the residual, iterations and time. */
#include <marionette/ik.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"

const char mn_cmd_solve_summary[] =
    "inverse kinematics of one chain to a target position and orientation";

static void usage(FILE* f) {
    fprintf(
        f,
        "usage: marionette solve MODEL --base B --tip T --target x,y,z[,qw,qx,qy,qz]\n"
        "                        [--point x,y,z] [--seed-q v1,...] [--method M] [--mode M]\n"
        "                        [--tol 1e-5]\n"
        "                        [--timeout-ms 5] [--iters N] [--restarts N] [--seed S]\n"
        "                        [--no-limits] [--free-translations] [--world] [--json]\n"
        "                        [--prefer JOINT=VALUE[@WEIGHT]]... [--rk]\n"
        "\n"
        "Moves the joints from B (exclusive; 'world' for the figure's root) down to T so that\n"
        "the end-effector point (--point, in T's frame; default its origin) reaches the target,\n"
        "given in B's frame: a position, and with 7 numbers also the orientation of T's frame\n"
        "as a quaternion w,x,y,z. With --world the target is in world coordinates instead,\n"
        "as `marionette fk --json` prints a joint's position and orientation (B's frame is\n"
        "taken at the seed pose). MODEL is any figure file (skeleton text, BVH, URDF, glTF).\n"
        "\n"
        "  --method    lm (default) | dls | pinv | jt | ccd | fabrik | analytic | altjac\n"
        "  --rk        with --method jt: integrate the transpose's ODE by adaptive-stepsize\n"
        "              Runge-Kutta (Welman 4.1.5) instead of the line-searched step\n"
        "  --mode      speed (default: the first answer) | distance (the answer closest to the\n"
        "              seed) | manipulability: lm only; the last two search with restarts\n"
        "              until --restarts or --timeout-ms is spent (docs/ik.md)\n"
        "  --seed-q    the starting values of the chain's state, root to tip (hinge angles in\n"
        "              radians, slide lengths, balls as quaternions w,x,y,z), or a whole state\n"
        "              of the figure; default: the rest pose\n"
        "  --tol       position (model units) and rotation (radians) tolerance, > 0\n"
        "  --timeout-ms wall-clock budget; 0 for none (default 5)\n"
        "  --iters     iteration budget per attempt, as in pose and anim bake (--max-iters,\n"
        "              the old spelling, is accepted for one release)\n"
        "  --free-translations  also move the joints the figure holds: the position channels\n"
        "              of a BVH rig below its root (bone lengths), held by default\n"
        "  --prefer    a desired value (radians, or a length) for a hinge or slide of the\n"
        "              chain, with a weight (default 1 / range^2 for a limited joint, else 1),\n"
        "              pursued in the Jacobian's null space (Parent eq. 5.25-5.28): the goal\n"
        "              comes first. Repeatable; implies --method pinv unless given; the\n"
        "              other limited joints keep the mid-range bias\n"
        "\n"
        "Prints status, method, joints (the chain's moving joints), q (their values, in the\n"
        "--seed-q format), pos_err, rot_err, iterations, restarts and microseconds; --json prints "
        "one\n"
        "object with the same fields. Exit status 0 when the target is met; 1 for bad input\n"
        "or when it is not (UNREACHABLE: the closest pose found is printed; NOCONVERGE: the\n"
        "budget ran out), with a one-line message on stderr; 2 for a usage error.\n");
}

/* The --prefer values JOINT=VALUE[@WEIGHT] into the per-DOF target and weight arrays; 0
 * with err set for an unknown joint, a joint that is not a hinge or slide, or bad numbers. */
static int prefer_values(const mn_model* m, const char* file, const char* const* items, int n,
                         double* target, double* weight, mn_error* err) {
    for (int i = 0; i < n; i++) {
        char name[256];
        const char* eq = strrchr(items[i], '=');
        size_t len = eq ? (size_t)(eq - items[i]) : 0;
        if (!eq || len == 0 || len >= sizeof name) {
            mn_error_set(err, MN_ERR_ARG, file, 0, "--prefer",
                         "'%s': expected JOINT=VALUE[@WEIGHT]", items[i]);
            return 0;
        }
        memcpy(name, items[i], len);
        name[len] = 0;
        int j = mn_model_find_joint(m, name);
        if (j < 0 || (m->jnt_type[j] != MN_JOINT_HINGE && m->jnt_type[j] != MN_JOINT_SLIDE)) {
            char hint[256];
            mn_error_set(err, MN_ERR_ARG, file, 0, "--prefer", "'%s': %s%s", name,
                         j < 0 ? "no such joint" : "not a hinge or slide",
                         j < 0 ? mn_model_joint_hint(m, name, hint, sizeof hint) : "");
            return 0;
        }
        char num[64];
        snprintf(num, sizeof num, "%s", eq + 1);
        char* at = strchr(num, '@');
        if (at) *at = 0;
        double v, wv = weight[m->jnt_dofadr[j]];
        if (!mn_cli_parse_double(num, &v) ||
            (at && (!mn_cli_parse_double(at + 1, &wv) || wv < 0))) {
            mn_error_set(err, MN_ERR_ARG, file, 0, "--prefer",
                         "'%s': VALUE must be a finite number and WEIGHT one >= 0", items[i]);
            return 0;
        }
        target[m->jnt_dofadr[j]] = v;
        weight[m->jnt_dofadr[j]] = wv;
    }
    return 1;
}

/* The chain's joints from below base to tip, root to tip; returns their number. */
static int chain_joints(const mn_model* m, int base, int tip, int* out, int cap) {
    int n = 0;
    for (int j = tip; j >= 0 && j != base; j = m->jnt_parent[j])
        n++;
    if (n > cap) return -1;
    int i = n - 1;
    for (int j = tip; j >= 0 && j != base; j = m->jnt_parent[j])
        out[i--] = j;
    return n;
}

/* The joint named, or -1 for --base world; 0 after saying so when there is none. */
static int find(const mn_model* m, const char* name, const char* file, const char* field,
                int* out) {
    if (!strcmp(field, "--base") && !strcmp(name, "world")) {
        *out = -1;
        return 1;
    }
    *out = mn_cli_find_joint(m, file, field, name);
    return *out >= 0;
}

typedef struct solve_args {
    const char *file, *base, *tip, *target, *seed_q, *point;
    mn_ik_options o;
    int json, world, seed, method; /* method: -1 unless --method is given */
    double tol;                    /* NAN unless --tol is given */
    const char* prefer_v[64];
    mn_cli_list prefer;
} solve_args;

static int parse_mode(const char* v, void* dest) {
    int md = mn_ik_mode_parse(v);
    if (md >= 0) *(mn_ik_mode*)dest = (mn_ik_mode)md;
    return md >= 0;
}

static int parse_method(const char* v, void* dest) {
    *(int*)dest = mn_ik_method_parse(v);
    return *(int*)dest >= 0;
}

#define AT(f, t) MN_CLI_AT(solve_args, f, t)
static const mn_cli_opt solve_opts[] = {
    {"--json", MN_CLI_FLAG, AT(json, int), .lo = 1},
    {"--no-limits", MN_CLI_FLAG, AT(o.respect_limits, int), .lo = 0},
    {"--free-translations", MN_CLI_FLAG, AT(o.free_locked, int), .lo = 1},
    {"--world", MN_CLI_FLAG, AT(world, int), .lo = 1},
    {"--rk", MN_CLI_FLAG, AT(o.jt_rk, int), .lo = 1},
    {"--base", MN_CLI_STRING, AT(base, const char*), .bad = NULL},
    {"--tip", MN_CLI_STRING, AT(tip, const char*), .bad = NULL},
    {"--target", MN_CLI_STRING, AT(target, const char*), .bad = NULL},
    {"--seed-q", MN_CLI_STRING, AT(seed_q, const char*), .bad = NULL},
    {"--point", MN_CLI_STRING, AT(point, const char*), .bad = NULL},
    {"--mode", MN_CLI_CALL, AT(o.mode, mn_ik_mode), .bad = "--mode: unknown mode '%s'",
     .parse = parse_mode},
    {"--method", MN_CLI_CALL, AT(method, int), .bad = "--method: unknown method '%s'",
     .parse = parse_method},
    {"--prefer", MN_CLI_LIST, AT(prefer, mn_cli_list), .bad = "--prefer: at most 64 of them"},
    {"--tol", MN_CLI_DOUBLE, AT(tol, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--tol needs a number > 0"},
    {"--timeout-ms", MN_CLI_DOUBLE, AT(o.timeout_ms, double), 0, DBL_MAX,
     .bad = "--timeout-ms needs a number >= 0"},
    {"--iters", MN_CLI_INT, AT(o.max_iters, int), 1, INT_MAX,
     .bad = "--iters needs an integer >= 1", .alias = "--max-iters",
     .note = "--max-iters is now --iters (as in pose and anim bake); --max-iters is accepted "
             "until the next release"},
    {"--restarts", MN_CLI_INT, AT(o.max_restarts, int), 0, INT_MAX,
     .bad = "--restarts needs an integer >= 0"},
    {"--seed", MN_CLI_INT, AT(seed, int), 0, INT_MAX, .bad = "--seed needs an integer >= 0"},
};
#undef AT
const mn_cli_table mn_cmd_solve_options = {
    .cmd = "solve",
    MN_CLI_OPTS(solve_opts),
    .unknown = "unknown or incomplete option '%s'",
    .missing = "unknown or incomplete option '%s'",
    .max_pos = 1,
    .too_many = "one MODEL only",
};

/* The arguments into a, with the checks that need no file; 0 or the usage error's status. */
static int parse_args(int argc, char** argv, solve_args* a) {
    memset(a, 0, sizeof *a);
    a->o = mn_ik_default();
    a->o.timeout_ms = 5;
    a->method = -1;
    a->tol = NAN;
    a->seed = -1;
    a->prefer = (mn_cli_list){a->prefer_v, 0, 64};
    int rc = mn_cli_parse(&mn_cmd_solve_options, argc, argv, a, &a->file, NULL);
    if (rc) return rc;
    if (a->method >= 0) a->o.method = (mn_ik_method)a->method;
    if (!isnan(a->tol)) a->o.tol_pos = a->o.tol_rot = a->tol;
    if (a->seed >= 0) a->o.seed = (uint64_t)a->seed;
    if (!a->file) return mn_cli_usage_error("solve", "missing MODEL");
    if (a->o.jt_rk && a->o.method != MN_IK_JT)
        return mn_cli_usage_error("solve", "--rk: only with --method jt (it integrates the "
                                           "transpose's ODE)");
    if (!a->base || !a->tip || !a->target)
        return mn_cli_usage_error("solve", "--base, --tip and --target are required");
    return 0;
}

/* --target and --point into p; 0 or the usage error's status. */
static int parse_goal(const solve_args* a, mn_ik_problem* p) {
    double t[8];
    int nt = mn_cli_parse_list(a->target, t, 8);
    if (nt != 3 && nt != 7)
        return mn_cli_usage_error("solve",
                                  "--target: needs x,y,z or x,y,z,qw,qx,qy,qz (finite numbers)");
    p->target_pos = mn_v3(t[0], t[1], t[2]);
    if (nt == 7) {
        p->use_orientation = 1;
        p->target_rot = mn_q4(t[3], t[4], t[5], t[6]);
        if (!(mn_quat_norm(p->target_rot) > 1e-9))
            return mn_cli_usage_error("solve", "--target: the quaternion is zero");
    }
    if (a->point) {
        double v[4];
        if (mn_cli_parse_list(a->point, v, 4) != 3)
            return mn_cli_usage_error("solve", "--point: needs x,y,z (finite numbers)");
        p->point = mn_v3(v[0], v[1], v[2]);
    }
    return 0;
}

/* --seed-q into d->q: the chain's state (the nj joints jnt, ncq numbers) or the figure's;
 * 0 with err set when it is neither. */
static int set_seed(const mn_model* m, mn_data* d, const char* file, const char* text,
                    const int* jnt, int nj, int ncq, double* seed, mn_error* err) {
    int ns = mn_cli_parse_list(text, seed, m->nq + 1);
    if (ns == m->nq && ns != ncq) {
        memcpy(d->q, seed, sizeof(double) * (size_t)m->nq);
    } else if (ns == ncq) {
        for (int i = 0, k = 0; i < nj; i++) {
            int nq = mn_joint_type_nq((mn_joint_type)m->jnt_type[jnt[i]]);
            for (int a = 0; a < nq; a++)
                d->q[m->jnt_qadr[jnt[i]] + a] = seed[k++];
        }
    } else {
        mn_error_set(err, MN_ERR_ARG, file, 0, "--seed-q",
                     "needs %d numbers (the chain's state) or %d (the figure's), got %s", ncq,
                     m->nq, ns < 0 ? "a malformed list" : "another count");
        return 0;
    }
    if (mn_q_check(m, d->q) != MN_OK) {
        mn_error_set(err, MN_ERR_ARG, file, 0, "--seed-q", "a quaternion is zero");
        return 0;
    }
    return 1;
}

/* A world-frame target (what `marionette fk --json` prints) into B's frame, which the solve
 * does not move: B is above the chain. */
static void target_from_world(const mn_model* m, mn_data* d, mn_ik_problem* p) {
    mn_fk(m, d);
    mn_xform inv = mn_xform_inverse(&d->xf[p->base]);
    p->target_pos = mn_xform_apply(&inv, p->target_pos);
    if (p->use_orientation)
        p->target_rot =
            mn_quat_mul(mn_quat_conj(mn_quat_from_mat3(&d->xf[p->base].R)), p->target_rot);
}

/* --prefer: per-joint desired values and weights of the null-space term into ns (two arrays
 * of nv, freed by the caller); 0 with err set (message empty: out of memory) on failure. */
static int make_nullspace(const mn_model* m, const char* file, const mn_cli_list* prefer,
                          mn_ik_nullspace* ns, mn_error* err) {
    double* target = malloc(sizeof(double) * (size_t)(m->nv + 1));
    double* weight = malloc(sizeof(double) * (size_t)(m->nv + 1));
    ns->target = target;
    ns->weight = weight;
    err->message[0] = 0;
    if (!target || !weight) return 0;
    for (int k = 0; k < m->nv; k++) {
        int j = m->dof_jnt[k];
        double lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1];
        target[k] = NAN;
        weight[k] = m->jnt_limited[j] && hi > lo ? 1.0 / ((hi - lo) * (hi - lo)) : 1.0;
    }
    return prefer_values(m, file, prefer->v, prefer->n, target, weight, err);
}

/* The answer: status, method, the chain's joints and values, errors and counts, as
 * key-value lines or (json) one object. */
static void print_result(const mn_model* m, const mn_data* d, const int* jnt, int nj, mn_status s,
                         const mn_ik_options* o, const mn_ik_result* r, int json) {
    if (json) {
        printf("{\"status\":");
        mn_cli_json_string(stdout, mn_status_name(s));
        printf(",\"method\":");
        mn_cli_json_string(stdout, mn_ik_method_name(o->method));
        printf(",\"joints\":[");
        for (int i = 0, k = 0; i < nj; i++) {
            if (m->jnt_type[jnt[i]] == MN_JOINT_FIXED) continue;
            if (k++) printf(",");
            mn_cli_json_string(stdout, m->jnt_name[jnt[i]]);
        }
        printf("],\"q\":[");
    } else {
        printf("status %s\nmethod %s\njoints ", mn_status_name(s), mn_ik_method_name(o->method));
        for (int i = 0, k = 0; i < nj; i++)
            if (m->jnt_type[jnt[i]] != MN_JOINT_FIXED)
                printf("%s%s", k++ ? "," : "", mn_cli_safe(m->jnt_name[jnt[i]]));
        printf("\nq ");
    }
    for (int i = 0, k = 0; i < nj; i++) {
        int nq = mn_joint_type_nq((mn_joint_type)m->jnt_type[jnt[i]]);
        for (int a = 0; a < nq; a++, k++) {
            double v = d->q[m->jnt_qadr[jnt[i]] + a];
            if (json)
                printf("%s%s", k ? "," : "", mn_cli_json_num(v));
            else
                printf("%s%.9g", k ? "," : "", v + 0.0);
        }
    }
    if (json) {
        printf("],\"pos_err\":%s,\"rot_err\":%s,\"iterations\":%d,\"restarts\":%d,"
               "\"microseconds\":%.3f,\"message\":",
               mn_cli_json_num(r->pos_err), mn_cli_json_num(r->rot_err), r->iterations, r->restarts,
               r->time_us);
        mn_cli_json_string(stdout, r->message);
        printf("}\n");
    } else {
        printf("\npos_err %.6g\nrot_err %.6g\niterations %d\nrestarts %d\nmicroseconds %.3f\n",
               r->pos_err, r->rot_err, r->iterations, r->restarts, r->time_us);
    }
}

int mn_cmd_solve(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    solve_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    mn_ik_problem p = mn_ik_problem_default();
    rc = parse_goal(&a, &p);
    if (rc) return rc;
    const char* file = a.file;
    mn_ik_options o = a.o;

    mn_error err;
    mn_model* m = NULL;
    mn_warnings w = {0};
    if (mn_figure_read(file, &m, NULL, &w, &err) != MN_OK) return mn_cli_input_error(&err);
    mn_cli_print_warnings(&w);
    mn_data* d = NULL;
    mn_ik_nullspace ns = {NULL, NULL};
    int* jnt = malloc(sizeof(int) * (size_t)(m->njoint + 1));
    double* seed = malloc(sizeof(double) * (size_t)(m->nq + 1));
    if (!find(m, a.base, file, "--base", &p.base) || !find(m, a.tip, file, "--tip", &p.tip)) {
        rc = MN_EXIT_INPUT;
        goto done;
    }
    int nj = chain_joints(m, p.base, p.tip, jnt, m->njoint);
    if (nj <= 0 || p.base == p.tip || (p.base >= 0 && !mn_model_is_ancestor(m, p.base, p.tip))) {
        mn_error_set(&err, MN_ERR_ARG, file, 0, "--tip", "'%s' is not below '%s'", a.tip, a.base);
        rc = mn_cli_input_error(&err);
        goto done;
    }
    int ncq = 0;
    for (int i = 0; i < nj; i++)
        ncq += mn_joint_type_nq((mn_joint_type)m->jnt_type[jnt[i]]);
    d = mn_data_create(m, 0);
    if (!d) {
        fprintf(stderr, "marionette: %s: out of memory for the figure's data\n", mn_cli_safe(file));
        rc = MN_EXIT_INPUT;
        goto done;
    }
    if (a.seed_q && !set_seed(m, d, file, a.seed_q, jnt, nj, ncq, seed, &err)) {
        rc = mn_cli_input_error(&err);
        goto done;
    }
    if (a.world && p.base >= 0) target_from_world(m, d, &p);
    if (a.prefer.n) {
        if (!make_nullspace(m, file, &a.prefer, &ns, &err)) {
            rc = err.message[0] ? mn_cli_input_error(&err) : MN_EXIT_INPUT;
            goto done;
        }
        o.nullspace = 1;
        if (a.method < 0) o.method = MN_IK_PINV;
    }
    mn_ik_result r;
    mn_status s = mn_ik_solve_nullspace(m, d, &p, &o, a.prefer.n ? &ns : NULL, &r);
    if (s == MN_ERR_ARG || s == MN_ERR_NOMEM) {
        mn_error_set(&err, s, file, 0, "", "%s", r.message);
        rc = mn_cli_input_error(&err);
        goto done;
    }
    double errs[2] = {r.pos_err, r.rot_err};
    if (!mn_cli_finite(file, "--target", errs, 2) ||
        !mn_cli_finite(file, "q", d->q, (size_t)m->nq)) {
        rc = MN_EXIT_INPUT;
        goto done;
    }
    print_result(m, d, jnt, nj, s, &o, &r, a.json);
    if (s != MN_OK) {
        mn_error_set(&err, s, file, 0, "--target", "%s", r.message);
        rc = mn_cli_input_error(&err);
    }
done:
    free((double*)ns.target);
    free((double*)ns.weight);
    free(jnt);
    free(seed);
    mn_data_destroy(d);
    mn_model_destroy(m);
    return rc;
}
