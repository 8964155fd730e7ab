/* libFuzzer target for the retarget map reader: any byte string must give MN_OK with a map
 * whose names are terminated and printable, or a status with a message; never a crash, a
 * leak or a hang. A map that reads is also handed to a retargeter from the stick figure onto
 * itself, which must either be made or refused with a message. */
#include <marionette/io.h>
#include <marionette/retarget.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static mn_model* stick;

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (!stick) stick = mn_stickman_model(NULL);
    mn_retarget_map map;
    memset(&map, 0x5a, sizeof map);
    mn_error err;
    mn_status s = mn_retarget_map_read_mem((const char*)data, size, "fuzz.map", &map, &err);
    if (s != MN_OK) {
        if (err.message[0] == 0) abort();
        return 0;
    }
    for (int r = 0; r < MN_ROLE_COUNT; r++) {
        if (!memchr(map.source[r], 0, MN_RETARGET_NAME_MAX) ||
            !memchr(map.target[r], 0, MN_RETARGET_NAME_MAX))
            abort();
        for (const char* c = map.source[r]; *c; c++)
            if ((unsigned char)*c < 0x20) abort();
    }
    mn_retarget* rt = mn_retarget_create(stick, stick, &map, NULL, &err);
    if (!rt && err.message[0] == 0) abort();
    mn_retarget_destroy(rt);
    return 0;
}
