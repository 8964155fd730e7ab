/* BVH writer: any model and motion -> HIERARCHY + MOTION text, in memory (the path form,
 * written atomically, is io's: src/io/doc_files.c).
 *
 * Each model joint becomes one BVH joint whose channels reproduce its local transform
 * T = Trans(offset) Rot(orient) Motion(q) (docs/bvh.md, "Writing any model"):
 *
 *   - position channels X Y Z (the translation of T) when the translation varies (SLIDE,
 *     FREE); the OFFSET is the joint's offset, so q = 0 writes the rest position;
 *   - rotation channels, in the joint's rot_order, holding the Euler angles (degrees) of
 *     orient * motion rotation, when that rotation varies (HINGE, BALL, FREE) or the rest
 *     orientation is not the identity;
 *   - a HINGE or SLIDE about a coordinate axis with no rest orientation gets one channel;
 *   - a FIXED leaf becomes an End Site (its name is not kept: BVH has none).
 *
 * A series of 1-DOF joints made by the reader for an unusual channel list (named as in
 * bvh_internal.h) is written back as the one BVH joint it came from, with the channels in
 * their original order. */
#include "doc/bvh_internal.h"
#include "doc/doc_codecs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mn_bvh_series_name_parse(const char* name, size_t* base_len, int* index, int* channel) {
    const char* last = strrchr(name, ':');
    if (!last || last == name) return 0;
    int ch = -1;
    for (int c = 0; c < 6; c++)
        if (strcmp(last + 1, mn_bvh_channel_names[c]) == 0) ch = c;
    if (ch < 0) return 0;
    /* digits between the previous ':' and last */
    const char* d = last;
    int k = 0, mul = 1, nd = 0;
    while (d > name && d[-1] >= '0' && d[-1] <= '9' && nd < 3) {
        d--;
        k += (d[0] - '0') * mul;
        mul *= 10;
        nd++;
    }
    if (nd == 0 || d == name || d[-1] != ':' || d - 1 == name) return 0;
    *base_len = (size_t)(d - 1 - name);
    *index = k;
    *channel = ch;
    return 1;
}

/* How a BVH joint's channel values are computed. */
enum { W_SERIES, W_XFORM, W_END };

typedef struct wnode {
    int mode;
    int joint; /* model joint carrying the name (a series' last joint) */
    int first; /* first model joint of a series (its offset is the OFFSET) */
    int nch;
    int col; /* first MOTION column */
    int has_pos, has_rot;
    int nmember; /* W_SERIES: members[0..nmember) in chain order */
    int members[MN_BVH_MAX_JOINT_CHANNELS];
    int member_ch[MN_BVH_MAX_JOINT_CHANNELS];           /* channel index of each member */
    signed char member_sign[MN_BVH_MAX_JOINT_CHANNELS]; /* -1 for a hinge about -x, -y, -z */
    unsigned char codes[MN_BVH_MAX_JOINT_CHANNELS];
    char* name; /* the name as written (whitespace as '_') */
} wnode;

typedef struct writer {
    const mn_model* m;
    int* first_child;
    int* next_sibling;
    int* series_final; /* first member of a valid series -> its last joint; else -1 */
    uint8_t* folded;   /* joints of a series other than its last */
    wnode* nodes;
    int* node_of; /* model joint -> wnode index, -1 */
    int nnodes;
    int turned; /* the roots turned by U (mn_bvh_write_options.root_rot) */
    mn_quat U;
} writer;

static int channel_of_joint(const mn_model* m, int j) {
    int t = m->jnt_type[j], a = m->jnt_axis_kind[j];
    if (a < 0 || a > 2 || !m->jnt_orient_ident[j]) return -1;
    if (t == MN_JOINT_SLIDE) return a;
    if (t == MN_JOINT_HINGE) return 3 + a;
    return -1;
}

static int vec_is_zero(mn_vec3 v) {
    return v.x == 0 && v.y == 0 && v.z == 0;
}

/* Checks the chain starting at joint j against the series convention and fills the node;
 * returns the last joint or -1. */
static int series_detect(writer* W, int j, wnode* node) {
    const mn_model* m = W->m;
    size_t blen;
    int idx, ch;
    if (!mn_bvh_series_name_parse(m->jnt_name[j], &blen, &idx, &ch)) return -1;
    const char* base = m->jnt_name[j];
    int p = m->jnt_parent[j];
    size_t pb;
    int pi, pc;
    if (p >= 0 && mn_bvh_series_name_parse(m->jnt_name[p], &pb, &pi, &pc) && pb == blen &&
        strncmp(m->jnt_name[p], base, blen) == 0)
        return -1; /* not the first of its series */
    int n = 0, cur = j, used = 0, seen_hinge = 0;
    uint64_t mask = 0;
    for (;;) {
        if (n >= MN_BVH_MAX_JOINT_CHANNELS) return -1;
        int c = channel_of_joint(m, cur);
        if (c < 0) return -1;
        if (c < 3 && seen_hinge) return -1; /* a slide after a hinge is not BVH's order */
        seen_hinge |= c >= 3;
        if (cur != j && !vec_is_zero(m->jnt_offset[cur])) return -1;
        const char* name = m->jnt_name[cur];
        node->members[n] = cur;
        node->codes[n] = (unsigned char)c;
        if (strlen(name) == blen && strncmp(name, base, blen) == 0) {
            node->member_ch[n] = -1; /* the last: takes the index left over */
            n++;
            break;
        }
        size_t b2;
        int i2, c2;
        if (!mn_bvh_series_name_parse(name, &b2, &i2, &c2) || b2 != blen ||
            strncmp(name, base, blen) != 0 || c2 != c || i2 >= MN_BVH_MAX_JOINT_CHANNELS ||
            (mask >> i2) & 1)
            return -1;
        mask |= UINT64_C(1) << i2;
        node->member_ch[n] = i2;
        used++;
        n++;
        if (m->jnt_nchild[cur] != 1) return -1;
        cur = W->first_child[cur];
    }
    /* The indices must be 0..n-1 with one left for the last joint. */
    int missing = -1;
    for (int k = 0; k < n; k++)
        if (!((mask >> k) & 1)) {
            if (missing >= 0) return -1;
            missing = k;
        }
    if (missing < 0 || used != n - 1) return -1;
    node->member_ch[n - 1] = missing;
    node->nmember = n;
    node->nch = n;
    /* channel list in file order */
    unsigned char codes[MN_BVH_MAX_JOINT_CHANNELS];
    for (int k = 0; k < n; k++)
        codes[node->member_ch[k]] = node->codes[k];
    memcpy(node->codes, codes, (size_t)n);
    return cur;
}

/* The axis (0 x, 1 y, 2 z) of a HINGE about +x, -x, +y, -y, +z or -z with no rest
 * orientation, its sign in *sign; -1 for any other joint. */
static int signed_hinge_axis(const mn_model* m, int j, int* sign) {
    if (m->jnt_type[j] != MN_JOINT_HINGE || !m->jnt_orient_ident[j]) return -1;
    mn_vec3 a = m->jnt_axis[j];
    double v[3] = {a.x, a.y, a.z};
    for (int k = 0; k < 3; k++)
        if ((v[k] == 1 || v[k] == -1) && v[(k + 1) % 3] == 0 && v[(k + 2) % 3] == 0) {
            *sign = v[k] > 0 ? 1 : -1;
            return k;
        }
    return -1;
}

/* Is name exactly "<base>.<k>" (base of base_len bytes)? */
static int is_member_name(const char* name, const char* base, size_t base_len, int k) {
    char suffix[16];
    int n = snprintf(suffix, sizeof suffix, ".%d", k);
    return strlen(name) == base_len + (size_t)n && strncmp(name, base, base_len) == 0 &&
           strcmp(name + base_len, suffix) == 0;
}

/* A compound joint of the skeleton format (Welman 6.1.1: single-DOF hinges at one
 * location), frames named "<j>.1", ..., "<j>.(n-1)", "<j>", as one BVH joint with its
 * rotation channels in the hinges' order (R = R1(q1) R2(q2) R3(q3), the order a BVH
 * channel list is applied in), padded with the axes not used to three distinct rotation
 * channels: what Blender's and MotionBuilder-style readers need. Also a single hinge
 * about a coordinate axis (n = 1). Fills node and returns the last joint, or -1 when j
 * does not start such a run. */
static int compound_detect(const writer* W, int j, int single, wnode* node) {
    const mn_model* m = W->m;
    int sign, a = signed_hinge_axis(m, j, &sign);
    if (a < 0) return -1;
    const char* name = m->jnt_name[j];
    const char* dot = strrchr(name, '.');
    size_t blen = dot ? (size_t)(dot - name) : 0;
    int n = 0, used = 0, cur = j;
    if (!single && (blen == 0 || !is_member_name(name, name, blen, 1))) return -1;
    for (;;) {
        node->members[n] = cur;
        node->member_ch[n] = n;
        node->member_sign[n] = (signed char)sign;
        node->codes[n] = (unsigned char)(MN_BVH_XROT + a);
        used |= 1 << a;
        n++;
        if (single || (n > 1 && strlen(m->jnt_name[cur]) == blen)) break; /* "<base>" ends it */
        if (n == 3 || m->jnt_nchild[cur] != 1) return -1;
        int c = W->first_child[cur];
        a = signed_hinge_axis(m, c, &sign);
        if (a < 0 || (used >> a) & 1 || !vec_is_zero(m->jnt_offset[c])) return -1;
        const char* cn = m->jnt_name[c];
        if (!(strlen(cn) == blen && strncmp(cn, name, blen) == 0) &&
            !is_member_name(cn, name, blen, n + 1))
            return -1;
        cur = c;
    }
    node->nmember = n;
    for (int k = 0; k < 3; k++)
        if (!((used >> k) & 1)) node->codes[n++] = (unsigned char)(MN_BVH_XROT + k);
    node->mode = W_SERIES;
    node->first = j;
    node->joint = cur;
    node->nch = 3;
    return cur;
}

/* Plans the BVH joint of model joint j (not a folded series member, not an End Site). */
/* turned: a root turned by the writer's root_rot, which its rotation channels carry */
static void plan_xform(const mn_model* m, int j, int turned, wnode* node) {
    node->mode = W_XFORM;
    node->joint = node->first = j;
    int t = m->jnt_type[j];
    node->has_pos = t == MN_JOINT_SLIDE || t == MN_JOINT_FREE;
    node->has_rot = t == MN_JOINT_HINGE || t == MN_JOINT_BALL || t == MN_JOINT_FREE ||
                    !m->jnt_orient_ident[j] || turned;
    int n = 0;
    if (node->has_pos)
        for (int a = 0; a < 3; a++)
            node->codes[n++] = (unsigned char)(MN_BVH_XPOS + a);
    if (node->has_rot) {
        static const char* const orders[6] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};
        int o = m->jnt_rot_order[j];
        if (o < 0 || o > 5) o = MN_EULER_ZXY;
        for (int a = 0; a < 3; a++)
            node->codes[n++] = (unsigned char)(MN_BVH_XROT + (orders[o][a] - 'X'));
    }
    node->nch = n;
}

static int is_end_site(const mn_model* m, int j) {
    return m->jnt_type[j] == MN_JOINT_FIXED && m->jnt_nchild[j] == 0 && m->jnt_parent[j] >= 0;
}

/* Lengths and times: 14 significant digits ("-0" written as "0"). A file's own numbers
 * come back as they were read (offset + (channel - offset) is the channel to within an
 * ulp), and any other double to within 1 part in 10^14. */
static void put_number(mn_strbuf* b, double v) {
    char s[40];
    if (v == 0) {
        mn_strbuf_append(b, "0", 1);
        return;
    }
    int n = snprintf(s, sizeof s, "%.14g", v);
    mn_strbuf_append(b, s, (size_t)n);
}

/* Angles in degrees: 12 decimals, trailing zeros dropped. Euler angles recomputed from a
 * quaternion carry an absolute error of a few 1e-15 degrees, so a fixed number of
 * decimals (not of significant digits) gives back the file's "0.036851" rather than
 * "0.036850999999999", and costs at most 1e-12 degrees (2e-14 rad). */
static void put_angle(mn_strbuf* b, double v) {
    char s[400];
    int n = snprintf(s, sizeof s, "%.12f", v);
    if (n <= 0 || n >= (int)sizeof s) { /* beyond any sensible angle: keep every digit */
        put_number(b, v);
        return;
    }
    while (n > 1 && s[n - 1] == '0')
        n--;
    if (s[n - 1] == '.') n--;
    if (n == 2 && s[0] == '-' && s[1] == '0') {
        s[0] = '0';
        n = 1;
    }
    mn_strbuf_append(b, s, (size_t)n);
}

static void put_indent(mn_strbuf* b, int depth) {
    static const char tabs[] = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t";
    /* Very deep chains are indented no further than 32 levels (the file stays linear). */
    mn_strbuf_append(b, tabs, (size_t)(depth < 32 ? depth : 32));
}

static void put_vec(mn_strbuf* b, mn_vec3 v) {
    put_number(b, v.x);
    mn_strbuf_append(b, " ", 1);
    put_number(b, v.y);
    mn_strbuf_append(b, " ", 1);
    put_number(b, v.z);
}

/* The BVH joint that model joint c starts (a series' last joint, or c itself). */
static int node_joint_of(const writer* W, int c) {
    return W->series_final[c] >= 0 ? W->series_final[c] : c;
}

/* HIERARCHY, depth first with an explicit stack (a model may be a very long chain). */
static mn_status write_hierarchy(writer* W, mn_strbuf* b, mn_error* err, const char* name) {
    const mn_model* m = W->m;
    /* stack of joints to open (j) or close (~j), with the BVH depth of each entry */
    int* stack = malloc(((size_t)m->njoint * 2 + 2) * sizeof *stack);
    int* sdepth = malloc(((size_t)m->njoint * 2 + 2) * sizeof *sdepth);
    if (!stack || !sdepth) {
        free(stack);
        free(sdepth);
        return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    }
    int top = 0, col = 0;
    mn_strbuf_append(b, "HIERARCHY\n", 10);
    /* roots pushed in reverse so they come out in model order; entry ~j closes j */
    for (int j = m->njoint - 1; j >= 0; j--)
        if (m->jnt_parent[j] < 0) {
            sdepth[top] = 0;
            stack[top++] = j;
        }
    while (top > 0) {
        int e = stack[--top], depth = sdepth[top];
        if (e < 0) {
            put_indent(b, depth);
            mn_strbuf_append(b, "}\n", 2);
            continue;
        }
        int j = node_joint_of(W, e);
        if (is_end_site(m, j)) {
            put_indent(b, depth);
            mn_strbuf_append(b, "End Site\n", 9);
            put_indent(b, depth);
            mn_strbuf_append(b, "{\n", 2);
            put_indent(b, depth + 1);
            mn_strbuf_append(b, "OFFSET ", 7);
            put_vec(b, m->jnt_offset[j]);
            mn_strbuf_append(b, "\n", 1);
            put_indent(b, depth);
            mn_strbuf_append(b, "}\n", 2);
            continue;
        }
        wnode* node = &W->nodes[W->node_of[j]];
        node->col = col;
        col += node->nch;
        put_indent(b, depth);
        mn_strbuf_printf(b, "%s ", m->jnt_parent[e] < 0 ? "ROOT" : "JOINT");
        mn_strbuf_append(b, node->name, strlen(node->name));
        mn_strbuf_append(b, "\n", 1);
        put_indent(b, depth);
        mn_strbuf_append(b, "{\n", 2);
        put_indent(b, depth + 1);
        mn_strbuf_append(b, "OFFSET ", 7);
        mn_vec3 off = m->jnt_offset[node->first];
        if (W->turned && m->jnt_parent[e] < 0) off = mn_quat_rotate(W->U, off);
        put_vec(b, off);
        mn_strbuf_append(b, "\n", 1);
        put_indent(b, depth + 1);
        mn_strbuf_printf(b, "CHANNELS %d", node->nch);
        for (int k = 0; k < node->nch; k++) {
            mn_strbuf_append(b, " ", 1);
            const char* cn = mn_bvh_channel_names[node->codes[k]];
            mn_strbuf_append(b, cn, strlen(cn));
        }
        mn_strbuf_append(b, "\n", 1);
        /* close after the children; children pushed in reverse model order */
        sdepth[top] = depth;
        stack[top++] = ~e;
        int nc = 0;
        for (int c = W->first_child[j]; c >= 0; c = W->next_sibling[c])
            nc++;
        top += nc;
        int k = 0;
        for (int c = W->first_child[j]; c >= 0; c = W->next_sibling[c]) {
            sdepth[top - 1 - k] = depth + 1;
            stack[top - 1 - k++] = c;
        }
    }
    free(stack);
    free(sdepth);
    return MN_OK;
}

/* Channel values of one frame (row has the columns of all nodes). */
static void frame_values(const writer* W, const double* q, double* row) {
    const mn_model* m = W->m;
    for (int i = 0; i < W->nnodes; i++) {
        const wnode* node = &W->nodes[i];
        double* out = row + node->col;
        if (node->mode == W_SERIES) {
            mn_vec3 off = m->jnt_offset[node->first];
            double o[3] = {off.x, off.y, off.z};
            for (int k = node->nmember; k < node->nch; k++)
                out[k] = 0; /* the rotation channels a compound joint is padded with */
            for (int k = 0; k < node->nmember; k++) {
                int j = node->members[k], c = node->codes[node->member_ch[k]];
                double v = node->member_sign[k] < 0 ? -q[m->jnt_qadr[j]] : q[m->jnt_qadr[j]];
                out[node->member_ch[k]] = c < 3 ? o[c] + v : v * (180.0 / MN_PI);
            }
            continue;
        }
        int j = node->joint, t = m->jnt_type[j], a = m->jnt_qadr[j];
        mn_quat R = m->jnt_orient[j];
        mn_vec3 p = m->jnt_offset[j];
        if (t == MN_JOINT_HINGE) {
            R = mn_quat_mul(R, mn_quat_axis_angle(m->jnt_axis[j], q[a]));
        } else if (t == MN_JOINT_SLIDE) {
            p = mn_vec3_add(p, mn_quat_rotate(R, mn_vec3_scale(m->jnt_axis[j], q[a])));
        } else if (t == MN_JOINT_BALL) {
            R = mn_quat_mul(R, mn_quat_normalize(mn_q4(q[a], q[a + 1], q[a + 2], q[a + 3])));
        } else if (t == MN_JOINT_FREE) {
            /* the model layer's FREE translation is in the parent frame (mn_fk) */
            p = mn_vec3_add(p, mn_v3(q[a], q[a + 1], q[a + 2]));
            R = mn_quat_mul(R, mn_quat_normalize(mn_q4(q[a + 3], q[a + 4], q[a + 5], q[a + 6])));
        }
        if (W->turned && m->jnt_parent[j] < 0) { /* a root: its frame is the world's */
            R = mn_quat_mul(W->U, R);
            p = mn_quat_rotate(W->U, p);
        }
        int n = 0;
        if (node->has_pos) {
            out[n++] = p.x;
            out[n++] = p.y;
            out[n++] = p.z;
        }
        if (node->has_rot) {
            int o = m->jnt_rot_order[j];
            if (o < 0 || o > 5) o = MN_EULER_ZXY;
            double e[3];
            mn_euler_from_quat((mn_euler_order)o, mn_quat_normalize(R), e);
            for (int k = 0; k < 3; k++)
                out[n++] = e[k] * (180.0 / MN_PI);
        }
    }
}

static void writer_free(writer* W) {
    for (int i = 0; W->nodes && i < W->nnodes; i++)
        free(W->nodes[i].name);
    free(W->first_child);
    free(W->next_sibling);
    free(W->series_final);
    free(W->folded);
    free(W->nodes);
    free(W->node_of);
}

mn_bvh_write_options mn_bvh_write_default(void) {
    mn_bvh_write_options o;
    o.root_rot = mn_quat_identity();
    return o;
}

/* Plans every BVH joint of W's model into W->nodes: series first (their members are
 * folded away), then compound joints, then one BVH joint per remaining joint. */
static void plan_nodes(writer* W) {
    const mn_model* m = W->m;
    size_t nj = (size_t)m->njoint;
    /* Plan every BVH joint: series first (their members are folded away), then the rest. */
    for (int j = 0; j < (int)nj; j++) {
        wnode tmp;
        memset(&tmp, 0, sizeof tmp);
        if (W->turned && m->jnt_parent[j] < 0) continue; /* a turned root: its own joint */
        int last = series_detect(W, j, &tmp);
        if (last < 0 || last == j) continue;
        tmp.mode = W_SERIES;
        tmp.joint = last;
        tmp.first = j;
        W->series_final[j] = last;
        for (int k = 0; k + 1 < tmp.nmember; k++)
            W->folded[tmp.members[k]] = 1;
        W->node_of[last] = W->nnodes;
        W->nodes[W->nnodes++] = tmp;
    }
    /* Compound joints ("<j>.1", ..., "<j>") next, then one BVH joint per remaining joint. */
    for (int j = 0; j < (int)nj; j++) {
        if (W->folded[j] || W->node_of[j] >= 0 || W->series_final[j] >= 0) continue;
        if (W->turned && m->jnt_parent[j] < 0) continue;
        wnode tmp;
        memset(&tmp, 0, sizeof tmp);
        int last = compound_detect(W, j, 0, &tmp);
        if (last < 0) continue;
        int free_run = 1;
        for (int k = 0; k < tmp.nmember; k++)
            free_run &= !W->folded[tmp.members[k]] && W->node_of[tmp.members[k]] < 0 &&
                        W->series_final[tmp.members[k]] < 0;
        if (!free_run) continue;
        W->series_final[j] = last;
        for (int k = 0; k + 1 < tmp.nmember; k++)
            W->folded[tmp.members[k]] = 1;
        W->node_of[last] = W->nnodes;
        W->nodes[W->nnodes++] = tmp;
    }
    for (int j = 0; j < (int)nj; j++) {
        if (W->folded[j] || W->node_of[j] >= 0 || is_end_site(m, j)) continue;
        wnode* node = &W->nodes[W->nnodes];
        memset(node, 0, sizeof *node);
        int turned_root = W->turned && m->jnt_parent[j] < 0;
        if (turned_root || compound_detect(W, j, 1, node) < 0) plan_xform(m, j, turned_root, node);
        W->node_of[j] = W->nnodes++;
    }
}

/* The nodes' names as written (whitespace as '_'), refused when not unique (file in messages). */
static mn_status name_nodes(writer* W, const char* file, mn_error* err) {
    const mn_model* m = W->m;
    mn_status st = MN_OK;
    /* Names as written: whitespace as '_', unique. */
    mn_name_map written;
    memset(&written, 0, sizeof written);
    if (!mn_name_map_init(&written, (size_t)W->nnodes + 1))
        st = mn_error_set(err, MN_ERR_NOMEM, file, 0, "", "out of memory");
    for (int i = 0; i < W->nnodes && !st; i++) {
        int j = W->nodes[i].joint;
        const char* name = m->jnt_name[j];
        size_t n = strlen(name);
        if (n == 0 || name[n - 1] == '{' || !mn_utf8_text(name, n)) {
            st = mn_error_set(err, MN_ERR_ARG, file, 0, "name",
                              "joint %d: its name cannot be written as BVH", j);
            break;
        }
        W->nodes[i].name = mn_bvh_name_written(name);
        if (!W->nodes[i].name) {
            st = mn_error_set(err, MN_ERR_NOMEM, file, 0, "", "out of memory");
            break;
        }
        int other = mn_name_map_put(&written, W->nodes[i].name, j);
        if (other >= 0)
            st = mn_error_set(err, MN_ERR_ARG, file, 0, "name",
                              "joints %d and %d: their names are both '%s' in BVH (whitespace "
                              "written as '_')",
                              other, j, W->nodes[i].name);
    }
    mn_name_map_free(&written);
    return st;
}

/* The MOTION section: every frame's channels, refused beyond what the reader takes. */
static mn_status write_motion(const writer* W, const mn_motion* mo, mn_strbuf* b, const char* name,
                              mn_error* err) {
    const mn_model* m = W->m;
    mn_status st = MN_OK;
    int ncol = 0;
    for (int i = 0; i < W->nnodes; i++)
        ncol += W->nodes[i].nch;
    double* row = malloc(((size_t)ncol + 1) * sizeof *row);
    uint8_t* angle = calloc((size_t)ncol + 1, 1);
    for (int i = 0; angle && i < W->nnodes; i++)
        for (int k = 0; k < W->nodes[i].nch; k++)
            angle[W->nodes[i].col + k] = W->nodes[i].codes[k] >= 3;
    if (!row || !angle) {
        st = mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    } else {
        mn_strbuf_printf(b, "MOTION\nFrames: %d\nFrame Time: ", mo->nframes);
        put_number(b, mo->frame_time);
        mn_strbuf_append(b, "\n", 1);
        for (int f = 0; f < mo->nframes && !b->failed && !st; f++) {
            frame_values(W, m->nq ? mo->q + (size_t)f * (size_t)m->nq : NULL, row);
            for (int c = 0; c < ncol; c++) {
                /* what the reader would refuse is refused here */
                if (!(fabs(row[c]) <= MN_BVH_MAX_ABS)) {
                    st = mn_error_set(err, MN_ERR_ARG, name, 0, "motion",
                                      "frame %d: channel %d is %g, beyond the BVH range of %g", f,
                                      c + 1, row[c], MN_BVH_MAX_ABS);
                    break;
                }
                if (c) mn_strbuf_append(b, " ", 1);
                if (angle[c])
                    put_angle(b, row[c]);
                else
                    put_number(b, row[c]);
            }
            mn_strbuf_append(b, "\n", 1);
        }
    }
    free(row);
    free(angle);
    return st;
}

mn_status mn_bvh_write_text(mn_strbuf* b, const char* name, const mn_model* m,
                            const mn_motion* motion, const mn_bvh_write_options* opt,
                            mn_error* err) {
    mn_strbuf_init(b);
    mn_quat U = opt ? opt->root_rot : mn_quat_identity();
    double un = U.w * U.w + U.x * U.x + U.y * U.y + U.z * U.z;
    if (!isfinite(un) || fabs(un - 1) > 1e-9)
        return mn_error_set(err, MN_ERR_ARG, name, 0, "root_rot", "not a unit quaternion");
    if (!m) return mn_error_set(err, MN_ERR_ARG, name, 0, "", "path and model are required");
    if (m->njoint <= 0)
        return mn_error_set(err, MN_ERR_ARG, name, 0, "model", "the model has no joints");
    mn_motion rest = {1, m->nq, 1.0 / 30.0, m->q0};
    const mn_motion* mo = motion ? motion : &rest;
    if (mo->nq != m->nq || mo->nframes < 0 || (mo->nframes > 0 && m->nq > 0 && !mo->q))
        return mn_error_set(err, MN_ERR_ARG, name, 0, "motion",
                            "motion does not fit the model (nq %d, model nq %d)", mo->nq, m->nq);
    if (!(mo->frame_time > 0) || !isfinite(mo->frame_time))
        return mn_error_set(err, MN_ERR_ARG, name, 0, "frame_time",
                            "frame time must be positive and finite");
    size_t nvals = (size_t)mo->nframes * (size_t)m->nq;
    for (size_t i = 0; i < nvals; i++)
        if (!isfinite(mo->q[i]))
            return mn_error_set(err, MN_ERR_ARG, name, 0, "motion",
                                "frame %zu: state %zu is not finite", i / (size_t)m->nq,
                                i % (size_t)m->nq);

    writer W;
    memset(&W, 0, sizeof W);
    W.m = m;
    W.turned = U.w != 1;
    W.U = mn_quat_normalize(U);
    size_t nj = (size_t)m->njoint;
    W.first_child = malloc(nj * sizeof(int));
    W.next_sibling = malloc(nj * sizeof(int));
    W.series_final = malloc(nj * sizeof(int));
    W.folded = calloc(nj, 1);
    W.nodes = malloc(nj * sizeof(wnode));
    W.node_of = malloc(nj * sizeof(int));
    if (!W.first_child || !W.next_sibling || !W.series_final || !W.folded || !W.nodes ||
        !W.node_of) {
        writer_free(&W);
        return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    }
    for (int j = (int)nj - 1; j >= 0; j--) {
        W.first_child[j] = -1;
        W.series_final[j] = -1;
        W.node_of[j] = -1;
    }
    for (int j = (int)nj - 1; j >= 0; j--) {
        int p = m->jnt_parent[j];
        W.next_sibling[j] = p >= 0 ? W.first_child[p] : -1;
        if (p >= 0) W.first_child[p] = j;
    }
    plan_nodes(&W);
    mn_status st = name_nodes(&W, name, err);
    if (!st) st = write_hierarchy(&W, b, err, name);
    if (!st) st = write_motion(&W, mo, b, name, err);
    if (!st && b->failed) st = mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    if (st) mn_strbuf_free(b);
    writer_free(&W);
    return st;
}

mn_status mn_bvh_write_mem(const mn_model* m, const mn_motion* motion,
                           const mn_bvh_write_options* opt, char** text, size_t* len,
                           mn_error* err) {
    if (text) *text = NULL;
    if (len) *len = 0;
    if (!text || !m) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "model and text are required");
    mn_strbuf b;
    mn_status st = mn_bvh_write_text(&b, "", m, motion, opt, err);
    if (st) return st;
    *text = b.data;
    if (len) *len = b.len;
    return MN_OK;
}
