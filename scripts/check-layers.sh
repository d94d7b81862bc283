#!/usr/bin/env bash
# check-layers.sh [--allow FILE] [SOURCE_DIR]
# check-layers.sh --self-test [SOURCE_DIR]
#
# Enforces the layering of docs/ARCHITECTURE.md ("Layers") on Sources/. A
# folder of Sources/Strata "names" a type of another folder when one of the
# type names declared there (class, struct, enum, protocol, typealias, actor —
# nested ones too) appears as a whole word in its code. Comments (//, ///,
# /* */) and the text of string literals are not code; interpolations are.
#
# The folders form one graph, each folder naming only those below it:
#
#   StrataC -> Container -> {Migration, History} -> Context -> Store -> Query -> Schema -> Values -> Support
#                       \-> Storage, PostgreSQL -> Store (and Query's face)
#
# Rules (the name before the colon is what a hit and the allowlist call it):
#   F-names-G               folder F names a type of folder G that it may not
#                           name: every G not in F's list below (e.g.
#                           store-names-context, context-names-history)
#       Support    nothing              Values   Support
#       Schema     Values Support       Query    Schema Values Support
#       Store      Query Schema Values Support
#       Storage, PostgreSQL (the stores)   Store, Query's face, Schema, Values,
#                  Support (never each other)
#       Context    Store Query Schema Values Support
#       Migration, History   Context and what Context may name
#       Container  every folder but the stores (the concrete stores it chooses
#                  are allowlisted exceptions)
#       StrataC    every folder but the stores (strata-c-names-*)
#       StrataCLI  the same as StrataC: the `strata` command, a consumer of
#                  Container (Sources/StrataCLI, strata-cli-names-*)
#   storage-names-query     a store names a type of Query outside its face: the
#                           dialect it implements and what it is given to run
#                           (QUERY_FACE: QueryDialect, Operators, CompiledFetch,
#                           ObjectPlan, ResultQuery); a store compiles no predicate
#                           (postgresql-names-query for PostgreSQL/)
#   folder-cycle            a reference that closes a cycle of folders (all
#                           references count, allowlisted ones too)
#   sqlite-outside-storage  `import CSQLite`, sqlite3_*, SQLITE_* outside
#                           Storage/ and Sources/CSQLite
#   strata-c-sql            a string literal of StrataC holds SQL
#   message-decides         code reads an error's message text to decide
#                           (`message.hasPrefix(`, `.contains(`, …): give the
#                           error a reason (StrataError.Reason) instead
# A name declared both in a forbidden folder and in a folder the referrer may
# use (or in the referrer itself) is ambiguous and is not checked; such names
# are listed as notes.
#
# Exceptions live in scripts/layers-allow.txt, one per line, each with its
# reason:   RULE  PATH|*  NAME  # why
# An exception that matches nothing fails the check, so the list only shrinks.
#
# Prints `file:line: rule: name | source line` per hit and a summary; exits 1
# on any hit, 0 otherwise, 2 on a usage error. --self-test injects one
# violation per rule into a copy of Sources/ and checks that each adds the
# expected hit to the copy's baseline (today's hits, if any).
set -u
LC_ALL=C
export LC_ALL

here=$(cd "$(dirname "$0")" && pwd)
self="$here/$(basename "$0")"

usage() { echo "usage: check-layers.sh [--allow FILE] [SOURCE_DIR] | --self-test [SOURCE_DIR]" >&2; exit 2; }

selftest=0
allow=""
while [ $# -gt 0 ]; do
  case $1 in
    --self-test) selftest=1; shift ;;
    --allow) [ $# -ge 2 ] || usage; allow=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) usage ;;
    *) break ;;
  esac
done
[ $# -le 1 ] || usage
src=${1:-"$here/.."}
src=$(cd "$src" 2>/dev/null && pwd) || { echo "check-layers: no such directory: ${1:-}" >&2; exit 2; }
[ -d "$src/Sources/Strata" ] || { echo "check-layers: $src has no Sources/Strata" >&2; exit 2; }
[ -n "$allow" ] || allow="$src/scripts/layers-allow.txt"

FOLDERS="Support Values Schema Query Store Storage PostgreSQL Context Migration History Container"
# The files of Query/ whose names Storage may use (the dialect and what it runs).
QUERY_FACE="QueryDialect.swift Operators.swift CompiledFetch.swift ObjectPlan.swift ResultQuery.swift"

# The folders (decl keys) each folder may name besides its own; Query.face is the
# part of Query/ in QUERY_FACE.
may_name() {
  case $1 in
    Support) echo "" ;;
    Values) echo "Support" ;;
    Schema) echo "Values Support" ;;
    Query) echo "Schema Values Support" ;;
    Store) echo "Query Schema Values Support" ;;
    Storage|PostgreSQL) echo "Store Query.face Schema Values Support" ;;
    Context) echo "Store Query Schema Values Support" ;;
    Migration|History) echo "Context Store Query Schema Values Support" ;;
    Container) echo "Migration History Context Store Query Schema Values Support" ;;
    _StrataC|_StrataCLI) echo "Container Migration History Context Store Query Schema Values Support" ;;
  esac
}

# ---------------------------------------------------------------------------
# Strip a Swift file to one line per source line: CODE \037 LITERALS, where
# CODE has comments removed and string contents blanked (interpolations kept)
# and LITERALS holds the text of each string literal (or each line of a
# multi-line one), every piece preceded by \036.
# ---------------------------------------------------------------------------
STRIP_AWK='
BEGIN { sp = 0; mode[0] = "C"; bc = 0; SEP = "\036"; HASHES = "################" }
{
  line = $0; n = length(line); code = ""; str = ""; i = 1
  if (mode[sp] == "M") str = str SEP
  while (i <= n) {
    c = substr(line, i, 1); m = mode[sp]
    if (m == "C" || m == "I") {
      two = substr(line, i, 2)
      if (bc > 0) {
        if (two == "/*") { bc++; i += 2 } else if (two == "*/") { bc--; i += 2 } else i++
        code = code " "; continue
      }
      if (two == "//") break
      if (two == "/*") { bc = 1; i += 2; code = code " "; continue }
      rawh = 0
      if (c == "#") {
        j = i; while (substr(line, j, 1) == "#") j++
        if (substr(line, j, 1) != "\"") { code = code c; i++; continue }
        rawh = j - i; i = j; c = "\""
      }
      if (c == "\"") {
        sp++; hash[sp] = rawh
        if (substr(line, i, 3) == "\"\"\"") { mode[sp] = "M"; i += 3 } else { mode[sp] = "S"; i++ }
        code = code "\""; str = str SEP; continue
      }
      if (m == "I") {
        if (c == "(") depth[sp]++
        else if (c == ")" && --depth[sp] == 0) sp--
      }
      code = code c; i++; continue
    }
    h = hash[sp]; hs = substr(HASHES, 1, h)
    if (c == "\\" && substr(line, i + 1, h) == hs) {
      k = i + 1 + h
      if (substr(line, k, 1) == "(") { sp++; mode[sp] = "I"; depth[sp] = 1; code = code " ("; i = k + 1; continue }
      str = str " "; i = k + 1; continue
    }
    if (m == "S" && c == "\"" && substr(line, i + 1, h) == hs) { sp--; code = code "\""; i += 1 + h; continue }
    if (m == "M" && substr(line, i, 3) == "\"\"\"" && substr(line, i + 3, h) == hs) { sp--; code = code "\""; i += 3 + h; continue }
    str = str c; code = code " "; i++
  }
  while (sp > 0 && mode[sp] != "M") sp--     # a single-line literal ends with its line
  printf "%s\037%s\n", code, str
}'

# Type names declared in stripped files (nested and generic ones included).
DECL_AWK='
BEGIN {
  split("func var let init deinit subscript case extension import operator static class struct enum protocol typealias actor override final", k, " ")
  for (x in k) kw[k[x]] = 1
}
{
  code = $0; sub(/\037.*/, "", code)
  np = split(code, piece, /[;{}]/)
  for (p = 1; p <= np; p++) {
    s = piece[p]; sub(/^[ \t]+/, "", s)
    while (1) {
      if (match(s, /^@[A-Za-z_][A-Za-z0-9_.]*/)) {
        s = substr(s, RLENGTH + 1)
        if (substr(s, 1, 1) == "(") sub(/^\([^)]*\)/, "", s)
        sub(/^[ \t]+/, "", s); continue
      }
      if (match(s, /^(public|private|fileprivate|internal|open|package|final|indirect|nonisolated|static|override|required|convenience|dynamic|distributed|sealed)[ \t]*(\([a-z]*\))?[ \t]+/)) {
        s = substr(s, RLENGTH + 1); continue
      }
      break
    }
    if (match(s, /^(class|struct|enum|protocol|typealias|actor)[ \t]+[A-Za-z_][A-Za-z0-9_]*/)) {
      w = substr(s, 1, RLENGTH); sub(/^[a-z]+[ \t]+/, "", w)
      if (!(w in kw)) print w
    }
  }
}'

# Whole-word uses of forbidden names: NAMES_FILE, then STRIPPED ORIGINAL pairs.
# Prints PATH \t LINE \t RULE \t NAME \t TEXT.
REF_AWK='
FNR == 1 { fileno++ }
fileno == 1 { bad[$0] = 1; next }
{
  code = $0; sub(/\037.*/, "", code)
  gsub(/`[^`]*`/, " ", code); gsub(/[^A-Za-z0-9_]/, " ", code)
  nt = split(code, tok, " "); delete seen
  for (t = 1; t <= nt; t++) if ((tok[t] in bad) && !(tok[t] in seen)) {
    seen[tok[t]] = 1
    hit(tok[t])
  }
}
function hit(name,   line) {
  line = origline(FNR); sub(/^[ \t]+/, "", line)
  printf "%s\t%d\t%s\t%s\t%s\n", REL[FILENAME], FNR, RULE, name, line
}
function origline(nr,   f, l, r) {
  f = ORIG[FILENAME]
  if (f != curf || nr < curn) { if (curf != "") close(curf); curf = f; curn = 0 }
  while (curn < nr && (getline l < f) > 0) { curn++; cur = l }
  return cur
}'

work=$(mktemp -d) || exit 2
trap '[ -n "${LAYERS_KEEP:-}" ] || rm -rf "$work"' EXIT INT TERM; [ -n "${LAYERS_KEEP:-}" ] && echo "work: $work" >&2

# ----------------------------------------------------------------- self-test
if [ "$selftest" = 1 ]; then
  copy="$work/copy"
  mkdir -p "$copy/scripts"
  cp -R "$src/Sources" "$copy/Sources"
  [ -f "$src/scripts/layers-allow.txt" ] && cp "$src/scripts/layers-allow.txt" "$copy/scripts/"
  touch "$copy/scripts/layers-allow.txt"
  run() { bash "$self" "$copy" >"$work/out" 2>&1; echo $? >"$work/rc"; grep -E '^[^ ]+:[0-9]+: ' "$work/out" | sort >"$work/hits" || true; }
  run; cp "$work/hits" "$work/base"; base_rc=$(cat "$work/rc")
  nbase=$(wc -l <"$work/base" | tr -d ' ')
  failed=0; passed=0
  if { [ "$nbase" = 0 ] && [ "$base_rc" = 0 ]; } || { [ "$nbase" != 0 ] && [ "$base_rc" = 1 ]; }; then
    echo "ok: baseline ($nbase hits, exit $base_rc)"; passed=$((passed + 1))
  else
    echo "FAIL: baseline has $nbase hits but exit $base_rc"; cat "$work/out"; failed=1
  fi
  # A folder's first Swift file; Query's is its face's first (the stores may name the face:
  # the rule table's probe of Query must be a type they may name).
  first() {
    local f
    if [ "$1" = Query ]; then
      f=$(for n in $QUERY_FACE; do [ -f "$copy/Sources/Strata/Query/$n" ] && printf '%s\n' "$copy/Sources/Strata/Query/$n"; done | sort | head -n 1)
    else
      f=$(find "$copy/Sources/Strata/$1" -name '*.swift' 2>/dev/null | sort | head -n 1)
    fi
    [ -n "$f" ] || { echo "FAIL: Sources/Strata/$1 has no Swift file to inject into" >&2; exit 1; }
    printf '%s\n' "$f"
  }
  # expect WHAT RULE NAME: the last run must fail and add a RULE hit on NAME.
  expect() {
    local what=$1 rule=$2 name=$3 new
    new=$(comm -13 "$work/base" "$work/hits" | grep -F ": $rule: $name |" || true)
    if [ "$(cat "$work/rc")" = 1 ] && [ -n "$new" ]; then
      echo "ok: $what -> $new"; passed=$((passed + 1))
    else
      echo "FAIL: $what: expected a new $rule hit on $name (exit $(cat "$work/rc")); new lines:"
      comm -13 "$work/base" "$work/hits" | sed 's/^/    /'; failed=1
    fi
  }
  # expect_none WHAT: the last run must show exactly the baseline.
  expect_none() {
    if cmp -s "$work/base" "$work/hits" && [ "$(cat "$work/rc")" = "$base_rc" ]; then
      echo "ok: $what_none adds no hit"; passed=$((passed + 1))
    else
      echo "FAIL: $what_none added hits:"; comm -13 "$work/base" "$work/hits"; failed=1
    fi
  }
  # inject FILE TEXT... : append lines to FILE (saved first), run, restore.
  inject() {
    local f=$1; shift
    cp "$f" "$work/saved"
    printf '%s\n' "$@" >>"$f"
    run
    cp "$work/saved" "$f"
  }
  # inject2 FILE1 TEXT1 FILE2 TEXT2: two files at once.
  inject2() {
    cp "$1" "$work/saved1"; cp "$3" "$work/saved2"
    printf '%s\n' "$2" >>"$1"; printf '%s\n' "$4" >>"$3"
    run
    cp "$work/saved1" "$1"; cp "$work/saved2" "$3"
  }
  S=$(first Storage) && Q=$(first Query) && C=$(first Context) && M=$(first Migration) && H=$(first History) &&
    Sc=$(first Schema) && V=$(first Values) && St=$(first Store) && Sp=$(first Support) && Co=$(first Container) || exit 1
  X=$(find "$copy/Sources/StrataC" -name '*.swift' | sort | head -n 1)
  [ -n "$X" ] || { echo "FAIL: Sources/StrataC has no Swift file"; exit 1; }
  Y=$(find "$copy/Sources/StrataCLI" -name '*.swift' 2>/dev/null | sort | head -n 1)

  # A real type of Context/ in Storage/ (the one every store would be tempted by).
  if grep -qE '(class|struct) ModelContext\b' "$copy"/Sources/Strata/Context/*.swift; then
    inject "$S" 'let _x: ModelContext? = nil'; expect "ModelContext in Storage" storage-names-context ModelContext
  fi
  # Declarations of every shape are found, and named from the folders that must not.
  inject2 "$C" 'public final class LayersProbeClass<T: Equatable>: Sendable {}' \
          "$S" 'func _probe(_ x: LayersProbeClass<Int>) {}'
  expect "public final generic class of Context in Storage" storage-names-context LayersProbeClass
  inject2 "$C" 'extension ModelContainerProbeOuter { @usableFromInline internal indirect enum LayersProbeEnum { case a } }' \
          "$Q" 'let _q = [LayersProbeEnum]()'
  expect "nested indirect enum of Context in Query" query-names-context LayersProbeEnum
  inject2 "$S" 'struct LayersProbeOuter { private struct LayersProbeNested {}; typealias LayersProbeAlias = Int }' \
          "$Q" 'let _q: LayersProbeOuter.LayersProbeAlias = 0'
  expect "nested typealias of Storage in Query" query-names-storage LayersProbeAlias
  inject2 "$S" 'actor LayersProbeActor {}' "$Sc" 'let _s: LayersProbeActor? = nil'
  expect "actor of Storage in Schema" schema-names-storage LayersProbeActor
  inject2 "$Q" 'protocol LayersProbeProto: AnyObject {}' "$Sc" 'let _s: (any LayersProbeProto)? = nil'
  expect "protocol of Query in Schema" schema-names-query LayersProbeProto
  inject2 "$M" 'struct LayersProbeMig {}' "$Sc" 'let _s = LayersProbeMig()'
  expect "struct of Migration in Schema" schema-names-migration LayersProbeMig
  inject2 "$Sc" '@frozen public struct LayersProbeSchema {}' "$V" 'let _v = "\(LayersProbeSchema.self)"'
  expect "Schema type in an interpolation of Values" values-names-schema LayersProbeSchema
  inject2 "$C" 'struct LayersProbeCtx {}' "$V" 'let _v: LayersProbeCtx? = nil'
  expect "Context type in Values" values-names-context LayersProbeCtx
  inject2 "$S" 'final class LayersProbeStorage {}' "$C" 'let _c: LayersProbeStorage? = nil'
  expect "Storage type in Context" context-names-storage LayersProbeStorage
  inject2 "$S" 'final class LayersProbeStorage {}' "$M" 'let _m: LayersProbeStorage? = nil'
  expect "Storage type in Migration" migration-names-storage LayersProbeStorage
  inject2 "$S" 'final class LayersProbeStorage {}' "$H" 'let _m: LayersProbeStorage? = nil'
  expect "Storage type in History" history-names-storage LayersProbeStorage
  inject2 "$H" 'final class LayersProbeHistory {}' "$S" 'let _m: LayersProbeHistory? = nil'
  expect "History type in Storage" storage-names-history LayersProbeHistory
  inject2 "$S" 'final class LayersProbeStorage {}' "$St" 'let _m: LayersProbeStorage? = nil'
  expect "Storage type in Store" store-names-storage LayersProbeStorage
  inject2 "$S" 'final class LayersProbeStorage {}' "$X" 'let _m: LayersProbeStorage? = nil'
  expect "Storage type in StrataC" strata-c-names-storage LayersProbeStorage
  if [ -n "$Y" ]; then
    inject2 "$S" 'final class LayersProbeStorage {}' "$Y" 'let _m: LayersProbeStorage? = nil'
    expect "Storage type in StrataCLI" strata-cli-names-storage LayersProbeStorage
    P=$(first PostgreSQL) || exit 1
    inject2 "$P" 'final class LayersProbePostgres {}' "$Y" 'let _m: LayersProbePostgres? = nil'
    expect "PostgreSQL type in StrataCLI" strata-cli-names-postgresql LayersProbePostgres
    inject "$Y" 'import CSQLite'; expect "import CSQLite in StrataCLI" sqlite-outside-storage CSQLite
    inject "$Y" 'let _c: ModelContainer? = nil; let _s: StoredState? = nil'; what_none="Container and Store types in StrataCLI"; expect_none
  fi
  inject "$Q" 'import CSQLite'; expect "import CSQLite in Query" sqlite-outside-storage CSQLite
  inject "$C" 'let _c = sqlite3_libversion()'; expect "sqlite3_ call in Context" sqlite-outside-storage sqlite3_libversion
  inject "$Sp" 'let _c = SQLITE_OK'; expect "SQLITE_ constant in Support" sqlite-outside-storage SQLITE_OK
  inject "$X" 'import CSQLite'; expect "import CSQLite in StrataC" sqlite-outside-storage CSQLite
  inject "$X" 'let _sql = "SELECT 1"'; expect "SQL literal in StrataC" strata-c-sql SELECT
  inject "$X" 'let _sql = """' '    DELETE FROM t' '    """'; expect "SQL in a multi-line literal of StrataC" strata-c-sql DELETE
  # Every rule of the table at once: a probe type in each folder, named from every folder. Each
  # folder must get a hit for exactly the probes of the folders it may not name.
  cp -R "$copy/Sources" "$work/sources.saved"
  for d in $FOLDERS StrataC; do
    if [ "$d" = StrataC ]; then f=$X; else f=$(first "$d"); fi
    printf 'struct LayersProbe%s {}\n' "$d" >>"$f"
  done
  for d in $FOLDERS StrataC; do
    if [ "$d" = StrataC ]; then f=$X; key=_StrataC; prefix=strata-c; else f=$(first "$d"); key=$d; prefix=$(printf '%s' "$d" | tr 'A-Z' 'a-z'); fi
    for o in $FOLDERS StrataC; do [ "$o" = "$d" ] || printf 'let _probe%sFrom%s: LayersProbe%s? = nil\n' "$o" "$d" "$o" >>"$f"; done
  done
  run
  rm -rf "$copy/Sources"; cp -R "$work/sources.saved" "$copy/Sources"; rm -rf "$work/sources.saved"
  table_ok=1
  for d in $FOLDERS StrataC; do
    if [ "$d" = StrataC ]; then key=_StrataC; prefix=strata-c; else key=$d; prefix=$(printf '%s' "$d" | tr 'A-Z' 'a-z'); fi
    allowed=" $(may_name "$key" | sed 's/Query\.face/Query/') "
    refused=""; let_through=""
    for o in $FOLDERS; do
      [ "$o" = "$d" ] && continue
      rule="$prefix-names-$(printf '%s' "$o" | tr 'A-Z' 'a-z')"
      hit=$(comm -13 "$work/base" "$work/hits" | grep -F ": $rule: LayersProbe$o |" || true)
      case "$allowed" in
        *" $o "*) if [ -z "$hit" ]; then let_through="$let_through $o"; else echo "FAIL: $d may name $o but got: $hit"; table_ok=0; fi ;;
        *) if [ -n "$hit" ]; then refused="$refused $o"; else echo "FAIL: $d names $o's probe without a $rule hit"; table_ok=0; fi ;;
      esac
    done
    echo "   $d: $prefix-names-* fails on${refused:- nothing}; passes$let_through"
  done
  if [ "$table_ok" = 1 ] && [ "$(cat "$work/rc")" = 1 ]; then
    echo "ok: the rule table: every folder is refused exactly the folders it may not name"; passed=$((passed + 1))
  else
    echo "FAIL: the rule table (exit $(cat "$work/rc"))"; failed=1
  fi
  # Storage names Query's face (the dialect, what it runs), never the compilers.
  if grep -qE '(struct|class|enum) PredicateCompiler\b' "$copy"/Sources/Strata/Query/*.swift; then
    inject "$S" 'let _x: PredicateCompiler? = nil'; expect "the predicate compiler in Storage" storage-names-query PredicateCompiler
    inject "$S" 'let _x: FetchDescriptor? = nil'; expect "a fetch descriptor in Storage" storage-names-query FetchDescriptor
    inject "$S" 'let _x: (any QueryDialect)? = nil; let _y: CompiledFetch? = nil'; what_none="Query's face in Storage"; expect_none
  fi
  # A reference the allowlist excuses still counts for cycles.
  inject2 "$C" 'struct LayersProbeCycle {}' "$St" 'let _c: LayersProbeCycle? = nil'
  expect "a Context type in Store" store-names-context LayersProbeCycle
  cp "$copy/scripts/layers-allow.txt" "$work/allow.saved"
  echo "store-names-context * LayersProbeCycle  # probe" >>"$copy/scripts/layers-allow.txt"
  inject2 "$C" 'struct LayersProbeCycle {}' "$St" 'let _c: LayersProbeCycle? = nil'
  expect "an allowlisted reference that closes a cycle" folder-cycle "Store->Context"
  cp "$work/allow.saved" "$copy/scripts/layers-allow.txt"
  inject "$M" 'let _m = e.message.hasPrefix("stage hook ")'; expect "a decision on message text in Migration" message-decides hasPrefix
  inject "$X" 'if err.message.contains("x") {}'; expect "a decision on message text in StrataC" message-decides contains
  inject "$C" 'if e.message.containsText("x") {}'; expect "a decision on message text through Support's search" message-decides containsText
  inject "$C" 'e.message = "more: " + e.message'; what_none="a message rewritten, not read to decide"; expect_none
  # What is not code is not a reference.
  inject2 "$S" 'final class LayersProbeStorage {}' "$C" '// LayersProbeStorage and import CSQLite and sqlite3_open' \
          ; what_none="a // comment naming a Storage type"; expect_none
  inject2 "$S" 'final class LayersProbeStorage {}' "$C" '/// `LayersProbeStorage` /* SQLITE_OK */' \
          ; what_none="a /// doc comment"; expect_none
  inject2 "$S" 'final class LayersProbeStorage {}' "$C" 'let _c = "LayersProbeStorage sqlite3_open \" SQLITE_OK" // x' \
          ; what_none="a string literal"; expect_none
  inject2 "$S" 'final class LayersProbeStorage {}' "$C" '/* LayersProbeStorage' 'SQLITE_OK /* nested */ sqlite3_x */' \
          ; what_none="a block comment"; expect_none
  inject "$X" 'let _m = "select a fruit"'; what_none="lower-case English in StrataC"; expect_none
  inject "$C" 'class func fromStorage() {}'; what_none="'class func'"; expect_none
  # The allowlist removes exactly its entry; an unused entry fails.
  # (Container naming a Storage type closes no cycle: nothing below Container names it.)
  cp "$copy/scripts/layers-allow.txt" "$work/allow.saved"
  echo "container-names-storage Sources/Strata/Container/$(basename "$Co") LayersProbeStorage  # probe" >>"$copy/scripts/layers-allow.txt"
  inject2 "$S" 'final class LayersProbeStorage {}' "$Co" 'let _c: LayersProbeStorage? = nil'
  what_none="an allowlisted hit"; expect_none
  run; expect "an allowlist entry that matches nothing" stale-allow LayersProbeStorage
  echo "context-names-storage * LayersProbeOther" >>"$copy/scripts/layers-allow.txt"
  run; expect "an allowlist entry without a reason" bad-allow LayersProbeOther
  cp "$work/allow.saved" "$copy/scripts/layers-allow.txt"
  run
  if cmp -s "$work/base" "$work/hits"; then echo "ok: the copy is restored"; passed=$((passed + 1)); else echo "FAIL: the copy was not restored"; failed=1; fi

  if [ "$failed" = 0 ]; then echo "check-layers self-test: $passed checks passed"; exit 0; fi
  echo "check-layers self-test: FAILED"; exit 1
fi

# ---------------------------------------------------------------- the check
cd "$src" || exit 2
mkdir -p "$work/pp" "$work/decl"
find Sources -name '*.swift' | sort >"$work/files"
while IFS= read -r f; do
  mkdir -p "$work/pp/$(dirname "$f")"
  awk "$STRIP_AWK" "$f" >"$work/pp/$f"
done <"$work/files"

folder_files() { grep "^Sources/Strata/$1/" "$work/files" || true; }
for d in $FOLDERS; do
  folder_files "$d" | while IFS= read -r f; do awk "$DECL_AWK" "$work/pp/$f"; done | sort -u >"$work/decl/$d"
done
grep -v '^Sources/Strata/[^/]*/' "$work/files" | grep '^Sources/Strata/' |
  while IFS= read -r f; do awk "$DECL_AWK" "$work/pp/$f"; done | sort -u >"$work/decl/_top"
grep '^Sources/StrataC/' "$work/files" |
  while IFS= read -r f; do awk "$DECL_AWK" "$work/pp/$f"; done | sort -u >"$work/decl/_StrataC"
{ grep '^Sources/StrataCLI/' "$work/files" || true; } |
  while IFS= read -r f; do awk "$DECL_AWK" "$work/pp/$f"; done | sort -u >"$work/decl/_StrataCLI"

: >"$work/hits"; : >"$work/notes"
lower() { printf '%s' "$1" | tr 'A-Z' 'a-z'; }

# Query's face (what Storage may name) and the rest of Query/ (the compilers).
for f in $QUERY_FACE; do
  [ -f "$work/pp/Sources/Strata/Query/$f" ] && awk "$DECL_AWK" "$work/pp/Sources/Strata/Query/$f"
done | sort -u >"$work/decl/Query.face"
comm -23 "$work/decl/Query" "$work/decl/Query.face" >"$work/decl/Query.compiler"

# names_rule REFERRER_KEY FILES_LIST RULE_PREFIX: a hit per use of a name of a folder the
# referrer may not name (may_name).
names_rule() {
  local key=$1 list=$2 prefix=$3 allowed d a other
  allowed=$(may_name "$key")
  # Names the referrer may legitimately mean: its own and those of the folders it may name.
  cat "$work/decl/$key" "$work/decl/_top" >"$work/okset"
  for a in $allowed; do cat "$work/decl/$a" >>"$work/okset"; done
  sort -u "$work/okset" -o "$work/okset"
  for other in $FOLDERS; do
    [ "$other" = "$key" ] && continue
    d=$other
    case " $allowed " in
      *" $other "*) continue ;;
      *" $other.face "*) d=$other.compiler ;;
    esac
    comm -23 "$work/decl/$d" "$work/okset" >"$work/bad"
    comm -12 "$work/decl/$d" "$work/okset" | sed "s/\$/ $prefix-names-$(lower "$other")/" >>"$work/notes"
    [ -s "$work/bad" ] || continue
    [ -s "$list" ] || continue
    awk -v RULE="$prefix-names-$(lower "$other")" -v PP="$work/pp/" "
      BEGIN { while ((getline f < \"$list\") > 0) { REL[PP f] = f; ORIG[PP f] = f } }
      $REF_AWK" "$work/bad" $(sed "s|^|$work/pp/|" "$list") >>"$work/hits"
  done
}

for key in $FOLDERS; do
  folder_files "$key" >"$work/list.$key"
  names_rule "$key" "$work/list.$key" "$(lower "$key")"
done
grep '^Sources/StrataC/' "$work/files" >"$work/list.StrataC" || true
names_rule _StrataC "$work/list.StrataC" strata-c
grep '^Sources/StrataCLI/' "$work/files" >"$work/list.StrataCLI" || true
names_rule _StrataCLI "$work/list.StrataCLI" strata-cli

# Folder cycles: every reference between folders (to a name declared in one folder only),
# allowlisted ones too. An edge A->B lies on a cycle when B reaches A; each such edge is a hit
# at its first reference.
{ for d in $FOLDERS; do sed "s/\$/ $d/" "$work/decl/$d"; done
  sed 's/$/ StrataC/' "$work/decl/_StrataC"; sed 's/$/ StrataCLI/' "$work/decl/_StrataCLI"
  sed 's/$/ _top/' "$work/decl/_top"; } |
  awk '{ n[$1]++; f[$1] = $2 } END { for (k in n) if (n[k] == 1 && f[k] != "_top") print k, f[k] }' >"$work/owner"
awk -v PP="$work/pp/" '
  FNR == 1 { fileno++ }
  fileno == 1 { owner[$1] = $2; next }
  FNR == 1 { rel = substr(FILENAME, length(PP) + 1); from = rel
             if (from ~ /^Sources\/Strata\/[^\/]+\//) { sub(/^Sources\/Strata\//, "", from); sub(/\/.*/, "", from) }
             else if (from ~ /^Sources\/StrataC\//) from = "StrataC"
             else if (from ~ /^Sources\/StrataCLI\//) from = "StrataCLI"
             else from = "" }
  from != "" {
    code = $0; sub(/\037.*/, "", code); gsub(/`[^`]*`/, " ", code); gsub(/[^A-Za-z0-9_]/, " ", code)
    nt = split(code, tok, " ")
    for (t = 1; t <= nt; t++) if ((tok[t] in owner) && owner[tok[t]] != from && !((from, owner[tok[t]]) in seen)) {
      seen[from, owner[tok[t]]] = 1
      printf "%s\t%s\t%s\t%d\n", from, owner[tok[t]], rel, FNR
    }
  }' "$work/owner" $(sed "s|^|$work/pp/|" "$work/files") >"$work/edges"
awk -F '\t' '
  { e++; A[e] = $1; B[e] = $2; F[e] = $3; L[e] = $4; r[$1, $2] = 1; node[$1]; node[$2] }
  END {
    for (k in node) for (i in node) if ((i, k) in r) for (j in node) if ((k, j) in r) r[i, j] = 1
    for (x = 1; x <= e; x++) if ((B[x], A[x]) in r) printf "%s\t%d\tfolder-cycle\t%s->%s\n", F[x], L[x], A[x], B[x]
  }' "$work/edges" | while IFS="$(printf '\t')" read -r f l rule name; do
    text=$(sed -n "${l}p" "$f" | sed 's/^[ \t]*//')
    printf '%s\t%s\t%s\t%s\t%s\n' "$f" "$l" "$rule" "$name" "$text"
  done >>"$work/hits"

# SQLite outside Storage/ (Sources/CSQLite holds no Swift).
grep -v '^Sources/Strata/Storage/' "$work/files" | while IFS= read -r f; do
  awk -v REL="$f" -v ORIG="$f" '
    { code = $0; sub(/\037.*/, "", code); delete seen
      if ((getline orig < ORIG) <= 0) orig = ""
      sub(/^[ \t]+/, "", orig)
      if (code ~ /(^|[^A-Za-z0-9_])import[ \t]+(@[A-Za-z_]+[ \t]+)?CSQLite([^A-Za-z0-9_]|$)/)
        printf "%s\t%d\tsqlite-outside-storage\tCSQLite\t%s\n", REL, FNR, orig
      gsub(/[^A-Za-z0-9_]/, " ", code); nt = split(code, tok, " ")
      for (t = 1; t <= nt; t++) if (tok[t] ~ /^(sqlite3_|SQLITE_)/ && !(tok[t] in seen)) {
        seen[tok[t]] = 1; printf "%s\t%d\tsqlite-outside-storage\t%s\t%s\n", REL, FNR, tok[t], orig }
    }' "$work/pp/$f"
done >>"$work/hits"

# SQL in the string literals of StrataC.
while IFS= read -r f; do
  awk -v REL="$f" -v ORIG="$f" '
    { lits = $0; sub(/^[^\037]*\037/, "", lits)
      if ((getline orig < ORIG) <= 0) orig = ""
      sub(/^[ \t]+/, "", orig)
      n = split(lits, lit, "\036")
      for (p = 2; p <= n; p++) {
        s = lit[p]; sub(/^[ \t]+/, "", s)
        if (match(s, /^(SELECT|INSERT|UPDATE|DELETE|REPLACE|UPSERT|CREATE|DROP|ALTER|BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA|WITH|VACUUM|ATTACH|DETACH|ANALYZE|REINDEX|EXPLAIN)([ \t;(]|$)/) ||
            match(s, /[ \t](FROM|WHERE|VALUES|JOIN|SET|INTO)[ \t]/)) {
          w = substr(s, RSTART, RLENGTH); gsub(/[^A-Z]/, "", w)
          printf "%s\t%d\tstrata-c-sql\t%s\t%s\n", REL, FNR, w, orig
        }
      }
    }' "$work/pp/$f"
done <"$work/list.StrataC" >>"$work/hits"

# Decisions on an error's message text, anywhere in Sources.
while IFS= read -r f; do
  awk -v REL="$f" -v ORIG="$f" '
    { code = $0; sub(/\037.*/, "", code)
      if ((getline orig < ORIG) <= 0) orig = ""
      sub(/^[ \t]+/, "", orig)
      if (match(code, /(^|[^A-Za-z0-9_])message[ \t]*\.[ \t]*(hasPrefix|hasSuffix|contains|containsText|starts|firstRange|firstOccurrence|range|split|firstIndex|lowercased)[ \t]*\(/)) {
        w = substr(code, RSTART, RLENGTH); sub(/^.*\.[ \t]*/, "", w); sub(/[ \t]*\($/, "", w)
        printf "%s\t%d\tmessage-decides\t%s\t%s\n", REL, FNR, w, orig
      }
    }' "$work/pp/$f"
done <"$work/files" >>"$work/hits"

# ------------------------------------------------------------- the allowlist
: >"$work/allow"
if [ -f "$allow" ]; then
  awk -v A="${allow#"$src"/}" '
    /^[ \t]*(#|$)/ { next }
    { reason = index($0, "#") ? substr($0, index($0, "#") + 1) : ""; body = $0; sub(/#.*/, "", body)
      n = split(body, w, " ")
      if (n != 3 || reason ~ /^[ \t]*$/) { printf "BAD\t%s:%d\t%s\t%s\n", A, FNR, (n >= 3 ? w[3] : body), $0; next }
      printf "OK\t%s:%d\t%s\t%s\t%s\n", A, FNR, w[1], w[2], w[3] }' "$allow" >"$work/allow"
fi
awk -F '\t' -v ALLOW="$work/allow" '
  BEGIN {
    while ((getline l < ALLOW) > 0) {
      split(l, f, "\t")
      if (f[1] == "BAD") { printf "%s: bad-allow: %s | entries are RULE PATH|* NAME  # reason: %s\n", f[2], f[3], f[4]; bad++; continue }
      na++; where[na] = f[2]; rule[na] = f[3]; path[na] = f[4]; name[na] = f[5]
    }
  }
  { for (a = 1; a <= na; a++)
      if (rule[a] == $3 && name[a] == $4 && (path[a] == "*" || path[a] == $1)) { used[a] = 1; next }
    printf "%s:%s: %s: %s | %s\n", $1, $2, $3, $4, $5; hits++ }
  END {
    for (a = 1; a <= na; a++) if (!(a in used)) {
      printf "%s: stale-allow: %s | %s %s %s matches nothing; remove it\n", where[a], name[a], rule[a], path[a], name[a]; bad++ }
    exit (hits + bad > 0) }' "$work/hits" >"$work/report"
status=$?
cat "$work/report"
# A name declared on both sides of a rule is not checked: say so, once per name.
[ -s "$work/notes" ] && sort -u "$work/notes" | awk '
  $1 != last { if (last != "") print line; last = $1; line = "note: \047" $1 "\047 is declared on both sides of " $2; next }
  { line = line ", " $2 }
  END { if (last != "") print line " (a name of its own there); uses of it are not checked" }' |
  sed '$!s/$/ (a name of its own there); uses of it are not checked/'
nh=$(grep -c -E '^[^ ]+:[0-9]+: ' "$work/report" || true)
if [ "$status" = 0 ]; then
  echo "check-layers: OK ($(wc -l <"$work/files" | tr -d ' ') Swift files, $(grep -c '^OK' "$work/allow" || true) allowlisted exceptions)"
  exit 0
fi
echo "check-layers: FAILED: $nh problem(s):"
awk '{ sub(/^[^ ]+ /, ""); sub(/:.*/, ""); n[$0]++ } END { for (r in n) printf "  %4d %s\n", n[r], r }' "$work/report" | sort -k2
exit 1
