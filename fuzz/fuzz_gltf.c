/* libFuzzer target for the glTF 2.0 reader: any bytes as a .gltf or .glb image (external
 * buffer URIs point into a folder that does not exist, so no real file is read). A file
 * that loads is also sampled, skinned and turned into a model and a motion, to reach that
 * code with whatever the reader accepted, and written back as a .glb in memory. Seeds:
 * fuzz/corpus/fuzz_gltf/. */
#include <marionette/gltf.h>

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    mn_gltf g;
    mn_warnings w = {0};
    mn_error e;
    if (mn_gltf_read_mem(data, size, "fuzz-input/in.gltf", &g, &w, &e) != MN_OK) return 0;
    double* world = malloc(sizeof(double) * 12 * (size_t)g.njoints);
    double* skin = malloc(sizeof(double) * 12 * (size_t)g.njoints);
    double* pos = malloc(sizeof(double) * 3 * (size_t)g.nverts + 1);
    if (world && skin && pos) {
        for (int a = -1; a < g.nanims; a++) {
            double d = a >= 0 ? g.anims[a].duration : 0;
            for (int k = 0; k < 4; k++) {
                if (mn_gltf_sample(&g, a, d * k / 3.0, world) != MN_OK) abort();
                mn_gltf_skin_matrices(&g, world, skin);
                mn_gltf_skin_vertices(&g, skin, pos);
            }
        }
    }
    free(world);
    free(skin);
    free(pos);
    mn_model* m = mn_gltf_model(&g, &e);
    if (m && g.nanims > 0 && g.anims[0].duration < 100) {
        mn_motion mo;
        if (mn_gltf_motion(&g, m, 0, 2, &mo, &e) == MN_OK) mn_motion_free(&mo);
    }
    /* the first animation as mn_figure_read takes it (bounded by the key count) */
    if (m && g.nanims > 0) {
        mn_motion mo;
        if (mn_gltf_motion_keys(&g, m, 0, "in.gltf", &mo, &w, &e) == MN_OK) mn_motion_free(&mo);
    }
    /* the state at every key time of every animation (at most 64 each) */
    double* q = m ? malloc(sizeof(double) * (size_t)m->nq + 1) : NULL;
    double* work = malloc(sizeof(double) * 16 * (size_t)g.njoints + 1);
    for (int a = 0; q && work && a < g.nanims; a++)
        for (int k = 0; k < g.anims[a].nkeys && k < 64; k++)
            if (mn_gltf_state(&g, m, a, g.anims[a].key_times[k], k ? q : NULL, q, work, &e) !=
                    MN_OK &&
                e.status == MN_ERR_ARG)
                abort();
    free(q);
    free(work);
    /* the glB writer (in memory) on the model and the skin as read, its look kept */
    if (m) {
        mn_gltf_write_options o = mn_gltf_write_default();
        o.keep_attributes = 1;
        unsigned char* glb = NULL;
        size_t len = 0;
        mn_status st = mn_gltf_write_mem(m, NULL, &g, &o, &glb, &len, &e);
        if (st == MN_OK && (len < 20 || len % 4 != 0)) abort();
        free(glb);
    }
    mn_model_destroy(m);
    mn_gltf_free(&g);
    return 0;
}
