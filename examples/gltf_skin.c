/* Read a skinned glTF model, play one of its animations and print where a few vertices
 * and joints go; then build the skeleton as a marionette model for IK.
 *
 *   example_gltf_skin model.glb [ANIMATION [TIME]]
 */
#include <marionette/gltf.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s model.gltf|model.glb [ANIMATION [TIME]]\n", argv[0]);
        return 2;
    }
    mn_gltf g;
    mn_warnings warn = {0};
    mn_error err;
    if (mn_gltf_read(argv[1], &g, &warn, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    if (warn.count) fprintf(stderr, "warning (%d): %s\n", warn.count, warn.first);
    int anim = argc > 2 ? atoi(argv[2]) : 0;
    if (anim >= g.nanims) anim = -1; /* the rest pose */
    double t = argc > 3 ? atof(argv[3]) : (anim >= 0 ? 0.5 * g.anims[anim].duration : 0);
    printf("%s: %d vertices, %d triangles, %d joints, %d animations\n", g.name, g.nverts, g.ntris,
           g.njoints, g.nanims);
    for (int a = 0; a < g.nanims; a++)
        printf("  animation %d '%s': %.3f s\n", a, g.anims[a].name, g.anims[a].duration);

    /* Pose the skeleton, then skin the mesh (glTF: world_j * inverse_bind_j). */
    double* world = malloc(sizeof(double) * 12 * (size_t)g.njoints);
    double* skin = malloc(sizeof(double) * 12 * (size_t)g.njoints);
    double* pos = malloc(sizeof(double) * 3 * (size_t)g.nverts);
    mn_gltf_sample(&g, anim, t, world);
    mn_gltf_skin_matrices(&g, world, skin);
    mn_gltf_skin_vertices(&g, skin, pos);
    printf("animation %d at t = %.3f s:\n", anim, t);
    for (int j = 0; j < g.njoints && j < 5; j++)
        printf("  joint %-24s at %9.4f %9.4f %9.4f\n", g.joint_name[j], world[12 * j + 3],
               world[12 * j + 7], world[12 * j + 11]);
    for (int v = 0; v < g.nverts; v += g.nverts / 4 + 1)
        printf("  vertex %5d at %9.4f %9.4f %9.4f\n", v, pos[3 * v], pos[3 * v + 1],
               pos[3 * v + 2]);

    /* The skeleton as a model: FREE roots and BALL joints at the rest pose. */
    mn_model* m = mn_gltf_model(&g, &err);
    if (!m) {
        fprintf(stderr, "%s\n", err.message);
    } else {
        printf("model '%s': %d joints, %d DOF\n", m->name, m->njoint, m->nv);
        mn_model_destroy(m);
    }
    free(world);
    free(skin);
    free(pos);
    mn_gltf_free(&g);
    return 0;
}
