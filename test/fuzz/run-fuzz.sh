#!/usr/bin/env bash
# run-fuzz.sh TARGET SECONDS BUILD_DIR [extra libFuzzer flags...]
#
# Runs one libFuzzer target (built with -Dfuzz=true and CC=clang in BUILD_DIR)
# for SECONDS over a scratch copy of test/fuzz/corpus/TARGET (the committed
# corpus is not modified), at the lowest CPU priority, one job. Prints the
# executions, exec/s and coverage (libFuzzer's cov: and ft: figures) at the
# end. On a crash, leak, timeout or out-of-memory the input is saved under
# $FUZZ_ARTIFACTS (default /tmp/fuzz-artifacts/TARGET/) and the exit status is
# non-zero. New interesting inputs stay in the scratch corpus, whose path is
# printed (merge them with -merge=1 if they are worth keeping).
#
#   test/fuzz/run-fuzz.sh fuzz_whole 180 build-fuzz
set -u
if [ $# -lt 3 ]; then
    echo "usage: $0 TARGET SECONDS BUILD_DIR [libFuzzer flags...]" >&2
    exit 2
fi
target=$1 secs=$2 build=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")
exe="$build/test/fuzz/$target"
[ -x "$exe" ] || { echo "run-fuzz: no $exe (meson setup BUILD -Dfuzz=true with CC=clang)" >&2; exit 2; }
[ -d "$here/corpus/$target" ] || { echo "run-fuzz: no corpus $here/corpus/$target" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-$target.XXXXXX")
cp "$here/corpus/$target"/* "$work/"
art=${FUZZ_ARTIFACTS:-/tmp/fuzz-artifacts/$target}
mkdir -p "$art"
log="$work.log"
# -jobs=1 makes libFuzzer run a child whose output goes to ./fuzz-0.log
# (then copied to its own output): run it from a scratch directory
rundir="$work.run"
mkdir -p "$rundir"
cd "$rundir" || exit 2

# -max_len: the largest seed is ~170 KB; mutations up to that size
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
nice -n 19 "$exe" -max_total_time="$secs" -jobs=1 -workers=1 -timeout=10 \
    -rss_limit_mb=2048 -max_len=200000 -print_final_stats=1 \
    -artifact_prefix="$art/" "$@" "$work" >"$log" 2>&1
rc=$?

# libFuzzer's last status line: "#N DONE cov: C ft: F corp: ... exec/s: E ..."
last=$(grep -E '^#[0-9]+' "$log" | tail -1)
execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
rate=$(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}')
echo "target:   $target (${secs}s, $build)"
echo "execs:    ${execs:-?} total, ${rate:-?} exec/s"
echo "coverage: $(echo "$last" | grep -oE 'cov: [0-9]+ ft: [0-9]+')"
echo "corpus:   $(echo "$last" | grep -oE 'corp: [0-9]+/[0-9]+[a-zA-Z]*') in $work"
echo "log:      $log"
if [ $rc -ne 0 ] || grep -qE '^==[0-9]+==ERROR|^SUMMARY: |FUZZ CHECK FAILED|deadly signal' "$log"; then
    echo "FINDING (exit $rc):"
    grep -E 'FUZZ CHECK FAILED|^==[0-9]+==ERROR|^SUMMARY|Test unit written to|runtime error' "$log" | head -20
    exit 1
fi
exit 0
