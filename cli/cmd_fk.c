/* marionette fk FILE [--frame N] [--q v1,v2,...] [--json]: world position of every joint. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char mn_cmd_fk_summary[] = "world position of every joint (or URDF link) for a frame or a state";

static void usage(FILE* f) {
    fprintf(f, "usage: marionette fk FILE [--frame N] [--q v1,v2,...] [--json]\n"
               "\n"
               "Prints the world position of every joint (for URDF: every link frame) as\n"
               "'name x y z', in the file's units. The state is the rest pose, or motion frame N\n"
               "(0-based, BVH), or the state given with --q: one number per state entry in the\n"
               "order of 'marionette info --json' (qadr): hinge angles in radians, slide lengths,\n"
               "ball joints as quaternions w,x,y,z, free joints as x,y,z then w,x,y,z.\n");
}

int mn_cmd_fk(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    const char *file = NULL, *qtext = NULL;
    int frame = -1, json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--frame")) {
            if (i + 1 >= argc || !mn_cli_parse_int(argv[++i], &frame) || frame < 0)
                return mn_cli_usage_error("fk", "--frame needs a frame number >= 0");
        } else if (!strcmp(argv[i], "--q")) {
            if (i + 1 >= argc) return mn_cli_usage_error("fk", "--q needs a list of numbers");
            qtext = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) return mn_cli_usage_error("fk", "unknown option '%s'", argv[i]);
        else if (!file) file = argv[i];
        else return mn_cli_usage_error("fk", "one FILE only");
    }
    if (!file) return mn_cli_usage_error("fk", "missing FILE");
    if (frame >= 0 && qtext) return mn_cli_usage_error("fk", "--frame and --q exclude each other");
    mn_model* m = NULL;
    mn_motion mo;
    mn_warnings w = {0};
    mn_error err;
    if (mn_figure_read(file, &m, &mo, &w, &err) != MN_OK) return mn_cli_input_error(&err);
    mn_cli_print_warnings(&w);
    mn_data* d = mn_data_create(m, 0);
    int rc = MN_EXIT_OK;
    if (!d) {
        fprintf(stderr, "marionette: %s: out of memory for the figure's data\n", mn_cli_safe(file));
        rc = MN_EXIT_INPUT;
        goto done;
    }
    if (frame >= 0) {
        if (frame >= mo.nframes) {
            fprintf(stderr, "marionette: %s: --frame %d: the file has %d frames\n", mn_cli_safe(file), frame, mo.nframes);
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
            rc = mn_cli_usage_error("fk", "--q: expected %d finite numbers (the state size of %s), got %s", m->nq,
                                    file, n < 0 ? "a malformed list" : "a different count");
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
    return rc;
}
