/* marionette pose: pin, drag and balance a figure as a scene file says (Welman ch. 5). */
#include <marionette/constrain.h>
#include <marionette/gltf.h>
#include <marionette/io.h>
#include <marionette/model.h>
#include <marionette/scene.h>
#include <marionette/sequence.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "options.h"

#define J mn_cli_json_num

const char mn_cmd_pose_summary[] = "pose a figure under the constraints and drags of a scene file";

static void usage(FILE* f) {
    fprintf(
        f,
        "usage: marionette pose [MODEL] --scene SCENE.json [--solver lagrange|ccd|dls] [--json]\n"
        "                       [--iters N] [--tol T] [--scale S] [--frame N] "
        "[--anim NAME]\n"
        "                       [--free-translations] [--out OUT.bvh|OUT.glb] [--fps F]\n"
        "                       [--root JOINT]\n"
        "\n"
        "Reads a figure (skeleton text, BVH, URDF, glTF; MODEL \"stickman\" is the built-in\n"
        "stick figure when no file of that name exists) and a scene naming handles,\n"
        "constraints and drags (docs/scene.md). Pins and orientations without a target hold\n"
        "where the figure stands. For each frame of the scene the drags move to that frame's\n"
        "targets and the solver runs once. Prints the final state q, joint by joint, and the\n"
        "residual of every constraint (metres or radians).\n"
        "A scene with \"figures\" names its figures itself (files beside the scene, joints\n"
        "\"figure/joint\"): give no MODEL; q lines read \"q FIGURE/JOINT:\", and --out OUT\n"
        "writes one file per figure, OUT with the figure's name before its extension.\n"
        "\n"
        "  --solver NAME  lagrange (default; maintained constraints, Welman 5.2), ccd (the\n"
        "                 penalty method of 5.4) or dls (damped least squares with priorities);\n"
        "                 overrides the scene's \"solver\"\n"
        "  --iters N      steps per frame (default: the scene's \"iterations\", else 50)\n"
        "  --tol T        tolerance in metres and radians (default 1e-4)\n"
        "  --scale S      multiply BVH lengths by S (CMU files: 0.056444 for metres)\n"
        "  --frame N      start from frame N of the figure's motion: a BVH file's frame, a\n"
        "                 glTF file's N-th key time of its animation (default: the rest pose)\n"
        "  --anim NAME    glTF: the animation --frame reads (default: the first; alone: its\n"
        "                 first key)\n"
        "  --free-translations  also move the joints the figure holds: the position channels\n"
        "                 of a BVH rig below its root (bone lengths), held by default\n"
        "  --out OUT      also write every frame's solved state as a BVH motion (.bvh) or a\n"
        "                 glTF 2.0 binary with the figure and its animation (.glb; with the\n"
        "                 skinned mesh when MODEL is a skinned glTF file), replaced\n"
        "                 atomically; nothing is written when the figure or scene is bad\n"
        "  --fps F        frame rate of that motion (default: the BVH file's, else 30)\n"
        "  --root JOINT   re-root the figure at JOINT first, every joint where it stands (a\n"
        "                 hand or a foot as the root; overrides the scene's \"root\"); the\n"
        "                 state printed and written is the re-rooted figure's\n"
        "  --json         print one JSON object instead of text\n"
        "\n"
        "Exit status: 0 when posed (the status line says whether every constraint was met),\n"
        "1 for a bad figure or scene (the message names file, line and field), 2 for usage.\n");
}

/* Where pose starts: frame N of the figure's motion (a BVH file's frames, a glTF file's
 * key times of one animation), or the rest pose when frame < 0. */
typedef struct start_pose {
    int frame;
    const char* anim; /* glTF: the animation's name, NULL for the first */
} start_pose;

/* Poses *d (created here) at frame sp->frame of a glTF file's animation, read from its key
 * times (nothing is resampled, as `marionette fk --frame`). */
static int gltf_start(const char* path, const mn_gltf* g, const mn_model* m, const start_pose* sp,
                      mn_data* d) {
    mn_error err;
    int anim = sp->anim ? mn_gltf_find_anim(g, sp->anim) : 0;
    if (anim < 0 || anim >= g->nanims) {
        mn_error_set(&err, MN_ERR_ARG, path, 0, sp->anim ? "--anim" : "--frame", "%s",
                     g->nanims ? "no animation of that name (see marionette info)"
                               : "the file has no animation");
        return mn_cli_input_error(&err);
    }
    const mn_gltf_anim* an = &g->anims[anim];
    if (sp->frame >= an->nkeys) {
        mn_error_set(&err, MN_ERR_ARG, path, 0, "--frame", "animation %d has %d key times, no %d",
                     anim, an->nkeys, sp->frame);
        return mn_cli_input_error(&err);
    }
    double* work = malloc(sizeof(double) * 16 * (size_t)g->njoints + 1);
    if (!work) {
        mn_error_set(&err, MN_ERR_NOMEM, path, 0, "", "out of memory");
        return mn_cli_input_error(&err);
    }
    mn_status st = mn_gltf_state(g, m, anim, an->key_times[sp->frame], NULL, d->q, work, &err);
    free(work);
    if (st != MN_OK) return mn_cli_input_error(&err);
    mn_fk(m, d);
    return MN_EXIT_OK;
}

/* Reads the figure and its start state into d (created here); *frame_time gets the BVH
 * motion's frame time (left as it is for other files). With skin non-NULL, a skinned glTF
 * figure's mesh and skin go there (zeroed otherwise). */
static int load(const char* path, double scale, const start_pose* sp, mn_model** m, mn_data** d,
                double* frame_time, mn_gltf* skin) {
    mn_error err;
    mn_error_clear(&err);
    *m = NULL;
    *d = NULL;
    mn_motion mo;
    memset(&mo, 0, sizeof mo);
    mn_gltf own; /* a glTF file, kept for its animations and its skin */
    memset(&own, 0, sizeof own);
    if (skin) memset(skin, 0, sizeof *skin);
    int is_gltf = mn_file_kind_of(path) == MN_FILE_GLTF;
    mn_status st;
    if (sp->anim && !is_gltf) return mn_cli_usage_error("pose", "--anim is for glTF files");
    if (is_gltf) {
        if (scale != 1.0) return mn_cli_usage_error("pose", "--scale applies to BVH files only");
        mn_warnings w;
        memset(&w, 0, sizeof w);
        st = mn_gltf_read(path, &own, &w, &err);
        mn_cli_print_warnings(&w);
        /* the model is built from the same file the skin is kept from, so its joints are
         * the skin's, in the skin's order (as mn_figure_read_skin) */
        if (st == MN_OK && !(*m = mn_gltf_model(&own, &err))) st = err.status;
        if (st != MN_OK) mn_gltf_free(&own);
    } else if (mn_file_kind_of(path) == MN_FILE_BVH) {
        mn_bvh_options bo = mn_bvh_default();
        bo.scale = scale;
        mn_warnings w;
        memset(&w, 0, sizeof w);
        st = mn_bvh_read(path, &bo, m, &mo, &w, &err);
        mn_cli_print_warnings(&w);
        if (st == MN_OK && mo.frame_time > 0) *frame_time = mo.frame_time;
    } else {
        if (scale != 1.0) return mn_cli_usage_error("pose", "--scale applies to BVH files only");
        st = mn_figure_read(path, m, NULL, NULL, &err);
    }
    if (st != MN_OK) {
        mn_motion_free(&mo);
        return mn_cli_input_error(&err);
    }
    int rc = MN_EXIT_OK;
    if (sp->frame >= 0 && !is_gltf && sp->frame >= mo.nframes) {
        mn_error_set(&err, MN_ERR_ARG, path, 0, "--frame", "the motion has %d frames, no frame %d",
                     mo.nframes, sp->frame);
        rc = mn_cli_input_error(&err);
        goto fail;
    }
    *d = mn_data_create(*m, 0);
    if (!*d) {
        fprintf(stderr, "marionette: %s: out of memory for the figure's data\n", mn_cli_safe(path));
        rc = MN_EXIT_INPUT;
        goto fail;
    }
    if (sp->frame >= 0 && is_gltf) {
        rc = gltf_start(path, &own, *m, sp, *d);
        if (rc != MN_EXIT_OK) goto fail;
    } else if (sp->frame >= 0) {
        if ((*m)->nq) /* a figure without channels has no numbers (and mo.q is NULL) */
            memcpy((*d)->q, mo.q + (size_t)sp->frame * (*m)->nq, sizeof(double) * (size_t)(*m)->nq);
        mn_fk(*m, *d);
    }
    mn_motion_free(&mo);
    if (skin && own.nverts > 0)
        *skin = own; /* the skinned mesh, for --out OUT.glb */
    else
        mn_gltf_free(&own);
    return MN_EXIT_OK;
fail:
    mn_data_destroy(*d);
    *d = NULL;
    mn_motion_free(&mo);
    mn_gltf_free(&own);
    mn_model_destroy(*m);
    *m = NULL;
    return rc;
}

/* The worst of a scene's frames: the largest violations and drag error with the frames
 * they happened at, the frames whose solve failed and the first of them. */
typedef struct pose_worst {
    double v, rot, drag;
    int v_frame, rot_frame, unmet_frames;
    int first_bad;
    mn_status status;
    char message[sizeof(((mn_csolve_result*)0)->message)];
} pose_worst;

static void worst_add(pose_worst* w, const mn_csolve_result* r, int f) {
    if (f == 0 || r->max_violation > w->v) w->v = r->max_violation, w->v_frame = f;
    if (f == 0 || r->max_rot_violation > w->rot) w->rot = r->max_rot_violation, w->rot_frame = f;
    if (f == 0 || r->max_drag_error > w->drag) w->drag = r->max_drag_error;
    if (r->status == MN_OK) return;
    w->unmet_frames++;
    if (w->first_bad >= 0) return;
    w->first_bad = f, w->status = r->status;
    snprintf(w->message, sizeof w->message, "frame %d: %.160s", f, r->message);
}

/* The result printed: the last frame's, with the worst frame's figures (a NaN anywhere
 * stays in them, for the finiteness check). */
static void worst_into(const pose_worst* w, mn_csolve_result* r) {
    if (!isnan(r->max_violation)) r->max_violation = w->v;
    if (!isnan(r->max_rot_violation)) r->max_rot_violation = w->rot;
    if (!isnan(r->max_drag_error)) r->max_drag_error = w->drag;
    if (w->first_bad < 0) return;
    r->status = w->status;
    snprintf(r->message, sizeof r->message, "%s", w->message);
}

/* --root JOINT, else the scene's "root": the figure re-rooted there (mn_model_reroot), its
 * state carried over so that every joint stays where it stands. */
static int reroot(const char* model_path, const char* root_name, const mn_scene* sc, int figure,
                  mn_model** m, mn_data** d, int skinned) {
    mn_error err;
    int j = -1;
    if (root_name) {
        j = mn_model_find_joint(*m, root_name);
        if (j < 0) {
            char hint[256];
            fprintf(stderr, "marionette: %s: --root: no joint named \"%s\"%s\n",
                    mn_cli_safe(model_path), mn_cli_safe(root_name),
                    mn_cli_safe(mn_model_joint_hint(*m, root_name, hint, sizeof hint)));
            return MN_EXIT_INPUT;
        }
    } else if (mn_scene_root_joint(sc, figure, *m, &j, &err) != MN_OK) {
        return mn_cli_input_error(&err);
    }
    if (j < 0) return MN_EXIT_OK;
    if (skinned) {
        fprintf(stderr,
                "marionette: %s: --root: a skinned figure keeps its root (its skin is bound to "
                "the joints as they are)\n",
                mn_cli_safe(model_path));
        return MN_EXIT_INPUT;
    }
    mn_model* rm = mn_model_reroot(*m, j, (*d)->q, &err);
    mn_data* rd = rm ? mn_data_create(rm, 0) : NULL;
    if (!rm || !rd || mn_model_reroot_state(*m, (*d)->q, rm, rd->q, &err) != MN_OK) {
        if (rm && rd) err.status = err.status ? err.status : MN_ERR_NOMEM;
        mn_data_destroy(rd);
        mn_model_destroy(rm);
        if (!rm) {
            const char* msg = err.message; /* "joint: why" without its field */
            size_t fl = strlen(err.field);
            if (fl && !strncmp(msg, err.field, fl) && msg[fl] == ':')
                msg += fl + (msg[fl + 1] ? 2 : 1);
            fprintf(stderr, "marionette: %s: --root: %s\n", mn_cli_safe(model_path),
                    mn_cli_safe(msg));
            return MN_EXIT_INPUT;
        }
        return mn_cli_input_error(&err);
    }
    mn_fk(rm, rd);
    mn_data_destroy(*d);
    mn_model_destroy(*m);
    *m = rm, *d = rd;
    return MN_EXIT_OK;
}

static void print_text(const mn_model* m, const mn_data* d, mn_csys* s, const mn_csolve_result* r,
                       const pose_worst* w, const char* solver, int frames,
                       const char* model_name) {
    printf(
        "model=%s solver=%s frames=%d status=%s iters=%d max_violation=%.3g max_rot_violation=%.3g "
        "max_drag_error=%.3g unmet=%d worst_frame=%d worst_rot_frame=%d unmet_frames=%d\n",
        mn_cli_safe(model_name), solver, frames, mn_status_name(r->status), r->iterations,
        r->max_violation, r->max_rot_violation, r->max_drag_error, r->nunmet, w->v_frame,
        w->rot_frame, w->unmet_frames);
    if (r->status != MN_OK && r->message[0]) printf("# %s\n", mn_cli_safe(r->message));
    for (int j = 0; j < m->njoint; j++) {
        int nq = mn_joint_type_nq((mn_joint_type)m->jnt_type[j]);
        if (!nq) continue;
        printf("q %s:", mn_cli_safe(m->jnt_name[j]));
        for (int k = 0; k < nq; k++)
            printf(" %.9g", d->q[m->jnt_qadr[j] + k]);
        printf("\n");
    }
    for (int c = 0; c < mn_csys_constraint_count(s); c++) {
        const mn_constraint_def* cd = mn_csys_constraint(s, c);
        printf("constraint %d %s residual=%.3g%s%s\n", c, mn_constraint_type_name(cd->type),
               mn_csys_residual(s, c), cd->enabled ? "" : " disabled",
               mn_csys_unmet(s, c) ? " unmet" : "");
    }
}

/* --json: one line, no spaces, as every command's --json (cli/json_out.c); numbers in the
 * shortest form that reads back. */
static void print_summary_json(const mn_csolve_result* r, const pose_worst* w, const char* solver,
                               int frames) {
    printf("\"solver\":\"%s\",\"frames\":%d,\"status\":\"%s\",\"iters\":%d,"
           "\"max_violation\":%s,\"max_rot_violation\":%s,\"max_drag_error\":%s,"
           "\"worst_frame\":%d,\"worst_rot_frame\":%d,\"unmet_frames\":%d,\"message\":",
           solver, frames, mn_status_name(r->status), r->iterations, J(r->max_violation),
           J(r->max_rot_violation), J(r->max_drag_error), w->v_frame, w->rot_frame,
           w->unmet_frames);
    mn_cli_json_string(stdout, r->status == MN_OK ? "" : r->message);
}

static void print_q_json(const double* q, int n) {
    printf("[");
    for (int k = 0; k < n; k++)
        printf("%s%s", k ? "," : "", J(q[k]));
    printf("]");
}

static void print_json(const mn_model* m, const mn_data* d, mn_csys* s, const mn_csolve_result* r,
                       const pose_worst* w, const char* solver, int frames,
                       const char* model_name) {
    printf("{\"model\":");
    mn_cli_json_string(stdout, model_name);
    printf(",");
    print_summary_json(r, w, solver, frames);
    printf(",\"q\":");
    print_q_json(d->q, m->nq);
    printf(",\"joints\":[");
    int first = 1;
    for (int j = 0; j < m->njoint; j++) {
        int nq = mn_joint_type_nq((mn_joint_type)m->jnt_type[j]);
        if (!nq) continue;
        printf("%s{\"name\":", first ? "" : ",");
        mn_cli_json_string(stdout, m->jnt_name[j]);
        printf(",\"type\":\"%s\",\"q\":", mn_joint_type_name((mn_joint_type)m->jnt_type[j]));
        print_q_json(d->q + m->jnt_qadr[j], nq);
        printf("}");
        first = 0;
    }
    printf("],\"constraints\":[");
    for (int c = 0; c < mn_csys_constraint_count(s); c++) {
        const mn_constraint_def* cd = mn_csys_constraint(s, c);
        printf("%s{\"index\":%d,\"type\":\"%s\",\"enabled\":%s,\"residual\":%s,\"met\":%s}",
               c ? "," : "", c, mn_constraint_type_name(cd->type), cd->enabled ? "true" : "false",
               J(mn_csys_residual(s, c)), mn_csys_unmet(s, c) ? "false" : "true");
    }
    printf("]}\n");
}

/* The options of a pose run that the figures' path shares. */
typedef struct pose_opts {
    mn_csolve_options o;
    int json;
    const char* out_path;
    double fps, scale;
} pose_opts;

/* A figure animated by a sequence, placed: every key's free root moved (the in-betweens
 * follow, interpolation commuting with a fixed rigid motion). A root that is not free
 * cannot be moved by its keys: the figure must stand where it is. */
static int place_keys(const mn_scene* sc, int i, const mn_model* m, mn_seq* seq, const char* path) {
    mn_xform P = mn_scene_figure_place(sc, i);
    mn_xform I = mn_xform_identity();
    if (!memcmp(&P, &I, sizeof P)) return MN_EXIT_OK;
    if (m->jnt_type[0] != MN_JOINT_FREE || m->nroot != 1) {
        fprintf(stderr,
                "marionette: %s: a figure whose root is not free cannot be placed (its keys "
                "hold no root position)\n",
                mn_cli_safe(path));
        return MN_EXIT_INPUT;
    }
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    if (!q) return MN_EXIT_INPUT;
    for (int k = 0; k < mn_seq_key_count(seq); k++) {
        memcpy(q, mn_seq_key_q(seq, k), sizeof(double) * (size_t)m->nq);
        mn_free_joint_place(m, 0, &P, q + m->jnt_qadr[0]);
        mn_seq_set_key(seq, mn_seq_key_frame(seq, k), q, NULL);
    }
    free(q);
    return MN_EXIT_OK;
}

/* Figure i animated by a sequence, re-rooted at joint j (its entry's "root"; Welman 2.1.2,
 * 6.3): the figure re-rooted where its first key stands it (mn_model_reroot), and the
 * sequence's keys moved onto it (mn_seq_reroot: each key puts every joint where it did). */
static int reroot_keys(const mn_scene* sc, int i, int j, mn_model** m, mn_seq** seq) {
    mn_error err, e;
    const double* q0 = mn_seq_key_count(*seq) > 0 ? mn_seq_key_q(*seq, 0) : NULL;
    mn_model* rm = mn_model_reroot(*m, j, q0, &err);
    mn_seq* rs = rm ? mn_seq_reroot(*seq, rm, &err) : NULL;
    if (!rs) {
        mn_model_destroy(rm);
        const char* msg = err.message; /* "field: why" without its field */
        size_t fl = strlen(err.field);
        if (fl && !strncmp(msg, err.field, fl) && msg[fl] == ':') msg += fl + (msg[fl + 1] ? 2 : 1);
        mn_error cause = err;
        snprintf(cause.message, sizeof cause.message, "its sequence cannot be re-rooted: %.400s",
                 msg);
        mn_scene_figure_error(sc, i, "root", &cause, &e);
        return mn_cli_input_error(&e);
    }
    mn_seq_destroy(*seq);
    mn_model_destroy(*m);
    *m = rm, *seq = rs;
    return MN_EXIT_OK;
}

/* Figure i of a scene placed where the scene stands it: a free root's state moved, any
 * other root's placement (a fixed robot base) moved in the model. */
static int place_figure(const mn_scene* sc, int i, mn_model** m, mn_data* d) {
    mn_xform P = mn_scene_figure_place(sc, i);
    mn_model* pm = NULL;
    for (int j = 0; j < (*m)->njoint; j++) {
        if ((*m)->jnt_parent[j] >= 0) continue;
        if ((*m)->jnt_type[j] == MN_JOINT_FREE) {
            mn_free_joint_place(*m, j, &P, d->q + (*m)->jnt_qadr[j]);
            continue;
        }
        if (!pm) {
            mn_spec* s = mn_model_decompile(*m);
            if (!s) return MN_EXIT_INPUT;
            for (int k = 0; k < mn_spec_joint_count(s); k++) {
                mn_joint_def* jd = mn_spec_joint(s, k);
                if (jd->parent >= 0 || jd->type == MN_JOINT_FREE) continue;
                jd->offset = mn_xform_apply(&P, jd->offset);
                jd->orient = mn_quat_mul(mn_quat_from_mat3(&P.R), jd->orient);
            }
            mn_error err;
            pm = mn_model_compile(s, &err);
            mn_spec_destroy(s);
            if (!pm) return mn_cli_input_error(&err);
        }
    }
    if (pm) {
        mn_model_destroy(*m);
        *m = pm;
    }
    return MN_EXIT_OK;
}

/* OUT with the figure's name before its extension: crouch.bvh -> crouch.a.bvh. */
static void figure_out_path(const char* out, const char* name, char* buf, size_t cap) {
    const char* dot = strrchr(out, '.');
    snprintf(buf, cap, "%.*s.%s%s", (int)(dot - out), out, name, dot);
}

/* The figures of a scene, as pose_figures reads them: a model and data for each, the
 * sequence of each animated figure, and the frames those sequences span. */
typedef struct scene_figures {
    int n;
    mn_model* m[8];
    mn_data* d[8];
    mn_figure figs[8];
    mn_seq* seq[8];
    double f0, f1, fps;
} scene_figures;

/* A figure animated by its sequence document (the scene's `sequence`): read, placed at the
 * first key by the scene's placement, its frames added to the span. */
static int read_animated_figure(const mn_scene* sc, int i, const char* path, scene_figures* F) {
    mn_seq_read_options ro = mn_seq_read_default();
    ro.trusted = 1;
    mn_seq_doc_info info;
    mn_error e;
    int j, rc;
    if (mn_seq_read(path, &ro, &F->m[i], &F->seq[i], &info, &e) != MN_OK) {
        rc = mn_cli_input_error(&e);
    } else if (mn_scene_root_joint(sc, i, F->m[i], &j, &e) != MN_OK) {
        rc = mn_cli_input_error(&e);
    } else {
        rc = MN_EXIT_OK;
        if (j >= 0 && F->m[i]->jnt_parent[j] >= 0) rc = reroot_keys(sc, i, j, &F->m[i], &F->seq[i]);
        if (rc == MN_EXIT_OK) rc = place_keys(sc, i, F->m[i], F->seq[i], path);
    }
    if (rc == MN_EXIT_OK && !(F->d[i] = mn_data_create(F->m[i], 0))) rc = MN_EXIT_INPUT;
    if (rc != MN_EXIT_OK) return rc;
    int nk = mn_seq_key_count(F->seq[i]);
    if (nk > 0) {
        F->f0 = fmin(F->f0, mn_seq_key_frame(F->seq[i], 0));
        F->f1 = fmax(F->f1, mn_seq_key_frame(F->seq[i], nk - 1));
    }
    if (F->fps == 0) F->fps = mn_seq_fps(F->seq[i]);
    F->figs[i].model = F->m[i];
    F->figs[i].data = F->d[i];
    return MN_EXIT_OK;
}

/* A figure from its file (beside the scene, or as given: absolute, or the built-in
 * "stickman"), re-rooted and placed as the scene says. */
static int read_posed_figure(const mn_scene* sc, int i, const char* dir, const pose_opts* po,
                             scene_figures* F) {
    const char* file = mn_scene_figure_file(sc, i);
    char path[2048];
    snprintf(path, sizeof path, "%s%s", file[0] == '/' ? "" : dir, file);
    FILE* probe = fopen(path, "rb");
    if (probe)
        fclose(probe);
    else
        snprintf(path, sizeof path, "%s", file);
    start_pose sp = {-1, NULL};
    double ft = 1.0 / 30.0;
    int rc = load(path, po->scale, &sp, &F->m[i], &F->d[i], &ft, NULL);
    if (rc == MN_EXIT_OK) rc = reroot(path, NULL, sc, i, &F->m[i], &F->d[i], 0);
    if (rc == MN_EXIT_OK) rc = place_figure(sc, i, &F->m[i], F->d[i]);
    if (rc != MN_EXIT_OK) return rc;
    mn_data* nd = mn_data_create(F->m[i], 0); /* a placed model: data of its own */
    if (!nd) return MN_EXIT_INPUT;
    memcpy(nd->q, F->d[i]->q, sizeof(double) * (size_t)F->m[i]->nq);
    mn_fk(F->m[i], nd);
    mn_data_destroy(F->d[i]);
    F->d[i] = nd;
    F->figs[i].model = F->m[i];
    F->figs[i].data = F->d[i];
    return MN_EXIT_OK;
}

static int read_figures(const char* scene_path, const mn_scene* sc, const pose_opts* po,
                        scene_figures* F) {
    char dir[1024];
    const char* slash = strrchr(scene_path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - scene_path + 1) : 0, scene_path);
    int rc = MN_EXIT_OK;
    for (int i = 0; i < F->n && rc == MN_EXIT_OK; i++) {
        const char* sq = mn_scene_figure_sequence(sc, i);
        if (sq) {
            char path[2048];
            snprintf(path, sizeof path, "%s%s", sq[0] == '/' ? "" : dir, sq);
            rc = read_animated_figure(sc, i, path, F);
        } else {
            rc = read_posed_figure(sc, i, dir, po, F);
        }
    }
    /* the animated figures start at the first key: the scene's pins hold them there */
    if (rc == MN_EXIT_OK && F->f0 <= F->f1 && F->f1 - F->f0 + 1 > MN_SCENE_MAX_FRAMES) {
        /* refused before any solve: keys at 0 and 9,999,998 are ten million solves */
        mn_error e;
        mn_error_set(&e, MN_ERR_ARG, scene_path, 0, "figures",
                     "the sequences run from frame %.17g to %.17g, more than %d frames", F->f0,
                     F->f1, MN_SCENE_MAX_FRAMES);
        rc = mn_cli_input_error(&e);
    }
    return rc;
}

/* The result of a scene of figures: JSON, or key=value lines, the q of every figure's
 * joints and every constraint's residual. */
static void print_figures(const mn_scene* sc, const scene_figures* F, mn_csys* s,
                          const mn_csolve_result* r, const pose_worst* w, const pose_opts* po,
                          int frames) {
    const char* solver = mn_csolver_name(po->o.method);
    if (po->json) {
        printf("{");
        print_summary_json(r, w, solver, frames);
        printf(",\"figures\":[");
        for (int i = 0; i < F->n; i++) {
            printf("%s{\"name\":", i ? "," : "");
            mn_cli_json_string(stdout, mn_scene_figure_name(sc, i));
            printf(",\"q\":");
            print_q_json(F->d[i]->q, F->m[i]->nq);
            printf("}");
        }
        printf("],\"constraints\":[");
        for (int c = 0; c < mn_csys_constraint_count(s); c++)
            printf("%s{\"index\":%d,\"type\":\"%s\",\"residual\":%s,\"met\":%s}", c ? "," : "", c,
                   mn_constraint_type_name(mn_csys_constraint(s, c)->type),
                   J(mn_csys_residual(s, c)), mn_csys_unmet(s, c) ? "false" : "true");
        printf("]}\n");
        return;
    }
    printf("figures=%d solver=%s frames=%d status=%s iters=%d max_violation=%.3g "
           "max_rot_violation=%.3g max_drag_error=%.3g unmet=%d worst_frame=%d "
           "worst_rot_frame=%d unmet_frames=%d\n",
           F->n, solver, frames, mn_status_name(r->status), r->iterations, r->max_violation,
           r->max_rot_violation, r->max_drag_error, r->nunmet, w->v_frame, w->rot_frame,
           w->unmet_frames);
    if (r->status != MN_OK && r->message[0]) printf("# %s\n", mn_cli_safe(r->message));
    for (int i = 0; i < F->n; i++)
        for (int j = 0; j < F->m[i]->njoint; j++) {
            int nq = mn_joint_type_nq((mn_joint_type)F->m[i]->jnt_type[j]);
            if (!nq) continue;
            printf("q %s/%s:", mn_cli_safe(mn_scene_figure_name(sc, i)),
                   mn_cli_safe(F->m[i]->jnt_name[j]));
            for (int k = 0; k < nq; k++)
                printf(" %.9g", F->d[i]->q[F->m[i]->jnt_qadr[j] + k]);
            printf("\n");
        }
    for (int c = 0; c < mn_csys_constraint_count(s); c++) {
        const mn_constraint_def* cd = mn_csys_constraint(s, c);
        printf("constraint %d %s residual=%.3g%s%s\n", c, mn_constraint_type_name(cd->type),
               mn_csys_residual(s, c), cd->enabled ? "" : " disabled",
               mn_csys_unmet(s, c) ? " unmet" : "");
    }
}

/* The frames of a scene of figures, solved together; each figure's q at each frame into
 * mo[i] when they are written. Per animated figure: the plain in-between of the last frame
 * and the correction the solve made to it, carried to the next frame (80% of it, as
 * mn_seq_solve_frame). */
static int solve_figures(const mn_scene* sc, scene_figures* F, mn_csys* s, const pose_opts* po,
                         int frames, mn_motion* mo, mn_csolve_result* r, pose_worst* w) {
    double* plain_prev[8] = {0};
    double* corr[8] = {0};
    int rc = MN_EXIT_OK, animated = F->f0 <= F->f1;
    for (int i = 0; i < F->n && rc == MN_EXIT_OK; i++)
        if (F->seq[i]) {
            plain_prev[i] = malloc(sizeof(double) * (size_t)(F->m[i]->nq + 1));
            corr[i] = calloc((size_t)F->m[i]->nv + 1, sizeof(double));
            if (!plain_prev[i] || !corr[i]) rc = MN_EXIT_INPUT;
        }
    for (int f = 0; f < frames && rc == MN_EXIT_OK; f++) {
        for (int i = 0; i < F->n; i++) {
            if (!F->seq[i]) continue;
            mn_seq_sample(F->seq[i], F->f0 + f, plain_prev[i]);
            memcpy(F->d[i]->q, plain_prev[i], sizeof(double) * (size_t)F->m[i]->nq);
            mn_integrate(F->m[i], F->d[i]->q, corr[i], 0.8);
            mn_fk(F->m[i], F->d[i]);
        }
        if (animated) mn_csys_invalidate(s);
        int sf = mn_scene_frames(sc);
        mn_scene_apply_frame(sc, s, f < sf ? f : sf - 1);
        mn_csys_solve(s, &po->o, r);
        worst_add(w, r, f);
        for (int i = 0; i < F->n; i++)
            if (F->seq[i]) mn_q_difference(F->m[i], F->d[i]->q, plain_prev[i], corr[i]);
        for (int i = 0; i < F->n && mo; i++)
            memcpy(mo[i].q + (size_t)f * (size_t)F->m[i]->nq, F->d[i]->q,
                   sizeof(double) * (size_t)F->m[i]->nq);
    }
    if (frames > 0) worst_into(w, r);
    for (int i = 0; i < F->n; i++) {
        free(plain_prev[i]);
        free(corr[i]);
    }
    return rc;
}

/* A scene with "figures": each read from its file (beside the scene), re-rooted and
 * placed as the scene says, then posed together frame by frame (Welman 6.1, 7.3). */
static int pose_figures(const char* scene_path, mn_scene* sc, const pose_opts* po) {
    scene_figures F;
    memset(&F, 0, sizeof F);
    F.n = mn_scene_figure_count(sc);
    F.f0 = HUGE_VAL, F.f1 = -HUGE_VAL;
    int nf = F.n;
    int rc = read_figures(scene_path, sc, po, &F);
    int animated = F.f0 <= F.f1;
    for (int i = 0; i < nf && rc == MN_EXIT_OK && animated; i++)
        if (F.seq[i]) mn_seq_sample_data(F.seq[i], F.d[i], F.f0);
    mn_error err;
    mn_csys* s = NULL;
    if (rc == MN_EXIT_OK && mn_scene_bind_figures(sc, F.figs, nf, &s, &err) != MN_OK)
        rc = mn_cli_input_error(&err);
    if (rc == MN_EXIT_OK) {
        int frames = animated ? (int)floor(F.f1 - F.f0 + 1e-9) + 1 : mn_scene_frames(sc);
        mn_motion mo[8];
        memset(mo, 0, sizeof mo);
        for (int i = 0; i < nf && po->out_path; i++) {
            mo[i].nframes = frames, mo[i].nq = F.m[i]->nq;
            mo[i].frame_time = po->fps > 0 ? 1.0 / po->fps : 1.0 / (F.fps > 0 ? F.fps : 30.0);
            mo[i].q =
                malloc(sizeof(double) * (size_t)frames * (size_t)(F.m[i]->nq ? F.m[i]->nq : 1));
            if (!mo[i].q) rc = MN_EXIT_INPUT;
        }
        mn_csolve_result r;
        memset(&r, 0, sizeof r);
        pose_worst w = {0, 0, 0, 0, 0, 0, -1, MN_OK, ""};
        if (rc == MN_EXIT_OK)
            rc = solve_figures(sc, &F, s, po, frames, po->out_path ? mo : NULL, &r, &w);
        double res[3] = {r.max_violation, r.max_rot_violation, r.max_drag_error};
        if (rc == MN_EXIT_OK && !mn_cli_finite(scene_path, "constraints", res, 3))
            rc = MN_EXIT_INPUT;
        for (int i = 0; i < nf && rc == MN_EXIT_OK && po->out_path; i++) {
            char path[1024];
            figure_out_path(po->out_path, mn_scene_figure_name(sc, i), path, sizeof path);
            mn_status st = strcasecmp(strrchr(path, '.'), ".glb") == 0
                               ? mn_gltf_write(path, F.m[i], &mo[i], NULL, &err)
                               : mn_bvh_write(path, F.m[i], &mo[i], &err);
            if (st != MN_OK) rc = mn_cli_input_error(&err);
        }
        if (rc == MN_EXIT_OK) print_figures(sc, &F, s, &r, &w, po, frames);
        for (int i = 0; i < nf; i++)
            free(mo[i].q);
    }
    mn_csys_destroy(s);
    for (int i = 0; i < nf; i++) {
        mn_seq_destroy(F.seq[i]);
        mn_data_destroy(F.d[i]);
        mn_model_destroy(F.m[i]);
    }
    return rc;
}

typedef struct pose_args {
    const char *scene, *solver, *out, *root;
    int json, iters, free_locked;
    double tol, scale, fps;
    start_pose sp;
} pose_args;

#define AT(f, t) MN_CLI_AT(pose_args, f, t)
static const mn_cli_opt pose_rows[] = {
    {"--scene", MN_CLI_STRING, AT(scene, const char*), .bad = NULL},
    {"--solver", MN_CLI_STRING, AT(solver, const char*), .bad = NULL},
    {"--json", MN_CLI_FLAG, AT(json, int), .lo = 1},
    {"--free-translations", MN_CLI_FLAG, AT(free_locked, int), .lo = 1},
    {"--out", MN_CLI_STRING, AT(out, const char*), .bad = NULL},
    {"--fps", MN_CLI_DOUBLE, AT(fps, double), MN_CLI_POSITIVE, 1e6,
     .bad = "--fps needs a number > 0"},
    {"--iters", MN_CLI_INT, AT(iters, int), 1, INT_MAX, .bad = "--iters needs a positive integer"},
    {"--tol", MN_CLI_DOUBLE, AT(tol, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--tol needs a number > 0"},
    {"--scale", MN_CLI_DOUBLE, AT(scale, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--scale needs a number > 0"},
    {"--frame", MN_CLI_INT, AT(sp.frame, int), 0, INT_MAX, .bad = "--frame needs an integer >= 0"},
    {"--anim", MN_CLI_STRING, AT(sp.anim, const char*), .bad = NULL},
    {"--root", MN_CLI_STRING, AT(root, const char*), .bad = NULL},
};
#undef AT
const mn_cli_table mn_cmd_pose_options = {
    .cmd = "pose",
    MN_CLI_OPTS(pose_rows),
    .unknown = "unknown option '%s'",
    .missing = "unknown option '%s'",
    .max_pos = 1,
    .too_many = "one MODEL only",
    .dash_option = 1,
};

int mn_cmd_pose(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    const char* model_path = NULL;
    pose_args args = {NULL, NULL, NULL, NULL, 0, 0, 0, 1e-4, 1.0, 0, {-1, NULL}};
    int bad = mn_cli_parse(&mn_cmd_pose_options, argc, argv, &args, &model_path, NULL);
    if (bad) return bad;
    const char *scene_path = args.scene, *solver_name = args.solver, *out_path = args.out;
    const char* root_name = args.root;
    int json = args.json, iters = args.iters, free_locked = args.free_locked;
    double tol = args.tol, scale = args.scale, fps = args.fps;
    start_pose sp = args.sp;
    if (sp.anim && sp.frame < 0) sp.frame = 0; /* --anim alone: its first key */
    if (!scene_path) return mn_cli_usage_error("pose", "missing --scene SCENE.json");
    if (out_path) {
        const char* ext = strrchr(out_path, '.');
        if (!ext || strchr(ext, '/') ||
            (strcasecmp(ext, ".bvh") != 0 && strcasecmp(ext, ".glb") != 0))
            return mn_cli_usage_error("pose",
                                      "--out '%s': the motion is written as BVH or glTF binary: "
                                      "OUT must end in .bvh or .glb",
                                      out_path);
    }
    int solver = -1;
    if (solver_name) {
        solver = mn_csolver_parse(solver_name);
        if (solver < 0)
            return mn_cli_usage_error("pose", "unknown solver '%s' (lagrange, ccd, dls)",
                                      solver_name);
    }
    mn_error err;
    mn_scene* sc = NULL;
    if (mn_scene_read(scene_path, &sc, &err) != MN_OK) return mn_cli_input_error(&err);
    if (mn_scene_figure_count(sc) > 0) {
        int bad = model_path || root_name || sp.frame >= 0 || sp.anim;
        if (bad) {
            mn_scene_destroy(sc);
            return mn_cli_usage_error("pose",
                                      "%s names its figures (\"figures\"): no MODEL, --root, "
                                      "--frame or --anim",
                                      scene_path);
        }
        pose_opts po;
        po.o = mn_csolve_default();
        if (solver < 0) solver = mn_scene_solver(sc);
        po.o.method = solver >= 0 ? (mn_csolver)solver : MN_CSOLVE_LAGRANGE;
        po.o.max_iters = iters ? iters : (mn_scene_iterations(sc) ? mn_scene_iterations(sc) : 50);
        po.o.tol = po.o.tol_rot = po.o.drag_tol = tol;
        po.o.free_locked = free_locked;
        po.json = json, po.out_path = out_path, po.fps = fps, po.scale = scale;
        int rc = pose_figures(scene_path, sc, &po);
        mn_scene_destroy(sc);
        return rc;
    }
    if (!model_path) {
        mn_scene_destroy(sc);
        return mn_cli_usage_error("pose", "missing MODEL");
    }
    mn_model* m = NULL;
    mn_data* d = NULL;
    double frame_time = 1.0 / 30.0;
    mn_gltf skin;
    memset(&skin, 0, sizeof skin);
    int to_glb = out_path && strcasecmp(strrchr(out_path, '.'), ".glb") == 0;
    int rc = load(model_path, scale, &sp, &m, &d, &frame_time, to_glb ? &skin : NULL);
    if (rc != MN_EXIT_OK) {
        mn_scene_destroy(sc);
        return rc;
    }
    rc = reroot(model_path, root_name, sc, -1, &m, &d, skin.nverts > 0);
    if (rc != MN_EXIT_OK) {
        mn_gltf_free(&skin);
        mn_scene_destroy(sc);
        return rc;
    }
    mn_csys* s = NULL;
    if (mn_scene_bind(sc, m, d, &s, &err) != MN_OK) {
        rc = mn_cli_input_error(&err);
    } else {
        mn_csolve_options o = mn_csolve_default();
        if (solver < 0) solver = mn_scene_solver(sc);
        o.method = solver >= 0 ? (mn_csolver)solver : MN_CSOLVE_LAGRANGE;
        o.max_iters = iters ? iters : (mn_scene_iterations(sc) ? mn_scene_iterations(sc) : 50);
        o.tol = o.tol_rot = o.drag_tol = tol;
        o.free_locked = free_locked;
        mn_csolve_result r;
        memset(&r, 0, sizeof r);
        int frames = mn_scene_frames(sc);
        /* every frame's solved state, for --out */
        mn_motion mo = {
            .nframes = frames, .nq = m->nq, .frame_time = fps > 0 ? 1.0 / fps : frame_time};
        mo.q =
            out_path ? malloc(sizeof(double) * (size_t)frames * (size_t)(m->nq ? m->nq : 1)) : NULL;
        if (out_path && !mo.q) {
            fprintf(stderr, "marionette: %s: out of memory for %d frames\n",
                    mn_cli_safe(scene_path), frames);
            rc = MN_EXIT_INPUT;
            frames = 0;
        }
        /* the worst frame, not the last: every frame is written and each must hold */
        pose_worst w = {0, 0, 0, 0, 0, 0, -1, MN_OK, ""};
        for (int f = 0; f < frames; f++) {
            mn_scene_apply_frame(sc, s, f);
            mn_csys_solve(s, &o, &r);
            worst_add(&w, &r, f);
            if (mo.q)
                memcpy(mo.q + (size_t)f * (size_t)m->nq, d->q, sizeof(double) * (size_t)m->nq);
        }
        if (frames > 0) worst_into(&w, &r);
        double res[3] = {r.max_violation, r.max_rot_violation, r.max_drag_error};
        int finite = frames == 0 || (mn_cli_finite(scene_path, "constraints", res, 3) &&
                                     mn_cli_finite(scene_path, "q", d->q, (size_t)m->nq));
        for (int c = 0; finite && frames > 0 && c < mn_csys_constraint_count(s); c++) {
            double rc_c = mn_csys_residual(s, c);
            finite = mn_cli_finite(scene_path, "constraints", &rc_c, 1);
        }
        if (!finite) rc = MN_EXIT_INPUT;
        if (!finite || rc != MN_EXIT_OK) {
            /* nothing printed or written */
        } else if (mo.q &&
                   (to_glb ? mn_gltf_write(out_path, m, &mo, skin.nverts > 0 ? &skin : NULL, &err)
                           : mn_bvh_write(out_path, m, &mo, &err)) != MN_OK)
            rc = mn_cli_input_error(&err);
        else if (rc == MN_EXIT_OK) {
            const char* name = m->name ? m->name : model_path;
            if (json)
                print_json(m, d, s, &r, &w, mn_csolver_name(o.method), frames, name);
            else
                print_text(m, d, s, &r, &w, mn_csolver_name(o.method), frames, name);
        }
        free(mo.q);
        mn_csys_destroy(s);
    }
    mn_gltf_free(&skin);
    mn_data_destroy(d);
    mn_model_destroy(m);
    mn_scene_destroy(sc);
    return rc;
}
