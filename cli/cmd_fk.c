/* marionette fk FILE [--frame N | --every-frame] [--anim NAME] [--time T] [--q v1,v2,...]
 * [--json]: world position (and, in JSON, orientation) of every joint. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <marionette/gltf.h>
#include <marionette/meshio.h>

#include "cli.h"
#include "options.h"

#define J mn_cli_json_num

const char mn_cmd_fk_summary[] =
    "world position of every joint (or URDF link) for a frame or a state";

static void usage(FILE* f) {
    fprintf(f, "usage: marionette fk FILE [--frame N | --every-frame] [--anim NAME] [--time T]\n"
               "                          [--q v1,v2,...] [--json] [--objects OUT.obj|OUT.glb]\n"
               "\n"
               "Prints the world position of every joint (for URDF: every link frame) as\n"
               "'name x y z' (9 significant digits), in the file's units; --json gives full\n"
               "precision and each joint's world orientation too, as a unit quaternion\n"
               "\"orientation\": [w, x, y, z] (the frame's rotation from the joint's axes to the\n"
               "world's): {\"file\", \"joints\": [{\"name\", \"position\", \"orientation\"}]}.\n"
               "A position and orientation so printed is what `marionette solve --world` takes as\n"
               "a target. The state is the rest pose, or motion frame N\n"
               "(0-based, BVH), or the state given with --q: one number per state entry in the\n"
               "order of 'marionette info --json' (qadr): hinge angles in radians, slide lengths,\n"
               "ball joints as quaternions w,x,y,z, free joints as x,y,z then w,x,y,z.\n"
               "glTF: --anim NAME picks an animation (default the first), --frame N its N-th key\n"
               "time (0-based; `marionette info` gives the count), --time T the pose at T seconds\n"
               "(clamped to the animation). The figure is sampled at that time only.\n"
               "--every-frame prints every motion frame (glTF: every key time of the animation),\n"
               "each as 'frame N' then its joints, or in JSON {\"file\", \"frames\": [{\"frame\",\n"
               "\"time\" (seconds), \"joints\"}]}.\n"
               "A BVH joint with an unusual channel list (two position channels, say) is a\n"
               "series of 1-DOF joints in the model, 'NAME:0:Xposition' ... 'NAME' (docs/bvh.md):\n"
               "it is listed once, as NAME, like every joint of the file.\n"
               "--objects OUT.obj writes the polygon objects the joints name (the skeleton\n"
               "text's `object`, Wavefront OBJ files beside FILE) placed on their joints in\n"
               "the pose (the last one with --every-frame), as one OBJ mesh (Welman 6.1.1);\n"
               "--objects OUT.glb writes the figure in that pose as glTF 2.0 with each object a\n"
               "mesh on a node child of its joint's node.\n");
}

/* Are the pose's world positions finite? 0 after saying which is not. */
static int pose_finite(const char* file, const mn_model* m, const mn_data* d) {
    for (int j = 0; j < m->njoint; j++) {
        double p[3] = {d->xf[j].p.x, d->xf[j].p.y, d->xf[j].p.z};
        if (!mn_cli_finite(file, m->jnt_name[j], p, 3)) return 0;
    }
    return 1;
}

/* Is name that of a series member "<name>:<k>:<Channel>", one of the 1-DOF joints the BVH
 * reader makes of a joint with an unusual channel list (docs/bvh.md)? The series' last
 * joint carries the BVH joint's own name: fk lists the file's joints, so it lists that one. */
static int series_member(const char* name) {
    static const char* const ch[6] = {"Xposition", "Yposition", "Zposition",
                                      "Xrotation", "Yrotation", "Zrotation"};
    const char* c = strrchr(name, ':');
    if (!c || c == name) return 0;
    int known = 0;
    for (int k = 0; k < 6; k++)
        known |= !strcmp(c + 1, ch[k]);
    const char* d = c - 1;
    while (d > name && d[0] >= '0' && d[0] <= '9')
        d--;
    return known && d < c - 1 && d > name && *d == ':';
}

/* One pose (checked by pose_finite): the joints' world frames, as text or a JSON array. */
static void print_pose(const mn_model* m, const mn_data* d, int json) {
    if (json) printf("[");
    for (int j = 0, n = 0; j < m->njoint; j++) {
        mn_vec3 p = d->xf[j].p;
        if (series_member(m->jnt_name[j])) continue;
        if (json) {
            mn_quat r = mn_quat_from_mat3(&d->xf[j].R);
            if (r.w < 0) r = mn_q4(-r.w, -r.x, -r.y, -r.z);
            printf("%s{\"name\":", n++ ? "," : "");
            mn_cli_json_string(stdout, m->jnt_name[j]);
            printf(",\"position\":[%s,%s,%s],\"orientation\":[%s,%s,%s,%s]}", J(p.x), J(p.y),
                   J(p.z), J(r.w), J(r.x), J(r.y), J(r.z));
        } else {
            printf("%s %.9g %.9g %.9g\n", mn_cli_safe(m->jnt_name[j]), p.x, p.y, p.z);
        }
    }
    if (json) printf("]");
}

/* What fk prints frames of: the figure, its motion or its glTF animation. */
typedef struct fk_source {
    const char* file;
    const mn_model* m;
    const mn_motion* mo;
    const mn_gltf* g;
    int anim; /* the glTF animation, -1 for none */
    int use_frames, has_time;
    double time;
    double* work;
} fk_source;

/* Poses d at frame f (the state given, else the rest pose, when there are no frames) and
 * computes its world frames; 0 after a message naming the file when it cannot. */
static int pose_frame(const fk_source* s, mn_data* d, int f) {
    const mn_model* m = s->m;
    if (s->anim >= 0) {
        double t = s->has_time ? s->time : s->g->anims[s->anim].key_times[f];
        mn_error err;
        if (mn_gltf_state(s->g, m, s->anim, t, NULL, d->q, s->work, &err) != MN_OK) {
            mn_error named;
            mn_error_set(&named, err.status, s->file, 0, "", "%s", err.message);
            mn_cli_input_error(err.file[0] ? &err : &named);
            return 0;
        }
    } else if (s->use_frames && m->nq) {
        /* a figure without channels has no numbers (and mo.q is NULL) */
        memcpy(d->q, s->mo->q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
    }
    mn_fk(m, d);
    return 1;
}

/* --objects: the joints' objects placed in the pose d, as one OBJ mesh, or (OUT.glb) the
 * figure in that pose with each object a mesh on its joint's node. */
static int write_objects(const char* file, const mn_model* m, const mn_data* d, const char* out) {
    char dir[1024];
    const char* slash = strrchr(file, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - file) : 0, file);
    mn_objects o;
    mn_mesh posed;
    mn_warnings w = {0};
    mn_error err;
    if (mn_objects_read(m, dir, &o, &w, &err) != MN_OK) return mn_cli_input_error(&err);
    mn_cli_print_warnings(&w);
    int rc = MN_EXIT_OK;
    size_t n = strlen(out);
    memset(&posed, 0, sizeof posed);
    if (n > 4 && !strcmp(out + n - 4, ".glb")) {
        mn_gltf_write_options go = mn_gltf_write_default();
        go.objects = &o;
        go.pose = d->q;
        if (mn_gltf_write_ex(out, m, NULL, NULL, &go, &err) != MN_OK) rc = mn_cli_input_error(&err);
    } else if (mn_objects_pose(m, d, &o, &posed, &err) != MN_OK ||
               mn_obj_write(out, posed.nverts, posed.pos, posed.ntris, posed.tris, &err) != MN_OK)
        rc = mn_cli_input_error(&err);
    else if (o.nobjects == 0)
        fprintf(stderr, "marionette: note: %s: no joint names an object; %s is empty\n",
                mn_cli_safe(file), mn_cli_safe(out));
    mn_mesh_free(&posed);
    mn_objects_free(&o);
    return rc;
}

typedef struct fk_args {
    const char *file, *q, *objects, *anim;
    int frame, json, every;
    double time; /* NAN unless --time is given */
} fk_args;

#define AT(f, t) MN_CLI_AT(fk_args, f, t)
static const mn_cli_opt fk_opts[] = {
    {"--json", MN_CLI_FLAG, AT(json, int), .lo = 1},
    {"--every-frame", MN_CLI_FLAG, AT(every, int), .lo = 1},
    {"--anim", MN_CLI_STRING, AT(anim, const char*), .bad = "--anim needs an animation name"},
    {"--time", MN_CLI_DOUBLE, AT(time, double), 0, DBL_MAX,
     .bad = "--time needs a time in seconds >= 0"},
    {"--frame", MN_CLI_INT, AT(frame, int), 0, INT_MAX, .bad = "--frame needs a frame number >= 0"},
    {"--objects", MN_CLI_STRING, AT(objects, const char*),
     .bad = "--objects needs OUT.obj or OUT.glb"},
    {"--q", MN_CLI_STRING, AT(q, const char*), .bad = "--q needs a list of numbers"},
};
#undef AT
const mn_cli_table mn_cmd_fk_options = {
    .cmd = "fk",
    MN_CLI_OPTS(fk_opts),
    .unknown = "unknown option '%s'",
    .max_pos = 1,
    .too_many = "one FILE only",
};

/* The arguments into a; 0 or the usage error's exit status. */
static int parse_args(int argc, char** argv, fk_args* a) {
    memset(a, 0, sizeof *a);
    a->frame = -1;
    a->time = NAN;
    int rc = mn_cli_parse(&mn_cmd_fk_options, argc, argv, a, &a->file, NULL);
    if (rc) return rc;
    if (!a->file) return mn_cli_usage_error("fk", "missing FILE");
    if ((a->frame >= 0) + (a->q != NULL) + !isnan(a->time) + a->every > 1)
        return mn_cli_usage_error("fk",
                                  "--frame, --every-frame, --time and --q exclude each other");
    return 0;
}

/* The figure of file: a glTF file read whole (its animations sampled later), else the
 * figure and its motion; 0 or the exit status after the message. */
static int read_figure(const char* file, int is_gltf, mn_model** m, mn_motion* mo, mn_gltf* g) {
    mn_warnings w = {0};
    mn_error err;
    if (is_gltf) {
        /* read the file, then sample the times asked for: nothing is resampled */
        if (mn_gltf_read(file, g, &w, &err) != MN_OK) return mn_cli_input_error(&err);
        *m = mn_gltf_model(g, &err);
        if (!*m) {
            mn_gltf_free(g);
            return mn_cli_input_error(&err);
        }
    } else if (mn_figure_read(file, m, mo, &w, &err) != MN_OK) {
        return mn_cli_input_error(&err);
    }
    mn_cli_print_warnings(&w);
    return 0;
}

/* The glTF animation and its key frames [first, last] that a asks for, with the work space
 * to sample it; 0 or the exit status after the message. */
static int pick_anim(const fk_args* a, fk_source* src, int* first, int* last) {
    const mn_gltf* g = src->g;
    int anim = a->anim ? mn_gltf_find_anim(g, a->anim) : 0;
    if (anim < 0 || anim >= g->nanims) {
        /* the option given is the one to blame: --anim only when it was given */
        const char* opt = a->anim           ? "--anim"
                          : a->every        ? "--every-frame"
                          : !isnan(a->time) ? "--time"
                                            : "--frame";
        fprintf(stderr, "marionette: %s: %s: %s\n", mn_cli_safe(a->file), opt,
                g->nanims ? "no animation of that name (see marionette info)"
                          : "the file has no animation");
        return MN_EXIT_INPUT;
    }
    const mn_gltf_anim* an = &g->anims[anim];
    if (a->frame >= an->nkeys) {
        fprintf(stderr, "marionette: %s: --frame %d: animation %d has %d key times\n",
                mn_cli_safe(a->file), a->frame, anim, an->nkeys);
        return MN_EXIT_INPUT;
    }
    src->anim = anim;
    *first = a->frame >= 0 ? a->frame : 0;
    *last = a->every ? an->nkeys - 1 : *first;
    src->work = malloc(sizeof(double) * 16 * (size_t)g->njoints + 1);
    if (!src->work) {
        mn_error err;
        mn_error_set(&err, MN_ERR_NOMEM, a->file, 0, "", "out of memory");
        return mn_cli_input_error(&err);
    }
    return 0;
}

/* --q into d->q; 0 or the usage error's exit status. */
static int set_q(const mn_model* m, mn_data* d, const char* file, const char* text) {
    double* q = malloc(sizeof(double) * (size_t)(m->nq + 1));
    int n = q ? mn_cli_parse_list(text, q, m->nq + 1) : -1;
    int rc = 0;
    if (n != m->nq)
        rc = mn_cli_usage_error("fk",
                                "--q: expected %d finite numbers (the state size of %s), got %s",
                                m->nq, file, n < 0 ? "a malformed list" : "a different count");
    else if (mn_q_check(m, q) != MN_OK)
        rc = mn_cli_usage_error("fk", "--q: a ball or free joint quaternion is zero");
    else
        memcpy(d->q, q, sizeof(double) * (size_t)m->nq);
    free(q);
    return rc;
}

/* Frames first..last of src, each posed and checked before anything is printed, so a
 * failure partway (a value that is not finite, a glTF pose that cannot be sampled) leaves no
 * half-printed output: nothing on stdout, one message naming the file, exit status 1. The
 * state set with --q is kept aside for the printing pass. */
static int check_frames(const fk_source* src, mn_data* d, int first, int last) {
    const mn_model* m = src->m;
    double* q_given = malloc(sizeof(double) * (size_t)(m->nq + 1));
    if (!q_given) {
        mn_error err;
        mn_error_set(&err, MN_ERR_NOMEM, src->file, 0, "", "out of memory");
        return mn_cli_input_error(&err);
    }
    memcpy(q_given, d->q, sizeof(double) * (size_t)m->nq);
    int rc = 0;
    for (int f = first; f <= last && !rc; f++)
        if (!pose_frame(src, d, f) || !pose_finite(src->file, m, d)) rc = MN_EXIT_INPUT;
    memcpy(d->q, q_given, sizeof(double) * (size_t)m->nq);
    free(q_given);
    return rc;
}

/* Frames first..last of src (checked by check_frames), as text or JSON. */
static void print_frames(const fk_source* src, mn_data* d, int first, int last, int every,
                         int json) {
    if (json) {
        printf("{\"file\":");
        mn_cli_json_string(stdout, src->file);
        printf(every ? ",\"frames\":[" : ",\"joints\":");
    }
    for (int f = first; f <= last; f++) {
        pose_frame(src, d, f); /* as in the first pass: it succeeds */
        if (every) {
            double t =
                src->anim >= 0 ? src->g->anims[src->anim].key_times[f] : f * src->mo->frame_time;
            if (json)
                printf("%s{\"frame\":%d,\"time\":%s,\"joints\":", f > first ? "," : "", f, J(t));
            else
                printf("frame %d\n", f);
        }
        print_pose(src->m, d, json);
        if (every && json) printf("}");
    }
    if (json) printf(every ? "]}\n" : "}\n");
}

int mn_cmd_fk(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    fk_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    const char* file = a.file;
    int has_time = !isnan(a.time);
    mn_model* m = NULL;
    mn_motion mo;
    mn_gltf g;
    int is_gltf = mn_file_kind_of(file) == MN_FILE_GLTF;
    memset(&mo, 0, sizeof mo);
    memset(&g, 0, sizeof g);
    if ((a.anim || has_time) && !is_gltf)
        return mn_cli_usage_error("fk", "--anim and --time are for glTF files");
    fk_source src = {file, NULL, &mo, &g, -1, a.frame >= 0 || a.every, has_time, a.time, NULL};
    rc = read_figure(file, is_gltf, &m, &mo, &g);
    if (rc) return rc;
    src.m = m;
    mn_data* d = mn_data_create(m, 0);
    if (!d) {
        fprintf(stderr, "marionette: %s: out of memory for the figure's data\n", mn_cli_safe(file));
        rc = MN_EXIT_INPUT;
        goto done;
    }
    /* the poses to print: frames [first, last] of the motion or of the animation's keys */
    int first = 0, last = 0;
    if (is_gltf && (a.frame >= 0 || has_time || a.anim || a.every)) {
        rc = pick_anim(&a, &src, &first, &last);
    } else if (a.frame >= 0 || a.every) {
        if (a.frame >= mo.nframes || (a.every && mo.nframes == 0)) {
            fprintf(stderr, "marionette: %s: %s: the file has %d frames\n", mn_cli_safe(file),
                    a.every ? "--every-frame" : "--frame", mo.nframes);
            rc = MN_EXIT_INPUT;
        }
        first = a.every ? 0 : a.frame;
        last = a.every ? mo.nframes - 1 : a.frame;
    } else if (a.q) {
        rc = set_q(m, d, file, a.q);
    }
    if (!rc) rc = check_frames(&src, d, first, last);
    if (rc) goto done;
    print_frames(&src, d, first, last, a.every, a.json);
    if (a.objects) rc = write_objects(file, m, d, a.objects);
done:
    free(src.work);
    mn_data_destroy(d);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    mn_gltf_free(&g);
    return rc;
}
