/* Private to the constrain layer: the layout of a constraint system and the functions the
 * solvers share (network evaluation in network.c, the multiplier system in multipliers.c). */
#ifndef MN_CSYS_INTERNAL_H
#define MN_CSYS_INTERNAL_H

#include <marionette/constrain.h>

#define MN_CSYS_MAX_FIGURES 8

typedef struct csys_figure {
    const mn_model* m;
    mn_data* d;
    int dof0;     /* first global DOF */
    int jnt0;     /* first joint in arrays over all figures' joints */
    int fk_valid; /* d->xf matches d->q */
} csys_figure;

enum { DRAG_NONE = 0, DRAG_TARGET, DRAG_FORCE };

/* A handle block (Welman 5.3.2): value h(q) and Jacobian dh/dq over the DOFs it depends on. */
typedef struct csys_handle {
    mn_handle_type type;
    int fig, joint;
    mn_vec3 point;
    char name[64];
    double mass; /* COM: mass of the subtree */
    int ndof;
    int* dofs;   /* ndof global DOF indices, ascending */
    double* jac; /* 3 x ndof: linear (POINT, COM) or angular (ORIENT) velocity rows */
    mn_vec3 pos;
    mn_mat3 rot;
    int valid;        /* cache holds h(q) and dh/dq for the current q */
    int drag;         /* DRAG_NONE, DRAG_TARGET, DRAG_FORCE */
    mn_vec3 drag_vec; /* target or force */
    mn_mat3 drag_R;   /* target orientation (ORIENT handles) */
    double* djac;     /* 3 x ndof: the drag rows of an orientation drag */
    double drag_weight;
    int drag_priority;
} csys_handle;

/* A constraint block (Welman 5.3.3): c(h) and dc/dq = dc/dh dh/dq over the union of its
 * handles' DOFs. */
typedef struct csys_con {
    mn_constraint_def def;
    char name[64];
    mn_vec3 n;                      /* PLANE unit normal; LINE unit direction; BALANCE unit up */
    mn_vec3 u1, u2;                 /* LINE: unit vectors across the line; BALANCE: ground basis */
    double poly[MN_MAX_POLYGON][2]; /* BALANCE: polygon in (u1, u2), counter-clockwise */
    int ncols;
    int* cols; /* ncols global DOF indices, ascending */
    double* J; /* nrows x ncols */
    double c[3];
    int nrows; /* 0 when disabled or an inactive inequality */
    int valid;
    double residual;
    int is_rot; /* residual is an angle */
    int unmet;
} csys_con;

/* One block of rows in the solve: a constraint or a drag. */
typedef struct csys_block {
    int nrows, ncols;
    const int* cols;
    const double* J; /* nrows x ncols */
    double rhs[3];   /* what J q' should be */
    double damping;  /* added to the diagonal of J K J^T (squared damping) */
    double scale;    /* row weight (sqrt of the goal weight) */
    int priority;
    int row0;
} csys_block;

struct mn_csys {
    int nfig;
    csys_figure fig[MN_CSYS_MAX_FIGURES];
    int nv, nq;
    int max_h, max_c, max_rows;
    int nh, nc;
    csys_handle* h;
    csys_con* c;
    int nrows;
    long evals;
    double world_scale; /* size of the figures, for CCD's scale-invariant weights */
    /* workspace, sized at creation */
    csys_block* blk; /* max_c + max_h */
    int nblk;
    double* K0;     /* nv: 1 / stiffness (Welman 4.1.4) */
    double* K;      /* nv: K0, with DOFs held at a joint limit set to 0 during a solve */
    double* A;      /* max_rows^2: J K J^T of the ordered rows */
    double* F;      /* max_rows^2: factor */
    double* b;      /* max_rows */
    double* lam;    /* max_rows */
    double* damp;   /* max_rows: diagonal added to A */
    int drags_on;   /* drags take part in the current step */
    int hold;       /* the current solve holds the models' held DOFs (not free_locked) */
    int step_index; /* steps taken in the current solve (forces act on the first) */
    double* dense;  /* nv scatter */
    double* v;      /* nv step */
    double* dv;     /* nv */
    double* svd_work;
    double* jac6;  /* 6 x (largest figure nv) */
    double* qsave; /* nq: state at the start of a solve */
    double* qstep; /* nq: state before the last step with drags (its rejection) */
    double* kstep; /* nv: K before that step (a limit it reached is held in K) */
    int* mark;     /* largest njoint */
    int* uf;       /* max_h: union-find over equalities */
    double* rest;  /* nq: the rest state comfort pulls toward (mn_csys_set_rest) */
    double* cw;    /* nv: comfort's weight of each DOF (mn_csys_set_comfort_weight) */
    double* cv;    /* nv: comfort's part of a step */
    mn_comfort comfort;
    int comfort_on;
    int drag_behind; /* the last solve left a drag short of its target (comfort waits) */
    /* CCD goal scratch */
    void* ccd;
};

/* The two functions of a handle type (blocks.c): the value, and the Jacobian written into
 * a 6 x nv buffer, returning the first of its three rows that belong to the handle. */
typedef struct mn_handle_ops {
    void (*value)(const mn_model* m, const mn_data* d, int joint, mn_vec3 local, mn_vec3* pos,
                  mn_mat3* rot);
    int (*jacobian)(const mn_model* m, const mn_data* d, int joint, mn_vec3 local, double* jac6);
} mn_handle_ops;

/* The two functions of a constraint type (blocks.c): c(h) into out, returning the number
 * of rows (0 for an inequality that holds), and dc/dh as rows x 3 into G. h2 is the second
 * handle's value (equalities). */
typedef struct mn_constraint_ops {
    int (*value)(const csys_con* c, mn_vec3 h, const mn_mat3* R, mn_vec3 h2, double* out);
    void (*jacobian)(const csys_con* c, mn_vec3 h, const mn_mat3* R, const double* cval, double* G);
} mn_constraint_ops;

const mn_handle_ops* mn_handle_ops_of(mn_handle_type t);
/* Inverse left Jacobian of SO(3) at the rotation vector phi, row-major 3 x 3 (blocks.c). */
void mn_so3_jl_inv(mn_vec3 phi, double* G);
/* How far a target drag is from its target: a distance, or an angle for an orientation. */
double mn_csys_drag_dist(const csys_handle* h);
const mn_constraint_ops* mn_constraint_ops_of(mn_constraint_type t);

/* Network (network.c). */
void mn_csys_ensure_fk(mn_csys* s, int f);
void mn_csys_eval_handle(mn_csys* s, int h);
void mn_csys_eval_con(mn_csys* s, int c);
/* Evaluates all constraints and refreshes residuals; returns rows. */
int mn_csys_eval_all(mn_csys* s);
/* Drops the cached blocks that depend on a DOF with v[dof] != 0 (v global; NULL: all). */
void mn_csys_invalidate_moved(mn_csys* s, const double* v);
/* Applies the global step v to every figure (on the manifold), projects on limits when
 * asked, and invalidates what moved. Returns 0 (and changes nothing) if v is not finite. */
int mn_csys_apply_step(mn_csys* s, double* v, double max_step, int limits);
/* Is joint j of m a hinge, slide or ball the model holds, or a free joint whose rotation
 * it holds? (A free joint's held position is never projected anyway.) */
static inline int mn_csys_joint_held(const mn_model* m, int j) {
    int t = m->jnt_type[j];
    if (!m->jnt_locked[j] || t == MN_JOINT_FIXED) return 0;
    return m->dof_locked[m->jnt_dofadr[j] + (t == MN_JOINT_FREE ? 3 : 0)];
}
/* Projects figure f's state onto its joint limits, leaving the joints the solve holds as
 * they are (mn_clamp_to_limits otherwise). */
void mn_csys_clamp_figure(mn_csys* s, int f);
/* Saves / restores every figure's state (qsave). */
void mn_csys_save(mn_csys* s);
void mn_csys_restore(mn_csys* s);

/* Multipliers (multipliers.c). Builds s->blk from constraints (and drags) and the matrix
 * A = J K J^T of the rows in block order. */
void mn_csys_build_blocks(mn_csys* s, int with_drags, int by_priority, double beta, double damping);
void mn_csys_form_A(mn_csys* s);
/* Solves (A[0..n) + diag(damp)) lambda = rhs for the first n rows and adds
 * K J^T lambda (rows 0..n) to v. Returns 1 when truncated SVD was used. */
int mn_csys_solve_rows(mn_csys* s, int n, const double* damp, const double* rhs, double rcond,
                       double* v);
/* y = J x over the first n rows (x global nv). */
void mn_csys_rows_mul(const mn_csys* s, int n, const double* x, double* y);

/* Adds comfort's motion (mn_csys_set_comfort) to the global step v, each DOF's at most a
 * fifth of max_step (lagrange.c). */
void mn_csys_comfort_velocity(mn_csys* s, double* v, double max_step);

/* Solvers. */
mn_status mn_csys_solve_lagrange(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r);
mn_status mn_csys_solve_dls(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r);
mn_status mn_csys_solve_ccd(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r);
size_t mn_csys_ccd_bytes(int max_goals, int njoint, int nq);
/* Signed distance of x from a counter-clockwise convex polygon (negative inside) and its
 * gradient g (blocks.c). */
double mn_polygon_sd(const double (*poly)[2], int n, const double x[2], double g[2]);

/* Residual summary after evaluation: fills max_violation, max_rot_violation,
 * max_drag_error in r; returns 1 when all constraints are within tolerance. */
int mn_csys_summarise(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r);
/* Marks unmet constraints and writes the message naming them. */
void mn_csys_report_unmet(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r,
                          const char* why);

#endif
