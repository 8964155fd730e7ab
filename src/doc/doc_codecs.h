/* The doc layer's memory forms that take the file table (doc_internal.h, mn_doc_files), and
 * the pieces of its writers that io's path forms reuse so that their messages name the path
 * (src/io/doc_files.c, seq_files.c). The public _mem functions of these readers are io's:
 * they pass io's file table; the WebAssembly module passes NULL (no files). */
#ifndef MN_DOC_CODECS_H
#define MN_DOC_CODECS_H

#include <marionette/gltf.h>
#include <marionette/io.h>
#include <marionette/sequence.h>

#include "doc/doc_internal.h"

/* mn_seq_read_mem and mn_seq_read_skin_mem (skin may be NULL; figure, when given, is the
 * document's figure and none is read) with the files of the document's folder. */
mn_status mn_seqdoc_read_mem(const char* text, size_t len, const char* name, const char* base_dir,
                             const mn_doc_files* files, const mn_seq_read_options* opt,
                             const mn_model* figure, mn_model** model, mn_seq** seq,
                             mn_seq_doc_info* info, mn_gltf* skin, mn_error* err);
/* mn_seq_read_figures_mem with the files of the document's folder. */
mn_status mn_seqdoc_read_figures_mem(const char* text, size_t len, const char* name,
                                     const char* base_dir, const mn_doc_files* files,
                                     const mn_seq_read_options* opt, mn_seq_figures* out,
                                     mn_error* err);
/* mn_gltf_read_mem with external buffers and images read by read_beneath (NULL: none). */
mn_status mn_gltf_read_mem_files(const void* data, size_t len, const char* name,
                                 mn_doc_read_beneath_fn read_beneath, mn_gltf* out,
                                 mn_warnings* warn, mn_error* err);
/* The figure document's text into b (mn_strbuf_init'd here), arguments checked first, name
 * in the messages. */
mn_status mn_figure_doc_text(mn_strbuf* b, const char* name, const mn_model* m,
                             const mn_motion* motion, const mn_figure_skin* skin, mn_error* err);
/* The BVH text (mn_bvh_write_mem) into b (mn_strbuf_init'd here; freed on failure),
 * arguments checked first, name in the messages. */
mn_status mn_bvh_write_text(mn_strbuf* b, const char* name, const mn_model* m,
                            const mn_motion* motion, const mn_bvh_write_options* opt,
                            mn_error* err);
/* The .glb's bytes (mn_gltf_write_mem) into *glb (malloc'd), arguments checked first, name
 * in the messages. */
mn_status mn_gltf_glb(const char* name, const mn_model* m, const mn_motion* motion,
                      const mn_gltf* skin, const mn_gltf_write_options* opt, unsigned char** glb,
                      size_t* len, mn_error* err);
/* The skeleton text writer's check of the joint names (messages name path); 0 when refused. */
int mn_skel_check_names(const char* path, const mn_model* m, mn_error* err);

#endif
