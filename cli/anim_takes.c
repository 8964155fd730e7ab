/* marionette anim crossfade | root-motion | loop: operations on BVH takes (takes.h), each
 * printing one key=value line (--json: the same as JSON) and writing a BVH atomically. */
#include "anim_takes.h"

#include <marionette/io.h>
#include <marionette/takes.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"

static int ends_bvh(const char* p) {
    size_t n = strlen(p);
    return n > 4 && !strcmp(p + n - 4, ".bvh");
}

static int read_take(const char* path, double scale, mn_model** m, mn_motion* mo) {
    mn_bvh_options o = mn_bvh_default();
    o.scale = scale;
    mn_error err;
    if (mn_bvh_read(path, &o, m, mo, NULL, &err) != MN_OK) return mn_cli_input_error(&err);
    if (mo->nframes < 2 || (*m)->njoint < 1 || (*m)->jnt_type[0] != MN_JOINT_FREE) {
        fprintf(stderr, "marionette: %s: a take needs two frames and a free root\n",
                mn_cli_safe(path));
        mn_motion_free(mo);
        mn_model_destroy(*m);
        return MN_EXIT_INPUT;
    }
    return MN_EXIT_OK;
}

static int write_take(const char* path, const mn_model* m, double* q, int n, double frame_time) {
    mn_motion out = {n, m->nq, frame_time, q};
    mn_error err;
    if (!mn_cli_finite(path, "frames", q, (size_t)n * (size_t)m->nq)) return MN_EXIT_INPUT;
    if (mn_bvh_write(path, m, &out, &err) != MN_OK) return mn_cli_input_error(&err);
    return MN_EXIT_OK;
}

/* The options every take operation has, --out and --scale: the member c of each one's args
 * struct, and the first two rows of its table. */
typedef struct take_common {
    const char* out;
    double scale;
} take_common;
#define TAKE_COMMON(T)                                                                             \
    {"--out", MN_CLI_STRING, MN_CLI_AT(T, c.out, const char*), .bad = NULL}, {                     \
        "--scale", MN_CLI_DOUBLE, MN_CLI_AT(T, c.scale, double), MN_CLI_POSITIVE, DBL_MAX,         \
            .bad = "--scale needs a positive number"                                               \
    }

/* A table of a take operation: "anim", an unknown option's message, a missing value is an
 * unknown option, a lone "-" too. */
#define TAKE_TABLE(rows, npos)                                                                     \
    {                                                                                              \
        .cmd = "anim", MN_CLI_OPTS(rows), .unknown = "unknown option '%s'",                        \
        .missing = "unknown option '%s'", .max_pos = (npos), .too_many = "too many arguments",     \
        .dash_option = 1                                                                           \
    }

typedef struct crossfade_args {
    take_common c;
    mn_crossfade_options o;
} crossfade_args;

/* --b-range FIRST LAST: B's frames searched for the phase. */
static int take_b_range(void* args, int argc, char** argv, int* i) {
    mn_crossfade_options* o = &((crossfade_args*)args)->o;
    if (*i + 2 >= argc) return mn_cli_usage_error("anim", "unknown option '%s'", argv[*i]);
    *i += 2;
    if (!mn_cli_parse_int(argv[*i - 1], &o->b_min) || !mn_cli_parse_int(argv[*i], &o->b_max) ||
        o->b_min < 0 || o->b_max < o->b_min)
        return mn_cli_usage_error("anim", "--b-range needs two frames, first <= last");
    return 0;
}

/* --b-frame F: B starts at F (no phase search). */
static int take_b_frame(void* args, int argc, char** argv, int* i) {
    mn_crossfade_options* o = &((crossfade_args*)args)->o;
    o->align_phase = 0;
    if (!mn_cli_parse_int(argv[++*i], &o->b_frame) || o->b_frame < 0)
        return mn_cli_usage_error("anim", "--b-frame needs a frame >= 0");
    return 0;
}

#define AT(f, t) MN_CLI_AT(crossfade_args, f, t)
static const mn_cli_opt crossfade_opts[] = {
    TAKE_COMMON(crossfade_args),
    {"--at", MN_CLI_DOUBLE, AT(o.at, double), 0, DBL_MAX, .bad = "--at needs a frame >= 0"},
    {"--length", MN_CLI_INT, AT(o.length, int), 2, INT_MAX,
     .bad = "--length needs an integer >= 2"},
    {"--b-range", MN_CLI_TAKE, AT(o.b_min, int), .take = take_b_range},
    {"--b-frame", MN_CLI_TAKE, AT(o.b_frame, int), .take = take_b_frame},
    {"--no-lock", MN_CLI_FLAG, AT(o.lock_feet, int), .lo = 0},
};
#undef AT
const mn_cli_table mn_cmd_anim_crossfade_options = TAKE_TABLE(crossfade_opts, 2);

/* The options with the window mn_crossfade_window chose. */
static const mn_crossfade_options* window_options(mn_crossfade_options* o,
                                                  const mn_crossfade_window_result* w) {
    o->b_min = w->b_min;
    o->b_max = w->b_max;
    return o;
}

int mn_anim_crossfade(int argc, char** argv) {
    const char* ins[2] = {NULL, NULL};
    crossfade_args args = {{NULL, 1}, mn_crossfade_default()};
    int nin = 0;
    int bad = mn_cli_parse(&mn_cmd_anim_crossfade_options, argc - 1, argv + 1, &args, ins, &nin);
    if (bad) return bad;
    const char* out = args.c.out;
    double scale = args.c.scale;
    mn_crossfade_options o = args.o;
    if (nin < 2 || !out)
        return mn_cli_usage_error("anim", "crossfade needs A.bvh B.bvh --out OUT.bvh");
    if (!ends_bvh(out)) return mn_cli_usage_error("anim", "OUT must end in .bvh");
    mn_model *ma = NULL, *mb = NULL;
    mn_motion a, b;
    int code = read_take(ins[0], scale, &ma, &a);
    if (code) return code;
    if ((code = read_take(ins[1], scale, &mb, &b))) {
        mn_motion_free(&a);
        mn_model_destroy(ma);
        return code;
    }
    mn_error err;
    mn_take_feet feet;
    mn_crossfade_result r;
    memset(&r, 0, sizeof r);
    /* without --b-range, B's frames searched are chosen (mn_crossfade_window) */
    int auto_window = o.align_phase && o.b_max < 0;
    mn_crossfade_window_result win = {0, 0, -1, -1, 0, 0};
    int differ = ma->nq != mb->nq || ma->njoint != mb->njoint ? -2 : -1;
    for (int j = 0; differ == -1 && j < ma->njoint; j++)
        if (strcmp(ma->jnt_name[j], mb->jnt_name[j]) || ma->jnt_type[j] != mb->jnt_type[j])
            differ = j;
    if (differ != -1) {
        if (differ >= 0)
            fprintf(stderr, "marionette: %s: not the skeleton of %s (joint %d is %s, not %s)\n",
                    mn_cli_safe(ins[1]), mn_cli_safe(ins[0]), differ,
                    mn_cli_safe(mb->jnt_name[differ]), mn_cli_safe(ma->jnt_name[differ]));
        else
            fprintf(stderr, "marionette: %s: not the skeleton of %s (%d joints against %d)\n",
                    mn_cli_safe(ins[1]), mn_cli_safe(ins[0]), mb->njoint, ma->njoint);
        code = MN_EXIT_INPUT;
    } else if (fabs(a.frame_time - b.frame_time) > 1e-6 * a.frame_time) {
        fprintf(stderr, "marionette: %s: frame time %g s, not %g s as %s\n", mn_cli_safe(ins[1]),
                b.frame_time, a.frame_time, mn_cli_safe(ins[0]));
        code = MN_EXIT_INPUT;
    } else if (mn_take_feet_find(ma, NULL, &feet, &err) != MN_OK ||
               (auto_window &&
                mn_crossfade_window(ma, a.q, a.nframes, b.q, b.nframes, 1.0 / a.frame_time, &feet,
                                    o.length, &win, &err) != MN_OK) ||
               mn_crossfade(ma, a.q, a.nframes, b.q, b.nframes, 1.0 / a.frame_time, &feet,
                            auto_window ? window_options(&o, &win) : &o, &r, &err) != MN_OK) {
        code = err.status == MN_ERR_ARG && strcmp(err.field, "feet")
                   ? mn_cli_usage_error("anim", "%s", err.message)
                   : mn_cli_input_error(&err);
    } else if (!(code = write_take(out, ma, r.q, r.nframes, a.frame_time))) {
        printf("a=%s b=%s out=%s a_frame=%d b_frame=%d blend_frames=%d phase_cost=%.4g frames=%d "
               "fps=%.6g leg=%.4g locks=%d max_violation=%.3g",
               mn_cli_safe(ins[0]), mn_cli_safe(ins[1]), mn_cli_safe(out), r.a_frame, r.b_frame,
               r.length, r.phase_cost, r.nframes, 1.0 / a.frame_time, feet.leg, r.locks,
               r.max_violation);
        if (o.align_phase) /* the frames of B searched, and what chose them */
            printf(" b_min=%d b_max=%d b_range=%s interest_start=%d interest_end=%d",
                   auto_window ? win.b_min : o.b_min, auto_window ? win.b_max : o.b_max,
                   auto_window ? "auto" : "given", win.interest_start, win.interest_end);
        printf("\n");
    }
    free(r.q);
    mn_motion_free(&a);
    mn_motion_free(&b);
    mn_model_destroy(ma);
    mn_model_destroy(mb);
    return code;
}

typedef struct root_motion_args {
    take_common c;
    double turn;
    int in_place;
} root_motion_args;

static const mn_cli_opt root_motion_opts[] = {
    TAKE_COMMON(root_motion_args),
    {"--in-place", MN_CLI_FLAG, MN_CLI_AT(root_motion_args, in_place, int), .lo = 1},
    {"--turn", MN_CLI_DOUBLE, MN_CLI_AT(root_motion_args, turn, double), -3600, 3600,
     .bad = "--turn needs degrees per second in [-3600, 3600]"},
};
const mn_cli_table mn_cmd_anim_root_motion_options = TAKE_TABLE(root_motion_opts, 1);

int mn_anim_root_motion(int argc, char** argv) {
    const char* in = NULL;
    root_motion_args args = {{NULL, 1}, 0, 0};
    int bad = mn_cli_parse(&mn_cmd_anim_root_motion_options, argc - 1, argv + 1, &args, &in, NULL);
    if (bad) return bad;
    const char* out = args.c.out;
    double scale = args.c.scale, turn = args.turn;
    int in_place = args.in_place;
    if (!in) return mn_cli_usage_error("anim", "root-motion needs TAKE.bvh");
    if (out && !ends_bvh(out)) return mn_cli_usage_error("anim", "OUT must end in .bvh");
    if (in_place && turn != 0) return mn_cli_usage_error("anim", "--in-place or --turn, not both");
    mn_model* m = NULL;
    mn_motion mo;
    int code = read_take(in, scale, &m, &mo);
    if (code) return code;
    size_t n = (size_t)mo.nframes;
    double* track = malloc(sizeof(double) * 3 * n);
    double* ip = malloc(sizeof(double) * n * (size_t)m->nq);
    mn_vec3 up = mn_v3(0, 1, 0);
    if (!track || !ip || mn_take_root_extract(m, mo.q, mo.nframes, up, track, ip) != MN_OK) {
        fprintf(stderr, "marionette: %s: out of memory\n", mn_cli_safe(in));
        code = MN_EXIT_INPUT;
    } else {
        double dist = 0;
        for (size_t f = 1; f < n; f++)
            dist += hypot(track[3 * f] - track[3 * f - 3], track[3 * f + 1] - track[3 * f - 2]);
        double t0[3] = {track[0], track[1], track[2]};
        double secs = (double)(n - 1) * mo.frame_time;
        if (turn != 0)
            mn_take_root_turn(track, mo.nframes, 1.0 / mo.frame_time, turn * MN_PI / 180);
        if (!in_place) mn_take_root_apply(m, ip, mo.nframes, up, track, ip);
        const double* e = track + 3 * (n - 1);
        if (out) code = write_take(out, m, ip, mo.nframes, mo.frame_time);
        if (!code)
            printf("file=%s%s%s frames=%d seconds=%.4g distance=%.4g speed=%.4g "
                   "heading_change_deg=%.4g net_z=%.4g net_x=%.4g mode=%s turn_deg_per_s=%g\n",
                   mn_cli_safe(in), out ? " out=" : "", out ? mn_cli_safe(out) : "", mo.nframes,
                   secs, dist, secs > 0 ? dist / secs : 0, (e[2] - t0[2]) * 180 / MN_PI,
                   e[0] - t0[0], e[1] - t0[1],
                   in_place    ? "in-place"
                   : turn != 0 ? "path"
                               : "kept",
                   turn);
    }
    free(track);
    free(ip);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    return code;
}

typedef struct loop_args {
    take_common c;
    int min_len, blend, cycles;
} loop_args;

static const mn_cli_opt loop_opts[] = {
    TAKE_COMMON(loop_args),
    {"--min-length", MN_CLI_INT, MN_CLI_AT(loop_args, min_len, int), 2, INT_MAX,
     .bad = "--min-length needs an integer >= 2"},
    {"--blend", MN_CLI_INT, MN_CLI_AT(loop_args, blend, int), 1, INT_MAX,
     .bad = "--blend needs a positive integer"},
    {"--cycles", MN_CLI_INT, MN_CLI_AT(loop_args, cycles, int), 1, 1000,
     .bad = "--cycles needs an integer in [1, 1000]"},
};
const mn_cli_table mn_cmd_anim_loop_options = TAKE_TABLE(loop_opts, 1);

int mn_anim_loop(int argc, char** argv) {
    const char* in = NULL;
    loop_args args = {{NULL, 1}, 0, 0, 1};
    int bad = mn_cli_parse(&mn_cmd_anim_loop_options, argc - 1, argv + 1, &args, &in, NULL);
    if (bad) return bad;
    const char* out = args.c.out;
    double scale = args.c.scale;
    int min_len = args.min_len, blend = args.blend, cycles = args.cycles;
    if (!in) return mn_cli_usage_error("anim", "loop needs TAKE.bvh");
    if (out && !ends_bvh(out)) return mn_cli_usage_error("anim", "OUT must end in .bvh");
    mn_model* m = NULL;
    mn_motion mo;
    int code = read_take(in, scale, &m, &mo);
    if (code) return code;
    mn_error err;
    mn_loop_result r;
    memset(&r, 0, sizeof r);
    double* rep = NULL;
    int nrep = 0;
    mn_vec3 up = mn_v3(0, 1, 0);
    if (mn_take_loop(m, mo.q, mo.nframes, 1.0 / mo.frame_time, up, min_len, blend, &r, &err) !=
            MN_OK ||
        mn_take_loop_repeat(m, &r, up, cycles, &rep, &nrep) != MN_OK) {
        code = r.q ? MN_EXIT_INPUT : mn_cli_usage_error("anim", "%s", err.message);
        if (r.q) fprintf(stderr, "marionette: %s: out of memory\n", mn_cli_safe(in));
    } else {
        if (out) code = write_take(out, m, rep, nrep, mo.frame_time);
        if (!code)
            printf("file=%s%s%s start=%d end=%d cycle_frames=%d blend_frames=%d match=%.4g "
                   "step_z=%.4g step_x=%.4g step_heading_deg=%.4g cycles=%d frames=%d\n",
                   mn_cli_safe(in), out ? " out=" : "", out ? mn_cli_safe(out) : "", r.start, r.end,
                   r.end - r.start, r.blend, r.match, r.step[0], r.step[1], r.step[2] * 180 / MN_PI,
                   cycles, nrep);
    }
    free(rep);
    free(r.q);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    return code;
}

/* "t:s[:speed],t:s[:speed],..." into up to cap keys; -1 on a malformed list. */
static int parse_warp(const char* text, double* t, double* s, double* sp, int cap) {
    int n = 0;
    const char* p = text;
    while (*p && n < cap) {
        char* end;
        t[n] = strtod(p, &end);
        if (end == p || *end != ':') return -1;
        p = end + 1;
        s[n] = strtod(p, &end);
        if (end == p) return -1;
        sp[n] = NAN;
        if (*end == ':') {
            p = end + 1;
            sp[n] = strtod(p, &end);
            if (end == p) return -1;
        }
        n++;
        if (*end == ',')
            p = end + 1;
        else if (*end)
            return -1;
        else
            p = end;
    }
    return *p ? -1 : n;
}

typedef struct retime_args {
    take_common c;
    const char* warp;
    double speed;
    int ballistic;
} retime_args;

static const mn_cli_opt retime_opts[] = {
    TAKE_COMMON(retime_args),
    {"--warp", MN_CLI_STRING, MN_CLI_AT(retime_args, warp, const char*), .bad = NULL},
    {"--speed", MN_CLI_DOUBLE, MN_CLI_AT(retime_args, speed, double), 0.01, 100,
     .bad = "--speed needs a factor in [0.01, 100]"},
    {"--ballistic", MN_CLI_FLAG, MN_CLI_AT(retime_args, ballistic, int), .lo = 1},
};
const mn_cli_table mn_cmd_anim_retime_options = TAKE_TABLE(retime_opts, 1);

int mn_anim_retime(int argc, char** argv) {
    const char* in = NULL;
    retime_args args = {{NULL, 1}, NULL, 0, 0};
    int bad = mn_cli_parse(&mn_cmd_anim_retime_options, argc - 1, argv + 1, &args, &in, NULL);
    if (bad) return bad;
    const char *out = args.c.out, *warp = args.warp;
    double scale = args.c.scale, speed = args.speed;
    int ballistic = args.ballistic;
    if (!in || !out || (!warp) == (speed == 0))
        return mn_cli_usage_error("anim",
                                  "retime needs TAKE.bvh --out OUT.bvh and --warp or --speed");
    if (!ends_bvh(out)) return mn_cli_usage_error("anim", "OUT must end in .bvh");
    enum { CAP = 256 };
    double t[CAP], s[CAP], sp[CAP];
    int nw = warp ? parse_warp(warp, t, s, sp, CAP) : 2;
    if (nw < 2)
        return mn_cli_usage_error("anim",
                                  "--warp needs 2 to %d keys OUT:IN[:SPEED], comma-separated", CAP);
    mn_model* m = NULL;
    mn_motion mo;
    int code = read_take(in, scale, &m, &mo);
    if (code) return code;
    if (!warp) {
        t[0] = s[0] = 0, sp[0] = sp[1] = NAN;
        s[1] = mo.nframes - 1;
        t[1] = s[1] / speed;
    }
    mn_error err;
    mn_take_feet feet;
    mn_retime_result r;
    memset(&r, 0, sizeof r);
    if (ballistic && mn_take_feet_find(m, NULL, &feet, &err) != MN_OK) {
        code = mn_cli_input_error(&err);
    } else if (mn_take_retime(m, mo.q, mo.nframes, 1.0 / mo.frame_time, ballistic ? &feet : NULL,
                              nw, t, s, sp, ballistic, &r, &err) != MN_OK) {
        code = err.status == MN_ERR_NOMEM ? mn_cli_input_error(&err)
                                          : mn_cli_usage_error("anim", "--warp: %s", err.message);
    } else if (!(code = write_take(out, m, r.q, r.nframes, mo.frame_time))) {
        printf("file=%s out=%s frames_in=%d frames=%d ballistic=%d flights=%d gravity=%.4g "
               "apex=%.4g apex_retimed=%.4g\n",
               mn_cli_safe(in), mn_cli_safe(out), mo.nframes, r.nframes, ballistic, r.flights,
               r.gravity, r.apex[0], r.apex[1]);
    }
    free(r.q);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    return code;
}
