/* The function blocks of the network, one pair of functions per type (Welman 5.3.2-5.3.4:
 * "implementing a new handle type requires only ... computing the handle function h, and
 * computing the handle's Jacobian"; a constraint likewise computes c(h) and dc/dh). To add
 * a type, write its two functions here and add a row to its table. */
#include "constrain/csys_internal.h"

#include <string.h>

/* ---- type names ------------------------------------------------------------------------ */

const char* mn_handle_type_name(mn_handle_type t) {
    switch (t) {
    case MN_HANDLE_POINT:
        return "point";
    case MN_HANDLE_ORIENT:
        return "orientation";
    case MN_HANDLE_COM:
        return "com";
    }
    return NULL;
}

static const char* const con_names[MN_CON_TYPE_COUNT] = {"pin",    "plane", "line",
                                                         "orient", "equal", "balance"};

const char* mn_constraint_type_name(mn_constraint_type t) {
    return (int)t >= 0 && t < MN_CON_TYPE_COUNT ? con_names[t] : NULL;
}

int mn_constraint_type_parse(const char* name) {
    if (!name) return -1;
    for (int i = 0; i < MN_CON_TYPE_COUNT; i++)
        if (!strcmp(name, con_names[i])) return i;
    return -1;
}

/* ---- handles: h(q) and dh/dq ----------------------------------------------------------- */

/* A point fixed in a joint frame. */
static void point_value(const mn_model* m, const mn_data* d, int joint, mn_vec3 local, mn_vec3* pos,
                        mn_mat3* rot) {
    (void)m;
    *pos = mn_point_world(d, joint, local);
    *rot = d->xf[joint].R;
}

static int point_jacobian(const mn_model* m, const mn_data* d, int joint, mn_vec3 local,
                          double* jac6) {
    mn_jacobian(m, d, joint, local, jac6);
    return 0; /* rows 0-2: the point's linear velocity */
}

/* The orientation of a joint frame (its value is the frame's rotation; pos is its origin). */
static int orient_jacobian(const mn_model* m, const mn_data* d, int joint, mn_vec3 local,
                           double* jac6) {
    (void)local;
    mn_jacobian(m, d, joint, mn_v3(0, 0, 0), jac6);
    return 3; /* rows 3-5: the frame's angular velocity */
}

static void orient_value(const mn_model* m, const mn_data* d, int joint, mn_vec3 local,
                         mn_vec3* pos, mn_mat3* rot) {
    (void)local;
    point_value(m, d, joint, mn_v3(0, 0, 0), pos, rot);
}

/* The centre of mass of a subtree (joint) or of the figure (-1): the mass-weighted mean of
 * the segments' centres (5.3.2). */
static void com_value(const mn_model* m, const mn_data* d, int joint, mn_vec3 local, mn_vec3* pos,
                      mn_mat3* rot) {
    (void)local;
    *pos = mn_com(m, d, joint, NULL);
    *rot = mn_mat3_identity();
}

static int com_jacobian(const mn_model* m, const mn_data* d, int joint, mn_vec3 local,
                        double* jac6) {
    (void)local;
    mn_com_jacobian(m, d, joint, jac6);
    return 0;
}

static const mn_handle_ops handle_table[] = {
    {point_value, point_jacobian},   /* MN_HANDLE_POINT */
    {orient_value, orient_jacobian}, /* MN_HANDLE_ORIENT */
    {com_value, com_jacobian},       /* MN_HANDLE_COM */
};

const mn_handle_ops* mn_handle_ops_of(mn_handle_type t) {
    return &handle_table[t];
}

/* ---- constraints: c(h) and dc/dh -------------------------------------------------------- */

/* Rows of dc/dh (3 numbers each) from up to three vectors. */
static void rows_of(double* G, int n, mn_vec3 a, mn_vec3 b, mn_vec3 c) {
    mn_vec3 v[3] = {a, b, c};
    for (int r = 0; r < n; r++) {
        G[3 * r] = v[r].x;
        G[3 * r + 1] = v[r].y;
        G[3 * r + 2] = v[r].z;
    }
}

static int vec_out(mn_vec3 e, double* c) {
    c[0] = e.x, c[1] = e.y, c[2] = e.z;
    return 3;
}

/* Pin: c = h - target (the thesis squares each component, 5.2.2; that has a zero Jacobian
 * where the constraint holds, so the linear form is used). */
static int pin_value(const csys_con* c, mn_vec3 h, const mn_mat3* R, mn_vec3 h2, double* out) {
    (void)R, (void)h2;
    return vec_out(mn_vec3_sub(h, c->def.target), out);
}

static void identity_jacobian(const csys_con* c, mn_vec3 h, const mn_mat3* R, const double* cv,
                              double* G) {
    (void)c, (void)h, (void)R, (void)cv;
    rows_of(G, 3, mn_v3(1, 0, 0), mn_v3(0, 1, 0), mn_v3(0, 0, 1));
}

/* Equality of two points: c = h - h2 (the second handle's Jacobian enters with -1). */
static int equal_value(const csys_con* c, mn_vec3 h, const mn_mat3* R, mn_vec3 h2, double* out) {
    (void)c, (void)R;
    return vec_out(mn_vec3_sub(h, h2), out);
}

/* Point in a plane: c = n . (h - origin). */
static int plane_value(const csys_con* c, mn_vec3 h, const mn_mat3* R, mn_vec3 h2, double* out) {
    (void)R, (void)h2;
    out[0] = mn_vec3_dot(c->n, mn_vec3_sub(h, c->def.origin));
    return 1;
}

static void plane_jacobian(const csys_con* c, mn_vec3 h, const mn_mat3* R, const double* cv,
                           double* G) {
    (void)h, (void)R, (void)cv;
    rows_of(G, 1, c->n, c->n, c->n);
}

/* Point on a line: the two components of h - origin across the line. */
static int line_value(const csys_con* c, mn_vec3 h, const mn_mat3* R, mn_vec3 h2, double* out) {
    (void)R, (void)h2;
    mn_vec3 e = mn_vec3_sub(h, c->def.origin);
    out[0] = mn_vec3_dot(c->u1, e);
    out[1] = mn_vec3_dot(c->u2, e);
    return 2;
}

static void line_jacobian(const csys_con* c, mn_vec3 h, const mn_mat3* R, const double* cv,
                          double* G) {
    (void)h, (void)R, (void)cv;
    rows_of(G, 2, c->u1, c->u2, c->u2);
}

/* Orientation: c = log(R R_t^T), a world rotation vector. With an axis (Welman 6.3: a
 * partial lock of one direction), c = (u1 . a, u2 . a) for the frame's axis a = R e_k and
 * u1, u2 across its target direction R_t e_k: zero when a lies along it. */
static int orient_con_value(const csys_con* c, mn_vec3 h, const mn_mat3* R, mn_vec3 h2,
                            double* out) {
    (void)h, (void)h2;
    if (c->def.axis) {
        mn_vec3 a = mn_mat3_col(R, c->def.axis - 1);
        out[0] = mn_vec3_dot(c->u1, a);
        out[1] = mn_vec3_dot(c->u2, a);
        return 2;
    }
    mn_mat3 Rt = mn_quat_to_mat3(c->def.target_rot);
    return vec_out(mn_rotation_error(R, &Rt), out);
}

/* d/dt log(R R_t^T) = Jl^-1(c) w for a frame turning at world angular velocity w, with Jl
 * the left Jacobian of SO(3): Jl^-1(c) = I - [c]x / 2 + (1 - t sin t / (2 (1 - cos t))) [c]x^2 /
 * t^2. */
void mn_so3_jl_inv(mn_vec3 phi, double* G) {
    double th2 = mn_vec3_dot(phi, phi), th = sqrt(th2);
    double k =
        th < 1e-4 ? 1.0 / 12.0 + th2 / 720.0 : (1.0 - th * sin(th) / (2.0 * (1.0 - cos(th)))) / th2;
    mn_mat3 S = mn_mat3_skew(phi);
    mn_mat3 S2 = mn_mat3_mul(&S, &S);
    mn_mat3 I = mn_mat3_identity();
    for (int i = 0; i < 9; i++)
        G[i] = I.m[i] - 0.5 * S.m[i] + k * S2.m[i];
}

/* With an axis: d/dt (u . a) = u . (w x a) = (a x u) . w. */
static void orient_con_jacobian(const csys_con* c, mn_vec3 h, const mn_mat3* R, const double* cv,
                                double* G) {
    (void)h;
    if (c->def.axis) {
        mn_vec3 a = mn_mat3_col(R, c->def.axis - 1);
        rows_of(G, 2, mn_vec3_cross(a, c->u1), mn_vec3_cross(a, c->u2), c->u2);
        return;
    }
    mn_so3_jl_inv(mn_v3(cv[0], cv[1], cv[2]), G);
}

/* Signed distance of x from a counter-clockwise convex polygon (negative inside) and its
 * gradient g: inside, the outward normal of the nearest edge; outside, the unit vector
 * from the nearest boundary point. */
double mn_polygon_sd(const double (*poly)[2], int n, const double x[2], double g[2]) {
    int inside = 1;
    double best_in = -1e300, best_out = 1e300;
    double gin[2] = {0, 0}, gout[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        const double* a = poly[i];
        const double* b = poly[(i + 1) % n];
        double ex = b[0] - a[0], ey = b[1] - a[1];
        double len2 = ex * ex + ey * ey;
        if (!(len2 > 0)) continue;
        double len = sqrt(len2);
        double nx = ey / len, ny = -ex / len;
        double side = nx * (x[0] - a[0]) + ny * (x[1] - a[1]);
        if (side > 0) inside = 0;
        if (side > best_in) {
            best_in = side;
            gin[0] = nx, gin[1] = ny;
        }
        double t = ((x[0] - a[0]) * ex + (x[1] - a[1]) * ey) / len2;
        t = t < 0 ? 0 : (t > 1 ? 1 : t);
        double dx = x[0] - (a[0] + t * ex), dy = x[1] - (a[1] + t * ey);
        double dd = sqrt(dx * dx + dy * dy);
        if (dd < best_out) {
            best_out = dd;
            if (dd > 0)
                gout[0] = dx / dd, gout[1] = dy / dd;
            else
                gout[0] = nx, gout[1] = ny;
        }
    }
    if (inside) {
        g[0] = gin[0], g[1] = gin[1];
        return best_in;
    }
    g[0] = gout[0], g[1] = gout[1];
    return best_out;
}

/* Balance (Welman ch. 7: a constraint on the centre of mass): the ground projection of the
 * handle stays inside the support polygon shrunk by margin. An inequality: one row
 * c = sd + margin while violated, none while it holds. */
static int balance_value(const csys_con* c, mn_vec3 h, const mn_mat3* R, mn_vec3 h2, double* out) {
    (void)R, (void)h2;
    double x[2] = {mn_vec3_dot(c->u1, h), mn_vec3_dot(c->u2, h)}, g[2];
    double sd = mn_polygon_sd((const double(*)[2])c->poly, c->def.npolygon, x, g) + c->def.margin;
    if (!(sd > 0)) return 0;
    out[0] = sd;
    return 1;
}

static void balance_jacobian(const csys_con* c, mn_vec3 h, const mn_mat3* R, const double* cv,
                             double* G) {
    (void)R, (void)cv;
    double x[2] = {mn_vec3_dot(c->u1, h), mn_vec3_dot(c->u2, h)}, g[2];
    mn_polygon_sd((const double(*)[2])c->poly, c->def.npolygon, x, g);
    mn_vec3 g3 = mn_vec3_add(mn_vec3_scale(c->u1, g[0]), mn_vec3_scale(c->u2, g[1]));
    rows_of(G, 1, g3, g3, g3);
}

static const mn_constraint_ops con_table[MN_CON_TYPE_COUNT] = {
    {pin_value, identity_jacobian},          /* MN_CON_PIN */
    {plane_value, plane_jacobian},           /* MN_CON_PLANE */
    {line_value, line_jacobian},             /* MN_CON_LINE */
    {orient_con_value, orient_con_jacobian}, /* MN_CON_ORIENT */
    {equal_value, identity_jacobian},        /* MN_CON_EQUAL */
    {balance_value, balance_jacobian},       /* MN_CON_BALANCE */
};

const mn_constraint_ops* mn_constraint_ops_of(mn_constraint_type t) {
    return &con_table[t];
}
