/* The glTF reader's private header lives with the reader and the writer in the doc layer;
 * the io tests reach it by this name. */
#ifndef MN_IO_GLTF_INTERNAL_H
#define MN_IO_GLTF_INTERNAL_H

#include "doc/gltf_internal.h"

#endif
