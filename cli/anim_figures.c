/* `anim info` and `anim bake` of a sequence document of several figures (Welman 6.1, 7.3;
 * docs/sequence.md "Several figures"): every figure's in-betweens solved together, one
 * motion file per figure. */
#include "anim_figures.h"

#include <marionette/gltf.h>
#include <marionette/io.h>
#include <marionette/layers.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

static int read_figures(const char* path, mn_seq_figures* f) {
    mn_error err;
    /* the local user's own file: its figures may be anywhere (an absolute path, "..") */
    mn_seq_read_options opt = mn_seq_read_default();
    opt.trusted = 1;
    if (mn_seq_read_figures(path, &opt, f, &err) != MN_OK) return mn_cli_input_error(&err);
    return MN_EXIT_OK;
}

/* "figure/joint" of handle h (its figure's name, the joint or the whole figure). */
static void print_handle(const mn_seq_figures* f, const mn_handle_def* d) {
    const mn_model* m = f->model[d->figure];
    printf("%s/%s", mn_cli_safe(f->name[d->figure]),
           d->joint >= 0 ? mn_cli_safe(m->jnt_name[d->joint]) : "(the whole figure)");
}

int mn_anim_info_figures(const char* path) {
    mn_seq_figures f;
    int code = read_figures(path, &f);
    if (code != MN_EXIT_OK) return code;
    const mn_seq* s = f.seq[0];
    printf("file: %s\nfps: %.9g\nfigures: %d, frames %.9g to %.9g\n", mn_cli_safe(path),
           mn_seq_fps(s), f.n, mn_seq_figures_start(s), mn_seq_figures_end(s));
    for (int i = 0; i < f.n; i++) {
        const mn_model* m = f.model[i];
        const mn_seq* q = f.seq[i];
        mn_interp rot, trans;
        mn_seq_default_interp(q, &rot, &trans);
        printf("  %s: %s (%s), %d joints, %d DOF, at [%.6g, %.6g, %.6g]; %d keys, frames %.9g "
               "to %.9g; rotation %s, translation %s\n",
               mn_cli_safe(f.name[i]), mn_cli_safe(f.file[i]), mn_cli_safe(m->name), m->njoint,
               m->nv, f.place[i].p.x, f.place[i].p.y, f.place[i].p.z, mn_seq_key_count(q),
               mn_seq_start(q), mn_seq_end(q), mn_interp_name(rot), mn_interp_name(trans));
        /* what the figure's own entry adds: its root, layers, time warp, contact tracks */
        const mn_seq_doc_info* info = f.info[i];
        if (info && info->root[0]) printf("    root: %s\n", mn_cli_safe(info->root));
        for (int l = 0; l < mn_seq_layer_count(q); l++)
            printf("    layer %d %s: %s, %d keys\n", l,
                   mn_seq_layer_name(q, l)[0] ? mn_cli_safe(mn_seq_layer_name(q, l)) : "(unnamed)",
                   mn_layer_mode_name(mn_seq_layer_mode(q, l)),
                   mn_seq_key_count(mn_seq_layer(q, l)));
        if (mn_seq_warp_count(q))
            printf("    time warp: %d keys, output frames %.9g to %.9g\n", mn_seq_warp_count(q),
                   mn_seq_out_start(q), mn_seq_out_end(q));
        if (info && info->ncontact) printf("    contact tracks: %d\n", info->ncontact);
    }
    int nh = mn_seq_handle_count(s), nc = mn_seq_constraint_count(s);
    printf("handles: %d\n", nh);
    for (int h = 0; h < nh; h++) {
        const mn_handle_def* d = mn_seq_handle(s, h);
        printf("  %s: %s on ", d->name ? mn_cli_safe(d->name) : "(unnamed)",
               mn_handle_type_name(d->type));
        print_handle(&f, d);
        printf("\n");
    }
    printf("constraints: %d\n", nc);
    for (int c = 0; c < nc; c++) {
        const mn_seq_constraint_def* d = mn_seq_constraint(s, c);
        const mn_handle_def* h = mn_seq_handle(s, d->con.handle);
        printf("  %d %s%s%s on ", c, mn_constraint_type_name(d->con.type), d->con.name ? " " : "",
               d->con.name ? mn_cli_safe(d->con.name) : "");
        print_handle(&f, h);
        if (d->con.type == MN_CON_EQUAL) {
            printf(" and ");
            print_handle(&f, mn_seq_handle(s, d->con.handle2));
        }
        if (isfinite(d->start) || isfinite(d->end))
            printf(", frames %.9g to %.9g", d->start, d->end);
        if (d->lock && !mn_seq_target_key_count(s, c))
            printf(", locked where it is at the first frame");
        printf("\n");
    }
    mn_seq_figures_free(&f);
    return MN_EXIT_OK;
}

/* OUT with the figure's name before its extension: hands.bvh -> hands.ann.bvh. */
static void figure_out_path(const char* out, const char* name, char* buf, size_t cap) {
    const char* dot = strrchr(out, '.');
    snprintf(buf, cap, "%.*s.%s%s", (int)(dot - out), out, name, dot);
}

int mn_anim_bake_figures(const char* in, const char* out, const mn_seq_bake_options* o) {
    mn_seq_figures f;
    int code = read_figures(in, &f);
    if (code != MN_EXIT_OK) return code;
    size_t ol = strlen(out);
    int glb = ol >= 4 && !strcasecmp(out + ol - 4, ".glb");
    mn_motion mo[MN_SEQ_MAX_FIGURES];
    mn_seq_bake_result r;
    mn_error err;
    mn_status st = mn_seq_bake_figures(f.seq[0], o, mo, &r, &err);
    for (int i = 0; i < f.n && st == MN_OK; i++) {
        char path[4096];
        figure_out_path(out, f.name[i], path, sizeof path);
        st = glb ? mn_gltf_write(path, f.model[i], &mo[i], NULL, &err)
                 : mn_bvh_write(path, f.model[i], &mo[i], &err);
        if (st == MN_OK) printf("figure=%s out=%s\n", mn_cli_safe(f.name[i]), mn_cli_safe(path));
    }
    if (st == MN_OK)
        printf("file=%s figures=%d frames=%ld fps=%.9g mode=%s constrained_frames=%ld "
               "mean_iters=%.2f max_violation=%.2e unmet_frames=%ld\n",
               mn_cli_safe(in), f.n, r.frames, mn_seq_fps(f.seq[0]) / o->step,
               o->plain ? "plain" : mn_csolver_name(o->solve.solve.method), r.constrained,
               r.frames ? (double)r.iters / (double)r.frames : 0.0, r.max_violation, r.unmet);
    if (st == MN_OK)
        for (int i = 0; i < f.n; i++)
            mn_motion_free(&mo[i]);
    mn_seq_figures_free(&f);
    if (st == MN_ERR_ARG && !strcmp(err.field, "step"))
        return mn_cli_usage_error("anim", "%s (--step)", err.message);
    if (st != MN_OK && !err.file[0]) {
        fprintf(stderr, "marionette: %s: %s\n", mn_cli_safe(in), err.message);
        return MN_EXIT_INPUT;
    }
    return st == MN_OK ? MN_EXIT_OK : mn_cli_input_error(&err);
}
