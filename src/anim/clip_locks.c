/* Compressed clips: the locks of a sequence (its locked feet, Welman 6.3) as points held to
 * their own bound (mn_clip_lock). */
#include <marionette/clip.h>

#include <math.h>

/* Appends a lock when there is room; returns the new count. */
static int put_lock(mn_clip_lock* out, int cap, int n, int joint, mn_vec3 point, int k0, int k1,
                    double tol) {
    if (n < cap) out[n] = (mn_clip_lock){joint, point, k0, k1, tol};
    return n + 1;
}

int mn_clip_locks_from_seq(const mn_seq* s, double first, double step, int n, double tol,
                           double shell, mn_clip_lock* out, int cap) {
    if (!s || !(step > 0) || n < 1) return 0;
    int count = 0;
    for (int c = 0; c < mn_seq_constraint_count(s); c++) {
        const mn_seq_constraint_def* def = mn_seq_constraint(s, c);
        int type = def->con.type;
        /* a constraint with target keys follows them: not a lock */
        if (!def->lock || (type != MN_CON_PIN && type != MN_CON_ORIENT) ||
            mn_seq_target_key_count(s, c) > 0)
            continue;
        const mn_handle_def* h = mn_seq_handle(s, def->con.handle);
        if (!h || h->joint < 0) continue;
        /* the take's frames within [start, end] */
        double a = ceil((def->start - first) / step - 1e-9),
               b = floor((def->end - first) / step + 1e-9);
        if (a < 0) a = 0;
        if (b > n - 1) b = n - 1;
        if (!(a <= b)) continue;
        if (type == MN_CON_PIN) {
            count = put_lock(out, cap, count, h->joint, h->point, (int)a, (int)b, tol);
        } else { /* an orientation: three points `shell` along the joint's axes */
            const mn_vec3 axes[3] = {{shell, 0, 0}, {0, shell, 0}, {0, 0, shell}};
            for (int k = 0; k < 3; k++)
                count = put_lock(out, cap, count, h->joint, axes[k], (int)a, (int)b, tol);
        }
    }
    return count;
}
