/* libFuzzer target for the one way to read a file an asset names (mn_read_file_beneath):
 * any bytes as a URI, against a real folder made once per run: asset/{in.bin, sub/in.bin,
 * up -> .., out -> ../secret, fifo} next to secret. Whatever the URI, only a file inside
 * asset/ may be read: reading the secret (or blocking on the FIFO) is a finding. Seeds:
 * fuzz/corpus/fuzz_asset_uri/. */
#include <marionette/io.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static char top[64], dir[96];

static void cleanup(void) {
    const char* names[] = {"asset/in.bin", "asset/sub/in.bin", "asset/up", "asset/out",
                           "asset/fifo",   "asset/sub",        "asset",    "secret"};
    char p[160];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", top, names[i]);
        if (remove(p) != 0) continue;
    }
    rmdir(top);
}

static void put(const char* rel, const char* text) {
    char p[160];
    snprintf(p, sizeof p, "%s/%s", top, rel);
    FILE* f = fopen(p, "wb");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

static void setup(void) {
    const char* t = getenv("TMPDIR");
    snprintf(top, sizeof top, "%s/mn_fuzz_uri_XXXXXX", t && strlen(t) < 30 ? t : "/tmp");
    if (!mkdtemp(top)) abort();
    snprintf(dir, sizeof dir, "%s/asset", top);
    char p[160];
    if (mkdir(dir, 0700) != 0) abort();
    snprintf(p, sizeof p, "%s/sub", dir);
    if (mkdir(p, 0700) != 0) abort();
    put("secret", "SECRET");
    put("asset/in.bin", "INSIDE");
    put("asset/sub/in.bin", "INSIDE");
    snprintf(p, sizeof p, "%s/up", dir);
    if (symlink("..", p) != 0) abort();
    snprintf(p, sizeof p, "%s/out", dir);
    if (symlink("../secret", p) != 0) abort();
    snprintf(p, sizeof p, "%s/fifo", dir);
    if (mkfifo(p, 0600) != 0) abort();
    atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (!top[0]) setup();
    if (size > 4096) return 0;
    char* uri = malloc(size + 1);
    if (!uri) return 0;
    memcpy(uri, data, size);
    uri[size] = 0;
    char* text;
    size_t len;
    mn_error e;
    if (mn_read_file_beneath(dir, uri, 0, &text, &len, &e) == MN_OK) {
        if (len != 6 || strcmp(text, "INSIDE") != 0) abort(); /* read outside the folder */
        free(text);
    } else if (strstr(e.message, top) && !strstr(uri, top)) {
        abort(); /* a message revealed the resolved path */
    }
    free(uri);
    return 0;
}
