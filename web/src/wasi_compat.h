/* Included (-include) before src/io/file.c in the WebAssembly build only: wasi-libc has no
 * mkstemp, umask or chmod. The module has no file system, so these fail the way a
 * read-only one would, and mn_write_file_atomic reports MN_ERR_IO. */
#ifndef MN_WASI_COMPAT_H
#define MN_WASI_COMPAT_H
#include <errno.h>
#include <sys/types.h>
static inline int mkstemp(char* t) {
    (void)t;
    errno = ENOSYS;
    return -1;
}
static inline mode_t umask(mode_t m) {
    return m;
}
static inline int chmod(const char* p, mode_t m) {
    (void)p, (void)m;
    errno = ENOSYS;
    return -1;
}
#endif
