#include "figure_print.h"

#include "cli.h"

const char* mn_cli_kind_name(mn_file_kind k) {
    switch (k) {
    case MN_FILE_SKEL:
        return "skeleton";
    case MN_FILE_BVH:
        return "bvh";
    case MN_FILE_URDF:
        return "urdf";
    case MN_FILE_GLTF:
        return "gltf";
    default:
        return "built-in";
    }
}

static const double DEG = 180.0 / MN_PI;

/* The tree is drawn by indentation, two spaces a level, up to MAX_INDENT levels; deeper
 * joints say their depth instead, so the output stays linear in the figure's size (a chain
 * of 100,000 joints would otherwise print ten gigabytes of spaces). */
enum { MAX_INDENT = 32 };

void mn_cli_print_tree(FILE* f, const mn_model* m) {
    for (int j = 0; j < m->njoint; j++) {
        int t = m->jnt_type[j], depth = m->jnt_depth[j];
        if (depth <= MAX_INDENT)
            fprintf(f, "%*s", 2 * depth, "");
        else
            fprintf(f, "%*s(depth %d) ", 2 * MAX_INDENT, "", depth);
        fprintf(f, "%s", mn_cli_safe(m->jnt_name[j]));
        if (m->jnt_alias[j]) fprintf(f, " (joint %s)", mn_cli_safe(m->jnt_alias[j]));
        fprintf(f, "  %s", mn_joint_type_name(t));
        mn_vec3 a = m->jnt_axis[j];
        if (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE) /* + 0.0 prints -0 as 0 */
            fprintf(f, " axis (%.9g %.9g %.9g)", a.x + 0.0, a.y + 0.0, a.z + 0.0);
        if (m->jnt_limited[j]) {
            if (t == MN_JOINT_HINGE)
                fprintf(f, " limits [%.9g, %.9g] deg", m->jnt_range[2 * j] * DEG,
                        m->jnt_range[2 * j + 1] * DEG);
            else if (t == MN_JOINT_SLIDE)
                fprintf(f, " limits [%.9g, %.9g]", m->jnt_range[2 * j], m->jnt_range[2 * j + 1]);
            else if (t == MN_JOINT_BALL)
                fprintf(f, " swing %.9g deg twist [%.9g, %.9g] deg", m->jnt_swing[j] * DEG,
                        m->jnt_twist[2 * j] * DEG, m->jnt_twist[2 * j + 1] * DEG);
        }
        if (m->jnt_mass[j] > 0) fprintf(f, " mass %.9g", m->jnt_mass[j]);
        int held = 0, nv = mn_joint_type_nv((mn_joint_type)t);
        for (int k = 0; k < nv; k++)
            held += m->dof_locked[m->jnt_dofadr[j] + k];
        if (held == nv && nv)
            fprintf(f, " held");
        else if (held)
            fprintf(f, " held %s",
                    t == MN_JOINT_FREE && m->dof_locked[m->jnt_dofadr[j]] ? "position"
                                                                          : "rotation");
        fprintf(f, "\n");
    }
}

void mn_cli_print_summary(FILE* f, const mn_model* m) {
    fprintf(f, "figure: %s, %d joints, %d DOF, state size %d",
            m->name[0] ? mn_cli_safe(m->name) : "(unnamed)", m->njoint, m->nv, m->nq);
    if (m->total_mass > 0) fprintf(f, ", mass %.9g", m->total_mass);
    if (m->nlocked) fprintf(f, ", %d held DOF", m->nlocked);
    fprintf(f, "\n");
}
