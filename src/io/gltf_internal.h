/* The glTF reader's private header lives with the reader in the doc layer; io's glTF writer
 * (gltf_write.c) and the io tests reach it by this name. */
#ifndef MN_IO_GLTF_INTERNAL_H
#define MN_IO_GLTF_INTERNAL_H

#include "doc/gltf_internal.h"

#endif
