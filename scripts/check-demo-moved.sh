#!/bin/sh
# check-demo-moved.sh TRIPS_BINARY WORK_DIR
#
# The demo must not depend on where it was built: its schema is compiled in.
# Copies the built binary into another folder, runs the copy there (the
# library is found through the binary's run path, as for an installed demo
# through the system's) and checks that it reads no file of the source tree.
set -eu
trips=${1:?usage: check-demo-moved.sh TRIPS_BINARY WORK_DIR}
work=${2:?usage: check-demo-moved.sh TRIPS_BINARY WORK_DIR}
rm -rf "$work/moved"
mkdir -p "$work/moved"
cp "$trips" "$work/moved/trips"
cd "$work/moved"
fail=0
# An old demo read <source dir>/examples/trips/schema.json at run time; this
# one carries its schemas and migration plan.
if grep -q '\.json' ./trips; then
  echo "the demo binary names a .json file: it must carry its schemas and plan"; fail=1
fi
if ./trips moved.store > demo.out 2>&1; then
  grep -q "the store holds 8 trips" demo.out || { echo "moved demo: unexpected output:"; cat demo.out; fail=1; }
else
  echo "the moved demo failed:"; cat demo.out; fail=1
fi
[ -f moved.store ] || { echo "no store written next to the moved demo"; fail=1; }
exit $fail
