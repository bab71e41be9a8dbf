#!/usr/bin/env bash
# ci-fuzz.sh [SECONDS] [BUILD_DIR] — the CI's bounded fuzzing run: builds the
# libFuzzer targets with clang (-Dfuzz=true) in BUILD_DIR (default
# build-fuzz, warnings as errors) and runs each for SECONDS (default 30) with run-fuzz.sh, two at a time. Exits
# 77 (skip) without clang, 1 when a target finds something (the input is in
# /tmp/fuzz-artifacts/<target>/), else 0.
set -u
secs=${1:-30}
build=${2:-build-fuzz}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
command -v clang >/dev/null 2>&1 || { echo "ci-fuzz: no clang: SKIP"; exit 77; }
cd "$root" || exit 1
if [ -d "$build" ]; then
    CC=clang meson setup --reconfigure "$build" -Dfuzz=true -Dwerror=true >/dev/null || exit 1
else
    CC=clang meson setup "$build" -Dfuzz=true -Dwerror=true >/dev/null || exit 1
fi
targets="fuzz_whole fuzz_sliced fuzz_live fuzz_json fuzz_metrics fuzz_query"
# shellcheck disable=SC2086
nice -n 19 ninja -C "$build" $(for t in $targets; do printf 'test/fuzz/%s ' "$t"; done) || exit 1
# two targets at a time (CI has 2 cores): each still runs SECONDS; reports in target order
rc=0
logs=$(mktemp -d)
running=0
for t in $targets; do
    ( "$here/run-fuzz.sh" "$t" "$secs" "$build" >"$logs/$t.out" 2>&1; echo $? >"$logs/$t.rc" ) &
    running=$((running + 1))
    if [ "$running" -ge 2 ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait
for t in $targets; do
    cat "$logs/$t.out"
    [ "$(cat "$logs/$t.rc" 2>/dev/null)" = 0 ] || rc=1
done
rm -rf "$logs"
exit $rc
