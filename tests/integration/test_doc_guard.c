/* The guard of the documents (docs/architecture.md, the doc layer): every shipped document
 * is read by the library and written back, and what is written back reads again to the
 * same bytes; web/test/documents.test.mjs holds the WebAssembly module's reader and writer
 * to these same bytes (through `marionette convert` and `marionette anim info --out`).
 *
 * - every JSON file of docs/examples: a sequence document of one figure is read (its figure from
 *   its file) and written back; the text read again, with the figure given as the module
 *   gives it, writes the same bytes. A document of several figures and a scene document are
 *   read (several figures are not written back yet, scenes have no writer);
 * - every shipped figure (the stick figure, the robots' URDF, the takes' BVH, the skinned
 *   glTF files): converted to a figure document, read, written back: the same bytes (the
 *   skin, which the reader leaves to the page, is the text's last member: the rest is the
 *   same bytes, every number the same or, where the reader made a hinge axis unit length
 *   again, within its last bits). */
#include "test.h"

#include <marionette/io.h>
#include <marionette/scene.h>
#include <marionette/sequence.h>

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_names(const void* a, const void* b) {
    return strcmp(*(const char* const*)a, *(const char* const*)b);
}

/* The files of dir whose names end with ext, sorted; *n of them (free each, then the list). */
static char** list_files(const char* dir, const char* ext, int* n) {
    *n = 0;
    DIR* d = opendir(dir);
    if (!d) return NULL;
    char** v = NULL;
    int cap = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name), k = strlen(ext);
        if (l <= k || strcmp(e->d_name + l - k, ext)) continue;
        if (*n == cap) {
            char** w = realloc(v, sizeof *v * (size_t)(cap = cap ? 2 * cap : 16));
            if (!w) break;
            v = w;
        }
        size_t pl = strlen(dir) + l + 2;
        v[*n] = malloc(pl);
        if (!v[*n]) break;
        snprintf(v[*n], pl, "%s/%s", dir, e->d_name);
        (*n)++;
    }
    closedir(d);
    if (v) qsort(v, (size_t)*n, sizeof *v, cmp_names);
    return v;
}

static void free_list(char** v, int n) {
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* A sequence document of one figure: read, written back; the text read again with the
 * figure given (as the module reads it) writes the same bytes. */
static void sequence_round_trip(const char* path, const char* text, size_t len) {
    mn_seq_read_options opt = mn_seq_read_default();
    opt.trusted = 1;
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_seq_doc_info* info = calloc(1, sizeof *info);
    mn_error err;
    CHECK(info != NULL);
    if (!info) return;
    mn_status st = mn_seq_read(path, &opt, &m, &s, info, &err);
    CHECK(st == MN_OK);
    if (st != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        free(info);
        return;
    }
    char* back = NULL;
    size_t blen = 0;
    CHECK(mn_seq_write_doc_mem(s, info, &back, &blen, &err) == MN_OK);
    mn_model* none = NULL;
    mn_seq* s2 = NULL;
    mn_seq_doc_info* info2 = calloc(1, sizeof *info2);
    CHECK(info2 != NULL);
    st = back && info2 ? mn_seq_read_mem(back, blen, path, NULL, NULL, m, &none, &s2, info2, &err)
                       : MN_ERR_NOMEM;
    CHECK(st == MN_OK && none == NULL);
    if (st == MN_OK) {
        char* again = NULL;
        size_t alen = 0;
        CHECK(mn_seq_write_doc_mem(s2, info2, &again, &alen, &err) == MN_OK);
        CHECK(again && alen == blen && memcmp(again, back, blen) == 0);
        if (!again || alen != blen || memcmp(again, back, blen))
            fprintf(stderr, "%s: written back twice, the texts differ\n", path);
        free(again);
    }
    /* the document as written and as read name the same keys */
    CHECK(strstr(text, "\"keys\"") != NULL && strstr(back, "\"keys\"") != NULL);
    (void)len;
    mn_seq_destroy(s2);
    mn_seq_destroy(s);
    mn_model_destroy(m);
    free(back);
    free(info);
    free(info2);
}

static void test_every_example_document(void) {
    int n = 0, nseq = 0, nfigs = 0, nscene = 0;
    char** files = list_files(MN_SOURCE "/docs/examples", ".json", &n);
    CHECK(n >= 12);
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        char* text = mn_test_read_file(files[i], &len);
        CHECK(text != NULL);
        if (!text) continue;
        mn_error err;
        if (strstr(text, "\"keys\"") && !strstr(text, "\"figures\"")) {
            sequence_round_trip(files[i], text, len);
            nseq++;
        } else if (strstr(text, "\"fps\"") && strstr(text, "\"figures\"")) {
            mn_seq_read_options opt = mn_seq_read_default();
            opt.trusted = 1;
            mn_seq_figures f;
            CHECK(mn_seq_read_figures(files[i], &opt, &f, &err) == MN_OK && f.n >= 2);
            mn_seq_figures_free(&f);
            nfigs++;
        } else {
            mn_scene* sc = NULL;
            mn_status st = mn_scene_read(files[i], &sc, &err);
            CHECK(st == MN_OK);
            if (st != MN_OK) fprintf(stderr, "%s\n", err.message);
            mn_scene_destroy(sc);
            nscene++;
        }
        free(text);
    }
    CHECK(nseq >= 5 && nfigs >= 1 && nscene >= 6);
    free_list(files, n);
}

/* Are a and b the same text but for numbers within a few units of the last place (a hinge
 * axis made unit length again when a document is read moves its last bits)? */
static int same_but_last_bits(const char* a, size_t na, const char* b, size_t nb) {
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        int num_a = (a[i] >= '0' && a[i] <= '9') ||
                    (a[i] == '-' && i + 1 < na && a[i + 1] >= '0' && a[i + 1] <= '9');
        int num_b = (b[j] >= '0' && b[j] <= '9') ||
                    (b[j] == '-' && j + 1 < nb && b[j + 1] >= '0' && b[j + 1] <= '9');
        if (num_a && num_b) {
            char *ea, *eb;
            double x = strtod(a + i, &ea), y = strtod(b + j, &eb);
            double scale = fabs(x) > fabs(y) ? fabs(x) : fabs(y);
            if (fabs(x - y) > 8 * DBL_EPSILON * (scale > 1e-300 ? scale : 1)) return 0;
            i = (size_t)(ea - a);
            j = (size_t)(eb - b);
            continue;
        }
        if (a[i] != b[j]) return 0;
        i++, j++;
    }
    return i == na && j == nb;
}

/* A figure document written from the figure at path (or the stick figure) is read and
 * written back: the same text but the skin (its last member, left to the page), every
 * number the same or, where the reader made a hinge axis unit length again, within its last
 * bits. (web/test/documents.test.mjs holds the module's text to `marionette convert`'s of
 * the same document byte for byte.) */
static void figure_round_trip(const char* path) {
    char* data = NULL;
    size_t len = 0;
    if (path) {
        data = mn_test_read_file(path, &len);
        CHECK(data != NULL);
        if (!data) return;
    }
    char* doc = NULL;
    size_t dlen = 0;
    mn_error err;
    mn_status st = path ? mn_figure_doc_convert_mem(data, len, path, &doc, &dlen, NULL, &err)
                        : mn_figure_doc_convert_mem(mn_stickman_text(), strlen(mn_stickman_text()),
                                                    "stickman", &doc, &dlen, NULL, &err);
    CHECK(st == MN_OK);
    free(data);
    if (st != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    const char* name = path ? path : "stickman";
    mn_model* m = NULL;
    mn_motion mo;
    char* back = NULL;
    size_t blen = 0;
    CHECK(mn_figure_doc_read_mem(doc, dlen, name, &m, &mo, &err) == MN_OK);
    CHECK(m &&
          mn_figure_doc_write_mem(m, mo.nframes ? &mo : NULL, NULL, &back, &blen, &err) == MN_OK);
    const char* skin = strstr(doc, ",\n  \"skin\":");
    size_t head = skin ? (size_t)(skin - doc) : dlen - 2; /* all but the closing "}\n" */
    int same = back && blen >= 2 && !strcmp(back + blen - 2, "}\n") &&
               same_but_last_bits(back, blen - 2, doc, head);
    CHECK(same);
    if (!same) fprintf(stderr, "%s: the figure document written back differs\n", name);
    if (!path) CHECK(back && blen == dlen && !memcmp(back, doc, dlen)); /* no axis moves */
    free(back);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    free(doc);
}

static void test_every_shipped_figure(void) {
    figure_round_trip(NULL);
    static const char* const dirs[][2] = {
        {MN_DATA "/robots/franka_panda", ".urdf"},
        {MN_DATA "/robots/kinova_j2s6s200", ".urdf"},
        {MN_DATA "/robots/kuka_iiwa", ".urdf"},
        {MN_DATA "/robots/nao", ".urdf"},
        {MN_DATA "/robots/ur5", ".urdf"},
        {MN_DATA "/robots/xarm6", ".urdf"},
        {MN_DATA "/robots/xarm7", ".urdf"},
        {MN_DATA "/mocap/cmu_3dsmax", ".bvh"},
        {MN_DATA "/mocap/cmu_motionbuilder", ".bvh"},
        {MN_DATA "/mocap/other_skeleton", ".bvh"},
        {MN_DATA "/skinned", ".glb"},
        {MN_DATA "/skinned", ".gltf"},
    };
    int total = 0;
    for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
        int n = 0;
        char** files = list_files(dirs[k][0], dirs[k][1], &n);
        for (int i = 0; i < n; i++)
            figure_round_trip(files[i]);
        total += n;
        free_list(files, n);
    }
    CHECK(total >= 17);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_every_example_document);
    RUN(test_every_shipped_figure);
    return mn_test_report();
}
