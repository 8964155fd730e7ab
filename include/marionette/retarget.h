/* marionette retarget: move a motion from one skeleton onto another.
 *
 * The pipeline, per frame (docs/retarget.md has the whole story):
 *   1. correspondence: joints of the two figures are paired through ROLES (hips, spine,
 *      left thigh, ...). Built-in rig tables name the roles' joints for the common rigs
 *      (CMU MotionBuilder, CMU 3ds Max, Biovision, Daz-style hip/abdomen/chest, the glTF
 *      sample characters, the stick figure); a map file overrides them.
 *   2. rest-pose alignment: a global rotation G takes the source's (up, left) axes onto the
 *      target's; for each paired bone an alignment rotation A takes the target's rest
 *      bone direction onto the source's (world rest frames, so a T-pose source drives an
 *      A-pose target). What is transferred is the bone's WORLD rotation from rest, and the
 *      bone's world direction is then matched exactly to the source's (no raw local angles).
 *   3. mapping onto the target's joints: a ball gets a quaternion; a run of hinges (the
 *      thesis's compound joint, Welman 6.1.1) gets the Euler decomposition in the run's axis
 *      order, of the branch nearest the previous frame, clamped to the joint limits.
 *   4. root motion: the source's hips path, scaled by the ratio of leg lengths, standing on
 *      the target's ground.
 *   5. clean-up with the constrain layer (Welman 5.2, the Lagrange solver): the feet follow
 *      the source's scaled ankle paths and are pinned while the source foot is in contact
 *      (ankle low and slow, thresholds in options), the hands are dragged along the
 *      source's scaled wrist paths.
 *
 * A retargeter is made once for a pair of models, a take is then analysed (contacts,
 * ground, targets; the only allocation per take) and every frame is mapped without heap
 * allocation. Metrics (foot skate, end-effector error, limit violations) are measured on
 * any sequence of target states, so a clean-up and a naive copy of joint angles can be
 * compared in the same run. */
#ifndef MARIONETTE_RETARGET_H
#define MARIONETTE_RETARGET_H

#include "base.h"
#include "constrain.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The roles a joint can play. Each chain reads root to tip (hips, spine, chest, neck,
 * head; clavicle, upper arm, forearm, hand; thigh, shin, foot, toe). */
typedef enum mn_role {
    MN_ROLE_HIPS = 0,
    MN_ROLE_SPINE,
    MN_ROLE_CHEST,
    MN_ROLE_NECK,
    MN_ROLE_HEAD,
    MN_ROLE_L_CLAVICLE,
    MN_ROLE_L_UPPERARM,
    MN_ROLE_L_FOREARM,
    MN_ROLE_L_HAND,
    MN_ROLE_R_CLAVICLE,
    MN_ROLE_R_UPPERARM,
    MN_ROLE_R_FOREARM,
    MN_ROLE_R_HAND,
    MN_ROLE_L_THIGH,
    MN_ROLE_L_SHIN,
    MN_ROLE_L_FOOT,
    MN_ROLE_L_TOE,
    MN_ROLE_R_THIGH,
    MN_ROLE_R_SHIN,
    MN_ROLE_R_FOOT,
    MN_ROLE_R_TOE,
    MN_ROLE_COUNT
} mn_role;

/* "hips", "spine", "chest", "neck", "head", "left_clavicle", "left_upperarm",
 * "left_forearm", "left_hand", "right_...", "left_thigh", "left_shin", "left_foot",
 * "left_toe", "right_..."; NULL when out of range. */
const char* mn_role_name(mn_role r);
/* -1 when not a role name. */
int mn_role_parse(const char* name);

#define MN_RETARGET_NAME_MAX 64

/* The joint of each role on both sides ("" when the role is not used). line[r] is the line
 * of the map file that set the role (0 for a default), file the map file's name; both are
 * used in messages. */
typedef struct mn_retarget_map {
    char source[MN_ROLE_COUNT][MN_RETARGET_NAME_MAX];
    char target[MN_ROLE_COUNT][MN_RETARGET_NAME_MAX];
    int line[MN_ROLE_COUNT];
    char file[256];
} mn_retarget_map;

/* An empty map. */
mn_retarget_map mn_retarget_map_default(void);

/* The built-in rig tables: count, name ("cmu-motionbuilder", "cmu-3dsmax", "biovision",
 * "daz", "gltf-armature", "stickman"). */
int mn_rig_count(void);
const char* mn_rig_name(int rig);
/* The rig table that names the most joints of m (each role may have several spellings,
 * the first one m has is taken), or -1 when none names at least the hips and both thighs,
 * shins and feet. */
int mn_rig_detect(const mn_model* m);
/* Fills one side of map (side 0 source, 1 target) with the joints of m that rig names. */
mn_status mn_rig_fill(int rig, const mn_model* m, int side, mn_retarget_map* map, mn_error* err);
/* Fills both sides of map from the detected rigs of src and dst; MN_ERR_NOTFOUND naming
 * the figure when one is not recognised (give a map file). */
mn_status mn_retarget_map_detect(const mn_model* src, const mn_model* dst, mn_retarget_map* map,
                                 mn_error* err);

typedef struct mn_retarget_options {
    int cleanup; /* 1: IK clean-up (feet pinned, effectors follow); 0: mapping only */
    /* Contacts of the heel (the ankle) and of the toe (the toe joint), each a Schmitt
     * trigger on height above the point's lowest height within a second either side and on
     * horizontal speed (over about 1/30 s), in leg lengths of the source: */
    double contact_height;         /* a contact starts below this height ... */
    double contact_speed;          /* ... and this speed (leg lengths per second) ... */
    double contact_release_height; /* ... and lasts while the point stays below this height */
    double contact_release_speed;  /* ... and this speed; a run that stays within the release
                                      thresholds for twice contact_min_time is a contact too */
    double contact_min_time;       /* contacts shorter than this (seconds, and 3 frames) are
                                      dropped */
    double blend_time;       /* seconds over which a foot target eases into and out of a pin */
    double hand_weight;      /* weight of the hand drags (> 0; the feet are hard constraints) */
    int hands;               /* 1: drag the hands along the source's scaled wrist paths */
    mn_csolve_options solve; /* the clean-up solve (LAGRANGE by default); its tol and drag_tol
                                are in leg lengths of the target */
} mn_retarget_options;

/* cleanup 1, contact_height 0.03, contact_speed 0.15, contact_release_height 0.15,
 * contact_release_speed 0.3, contact_min_time 0.05, blend_time 0.1,
 * hand_weight 0.3, hands 1, solve: mn_csolve_default() with tol 5e-5 (and its drag_tol 1e-4)
 * leg lengths, 20 iterations. */
mn_retarget_options mn_retarget_options_default(void);

typedef struct mn_retarget mn_retarget;

/* A retargeter from src onto dst (both must outlive it) with map (NULL: detected from the
 * rig tables). Checks the map: every named joint exists (else MN_ERR_NOTFOUND naming the
 * map file, line and role), hips and both thighs, shins and feet on both sides, a
 * descendant order along each chain, and a FREE target hips joint for the root motion.
 * All memory but the per-take arrays is allocated here. */
mn_retarget* mn_retarget_create(const mn_model* src, const mn_model* dst,
                                const mn_retarget_map* map, const mn_retarget_options* opt,
                                mn_error* err);
void mn_retarget_destroy(mn_retarget* rt);

/* Analyses a take of the source (nframes x src->nq states, frame_time seconds apart):
 * ground, leg-length scale, contacts of each foot and the target paths of feet and hands.
 * Allocates the per-take arrays (the only allocation after create). */
mn_status mn_retarget_set_take(mn_retarget* rt, const double* src_q, int nframes, double frame_time,
                               mn_error* err);

typedef enum mn_retarget_mode {
    MN_RETARGET_MAPPED = 0, /* aligned mapping, then clean-up when options.cleanup */
    MN_RETARGET_NAIVE       /* the same root path; each joint's local rotation copied as is */
} mn_retarget_mode;

/* The target state (dst->nq numbers) of frame f of the take. Frames should be visited in
 * order: the Euler branch of each compound joint follows the previous frame (after a jump
 * the previous frame is mapped again first). The clean-up solve starts from the frame's
 * mapped pose. No heap allocation. MN_OK, MN_ERR_ARG (no take, frame out of range), or the
 * clean-up solve's status (the best state is written). */
mn_status mn_retarget_frame(mn_retarget* rt, int frame, mn_retarget_mode mode, double* dst_q);

/* Figures of one retargeted take. Lengths in millimetres when the target is in metres. */
typedef struct mn_retarget_metrics {
    int contacts;         /* contact intervals (heel or toe down) of both feet */
    int contacts_held;    /* intervals in which the ankle is held (MN_CONTACT_HOLD) */
    double skate_max_mm;  /* largest horizontal path of a target ankle while held */
    double skate_mean_mm; /* mean over the held intervals */
    /* Against every interval a generic detector calls planted, whatever the options: the
     * scaled source ankle within 15 % of the leg length of its lowest height and slower than
     * 25 % of the leg length per second, three frames at least. "Still": the source ankle
     * travels less than 2.5 % of the target's leg length over it (20 mm on the stick figure). */
    int planted, planted_still;  /* intervals of both feet; those still */
    double planted_skate_max_mm; /* largest horizontal path of a target ankle over a still
                                    planted interval */
    double planted_source_mm;    /* the source's (scaled) path over that interval */
    double foot_err_mean_mm, foot_err_max_mm; /* ankles against their targets (pins included) */
    double hand_err_mean_mm, hand_err_max_mm; /* wrists against the scaled wrist paths */
    long limit_violations;       /* (frame, joint) pairs outside a hinge or slide range by > 1e-9 */
    double limit_excess_max_deg; /* largest excess of a hinge beyond its range */
} mn_retarget_metrics;

/* Measures nframes target states (nframes x dst->nq) against the take's contacts and
 * targets. No heap allocation. */
mn_status mn_retarget_measure(mn_retarget* rt, const double* dst_q, int nframes,
                              mn_retarget_metrics* out);

/* Per-take facts after mn_retarget_set_take. */
typedef struct mn_retarget_info {
    double scale; /* target leg length / source leg length */
    double leg_source, leg_target;
    int contacts[2];    /* contact intervals of the left and right foot */
    int mapped_roles;   /* roles with a joint on both sides */
    const char* rig[2]; /* detected rig names (NULL when a map file gave the map) */
    int target_foot[2]; /* the target's left and right foot joints */
    int source_foot[2]; /* the source's */
} mn_retarget_info;
void mn_retarget_get_info(const mn_retarget* rt, mn_retarget_info* info);
/* Contact bits of a foot at a frame. */
#define MN_CONTACT_HEEL 1    /* the heel is down (the point under the ankle) */
#define MN_CONTACT_TOE 2     /* the toe is down (the toe joint) */
#define MN_CONTACT_FOOT 3    /* either */
#define MN_CONTACT_PLANTED 4 /* the generic planted interval of the metrics */
#define MN_CONTACT_HOLD 8    /* the ankle itself is planted: the clean-up holds it still */
#define MN_CONTACT_ANY 11    /* heel, toe or hold */
/* Contact bits (MN_CONTACT_*) of foot (0 left, 1 right) at frame f of the take. */
int mn_retarget_contact(const mn_retarget* rt, int foot, int frame);

/* ---- the map file (implemented in the io library) -------------------------------------
 * A text file, one pairing per line:  ROLE SOURCE_JOINT TARGET_JOINT
 * with `#` comments and blank lines; a joint name with spaces is written in double quotes
 * and `-` leaves a side empty (docs/retarget.md). Unknown roles, a role given twice, a
 * missing or extra field, an over-long or unterminated name are errors naming the line
 * and field; nothing is written to map on error. */
mn_status mn_retarget_map_read(const char* path, mn_retarget_map* map, mn_error* err);
mn_status mn_retarget_map_read_mem(const char* text, size_t len, const char* name,
                                   mn_retarget_map* map, mn_error* err);

#ifdef __cplusplus
}
#endif
#endif
