/* marionette fk FILE [--frame N] [--anim NAME] [--time T] [--q v1,v2,...] [--json]: world
 * position of every joint. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <marionette/gltf.h>

#include "cli.h"

const char mn_cmd_fk_summary[] =
    "world position of every joint (or URDF link) for a frame or a state";

static void usage(FILE* f) {
    fprintf(
        f,
        "usage: marionette fk FILE [--frame N] [--anim NAME] [--time T] [--q v1,v2,...] [--json]\n"
        "\n"
        "Prints the world position of every joint (for URDF: every link frame) as\n"
        "'name x y z', in the file's units. The state is the rest pose, or motion frame N\n"
        "(0-based, BVH), or the state given with --q: one number per state entry in the\n"
        "order of 'marionette info --json' (qadr): hinge angles in radians, slide lengths,\n"
        "ball joints as quaternions w,x,y,z, free joints as x,y,z then w,x,y,z.\n"
        "glTF: --anim NAME picks an animation (default the first), --frame N its N-th key\n"
        "time (0-based; `marionette info` gives the count), --time T the pose at T seconds\n"
        "(clamped to the animation). The figure is sampled at that time only.\n");
}

int mn_cmd_fk(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    const char *file = NULL, *qtext = NULL;
    const char* anim_name = NULL;
    int frame = -1, json = 0, has_time = 0;
    double time = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--anim")) {
            if (i + 1 >= argc) return mn_cli_usage_error("fk", "--anim needs an animation name");
            anim_name = argv[++i];
        } else if (!strcmp(argv[i], "--time")) {
            if (i + 1 >= argc || !mn_cli_parse_double(argv[++i], &time) || time < 0)
                return mn_cli_usage_error("fk", "--time needs a time in seconds >= 0");
            has_time = 1;
        } else if (!strcmp(argv[i], "--frame")) {
            if (i + 1 >= argc || !mn_cli_parse_int(argv[++i], &frame) || frame < 0)
                return mn_cli_usage_error("fk", "--frame needs a frame number >= 0");
        } else if (!strcmp(argv[i], "--q")) {
            if (i + 1 >= argc) return mn_cli_usage_error("fk", "--q needs a list of numbers");
            qtext = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1])
            return mn_cli_usage_error("fk", "unknown option '%s'", argv[i]);
        else if (!file)
            file = argv[i];
        else
            return mn_cli_usage_error("fk", "one FILE only");
    }
    if (!file) return mn_cli_usage_error("fk", "missing FILE");
    if ((frame >= 0) + (qtext != NULL) + has_time > 1)
        return mn_cli_usage_error("fk", "--frame, --time and --q exclude each other");
    mn_model* m = NULL;
    mn_motion mo;
    mn_warnings w = {0};
    mn_error err;
    mn_gltf g;
    int is_gltf = mn_file_kind_of(file) == MN_FILE_GLTF;
    memset(&mo, 0, sizeof mo);
    memset(&g, 0, sizeof g);
    if ((anim_name || has_time) && !is_gltf)
        return mn_cli_usage_error("fk", "--anim and --time are for glTF files");
    if (is_gltf) {
        /* read the file, then sample the one time asked for: nothing is resampled */
        if (mn_gltf_read(file, &g, &w, &err) != MN_OK) return mn_cli_input_error(&err);
        m = mn_gltf_model(&g, &err);
        if (!m) {
            mn_gltf_free(&g);
            return mn_cli_input_error(&err);
        }
    } else if (mn_figure_read(file, &m, &mo, &w, &err) != MN_OK) {
        return mn_cli_input_error(&err);
    }
    mn_cli_print_warnings(&w);
    mn_data* d = mn_data_create(m, 0);
    int rc = MN_EXIT_OK;
    if (!d) {
        fprintf(stderr, "marionette: %s: out of memory for the figure's data\n", mn_cli_safe(file));
        rc = MN_EXIT_INPUT;
        goto done;
    }
    if (is_gltf && (frame >= 0 || has_time || anim_name)) {
        int a = anim_name ? mn_gltf_find_anim(&g, anim_name) : 0;
        if (a < 0 || a >= g.nanims) {
            fprintf(stderr, "marionette: %s: --anim: %s\n", mn_cli_safe(file),
                    g.nanims ? "no animation of that name (see marionette info)"
                             : "the file has no animation");
            rc = MN_EXIT_INPUT;
            goto done;
        }
        const mn_gltf_anim* an = &g.anims[a];
        double t = has_time ? time : 0;
        if (frame >= 0) {
            if (frame >= an->nkeys) {
                fprintf(stderr, "marionette: %s: --frame %d: animation %d has %d key times\n",
                        mn_cli_safe(file), frame, a, an->nkeys);
                rc = MN_EXIT_INPUT;
                goto done;
            }
            t = an->key_times[frame];
        }
        double* work = malloc(sizeof(double) * 16 * (size_t)g.njoints);
        mn_status st = work ? mn_gltf_state(&g, m, a, t, NULL, d->q, work, &err)
                            : mn_error_set(&err, MN_ERR_NOMEM, file, 0, "", "out of memory");
        free(work);
        if (st != MN_OK) {
            rc = mn_cli_input_error(&err);
            goto done;
        }
    } else if (frame >= 0) {
        if (frame >= mo.nframes) {
            fprintf(stderr, "marionette: %s: --frame %d: the file has %d frames\n",
                    mn_cli_safe(file), frame, mo.nframes);
            rc = MN_EXIT_INPUT;
            goto done;
        }
        if (m->nq) /* a figure without channels has no numbers (and mo.q is NULL) */
            memcpy(d->q, mo.q + (size_t)frame * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
    } else if (qtext) {
        double* q = malloc(sizeof(double) * (size_t)(m->nq + 1));
        int n = q ? mn_cli_parse_list(qtext, q, m->nq + 1) : -1;
        if (n != m->nq) {
            free(q);
            rc = mn_cli_usage_error(
                "fk", "--q: expected %d finite numbers (the state size of %s), got %s", m->nq, file,
                n < 0 ? "a malformed list" : "a different count");
            goto done;
        }
        if (mn_q_check(m, q) != MN_OK) {
            free(q);
            rc = mn_cli_usage_error("fk", "--q: a ball or free joint quaternion is zero");
            goto done;
        }
        memcpy(d->q, q, sizeof(double) * (size_t)m->nq);
        free(q);
    }
    mn_fk(m, d);
    for (int j = 0; j < m->njoint; j++) {
        double p[3] = {d->xf[j].p.x, d->xf[j].p.y, d->xf[j].p.z};
        if (!mn_cli_finite(file, m->jnt_name[j], p, 3)) {
            rc = MN_EXIT_INPUT;
            goto done;
        }
    }
    if (json) {
        printf("{\"file\":");
        mn_cli_json_string(stdout, file);
        printf(",\"joints\":[");
    }
    for (int j = 0; j < m->njoint; j++) {
        mn_vec3 p = d->xf[j].p;
        if (json) {
            printf("%s{\"name\":", j ? "," : "");
            mn_cli_json_string(stdout, m->jnt_name[j]);
            printf(",\"position\":[%.17g,%.17g,%.17g]}", p.x, p.y, p.z);
        } else {
            printf("%s %.9g %.9g %.9g\n", mn_cli_safe(m->jnt_name[j]), p.x, p.y, p.z);
        }
    }
    if (json) printf("]}\n");
done:
    mn_data_destroy(d);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    mn_gltf_free(&g);
    return rc;
}
