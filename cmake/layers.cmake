# The library's layers, bottom up (docs/architecture.md): one list for both builds. The
# native build (CMakeLists.txt) makes one static library of each; the WebAssembly module
# (web/CMakeLists.txt) compiles every layer that opens no file, with cJSON's copy
# (third_party/cjson), and no library beyond libc and libm.
set(MN_LAYERS core model ik constrain skin anim doc io)
# The layers that open files or need other libraries (libxml2): not in the module.
set(MN_FILE_LAYERS io)
set(MN_MODULE_LAYERS ${MN_LAYERS})
list(REMOVE_ITEM MN_MODULE_LAYERS ${MN_FILE_LAYERS})
