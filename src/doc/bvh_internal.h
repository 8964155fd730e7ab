/* Private to the BVH reader and writer: channel codes and the naming convention of the
 * joint series that carries an unusual channel list (docs/bvh.md, "Channel lists other
 * than the three usual ones").
 *
 * A BVH joint whose channels are not "3 rotations" (BALL), "Xposition Yposition Zposition
 * + 3 rotations" (FREE) or none (FIXED) becomes a series of 1-DOF joints, one per channel
 * (a compound joint as single-DOF joints at one location, Welman 6.1.1): SLIDE joints
 * for the position channels first (in file order), then HINGE joints for the rotation
 * channels (in file order), because BVH translates in the parent frame before it rotates
 * whatever the channel order. Every joint of the series but the last is named
 *
 *     <bvh name>:<k>:<Channel>        e.g. "LeftArm:0:Yrotation"
 *
 * where k is the channel's 0-based position in the file's CHANNELS list; the last joint
 * carries the BVH name itself and the one index not named. The writer recognises such a
 * series and writes the original joint and channel order back. */
#ifndef MN_BVH_INTERNAL_H
#define MN_BVH_INTERNAL_H

#include <marionette/model.h>

#include <stddef.h>

/* Channel codes: axis = code % 3 (0 x, 1 y, 2 z); rotation when code >= 3. */
typedef enum mn_bvh_channel {
    MN_BVH_XPOS = 0,
    MN_BVH_YPOS,
    MN_BVH_ZPOS,
    MN_BVH_XROT,
    MN_BVH_YROT,
    MN_BVH_ZROT
} mn_bvh_channel;

/* Channels per joint the reader accepts (repeated rotation axes are allowed, e.g. a
 * proper Euler list Zrotation Xrotation Zrotation). */
#define MN_BVH_MAX_JOINT_CHANNELS 64
/* Nesting depth and joint-count limits of the reader (bounded memory and recursion). */
#define MN_BVH_MAX_DEPTH 256
#define MN_BVH_MAX_JOINTS 100000
/* Longest joint name in bytes (series names add a suffix to it, up to 64 times). */
#define MN_BVH_MAX_NAME 256
/* Largest magnitude a number of a BVH file may have (lengths and degrees). */
#define MN_BVH_MAX_ABS 1e9

/* "Xposition" ... "Zrotation", indexed by mn_bvh_channel. */
extern const char* const mn_bvh_channel_names[6];

/* Splits a series joint name "<base>:<k>:<Channel>". On success returns 1 and sets
 * *base_len (length of <base>), *index and *channel. */
int mn_bvh_series_name_parse(const char* name, size_t* base_len, int* index, int* channel);

/* The name a joint is written under in BVH: every whitespace character (ASCII or
 * Unicode, as Python's str.split() sees it) replaced by '_', so that readers that split
 * lines on whitespace read one word (docs/bvh.md, "Names"). A malloc'd string, NULL when
 * out of memory. */
char* mn_bvh_name_written(const char* name);

#endif
