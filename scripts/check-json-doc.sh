#!/bin/sh
# check-json-doc.sh SOURCE_DIR
#
# docs/JSON.md documents every key the decoders accept: the configuration
# (§1), schema, entity, attribute and relationship keys (§2), the fetch
# descriptor and sort descriptor keys (§5). The keys are read from the Swift
# decoders, so a key added there without documentation fails this test.
set -eu
src=${1:?usage: check-json-doc.sh SOURCE_DIR}
doc="$src/docs/JSON.md"
q=Sources/Strata
fail=0

# The text of section N of JSON.md ("## N. …" up to the next "## ").
section() { awk -v n="$1" '/^## / { on = index($0, "## " n ".") == 1 } on' "$doc"; }

# Quoted names in a Swift array literal `let NAME = [ … ]` (may span lines).
swift_list() {
  awk -v name="$2" 'index($0, "let " name " = [") { on = 1 } on { print } on && /\]/ { exit }' "$1" |
    sed 's/^.*= \[//' | grep -o '"[A-Za-z_]*"' | tr -d '"'
}

# Keys read through an ObjectReader variable: VAR.string("key"), VAR.bool(…), …
reader_keys() { grep -o "\\b$2\\.\\(value\\|string\\|bool\\|int\\|array\\)(\"[A-Za-z_]*\"" "$1" | sed 's/.*("//; s/"$//'; }

check() {   # check SECTION WHAT KEY...
  sec=$1; what=$2; shift 2
  text=$(section "$sec")
  [ -n "$text" ] || { echo "docs/JSON.md has no section $sec"; fail=1; return; }
  [ $# -gt 0 ] || { echo "found no $what keys in the sources (has the decoder moved?)"; fail=1; return; }
  for k in "$@"; do
    printf '%s\n' "$text" | grep -qF "\`$k\`" || { echo "docs/JSON.md §$sec does not document the $what key '$k'"; fail=1; }
  done
  echo "§$sec: $what keys documented: $*"
}

check 1 configuration $(reader_keys "$src/$q/Store/StoreConfiguration.swift" o) \
                      $(reader_keys "$src/$q/Migration/MigrationPlan.swift" o)
check 2 schema $(reader_keys "$src/$q/Schema/SchemaDecoder.swift" top)
check 2 entity $(swift_list "$src/$q/Schema/SchemaDecoder.swift" entityKeys)
check 2 attribute $(swift_list "$src/$q/Schema/SchemaDecoder.swift" attributeKeys)
check 2 relationship $(swift_list "$src/$q/Schema/SchemaDecoder.swift" relationshipKeys)
check 5 "fetch descriptor" $(swift_list "$src/$q/Query/FetchDescriptor.swift" keys)
check 5 "sort descriptor" $(reader_keys "$src/$q/Query/FetchDescriptor.swift" so)
check 5 "delete request" $(swift_list "$src/$q/Query/FetchDescriptor.swift" allowed)
exit $fail
