/* marionette info FILE [--json]: the joints as a tree, DOF count, limits, frame count. */
#include <string.h>

#include <marionette/gltf.h>

#include "cli.h"
#include "options.h"
#include "figure_print.h"

#define J mn_cli_json_num

const char mn_cmd_info_summary[] =
    "joints as a tree, DOF count, limits, frame count of a figure file";

static void usage(FILE* f) {
    fprintf(
        f, "usage: marionette info FILE [--json]\n"
           "\n"
           "FILE is a skeleton text file (.skel), BVH (.bvh), URDF (.urdf) or glTF (.gltf, .glb).\n"
           "Prints the joints as a tree with their types and limits (angles in degrees), the\n"
           "number of degrees of freedom, and the number of motion frames (BVH). For glTF, every\n"
           "animation with its name, duration and number of key times (the times at which\n"
           "`marionette fk --anim NAME --frame K` poses the figure). --json prints the same as\n"
           "one JSON object (angles in radians). A URDF figure's joints are named by their\n"
           "links, each followed by its URDF joint's name, which commands accept too\n"
           "('(joint NAME)'; JSON: \"alias\").\n");
}

static void print_vec(FILE* f, mn_vec3 v) {
    printf("[%s,%s,%s]", J(v.x), J(v.y), J(v.z));
    (void)f;
}

/* A name from a file, with control bytes escaped (names reach a terminal). */
static void print_name(const char* s) {
    fputs(mn_cli_safe(s), stdout);
}

static void print_json(const char* file, mn_file_kind kind, const mn_model* m, const mn_motion* mo,
                       const mn_gltf* g) {
    printf("{\"file\":");
    mn_cli_json_string(stdout, file);
    printf(",\"format\":\"%s\",\"name\":", mn_cli_kind_name(kind));
    mn_cli_json_string(stdout, m->name);
    printf(",\"joints\":%d,\"dof\":%d,\"nq\":%d,\"mass\":%s", m->njoint, m->nv, m->nq,
           J(m->total_mass));
    printf(",\"frames\":%d,\"frame_time\":%s", mo->nframes, J(mo->frame_time));
    if (g) {
        printf(",\"animations\":[");
        for (int a = 0; a < g->nanims; a++) {
            printf("%s{\"name\":", a ? "," : "");
            mn_cli_json_string(stdout, g->anims[a].name);
            printf(",\"duration\":%s,\"keys\":%d}", J(g->anims[a].duration), g->anims[a].nkeys);
        }
        printf("]");
    }
    printf(",\"tree\":[");
    for (int j = 0; j < m->njoint; j++) {
        int t = m->jnt_type[j];
        printf("%s{\"name\":", j ? "," : "");
        mn_cli_json_string(stdout, m->jnt_name[j]);
        if (m->jnt_alias[j]) {
            printf(",\"alias\":");
            mn_cli_json_string(stdout, m->jnt_alias[j]);
        }
        printf(",\"parent\":");
        if (m->jnt_parent[j] >= 0)
            mn_cli_json_string(stdout, m->jnt_name[m->jnt_parent[j]]);
        else
            printf("null");
        printf(",\"type\":\"%s\",\"dof\":%d,\"qadr\":%d,\"offset\":", mn_joint_type_name(t),
               mn_joint_type_nv(t), m->jnt_qadr[j]);
        print_vec(stdout, m->jnt_offset[j]);
        mn_quat o = m->jnt_orient[j];
        printf(",\"orient\":[%s,%s,%s,%s]", J(o.w), J(o.x), J(o.y), J(o.z));
        if (t != MN_JOINT_FIXED && t != MN_JOINT_FREE) {
            printf(",\"axis\":");
            print_vec(stdout, m->jnt_axis[j]);
        }
        if (m->jnt_limited[j] && (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE))
            printf(",\"limits\":[%s,%s]", J(m->jnt_range[2 * j]), J(m->jnt_range[2 * j + 1]));
        if (m->jnt_limited[j] && t == MN_JOINT_BALL)
            printf(",\"swing\":%s,\"twist\":[%s,%s]", J(m->jnt_swing[j]), J(m->jnt_twist[2 * j]),
                   J(m->jnt_twist[2 * j + 1]));
        if (m->jnt_mass[j] > 0) printf(",\"mass\":%s", J(m->jnt_mass[j]));
        printf("}");
    }
    printf("]}\n");
}

typedef struct info_args {
    const char* file;
    int json;
} info_args;

static const mn_cli_opt info_opts[] = {
    {"--json", MN_CLI_FLAG, MN_CLI_AT(info_args, json, int), .lo = 1},
};
const mn_cli_table mn_cmd_info_options = {
    .cmd = "info",
    MN_CLI_OPTS(info_opts),
    .unknown = "unknown option '%s'",
    .max_pos = 1,
    .too_many = "one FILE only",
};

int mn_cmd_info(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    info_args a = {NULL, 0};
    int bad = mn_cli_parse(&mn_cmd_info_options, argc, argv, &a, &a.file, NULL);
    if (bad) return bad;
    const char* file = a.file;
    int json = a.json;
    if (!file) return mn_cli_usage_error("info", "missing FILE");
    mn_model* m = NULL;
    mn_motion mo;
    mn_warnings w = {0};
    mn_error err;
    mn_file_kind kind = mn_file_kind_of(file);
    mn_gltf g, *gp = NULL;
    memset(&mo, 0, sizeof mo);
    if (kind == MN_FILE_GLTF) {
        /* every animation, listed by its key times: nothing is resampled */
        if (mn_gltf_read(file, &g, &w, &err) != MN_OK) return mn_cli_input_error(&err);
        gp = &g;
        m = mn_gltf_model(&g, &err);
        if (!m) {
            mn_gltf_free(&g);
            return mn_cli_input_error(&err);
        }
    } else if (mn_figure_read(file, &m, &mo, &w, &err) != MN_OK) {
        return mn_cli_input_error(&err);
    }
    mn_cli_print_warnings(&w);
    double totals[2] = {m->total_mass, mo.nframes * mo.frame_time};
    if (!mn_cli_finite(file, "mass", totals, 1) || !mn_cli_finite(file, "frames", totals + 1, 1)) {
        if (gp) mn_gltf_free(gp);
        mn_motion_free(&mo);
        mn_model_destroy(m);
        return MN_EXIT_INPUT;
    }
    if (json) {
        print_json(file, kind, m, &mo, gp);
    } else {
        printf("file: %s (%s)\n", mn_cli_safe(file), mn_cli_kind_name(kind));
        mn_cli_print_summary(stdout, m);
        if (mo.nframes > 0)
            printf("frames: %d at %.9g Hz (%.9g s)\n", mo.nframes,
                   mo.frame_time > 0 ? 1.0 / mo.frame_time : 0.0, mo.nframes * mo.frame_time);
        if (gp) {
            printf("animations: %d\n", gp->nanims);
            for (int a = 0; a < gp->nanims; a++) {
                printf("  ");
                print_name(gp->anims[a].name);
                printf(": %.9g s, %d keys\n", gp->anims[a].duration, gp->anims[a].nkeys);
            }
        }
        printf("joints:\n");
        mn_cli_print_tree(stdout, m);
    }
    if (gp) mn_gltf_free(gp);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    return MN_EXIT_OK;
}
