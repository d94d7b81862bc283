#!/bin/sh
# check-self-contained.sh LIBRARY SONAME
#
# LIBRARY must carry the SONAME given and must not need the Swift runtime
# (libswiftCore, Foundation, dispatch, ...): it is built with -static-stdlib
# so C programs run without a Swift toolchain. Nor may it need libpq: the
# PostgreSQL store loads it on first use, so SQLite-only programs run without it.
set -eu
lib=${1:?usage: check-self-contained.sh LIBRARY SONAME}
want_soname=${2:?usage: check-self-contained.sh LIBRARY SONAME}
READELF=${READELF:-readelf}

status=0
dyn=$("$READELF" -d "$lib")
soname=$(printf '%s\n' "$dyn" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
needed=$(printf '%s\n' "$dyn" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
runpath=$(printf '%s\n' "$dyn" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')

echo "SONAME:  ${soname:-<none>}"
echo "NEEDED:  $(echo $needed)"
echo "RUNPATH: ${runpath:-<none>}"
if [ "$soname" != "$want_soname" ]; then
    echo "FAIL: SONAME is '${soname}', expected '$want_soname'"; status=1
fi
swift=$(printf '%s\n' "$needed" | grep -E '^lib(swift|Foundation|dispatch|BlocksRuntime|_FoundationICU)' || true)
if [ -n "$swift" ]; then
    echo "FAIL: needs the Swift runtime:"; echo "$swift" | sed 's/^/  /'; status=1
fi
pq=$(printf '%s\n' "$needed" | grep -E '^libpq' || true)
if [ -n "$pq" ]; then
    echo "FAIL: links libpq ($pq): the PostgreSQL store must load it on first use"; status=1
fi
if command -v ldd >/dev/null 2>&1; then
    echo "ldd:"
    out=$(ldd "$lib" 2>&1) || true
    echo "$out" | sed 's/^/  /'
    if echo "$out" | grep -q 'not found'; then
        echo "FAIL: unresolved dependencies"; status=1
    fi
fi
[ "$status" -ne 0 ] || echo "OK: self-contained"
exit "$status"
