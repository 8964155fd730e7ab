"""The C declarations the package uses (cffi, ABI mode) and how it finds libmarionette.so.0.

The declarations are copied from include/marionette/*.h: the structs that cross the
boundary are laid out by cffi from them, exactly as the C compiler lays them out (the tests
compare every size and offset with the compiler's). Nothing is compiled at install time.

The library is looked for, in order:
  1. the file named by the environment variable MARIONETTE_LIBRARY;
  2. the installed library, by its soname libmarionette.so.0 (the dynamic loader's search:
     LD_LIBRARY_PATH, then the ld.so cache, so `make install` under /usr/local and
     `ldconfig` is enough), or the name ctypes.util.find_library("marionette") gives;
  3. a build tree of the source checkout the package sits in (build/lib next to python/).
"""
import ctypes.util
import os

from cffi import FFI

SONAME = "libmarionette.so.0"

CDEF = r"""
typedef enum mn_status {
    MN_OK = 0, MN_ERR_ARG, MN_ERR_IO, MN_ERR_PARSE, MN_ERR_NOMEM, MN_ERR_NOTFOUND,
    MN_ERR_SINGULAR, MN_ERR_UNREACHABLE, MN_ERR_NOCONVERGE, MN_ERR_UNSUPPORTED
} mn_status;
const char* mn_status_name(mn_status s);
typedef struct mn_error {
    mn_status status;
    char file[256];
    int line;
    char field[64];
    char message[512];
} mn_error;
typedef struct mn_arena {
    unsigned char* base;
    size_t size, used, peak;
} mn_arena;

typedef struct mn_vec3 { double x, y, z; } mn_vec3;
typedef struct mn_quat { double w, x, y, z; } mn_quat;
typedef struct mn_mat3 { double m[9]; } mn_mat3;
typedef struct mn_xform { mn_mat3 R; mn_vec3 p; } mn_xform;
typedef enum mn_euler_order {
    MN_EULER_XYZ = 0, MN_EULER_XZY, MN_EULER_YXZ, MN_EULER_YZX, MN_EULER_ZXY, MN_EULER_ZYX
} mn_euler_order;
mn_quat mn_quat_from_mat3(const mn_mat3* R);

/* model */
typedef enum mn_joint_type {
    MN_JOINT_FIXED = 0, MN_JOINT_HINGE, MN_JOINT_SLIDE, MN_JOINT_BALL, MN_JOINT_FREE
} mn_joint_type;
const char* mn_joint_type_name(mn_joint_type t);
typedef struct mn_joint_def {
    const char* name;
    int parent;
    mn_joint_type type;
    mn_vec3 offset;
    mn_quat orient;
    mn_vec3 axis;
    int limited;
    double range[2];
    double swing;
    double twist[2];
    double mass;
    mn_vec3 com;
    double stiffness;
    double q0[7];
    mn_euler_order rot_order;
    const char* object;
    int locked;
} mn_joint_def;
mn_joint_def mn_joint_default(void);
typedef struct mn_spec mn_spec;
mn_spec* mn_spec_create(const char* name);
void mn_spec_destroy(mn_spec* s);
int mn_spec_add_joint(mn_spec* s, const mn_joint_def* def, mn_error* err);
typedef struct mn_model {
    char* name;
    int njoint;
    int nq;
    int nv;
    int nroot;
    const char** jnt_name;
    const char** jnt_object;
    int* jnt_parent;
    int* jnt_type;
    int* jnt_qadr;
    int* jnt_dofadr;
    int* jnt_depth;
    int* jnt_nchild;
    mn_vec3* jnt_offset;
    mn_quat* jnt_orient;
    mn_mat3* jnt_orient_mat;
    uint8_t* jnt_orient_ident;
    int8_t* jnt_orient_perm;
    mn_vec3* jnt_axis;
    int8_t* jnt_axis_kind;
    uint8_t* jnt_limited;
    double* jnt_range;
    double* jnt_swing;
    double* jnt_twist;
    double* jnt_mass;
    mn_vec3* jnt_com;
    double* jnt_stiffness;
    int* jnt_rot_order;
    int* jnt_subtree_end;
    uint8_t* jnt_locked;
    int* dof_jnt;
    double* dof_stiffness;
    uint8_t* dof_locked;
    int nlocked;
    double* q0;
    double total_mass;
    size_t nbytes;
    void* block;
    void* jnt_ops;
    const char** jnt_alias;
} mn_model;
mn_model* mn_model_compile(const mn_spec* s, mn_error* err);
void mn_model_destroy(mn_model* m);
int mn_model_find_joint(const mn_model* m, const char* name);
typedef struct mn_data {
    int njoint, nq, nv;
    double* q;
    mn_xform* xf;
    mn_arena arena;
    size_t nbytes;
    void* block;
} mn_data;
mn_data* mn_data_create(const mn_model* m, size_t arena_bytes);
void mn_data_destroy(mn_data* d);
void mn_data_reset(const mn_model* m, mn_data* d);
void mn_data_copy(const mn_model* m, mn_data* dst, const mn_data* src);
void mn_fk(const mn_model* m, mn_data* d);
mn_vec3 mn_point_world(const mn_data* d, int joint, mn_vec3 local);
void mn_jacobian(const mn_model* m, const mn_data* d, int joint, mn_vec3 local, double* jac);
int mn_chain_dofs(const mn_model* m, int base, int tip, int* dofs, int cap);
void mn_jacobian_chain(const mn_model* m, const mn_data* d, int base, int tip, mn_vec3 local,
                       double* jac);
mn_vec3 mn_com(const mn_model* m, const mn_data* d, int root, double* mass);
void mn_com_jacobian(const mn_model* m, const mn_data* d, int root, double* jac);
void mn_integrate(const mn_model* m, double* q, const double* v, double scale);
void mn_q_difference(const mn_model* m, const double* q1, const double* q0, double* v);
void mn_clamp_to_limits(const mn_model* m, double* q);
int mn_q_within_limits(const mn_model* m, const double* q, double tol);
mn_status mn_q_check(const mn_model* m, const double* q);

/* ik */
typedef enum mn_ik_method {
    MN_IK_LM = 0, MN_IK_DLS, MN_IK_PINV, MN_IK_JT, MN_IK_CCD, MN_IK_FABRIK, MN_IK_ANALYTIC,
    MN_IK_METHOD_COUNT
} mn_ik_method;
const char* mn_ik_method_name(mn_ik_method m);
int mn_ik_method_parse(const char* name);
typedef struct mn_ik_problem {
    int base;
    int tip;
    mn_vec3 point;
    int use_position;
    int use_orientation;
    mn_vec3 target_pos;
    mn_quat target_rot;
    double w_pos, w_rot;
    mn_vec3 pole;
} mn_ik_problem;
mn_ik_problem mn_ik_problem_default(void);
typedef enum mn_ik_mode {
    MN_IK_SPEED = 0, MN_IK_DISTANCE, MN_IK_MANIPULABILITY, MN_IK_MODE_COUNT
} mn_ik_mode;
const char* mn_ik_mode_name(mn_ik_mode mode);
int mn_ik_mode_parse(const char* name);
typedef struct mn_ik_options {
    mn_ik_method method;
    double tol_pos;
    double tol_rot;
    int max_iters;
    double timeout_ms;
    uint64_t seed;
    int max_restarts;
    int respect_limits;
    double max_step;
    double damping;
    int nullspace;
    double nullspace_gain;
    int timeout_cpu;
    int free_locked;
    mn_ik_mode mode;
    int jt_rk;
} mn_ik_options;
mn_ik_options mn_ik_default(void);
typedef struct mn_ik_result {
    mn_status status;
    int iterations;
    int restarts;
    double pos_err;
    double rot_err;
    double time_us;
    char message[160];
} mn_ik_result;
mn_status mn_ik_solve(const mn_model* m, mn_data* d, const mn_ik_problem* p, const mn_ik_options* o,
                      mn_ik_result* r);
typedef struct mn_ik_batch_result {
    mn_status status;
    int iterations;
    int solved;
    int first_unmet;
    double max_pos_err;
    double max_rot_err;
    double time_us;
    char message[160];
} mn_ik_batch_result;
mn_status mn_ik_solve_batch(const mn_model* m, mn_data* d, const mn_ik_problem* p,
                            const double* targets, int n, int width, int follow,
                            const mn_ik_options* o, double* q_out, mn_status* status_out,
                            mn_ik_batch_result* r);

/* constrain */
typedef enum mn_handle_type { MN_HANDLE_POINT = 0, MN_HANDLE_ORIENT, MN_HANDLE_COM } mn_handle_type;
typedef struct mn_handle_def {
    mn_handle_type type;
    int figure;
    int joint;
    mn_vec3 point;
    const char* name;
} mn_handle_def;
mn_handle_def mn_handle_default(void);
typedef enum mn_constraint_type {
    MN_CON_PIN = 0, MN_CON_PLANE, MN_CON_LINE, MN_CON_ORIENT, MN_CON_EQUAL, MN_CON_BALANCE,
    MN_CON_TYPE_COUNT
} mn_constraint_type;
int mn_constraint_type_parse(const char* name);
typedef struct mn_constraint_def {
    mn_constraint_type type;
    int handle;
    int handle2;
    mn_vec3 target;
    mn_quat target_rot;
    mn_vec3 origin;
    mn_vec3 dir;
    int npolygon;
    mn_vec3 polygon[16];
    mn_vec3 up;
    double margin;
    double weight;
    int priority;
    int enabled;
    const char* name;
    int axis;
} mn_constraint_def;
mn_constraint_def mn_constraint_default(void);
typedef struct mn_figure { const mn_model* model; mn_data* data; } mn_figure;
typedef struct mn_csys_def { int max_handles; int max_constraints; } mn_csys_def;
mn_csys_def mn_csys_default(void);
typedef struct mn_csys mn_csys;
mn_csys* mn_csys_create(const mn_figure* figures, int nfigure, const mn_csys_def* def,
                        mn_error* err);
void mn_csys_destroy(mn_csys* s);
int mn_csys_figure_count(const mn_csys* s);
int mn_csys_nv(const mn_csys* s);
int mn_csys_dof_offset(const mn_csys* s, int figure);
int mn_csys_add_handle(mn_csys* s, const mn_handle_def* def, mn_error* err);
int mn_csys_handle_count(const mn_csys* s);
int mn_csys_find_handle(const mn_csys* s, const char* name);
mn_status mn_csys_handle_value(mn_csys* s, int h, mn_vec3* pos, mn_mat3* rot);
int mn_csys_add_constraint(mn_csys* s, const mn_constraint_def* def, mn_error* err);
int mn_csys_constraint_count(const mn_csys* s);
int mn_csys_find_constraint(const mn_csys* s, const char* name);
mn_status mn_csys_set_target(mn_csys* s, int c, mn_vec3 target);
mn_status mn_csys_set_target_rot(mn_csys* s, int c, mn_quat target);
mn_status mn_csys_set_plane(mn_csys* s, int c, mn_vec3 origin, mn_vec3 dir);
mn_status mn_csys_set_enabled(mn_csys* s, int c, int enabled);
mn_status mn_csys_set_weight(mn_csys* s, int c, double weight);
mn_status mn_csys_set_joint_scale(mn_csys* s, int figure, int joint, double scale);
double mn_csys_joint_scale(const mn_csys* s, int figure, int joint);
void mn_csys_reset_joint_scales(mn_csys* s);
mn_status mn_csys_drag(mn_csys* s, int h, mn_vec3 target, double weight, int priority);
mn_status mn_csys_drag_rot(mn_csys* s, int h, mn_quat target, double weight, int priority);
mn_status mn_csys_push(mn_csys* s, int h, mn_vec3 force);
mn_status mn_csys_release(mn_csys* s, int h);
double mn_csys_drag_error(mn_csys* s, int h);
void mn_csys_invalidate(mn_csys* s);
mn_status mn_csys_evaluate(mn_csys* s);
int mn_csys_row_count(const mn_csys* s);
typedef struct mn_jac_block {
    int constraint;
    int row, nrows;
    int ncols;
    const int* cols;
    const double* val;
    const double* c;
} mn_jac_block;
int mn_csys_jacobian(const mn_csys* s, mn_jac_block* blocks, int cap);
typedef enum mn_csolver { MN_CSOLVE_LAGRANGE = 0, MN_CSOLVE_CCD, MN_CSOLVE_DLS, MN_CSOLVE_COUNT } mn_csolver;
int mn_csolver_parse(const char* name);
typedef struct mn_csolve_options {
    mn_csolver method;
    double tol;
    double tol_rot;
    double drag_tol;
    int max_iters;
    double rcond;
    double feedback;
    double feedback_k;
    double drag_damping;
    double max_step;
    int respect_limits;
    double min_progress;
    int free_locked;
} mn_csolve_options;
mn_csolve_options mn_csolve_default(void);
typedef struct mn_csolve_result {
    mn_status status;
    int iterations;
    int svd_fallbacks;
    int rows;
    double max_violation;
    double max_rot_violation;
    double max_drag_error;
    int nunmet;
    char message[200];
} mn_csolve_result;
mn_status mn_csys_solve(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r);
double mn_csys_residual(const mn_csys* s, int c);
int mn_csys_unmet(const mn_csys* s, int c);

/* skin */
typedef enum mn_ctrl_kind { MN_CTRL_POINT = 0, MN_CTRL_BONE, MN_CTRL_CAGE } mn_ctrl_kind;
typedef struct mn_ctrl_def {
    const char* name;
    mn_ctrl_kind kind;
    mn_vec3 pivot;
    mn_vec3 tail;
    int parent;
    int attached;
} mn_ctrl_def;
mn_ctrl_def mn_ctrl_default(void);
typedef struct mn_rig {
    int dim;
    int nverts;
    double* rest;
    double* mass;
    int nctrl;
    char** ctrl_name;
    int* ctrl_kind;
    mn_vec3* ctrl_pivot;
    mn_vec3* ctrl_tail;
    int* ctrl_parent;
    uint8_t* ctrl_attached;
    int k;
    int* w_idx;
    double* w_val;
    int cap_ctrl;
} mn_rig;
mn_rig* mn_rig_create(int dim, int nverts, const double* rest, const double* mass, mn_error* err);
void mn_rig_destroy(mn_rig* rig);
int mn_rig_add_ctrl(mn_rig* rig, const mn_ctrl_def* def, mn_error* err);
int mn_rig_find_ctrl(const mn_rig* rig, const char* name);
mn_status mn_rig_set_weights(mn_rig* rig, int k, const int* idx, const double* w, int* nwarn,
                             mn_error* err);
mn_status mn_rig_set_weights_dense(mn_rig* rig, const double* W, int* nwarn, mn_error* err);
mn_status mn_rig_set_hierarchy(mn_rig* rig, const mn_model* m, mn_error* err);
void mn_rig_rest_pose(const mn_rig* rig, mn_xform* pose);
void mn_rig_deform(const mn_rig* rig, const mn_xform* pose, double* out);
void mn_rig_propagate(const mn_rig* rig, mn_xform* pose);
void mn_rig_error(const mn_rig* rig, const mn_xform* pose, const double* targets, double* rms,
                  double* max_err);
typedef struct mn_fit_options {
    int max_iters;
    double tol;
    int max_halvings;
    int coupled_rotation;
    int vertex_error;
} mn_fit_options;
mn_fit_options mn_fit_default(void);
typedef struct mn_fit_result {
    mn_status status;
    int iterations;
    double energy;
    double rms, max_err;
    char message[160];
} mn_fit_result;
typedef struct mn_fitter mn_fitter;
mn_fitter* mn_fitter_create(const mn_rig* rig, const uint8_t* fixed, mn_error* err);
void mn_fitter_destroy(mn_fitter* f);
mn_status mn_fitter_set_fixed(mn_fitter* f, const uint8_t* fixed, mn_error* err);
void mn_fitter_reset(mn_fitter* f);
mn_status mn_fit(mn_fitter* f, mn_xform* pose, const double* targets, const mn_fit_options* opt,
                 mn_fit_result* res);
mn_status mn_fit_kabsch(mn_fitter* f, mn_xform* pose, const double* targets, int then_translate);

/* anim */
typedef enum mn_interp {
    MN_INTERP_DEFAULT = 0, MN_INTERP_CONSTANT, MN_INTERP_LINEAR, MN_INTERP_SLERP,
    MN_INTERP_SQUAD, MN_INTERP_CATMULL_ROM, MN_INTERP_KB, MN_INTERP_COUNT
} mn_interp;
const char* mn_interp_name(mn_interp i);
int mn_interp_parse(const char* name);
typedef struct mn_seq mn_seq;
typedef struct mn_seq_def {
    double fps;
    mn_interp rot;
    mn_interp trans;
    int max_handles;
    int max_constraints;
} mn_seq_def;
mn_seq_def mn_seq_def_default(void);
mn_seq* mn_seq_create(const mn_model* m, const mn_seq_def* def, mn_error* err);
void mn_seq_destroy(mn_seq* s);
double mn_seq_fps(const mn_seq* s);
int mn_seq_set_key(mn_seq* s, double frame, const double* q, mn_error* err);
mn_status mn_seq_remove_key(mn_seq* s, int k);
int mn_seq_key_count(const mn_seq* s);
double mn_seq_key_frame(const mn_seq* s, int k);
const double* mn_seq_key_q(const mn_seq* s, int k);
double mn_seq_start(const mn_seq* s);
double mn_seq_end(const mn_seq* s);
mn_status mn_seq_set_default_interp(mn_seq* s, mn_interp rot, mn_interp trans);
mn_status mn_seq_set_joint_interp(mn_seq* s, int joint, mn_interp rot, mn_interp trans);
mn_status mn_seq_sample(const mn_seq* s, double frame, double* q);
mn_status mn_seq_sample_data(const mn_seq* s, mn_data* d, double frame);
mn_status mn_seq_add_motion(mn_seq* s, const double* q, int nframes, double first_frame, double tol,
                            int* nkeys, double* max_error, mn_error* err);
int mn_seq_add_handle(mn_seq* s, const mn_handle_def* def, mn_error* err);
typedef struct mn_seq_constraint_def {
    mn_constraint_def con;
    double start, end;
    int lock;
    mn_interp target_interp;
} mn_seq_constraint_def;
mn_seq_constraint_def mn_seq_constraint_default(void);
int mn_seq_add_constraint(mn_seq* s, const mn_seq_constraint_def* def, mn_error* err);
typedef struct mn_seq_solver mn_seq_solver;
typedef struct mn_seq_solve_options {
    mn_csolve_options solve;
    int warm_start;
    double relax;
    int balance;
    int constraints;
} mn_seq_solve_options;
mn_seq_solve_options mn_seq_solve_options_default(void);
mn_seq_solver* mn_seq_solver_create(const mn_seq* s, mn_data* d, mn_error* err);
void mn_seq_solver_destroy(mn_seq_solver* v);
mn_status mn_seq_solve_frame(mn_seq_solver* v, double frame, const mn_seq_solve_options* o,
                             mn_csolve_result* r);

/* retarget */
typedef struct mn_retarget_map {
    char source[21][64];
    char target[21][64];
    int line[21];
    char file[256];
} mn_retarget_map;
mn_retarget_map mn_retarget_map_default(void);
mn_status mn_retarget_map_read(const char* path, mn_retarget_map* map, mn_error* err);
mn_status mn_retarget_map_read_mem(const char* text, size_t len, const char* name,
                                   mn_retarget_map* map, mn_error* err);
typedef struct mn_retarget_options {
    int cleanup;
    double contact_height;
    double contact_speed;
    double contact_release_height;
    double contact_release_speed;
    double contact_min_time;
    double blend_time;
    double hand_weight;
    int hands;
    mn_csolve_options solve;
} mn_retarget_options;
mn_retarget_options mn_retarget_options_default(void);
typedef struct mn_retarget mn_retarget;
mn_retarget* mn_retarget_create(const mn_model* src, const mn_model* dst,
                                const mn_retarget_map* map, const mn_retarget_options* opt,
                                mn_error* err);
void mn_retarget_destroy(mn_retarget* rt);
mn_status mn_retarget_set_take(mn_retarget* rt, const double* src_q, int nframes, double frame_time,
                               mn_error* err);
typedef enum mn_retarget_mode { MN_RETARGET_MAPPED = 0, MN_RETARGET_NAIVE } mn_retarget_mode;
mn_status mn_retarget_frame(mn_retarget* rt, int frame, mn_retarget_mode mode, double* dst_q);
typedef struct mn_retarget_metrics {
    int contacts;
    int contacts_held;
    double skate_max_mm;
    double skate_mean_mm;
    int planted, planted_still;
    double planted_skate_max_mm;
    double planted_source_mm;
    double foot_err_mean_mm, foot_err_max_mm;
    double hand_err_mean_mm, hand_err_max_mm;
    long limit_violations;
    double limit_excess_max_deg;
} mn_retarget_metrics;
mn_status mn_retarget_measure(mn_retarget* rt, const double* dst_q, int nframes,
                              mn_retarget_metrics* out);
typedef struct mn_retarget_info {
    double scale;
    double leg_source, leg_target;
    int contacts[2];
    int mapped_roles;
    const char* rig[2];
    int target_foot[2];
    int source_foot[2];
} mn_retarget_info;
void mn_retarget_get_info(const mn_retarget* rt, mn_retarget_info* info);

/* io */
typedef struct mn_warnings { int count; char first[512]; } mn_warnings;
typedef struct mn_motion {
    int nframes;
    int nq;
    double frame_time;
    double* q;
} mn_motion;
void mn_motion_free(mn_motion* mo);
typedef struct mn_bvh_options { double scale; const mn_model* names_of; } mn_bvh_options;
mn_bvh_options mn_bvh_default(void);
mn_status mn_bvh_read(const char* path, const mn_bvh_options* opt, mn_model** model,
                      mn_motion* motion, mn_warnings* warn, mn_error* err);
mn_status mn_bvh_read_mem(const char* text, size_t len, const char* name, const mn_bvh_options* opt,
                          mn_model** model, mn_motion* motion, mn_warnings* warn, mn_error* err);
mn_status mn_bvh_write(const char* path, const mn_model* m, const mn_motion* motion, mn_error* err);
mn_status mn_skel_read(const char* path, mn_model** model, mn_warnings* warn, mn_error* err);
mn_status mn_skel_read_mem(const char* text, size_t len, const char* name, mn_model** model,
                           mn_warnings* warn, mn_error* err);
mn_status mn_skel_write(const char* path, const mn_model* m, mn_error* err);
mn_model* mn_stickman_model(mn_error* err);
mn_status mn_urdf_read(const char* path, mn_model** model, mn_warnings* warn, mn_error* err);
mn_status mn_urdf_read_mem(const char* text, size_t len, const char* name, mn_model** model,
                           mn_warnings* warn, mn_error* err);
mn_status mn_figure_read(const char* path, mn_model** model, mn_motion* motion, mn_warnings* warn,
                         mn_error* err);
mn_status mn_figure_doc_write(const char* path, const mn_model* m, const mn_motion* motion,
                              const void* skin, mn_error* err);
mn_status mn_figure_doc_read(const char* path, mn_model** model, mn_motion* motion, mn_error* err);
mn_status mn_figure_doc_read_mem(const char* text, size_t len, const char* name, mn_model** model,
                                 mn_motion* motion, mn_error* err);
mn_status mn_figure_doc_convert(const char* in, const char* out, mn_warnings* warn, mn_error* err);
mn_status mn_gltf_write(const char* path, const mn_model* m, const mn_motion* motion,
                        const void* skin, mn_error* err);
typedef enum mn_file_kind {
    MN_FILE_UNKNOWN = 0, MN_FILE_SKEL, MN_FILE_BVH, MN_FILE_URDF, MN_FILE_GLTF
} mn_file_kind;
mn_file_kind mn_file_kind_of(const char* path);
typedef struct mn_bvh_write_options {
    mn_quat root_rot;
} mn_bvh_write_options;
mn_bvh_write_options mn_bvh_write_default(void);
mn_status mn_bvh_write_ex(const char* path, const mn_model* m, const mn_motion* motion,
                          const mn_bvh_write_options* opt, mn_error* err);
typedef struct mn_gltf_write_options {
    double scale;
    mn_quat root_rot;
    int keep_attributes;
    const void* objects;
    const double* pose;
} mn_gltf_write_options;
mn_gltf_write_options mn_gltf_write_default(void);
mn_status mn_gltf_write_ex(const char* path, const mn_model* m, const mn_motion* motion,
                           const void* skin, const mn_gltf_write_options* opt, mn_error* err);
mn_status mn_bvh_write_mem(const mn_model* m, const mn_motion* motion,
                           const mn_bvh_write_options* opt, char** text, size_t* len,
                           mn_error* err);
mn_status mn_gltf_write_mem(const mn_model* m, const mn_motion* motion, const void* skin,
                            const mn_gltf_write_options* opt, unsigned char** glb, size_t* len,
                            mn_error* err);
void free(void* p); /* the C library's, for the writers' buffers */
double mn_gltf_guess_scale(const mn_model* m, mn_quat root_rot, double* height,
                           const char** units);
"""

# The structs whose layout the tests check against the C compiler's (tests/test_abi_layout.py).
STRUCTS = [
    "mn_error", "mn_arena", "mn_xform", "mn_joint_def", "mn_model", "mn_data",
    "mn_ik_problem", "mn_ik_options", "mn_ik_result", "mn_ik_batch_result", "mn_handle_def",
    "mn_constraint_def", "mn_figure", "mn_csys_def", "mn_jac_block", "mn_csolve_options",
    "mn_csolve_result", "mn_ctrl_def", "mn_rig", "mn_fit_options", "mn_fit_result",
    "mn_seq_def", "mn_seq_constraint_def", "mn_seq_solve_options", "mn_retarget_map",
    "mn_retarget_options", "mn_retarget_metrics", "mn_retarget_info", "mn_warnings",
    "mn_motion", "mn_bvh_options", "mn_gltf_write_options", "mn_bvh_write_options",
]

ffi = FFI()
ffi.cdef(CDEF)


def _build_tree_candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))  # python/marionette -> the checkout
    return [os.path.join(top, b, "lib", SONAME) for b in ("build", "build-asan")]


def _open():
    tried = []
    env = os.environ.get("MARIONETTE_LIBRARY")
    if env:
        # an explicit choice is never second-guessed: a wrong path is an error
        return ffi.dlopen(env), env
    for name in (SONAME, ctypes.util.find_library("marionette")):
        if not name:
            continue
        try:
            return ffi.dlopen(name), name
        except OSError as e:
            tried.append(f"{name}: {e}")
    for path in _build_tree_candidates():
        if os.path.exists(path):
            return ffi.dlopen(path), path
        tried.append(f"{path}: no such file")
    raise OSError("marionette: libmarionette.so.0 not found (set MARIONETTE_LIBRARY to its "
                  "path, install it with `make install`, or build it with `make build`); "
                  "tried: " + "; ".join(tried))


lib, library_path = _open()
