/* Fit a libigl rig (rest OBJ, DMAT weights, TGF skeleton) to posed meshes, frame after
 * frame, and print each bone's skinning transform and the vertex error.
 *
 *   example_skin_fit rest.obj weights.DMAT skeleton.tgf posed1.obj [posed2.obj ...]
 *
 * e.g. with data/meshseq/cylinder: cylinder.obj cylinder.DMAT cylinder.tgf and the
 * posed meshes of poses-1 or poses-2.
 */
#include <marionette/meshio.h>
#include <marionette/skin.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s rest.obj weights.DMAT skeleton.tgf posed.obj...\n", argv[0]);
        return 2;
    }
    mn_rig* rig = NULL;
    mn_warnings warn = {0};
    mn_error err;
    /* attach = 1: each bone's head stays on its parent bone's tail */
    if (mn_rig_read_libigl(argv[1], argv[2], argv[3], 1, &rig, NULL, &warn, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    if (warn.count) fprintf(stderr, "warning: %s\n", warn.first);
    /* the fitter holds the factorised translation system and every buffer */
    mn_fitter* fitter = mn_fitter_create(rig, NULL, &err);
    if (!fitter) {
        fprintf(stderr, "%s\n", err.message);
        mn_rig_destroy(rig);
        return 1;
    }
    mn_xform* pose = malloc((size_t)rig->nctrl * sizeof *pose);
    mn_rig_rest_pose(rig, pose);
    int rc = 0;
    for (int k = 4; k < argc; k++) {
        mn_mesh frame;
        if (mn_obj_read(argv[k], &frame, NULL, &err) != MN_OK) {
            fprintf(stderr, "%s\n", err.message);
            rc = 1;
            break;
        }
        if (frame.nverts != rig->nverts) {
            fprintf(stderr, "%s: %d vertices, the rig has %d\n", argv[k], frame.nverts,
                    rig->nverts);
            mn_mesh_free(&frame);
            rc = 1;
            break;
        }
        if (k == 4) mn_fit_kabsch(fitter, pose, frame.pos, 1); /* cold start */
        mn_fit_result res;
        mn_fit(fitter, pose, frame.pos, NULL, &res); /* warm-started from the last frame */
        printf("%s: rms %.3g, max %.3g, %d iterations\n", argv[k], res.rms, res.max_err,
               res.iterations);
        for (int j = 0; j < rig->nctrl; j++) {
            mn_xform S = mn_rig_skin_xform(rig, pose, j); /* x -> R x + t */
            mn_vec3 r = mn_mat3_log(&S.R);
            printf("  %-6s rotation vector (%.4f %.4f %.4f)  t (%.4f %.4f %.4f)\n",
                   rig->ctrl_name[j], r.x, r.y, r.z, S.p.x, S.p.y, S.p.z);
        }
        mn_mesh_free(&frame);
    }
    free(pose);
    mn_fitter_destroy(fitter);
    mn_rig_destroy(rig);
    return rc;
}
