#!/usr/bin/env bash
# History benchmark: what recording the persistent history costs a save, against the same save
# with "history": false and against SQLite alone writing the same rows. See README.md.
#
#   benchmarks/history/run.sh [BUILD_DIR]      (default: build; run `make build` first)
#   POSTGRES=postgresql://… benchmarks/history/run.sh [BUILD_DIR]
#                                              the same on a PostgreSQL store: a schema of that
#                                              database (strata_bench_history, made and dropped
#                                              for each run), without the SQLite-alone mode
#
# Environment: INSERTS (default 100000: trips inserted by one save), SAVES (default none: with a
# number, also that many saves of one inserted trip each), UPDATES (default 10000:
# every other trip of a store of 2 x UPDATES updated by one save), REPEAT (default 5: each
# figure is the median of REPEAT runs, the modes of one repetition run one after the other, so
# that a ratio compares runs made under the same load; peak RSS is the largest), CC (default cc).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
inserts="${INSERTS:-100000}"
updates="${UPDATES:-10000}"
saves="${SAVES:-}"
repeat="${REPEAT:-5}"
work="$build/bench-history"

postgres="${POSTGRES:-}"
[ -e "$build/libstrata.so" ] || { echo "run.sh: $build/libstrata.so not found: run make build" >&2; exit 1; }
if [ -n "$postgres" ]; then
  command -v psql >/dev/null || { echo "run.sh: psql not found: apt-get install postgresql-client" >&2; exit 1; }
else
  command -v sqlite3 >/dev/null || { echo "run.sh: sqlite3 not found: apt-get install sqlite3" >&2; exit 1; }
fi
if grep -q 'CMAKE_BUILD_TYPE:STRING=Debug' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "run.sh: $build is a debug build; the figures need a release build" >&2; exit 1
fi

mkdir -p "$work"
"${CC:-cc}" -O2 -std=c99 -Wall -Wextra -I"$root/include" "$here/driver.c" \
  -L"$build" -lstrata -lsqlite3 -Wl,-rpath,"$build" -o "$work/driver"
driver="$work/driver"
if [ -n "$postgres" ]; then
  case $postgres in *\?*) sep='&' ;; *) sep='?' ;; esac
  store="${postgres}${sep}options=-csearch_path%3Dstrata_bench_history"
  q() { psql "$store" -XAtq -c "$1"; }
  reset() { psql "$postgres" -XAtq -c 'DROP SCHEMA IF EXISTS strata_bench_history CASCADE' >/dev/null 2>&1; }
  has_history() { [ "$(q "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = 'strata_history_transaction'")" = 1 ]; }
  engine="PostgreSQL $(psql "$postgres" -XAtq -c 'SHOW server_version' | cut -d' ' -f1)"
else
  store="$work/run.store"
  q() { sqlite3 "$store" "$1"; }
  reset() { rm -f "$store" "$store-wal" "$store-shm"; rm -rf "$store.strata"; }
  has_history() { [ -n "$(q "SELECT name FROM sqlite_master WHERE name = 'strata_history_transaction'")" ]; }
  engine="SQLite $(sqlite3 --version | cut -d' ' -f1)"
fi

expect() { # expect WHAT GOT WANT
  [ "$2" = "$3" ] || { echo "run.sh: $1: got '$2', want '$3'" >&2; exit 1; }
}

# check CASE MODE N: the store holds what the case wrote (and history only when it should).
check() {
  local rows=$3 changed=$3
  [ "$1" = update ] && rows=$(( 2 * $3 ))
  local transactions=1
  [ "$1" = update ] && transactions=2
  [ "$1" = saves ] && transactions=$3
  expect "$1 $2: trips" "$(q 'SELECT count(*) FROM "Trip"')" "$rows"
  if [ "$1" = update ]; then
    expect "$1 $2: updated trips" "$(q "SELECT count(*) FROM \"Trip\" WHERE destination LIKE 'Elsewhere %'")" "$changed"
    expect "$1 $2: every other key" "$(q "SELECT count(*) FROM \"Trip\" WHERE destination LIKE 'Elsewhere %' AND _pk % 2 = 0")" "$changed"
  fi
  case "$2" in
    history|values)
      has_history || { echo "run.sh: $1 $2: no history tables" >&2; exit 1; }
      expect "$1 $2: transactions" "$(q 'SELECT count(*) FROM strata_history_transaction')" "$transactions"
      ;;
    off)
      if has_history; then expect "$1 $2: transactions" "$(q 'SELECT count(*) FROM strata_history_transaction')" 0; fi
      ;;
  esac
}

# one CASE MODE N: a fresh store, one run; appends "<total ms> <save ms> <KB> <change rows>" to $work/CASE-MODE.txt
one() {
  reset
  local out extra=-
  out=$("$driver" "$1" "$2" "$store" "$3")
  check "$1" "$2" "$3"
  if [ "$2" = history ] || [ "$2" = values ]; then extra=$(q 'SELECT count(*) FROM strata_history_change'); fi
  echo "$out $extra" >> "$work/$1-$2.txt"
}

median() { sort -g | sed -n "$(( (repeat + 1) / 2 ))p"; }
col() { awk -v c="$1" '{ print $c }' "$2"; }

cases=("insert:$inserts" "update:$updates")
[ -n "$saves" ] && cases+=("saves:$saves")
modes=(history off values sqlite)
[ -n "$postgres" ] && modes=(history off values)
for c in "${cases[@]}"; do for m in "${modes[@]}"; do rm -f "$work/${c%%:*}-$m.txt"; done; done

echo "timing ($repeat repetitions; each repetition runs every mode once, in turn)..."
for (( i = 0; i < repeat; i++ )); do
  for c in "${cases[@]}"; do
    for m in "${modes[@]}"; do one "${c%%:*}" "$m" "${c#*:}"; done
  done
done

# The per-repetition ratio history/off (and values/off), then its median.
ratio_median() { # ratio_median CASE MODE COLUMN
  paste -d' ' <(col "$3" "$work/$1-$2.txt") <(col "$3" "$work/$1-off.txt") |
    awk '{ if ($2 > 0) printf "%.2f\n", $1 / $2 }' | median
}

echo
echo "history benchmark: $(nproc) cores, $engine, median of $repeat"
for c in "${cases[@]}"; do
  name=${c%%:*} n=${c#*:}
  if [ "$name" = insert ]; then
    echo "one save of $n Trip inserts (strata_insert_many + strata_save):"
  elif [ "$name" = saves ]; then
    echo "$n saves of one Trip insert each (strata_insert_many + strata_save, $n times):"
  else
    echo "one save of $n Trip updates, every other key of $(( 2 * n )) (strata_update x $n + strata_save):"
  fi
  printf '  %-32s %10s %8s %10s %8s %9s %12s\n' mode total "x off" save "x off" "peak RSS" "change rows"
  off_total=$(col 1 "$work/$name-off.txt" | median)
  for m in "${modes[@]}"; do
    f="$work/$name-$m.txt"
    total=$(col 1 "$f" | median) save=$(col 2 "$f" | median)
    kb=$(col 3 "$f" | sort -g | tail -1) rows=$(col 4 "$f" | tail -1)
    case $m in
      history) label='Strata, history on' ;;
      off) label='Strata, "history": false' ;;
      values) label='Strata, history + historyValues' ;;
      sqlite) label='SQLite alone, one transaction' ;;
    esac
    if [ "$m" = history ] || [ "$m" = values ]; then
      rt=$(ratio_median "$name" "$m" 1)x rs=$(ratio_median "$name" "$m" 2)x
    elif [ "$m" = off ]; then rt=1.00x rs=1.00x
    else rt=$(awk -v a="$total" -v b="$off_total" 'BEGIN { printf "%.2fx", a / b }') rs=-
    fi
    [ "$m" = sqlite ] && save=- || save="$save ms"
    printf '  %-32s %7s ms %8s %10s %8s %6d MB %12s\n' "$label" "$total" "$rt" "$save" "$rs" \
      "$(( kb / 1024 ))" "$rows"
  done
  [ -n "$postgres" ] && continue
  awk -v a="$off_total" -v h="$(col 1 "$work/$name-history.txt" | median)" -v s="$(col 1 "$work/$name-sqlite.txt" | median)" \
    'BEGIN { printf "  against SQLite alone: history off %.2fx, history on %.2fx\n", a / s, h / s }'
done
reset
