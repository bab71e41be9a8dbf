#!/usr/bin/env bash
# sink-kafka.sh — events per second one `jfrstream listen` forwards into
# Kafka (librdkafka's mock cluster) as JSON, with 1, 100 and 1,000 connected
# sources, CPU seconds per million events and peak RSS, side by side with
# plain `listen --json > /dev/null` in the same run (bench/sink_kafka.py).
#
# usage: bench/sink-kafka.sh [options of bench/sink_kafka.py]
#
# after a build with librdkafka (meson setup build && ninja -C build).
# Environment (defaults): BUILD=build (relative to the checkout)
#   OUT=/tmp/jfrstream-bench-kafka (the listeners' stderr, the table)
# Needs test/sink/mock_kafka built (-Dkafka) and python3.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD=${BUILD:-$root/build}
OUT=${OUT:-/tmp/jfrstream-bench-kafka}
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac

ninja -C "$BUILD" >/dev/null
jfrstream=$BUILD/tools/jfrstream/jfrstream
mock=$(find "$BUILD/test" -name mock_kafka -type f -perm -u+x 2>/dev/null | head -1)
if [ -z "$mock" ]; then
    echo "sink-kafka.sh: no mock_kafka in $BUILD/test (a build with librdkafka: -Dkafka=enabled)" >&2
    exit 1
fi
# (the help read whole first: grep -q exiting early would fail the pipe)
help=$("$jfrstream" listen --help 2>&1 || true)
if ! grep -q -- --kafka <<<"$help"; then
    echo "sink-kafka.sh: $jfrstream has no listen --kafka (built without librdkafka?)" >&2
    exit 1
fi
mkdir -p "$OUT"
echo "jfrstream $jfrstream; mock $mock; $(nproc) cores; $(date -u +%FT%TZ)"
python3 "$here/sink_kafka.py" --jfrstream "$jfrstream" --mock "$mock" --out "$OUT" "$@" \
    | tee "$OUT/sink-kafka.txt"
