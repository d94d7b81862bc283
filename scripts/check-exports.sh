#!/bin/sh
# check-exports.sh HEADER LIBRARY
#
# The set of strata_* functions declared in HEADER must equal the set of
# symbols LIBRARY exports (nm -D --defined-only), and LIBRARY must export
# nothing that is not strata_*. Prints the differences; exits 1 on any.
#
# Declarations are found in the header with comments and preprocessor lines
# removed, split into statements at ';', '{' and '}': a statement that is not
# a typedef declares the first strata_* name followed by '(' (so parameters,
# callback typedefs such as strata_*_fn and macros do not count).
set -eu

header=${1:?usage: check-exports.sh HEADER LIBRARY}
lib=${2:?usage: check-exports.sh HEADER LIBRARY}
NM=${NM:-nm}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

perl -0777 -ne '
    s{/\*.*?\*/}{ }gs;                 # block comments
    s{//[^\n]*}{}g;                    # line comments
    s{^[ \t]*#(?:[^\n]*\\\n)*[^\n]*}{}mg;   # preprocessor lines, with continuations
    s{"(?:[^"\\]|\\.)*"}{""}g;         # string literals (extern "C")
    for my $stmt (split /[;{}]/) {
        next if $stmt =~ /^\s*typedef\b/;
        if ($stmt =~ /\b(strata_[a-z0-9_]+)\s*\(/) {
            my $name = $1;
            next if $name =~ /_fn$/;
            print "$name\n";
        }
    }
' "$header" | LC_ALL=C sort -u > "$tmp/declared"

[ -f "$lib" ] || { echo "check-exports: no library at $lib" >&2; exit 1; }

# nm -D --defined-only: "ADDRESS TYPE NAME[@VERSION]". Exported means global
# or weak binding: an upper-case type letter, or u (unique global) or i
# (ifunc). Skip A (absolute: version nodes). Lower-case d/t/b/r are LOCAL
# entries that some linkers leave in .dynsym: visible to nm, not exported.
"$NM" -D --defined-only "$lib" | awk '
    NF >= 3 { t = $2; n = $3 }
    NF == 2 { t = $1; n = $2 }
    NF >= 2 {
        sub(/@.*/, "", n)
        if (t == "A") next
        if (t ~ /^[A-Z]$/ || t == "u" || t == "i") print n > "/dev/stdout"
        else print n > "'"$tmp"'/local"
    }
' | LC_ALL=C sort -u > "$tmp/exported"
touch "$tmp/local"

grep '^strata_' "$tmp/exported" > "$tmp/exported_strata" || true
grep -v '^strata_' "$tmp/exported" > "$tmp/exported_other" || true

status=0
ndecl=$(wc -l < "$tmp/declared")
nexp=$(wc -l < "$tmp/exported_strata")
echo "header declares $ndecl strata_* functions; library exports $nexp strata_* symbols"
if [ "$ndecl" -eq 0 ]; then
    echo "FAIL: found no declarations in $header"; status=1
fi

missing=$(LC_ALL=C comm -23 "$tmp/declared" "$tmp/exported_strata")
if [ -n "$missing" ]; then
    echo "FAIL: declared in $(basename "$header") but not exported by $(basename "$lib"):"
    echo "$missing" | sed 's/^/  /'
    status=1
fi
extra=$(LC_ALL=C comm -13 "$tmp/declared" "$tmp/exported_strata")
if [ -n "$extra" ]; then
    echo "FAIL: exported by $(basename "$lib") but not declared in $(basename "$header"):"
    echo "$extra" | sed 's/^/  /'
    status=1
fi
if [ -s "$tmp/exported_other" ]; then
    echo "FAIL: non-strata_ symbols exported (check the version script Sources/StrataC/strata.map):"
    head -n 50 "$tmp/exported_other" | sed 's/^/  /'
    n=$(wc -l < "$tmp/exported_other")
    [ "$n" -le 50 ] || echo "  ... ($n in all)"
    status=1
fi
nlocal=$(LC_ALL=C sort -u "$tmp/local" | wc -l)
[ "$nlocal" -eq 0 ] || echo "(ignored $nlocal LOCAL-bound entries nm -D lists; they are not exported)"
[ "$status" -ne 0 ] || echo "OK: exports match the header"
exit "$status"
