/* The built-in rig tables of retargeting: which joint of a common rig plays which role.
 * Each role may have several spellings ("|" between them); the first that the figure has is
 * taken. docs/retarget.md lists the tables. */
#include <marionette/retarget.h>

#include <stdio.h>
#include <string.h>

static const char* const role_names[MN_ROLE_COUNT] = {
    "hips",           "spine",         "chest",        "neck",       "head",
    "left_clavicle",  "left_upperarm", "left_forearm", "left_hand",  "right_clavicle",
    "right_upperarm", "right_forearm", "right_hand",   "left_thigh", "left_shin",
    "left_foot",      "left_toe",      "right_thigh",  "right_shin", "right_foot",
    "right_toe"};

const char* mn_role_name(mn_role r) {
    return (r >= 0 && r < MN_ROLE_COUNT) ? role_names[r] : NULL;
}

int mn_role_parse(const char* name) {
    if (!name) return -1;
    for (int r = 0; r < MN_ROLE_COUNT; r++)
        if (!strcmp(name, role_names[r])) return r;
    return -1;
}

typedef struct rig_table {
    const char* name;
    const char* joint[MN_ROLE_COUNT]; /* spellings separated by '|'; NULL when the rig has none */
} rig_table;

/* Role order: hips spine chest neck head | l clavicle upperarm forearm hand | r ... |
 * l thigh shin foot toe | r ... */
static const rig_table rigs[] = {
    /* The cgspeed "MotionBuilder-friendly" CMU conversion (31 joints). */
    {"cmu-motionbuilder",
     {"Hips",      "LowerBack",   "Spine1",      "Neck",          "Head|HeadMesh", "LeftShoulder",
      "LeftArm",   "LeftForeArm", "LeftHand",    "RightShoulder", "RightArm",      "RightForeArm",
      "RightHand", "LeftUpLeg",   "LeftLeg",     "LeftFoot",      "LeftToeBase",   "RightUpLeg",
      "RightLeg",  "RightFoot",   "RightToeBase"}},
    /* The cgspeed "3dsMax-friendly" CMU conversion. */
    {"cmu-3dsmax",
     {"Hips",         "lowerback",  "Chest2",    "lowerneck",   "Head",          "LeftCollar",
      "LeftShoulder", "LeftElbow",  "LeftWrist", "RightCollar", "RightShoulder", "RightElbow",
      "RightWrist",   "LeftHip",    "LeftKnee",  "LeftAnkle",   "LeftToe",       "RightHip",
      "RightKnee",    "RightAnkle", "RightToe"}},
    /* Biovision-style skeletons (Hips, Ab, Chest; ...Toes). */
    {"biovision",
     {"Hips",
      "Ab",
      "Chest",
      "Neck",
      "Head",
      "LeftCollar",
      "LeftShoulder",
      "LeftElbow",
      "LeftWrist",
      "RightCollar",
      "RightShoulder",
      "RightElbow",
      "RightWrist",
      "LeftHip",
      "LeftKnee",
      "LeftAnkle",
      "LeftToes|LeftToe",
      "RightHip",
      "RightKnee",
      "RightAnkle",
      "RightToes|RightToe"}},
    /* Daz / Poser figures: hip, abdomen, chest (and Genesis's split bones). */
    {"daz",
     {"hip",
      "abdomen|abdomenLower|abdomen1",
      "chest|chestUpper|chestLower",
      "neck|neckLower",
      "head",
      "lCollar",
      "lShldr|lShldrBend",
      "lForeArm|lForearmBend",
      "lHand",
      "rCollar",
      "rShldr|rShldrBend",
      "rForeArm|rForearmBend",
      "rHand",
      "lThigh|lThighBend",
      "lShin",
      "lFoot",
      "lToe",
      "rThigh|rThighBend",
      "rShin",
      "rFoot",
      "rToe"}},
    /* The glTF sample characters CesiumMan and RiggedFigure ("Armature", joint0..joint18). */
    {"gltf-armature",
     {"joint0",  "joint1",  "joint2",  "joint3",  "joint4",  NULL,      "joint5",
      "joint7",  "joint9",  NULL,      "joint6",  "joint8",  "joint10", "joint11",
      "joint13", "joint15", "joint17", "joint12", "joint14", "joint16", "joint18"}},
    /* Mixamo characters: "mixamorig:Hips", ... (any "namespace:" prefix is ignored). */
    {"mixamo",
     {"Hips",      "Spine",       "Spine2|Spine1", "Neck",          "Head",        "LeftShoulder",
      "LeftArm",   "LeftForeArm", "LeftHand",      "RightShoulder", "RightArm",    "RightForeArm",
      "RightHand", "LeftUpLeg",   "LeftLeg",       "LeftFoot",      "LeftToeBase", "RightUpLeg",
      "RightLeg",  "RightFoot",   "RightToeBase"}},
    /* The Bandai Namco Research motion dataset (joint_Root, Hips, ..., UpperLeg_L). */
    {"bandai-namco",
     {"Hips",       "Spine",  "Chest",      "Neck",       "Head",       "Shoulder_L", "UpperArm_L",
      "LowerArm_L", "Hand_L", "Shoulder_R", "UpperArm_R", "LowerArm_R", "Hand_R",     "UpperLeg_L",
      "LowerLeg_L", "Foot_L", "Toes_L",     "UpperLeg_R", "LowerLeg_R", "Foot_R",     "Toes_R"}},
    /* The glTF sample Fox (b_Hip_01, ...): its hind legs are the legs, its forelegs the arms. */
    {"gltf-fox", {"b_Hip_01",           "b_Spine01_02",
                  "b_Spine02_03",       "b_Neck_04",
                  "b_Head_05",          NULL,
                  "b_LeftUpperArm_09",  "b_LeftForeArm_010",
                  "b_LeftHand_011",     NULL,
                  "b_RightUpperArm_06", "b_RightForeArm_07",
                  "b_RightHand_08",     "b_LeftLeg01_015",
                  "b_LeftLeg02_016",    "b_LeftFoot01_017",
                  "b_LeftFoot02_018",   "b_RightLeg01_019",
                  "b_RightLeg02_020",   "b_RightFoot01_021",
                  "b_RightFoot02_022"}},
    /* The built-in stick figure (Welman Fig. 6.1): its "head" joint is the neck. */
    {"stickman",
     {"pelvis",     "torso",     NULL, "head",      NULL,          NULL,         "left arm",
      "left elbow", "left hand", NULL, "right arm", "right elbow", "right hand", "left leg",
      "left knee",  "left foot", NULL, "right leg", "right knee",  "right foot", NULL}},
};

#define NRIG ((int)(sizeof rigs / sizeof rigs[0]))

int mn_rig_count(void) {
    return NRIG;
}
const char* mn_rig_name(int rig) {
    return (rig >= 0 && rig < NRIG) ? rigs[rig].name : NULL;
}

/* The joint of m called name, or, when none is, the joint whose name after a namespace
 * prefix ("mixamorig:Hips", "rig:Hips") is name; -1 when none. */
static int find_named(const mn_model* m, const char* name) {
    int j = mn_model_find_joint(m, name);
    if (j >= 0) return j;
    for (int k = 0; k < m->njoint; k++) {
        const char* n = m->jnt_name[k];
        const char* colon = n ? strrchr(n, ':') : NULL;
        if (colon && !strcmp(colon + 1, name)) return k;
    }
    return -1;
}

/* The joint of m that one of the '|'-separated spellings names, or -1. */
static int find_spelling(const mn_model* m, const char* spellings, const char** name, size_t* len) {
    const char* s = spellings;
    while (s && *s) {
        const char* bar = strchr(s, '|');
        size_t n = bar ? (size_t)(bar - s) : strlen(s);
        char buf[MN_RETARGET_NAME_MAX];
        if (n < sizeof buf) {
            memcpy(buf, s, n);
            buf[n] = 0;
            int j = find_named(m, buf);
            if (j >= 0) {
                *name = s;
                *len = n;
                return j;
            }
        }
        s = bar ? bar + 1 : NULL;
    }
    return -1;
}

static const mn_role required[] = {MN_ROLE_HIPS,   MN_ROLE_L_THIGH, MN_ROLE_R_THIGH, MN_ROLE_L_SHIN,
                                   MN_ROLE_R_SHIN, MN_ROLE_L_FOOT,  MN_ROLE_R_FOOT};

int mn_rig_detect(const mn_model* m) {
    if (!m) return -1;
    int best = -1, best_count = 0;
    for (int k = 0; k < NRIG; k++) {
        int ok = 1, count = 0;
        for (int r = 0; r < MN_ROLE_COUNT; r++) {
            const char* name;
            size_t len;
            if (rigs[k].joint[r] && find_spelling(m, rigs[k].joint[r], &name, &len) >= 0) count++;
        }
        for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
            const char* name;
            size_t len;
            if (!rigs[k].joint[required[i]] ||
                find_spelling(m, rigs[k].joint[required[i]], &name, &len) < 0)
                ok = 0;
        }
        if (ok && count > best_count) {
            best = k;
            best_count = count;
        }
    }
    return best;
}

mn_retarget_map mn_retarget_map_default(void) {
    mn_retarget_map map;
    memset(&map, 0, sizeof map);
    return map;
}

mn_status mn_rig_fill(int rig, const mn_model* m, int side, mn_retarget_map* map, mn_error* err) {
    if (!m || !map || (side != 0 && side != 1))
        return mn_error_set(err, MN_ERR_ARG, "", 0, "side", "bad arguments");
    if (rig < 0 || rig >= NRIG)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "rig", "no rig table %d", rig);
    for (int r = 0; r < MN_ROLE_COUNT; r++) {
        char* dst = side == 0 ? map->source[r] : map->target[r];
        dst[0] = 0;
        const char* name;
        size_t len;
        int j = rigs[rig].joint[r] ? find_spelling(m, rigs[rig].joint[r], &name, &len) : -1;
        if (j >= 0) {
            /* the joint's own name (with its namespace), when it fits */
            const char* own = m->jnt_name[j];
            if (own && strlen(own) < MN_RETARGET_NAME_MAX) name = own, len = strlen(own);
            memcpy(dst, name, len);
            dst[len] = 0;
        }
        map->line[r] = 0;
    }
    return MN_OK;
}

mn_status mn_retarget_map_detect(const mn_model* src, const mn_model* dst, mn_retarget_map* map,
                                 mn_error* err) {
    if (!src || !dst || !map) return mn_error_set(err, MN_ERR_ARG, "", 0, "map", "NULL argument");
    int rs = mn_rig_detect(src), rd = mn_rig_detect(dst);
    if (rs < 0 || rd < 0) {
        const mn_model* m = rs < 0 ? src : dst;
        return mn_error_set(err, MN_ERR_NOTFOUND, m->name ? m->name : "", 0,
                            rs < 0 ? "source" : "target",
                            "no built-in rig table names this figure's hips, thighs, shins and "
                            "feet: give a map file (--map)");
    }
    mn_retarget_map out = mn_retarget_map_default();
    mn_rig_fill(rs, src, 0, &out, NULL);
    mn_rig_fill(rd, dst, 1, &out, NULL);
    *map = out;
    return MN_OK;
}
