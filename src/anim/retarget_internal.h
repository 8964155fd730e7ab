/* Private state of a retargeter (src/anim/retarget.c). */
#ifndef MN_RETARGET_INTERNAL_H
#define MN_RETARGET_INTERNAL_H

#include <marionette/retarget.h>

#include <stdio.h>

/* How a bone's target joints take a rotation. */
enum {
    BONE_NONE = 0, /* a slide or fixed joint: left at rest */
    BONE_FREE,     /* the root: position and quaternion */
    BONE_BALL,     /* a quaternion */
    BONE_EULER3,   /* three hinges about distinct principal axes: Euler angles in their order */
    BONE_EULER2,   /* two hinges: the Euler order completed by the third axis, last angle dropped */
    BONE_HINGE1,   /* one hinge: the twist about its axis */
    BONE_GENERIC   /* hinges about other axes: twists peeled off in turn */
};

/* A pair of joints that play the same role. */
typedef struct rt_bone {
    int role;
    int sj, tj;         /* source and target joint of the role */
    int s_end, t_end;   /* joints of the next role of the chain mapped on both sides; -1: leaf */
    int s_twist;        /* source joint whose world rotation turns the bone */
    int s_parent;       /* source joint above sj's compound joint (naive copy), or -1 */
    int kind;           /* BONE_* */
    int nrun, run[3];   /* the target joints that move the bone, root first */
    int axis[3];        /* principal axis of each hinge (and the completing third) */
    double sign[3];     /* +1 or -1: the hinge turns about +axis or -axis */
    int order;          /* mn_euler_order of the axis sequence */
    mn_mat3 Rs_rest_T;  /* rest world rotation of s_twist, transposed */
    mn_mat3 GtC;        /* G^T A R_T^rest(tj): alignment times target rest frame, in source axes */
    mn_vec3 bone_local; /* target rest bone direction in tj's frame (unit) */
} rt_bone;

struct mn_retarget {
    const mn_model* src;
    const mn_model* dst;
    mn_retarget_options opt;
    const char* rig[2];
    int sj[MN_ROLE_COUNT], tj[MN_ROLE_COUNT];
    rt_bone bone[MN_ROLE_COUNT];
    int nbone;
    int* run_first; /* per target joint: the bone whose run starts there, or -1 */
    mn_data *sd, *td;
    mn_mat3 G; /* source world axes -> target world axes (a signed permutation) */
    mn_vec3 up_s, up_t;
    double leg_s, leg_t, scale;
    mn_vec3 mid_local; /* middle of the target's thighs in its hips frame, at rest */
    mn_vec3 o_s, o_t;  /* ground points under the hips: to_target maps o_s onto o_t */
    /* clean-up */
    mn_csys* csys;
    int eff_t[4], eff_s[4]; /* left foot, right foot, left hand, right hand (-1 when unmapped) */
    int handle[4], con[4];
    /* the take */
    void* take;
    const double* src_q;
    int nframes;
    double frame_time;
    unsigned char* contact[2]; /* MN_CONTACT_* bits per frame */
    mn_vec3* ankle_path[2];    /* the source's ankles, scaled into the target's space */
    int ncontact[2];
    mn_vec3* foot_target[2];
    mn_vec3* hand_target[2];
    double* scratch;
    double* prev; /* previous frame's target state (Euler branch choice) */
    int last_frame, last_mode;
};

#endif
