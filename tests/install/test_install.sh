#!/usr/bin/env bash
# Installs the build into a temporary prefix (cmake --install --prefix) and builds
# examples/fk_chain.c against it the two ways a user would: with pkg-config
# (PKG_CONFIG_PATH) and with a CMake project that calls find_package(marionette)
# (CMAKE_PREFIX_PATH), each against the shared and the static library. Every program runs
# and must print what the in-tree example prints for the Franka Panda (whose flange sits
# at x = 0.088 m, z = 0.926 m at rest).
#
#   test_install.sh BUILD_DIR SOURCE_DIR IN_TREE_EXAMPLE
# Environment: CC (the compiler of the build), MN_EXTRA_FLAGS (compile and link flags the
# library was built with that a program needs too, e.g. the sanitizers).
set -euo pipefail
build=$1 src=$2 reference=$3
cc=${CC:-cc}
extra=${MN_EXTRA_FLAGS:-}
urdf=$src/data/robots/franka_panda/panda.urdf
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mn-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
lib=$prefix/lib
[ -d "$lib/pkgconfig" ] || lib=$(dirname "$(find "$prefix" -name marionette.pc)")/..
for f in include/marionette/base.h include/marionette/model.h include/marionette/io.h bin/marionette \
         share/man/man1/marionette.1 share/bash-completion/completions/marionette \
         share/doc/marionette/LICENSE; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done
for f in libmarionette.so libmarionette.so.0 libmarionette.a pkgconfig/marionette.pc \
         cmake/marionette/marionetteConfig.cmake cmake/marionette/marionetteConfigVersion.cmake \
         cmake/marionette/marionetteTargets.cmake; do
  [ -e "$lib/$f" ] || fail "not installed: lib/$f"
done
"$prefix/bin/marionette" --help > "$tmp/help" || fail "the installed command does not run"
grep -q '^usage: marionette' "$tmp/help" || fail "the installed command does not print its usage"
grep -q '^\.TH MARIONETTE 1' "$prefix/share/man/man1/marionette.1" || fail "the installed man page has no .TH"
grep -q '^complete -F _marionette marionette$' "$prefix/share/bash-completion/completions/marionette" ||
  fail "the installed completion does not register _marionette"

# The soname carries the major version; the shared library exports the public API only.
names() { # PROGRAM PATTERN: whether its dynamic section (readelf -d) matches PATTERN
  readelf -d "$1" > "$tmp/dynamic"
  grep -q "$2" "$tmp/dynamic"
}
names "$lib/libmarionette.so" 'SONAME.*\[libmarionette\.so\.0\]' || fail "soname is not libmarionette.so.0"
if command -v nm > /dev/null; then
  nm -D --defined-only "$lib/libmarionette.so" | awk '{print $3}' > "$tmp/exported"
  for s in mn_model_find_joint mn_chain_create mn_urdf_read mn_bvh_read mn_error_set; do
    grep -qx "$s" "$tmp/exported" || fail "$s is not exported"
  done
  # every exported name is declared in a public header; private helpers stay hidden
  while read -r s; do
    grep -q "\b$s\b" "$prefix"/include/marionette/*.h || fail "exported but not public: $s"
  done < "$tmp/exported"
  nm --defined-only "$lib/libmarionette.a" > "$tmp/static_syms" 2> /dev/null
  grep -q ' T mn_csys_apply_step$' "$tmp/static_syms" || fail "static library misses the constraint layer"
  ! grep -qx mn_csys_apply_step "$tmp/exported" || fail "a private helper is exported"
fi

"$reference" "$urdf" panda_link0 panda_link8 > "$tmp/expected"
grep -q 'tip at (0.0880 0.0000 0.9260)' "$tmp/expected" || fail "the in-tree example does not place the flange at rest"
check() { # NAME PROGRAM...: runs it and compares with the in-tree example
  local name=$1; shift
  "$@" "$urdf" panda_link0 panda_link8 > "$tmp/$name.out" || fail "$name exits $?"
  cmp -s "$tmp/expected" "$tmp/$name.out" || { diff "$tmp/expected" "$tmp/$name.out" >&2; fail "$name prints otherwise"; }
  echo "ok: $name"
}

# 1. pkg-config
export PKG_CONFIG_PATH=$lib/pkgconfig
[ "$(pkg-config --modversion marionette)" = "$(sed -n 's/^Version: //p' "$lib/pkgconfig/marionette.pc")" ] || fail "pkg-config --modversion"
pkg-config --print-requires-private marionette | grep -q libxml-2.0 || fail "Requires.private misses libxml-2.0"
# shellcheck disable=SC2046,SC2086
"$cc" $extra -o "$tmp/pc_shared" "$src/examples/fk_chain.c" $(pkg-config --cflags --libs marionette)
names "$tmp/pc_shared" 'NEEDED.*libmarionette\.so\.0' || fail "pc_shared does not use the shared library"
LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} check pc_shared "$tmp/pc_shared"
# and with the flags first, as people often write it (the linker's --as-needed must not
# drop the library seen before the program)
# shellcheck disable=SC2046,SC2086
"$cc" $extra $(pkg-config --cflags --libs marionette) -o "$tmp/pc_first" "$src/examples/fk_chain.c"
LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} check pc_flags_first "$tmp/pc_first"
# shellcheck disable=SC2046,SC2086
"$cc" $extra -o "$tmp/pc_static" "$src/examples/fk_chain.c" $(pkg-config --cflags marionette) \
  $(pkg-config --static --libs marionette | sed 's/-lmarionette\b/-l:libmarionette.a/')
! names "$tmp/pc_static" 'libmarionette' || fail "pc_static uses the shared library"
check pc_static "$tmp/pc_static"

# 2. CMake: find_package(marionette)
mkdir -p "$tmp/app"
cp "$src/examples/fk_chain.c" "$tmp/app/"
cat > "$tmp/app/CMakeLists.txt" << 'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(app C)
find_package(marionette 0.1 REQUIRED)
add_executable(app_shared fk_chain.c)
target_link_libraries(app_shared PRIVATE marionette::marionette)
add_executable(app_static fk_chain.c)
target_link_libraries(app_static PRIVATE marionette::marionette_static)
CMAKE
cmake -S "$tmp/app" -B "$tmp/app/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" > "$tmp/app.log" 2>&1 || { cat "$tmp/app.log"; fail "find_package(marionette)"; }
cmake --build "$tmp/app/build" > "$tmp/app.log" 2>&1 || { cat "$tmp/app.log"; fail "building against the CMake package"; }
names "$tmp/app/build/app_shared" 'NEEDED.*libmarionette\.so\.0' || fail "app_shared does not use the shared library"
! names "$tmp/app/build/app_static" 'libmarionette' || fail "app_static uses the shared library"
check cmake_shared "$tmp/app/build/app_shared" # found through the RPATH CMake records
check cmake_static "$tmp/app/build/app_static"
# a version the package does not promise is refused
sed -i 's/find_package(marionette 0.1 REQUIRED)/find_package(marionette 1.0 REQUIRED)/' "$tmp/app/CMakeLists.txt"
! cmake -S "$tmp/app" -B "$tmp/app/build2" -DCMAKE_PREFIX_PATH="$prefix" > /dev/null 2>&1 || fail "find_package(marionette 1.0) accepted 0.1"
echo "install: ok"
