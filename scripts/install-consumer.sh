#!/bin/sh
# install-consumer.sh BUILD_DIR WORK_DIR [CMAKE] [CC] [VERSION]
#
# Installs the build into a fresh prefix under WORK_DIR
# (`cmake --install BUILD_DIR --prefix WORK_DIR/prefix`), then checks that a
# C program builds and runs against what was installed:
#   1. with pkg-config (PKG_CONFIG_PATH=<prefix>/<libdir>/pkgconfig),
#   2. with CMake (find_package(Strata CONFIG REQUIRED), target strata::strata),
# both run with LD_LIBRARY_PATH=<prefix>/<libdir> only.
set -eu
build=${1:?usage: install-consumer.sh BUILD_DIR WORK_DIR [CMAKE] [CC] [VERSION]}
work=${2:?usage: install-consumer.sh BUILD_DIR WORK_DIR [CMAKE] [CC] [VERSION]}
CMAKE=${3:-cmake}
CC=${4:-${CC:-cc}}
version=${5:-}

case "$work" in /*) ;; *) work=$(pwd)/$work ;; esac
mkdir -p "$work"
# WORK_DIR may be the caller's working directory: empty it, do not remove it.
rm -rf "$work/prefix" "$work/consumer" "$work/consumer.c" "$work/cmake-consumer"
prefix="$work/prefix"

step() { echo; echo "== $*"; }

step "$CMAKE --install $build --prefix $prefix"
"$CMAKE" --install "$build" --prefix "$prefix"

pc=$(find "$prefix" -name strata.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no strata.pc installed"; exit 1; }
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
for f in "$prefix/include/strata.h" "$libdir/libstrata.so" "$libdir/cmake/Strata/StrataConfig.cmake" \
         "$libdir/cmake/Strata/StrataConfigVersion.cmake"; do
    [ -e "$f" ] || { echo "FAIL: not installed: $f"; exit 1; }
done
docdir="$prefix/share/doc/strata"
for f in JSON.md predicates.md; do
    [ -f "$docdir/$f" ] || { echo "FAIL: the header cites docs/$f, which is not installed in $docdir"; exit 1; }
done
# The installed library is stripped: no symbol table, no debug sections (the C API is in .dynsym).
if command -v readelf >/dev/null 2>&1; then
    real=$(readlink -f "$libdir/libstrata.so")
    if readelf -S "$real" | grep -qE '\.symtab|\.debug_'; then
        echo "FAIL: the installed $real is not stripped"; exit 1
    fi
    echo "installed library: $(wc -c < "$real") bytes, stripped"
fi
echo "installed:"; (cd "$prefix" && find . \( -type f -o -type l \) | LC_ALL=C sort | sed 's/^/  /')
[ -L "$libdir/libstrata.so" ] && [ -L "$libdir/libstrata.so.0" ] ||
    { echo "FAIL: libstrata.so and libstrata.so.0 should be symlinks"; exit 1; }

cat > "$work/consumer.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <strata.h>

int main(void) {
    const char *v = strata_version();
    printf("strata_version() = %s, STRATA_VERSION = %s\n", v ? v : "(null)", STRATA_VERSION);
    return v != NULL && strcmp(v, STRATA_VERSION) == 0 ? 0 : 1;
}
C

step "pkg-config consumer"
export PKG_CONFIG_PATH="$pcdir"
flags=$(pkg-config --cflags --libs strata)
echo "pkg-config --cflags --libs strata: $flags"
if [ -n "$version" ]; then
    got=$(pkg-config --modversion strata)
    [ "$got" = "$version" ] || { echo "FAIL: strata.pc version $got, expected $version"; exit 1; }
fi
# shellcheck disable=SC2086
"$CC" -std=c99 -Wall -Wextra -Werror -o "$work/consumer" "$work/consumer.c" $flags
LD_LIBRARY_PATH="$libdir" "$work/consumer"
# It must resolve libstrata from the prefix, not from the build tree.
LD_LIBRARY_PATH="$libdir" ldd "$work/consumer" | grep libstrata

step "CMake consumer (find_package(Strata))"
mkdir -p "$work/cmake-consumer"
cp "$work/consumer.c" "$work/cmake-consumer/consumer.c"
cat > "$work/cmake-consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(Strata 0 CONFIG REQUIRED)
add_executable(consumer consumer.c)
target_link_libraries(consumer PRIVATE strata::strata)
CM
gen=; command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
# shellcheck disable=SC2086
"$CMAKE" $gen -S "$work/cmake-consumer" -B "$work/cmake-consumer/build" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=Release >/dev/null
"$CMAKE" --build "$work/cmake-consumer/build"
# CMake gives the consumer an RPATH to the prefix; check it also runs with only LD_LIBRARY_PATH.
LD_LIBRARY_PATH="$libdir" "$work/cmake-consumer/build/consumer"

echo
echo "OK: installed library, header, strata.pc and CMake package work"
