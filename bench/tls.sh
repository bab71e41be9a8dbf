#!/usr/bin/env bash
# tls.sh — what TLS costs `jfrstream listen`: events per second and the
# listener's CPU seconds per million events with 1, 100 and 1,000 connected
# sources, plain TCP beside TLS and mutual TLS, parsing alone (the rate
# view) and with --json > /dev/null (bench/sink_kafka.py's driver and
# sender, modes parse, parse+tls, parse+mtls, stdout, stdout+mtls; the
# certificates made by test/certs.py).
#
# usage: bench/tls.sh [options of bench/sink_kafka.py, e.g. --sources 100]
#
# after a build with OpenSSL (meson setup build && ninja -C build).
# Environment (defaults): BUILD=build (relative to the checkout)
#   OUT=/tmp/jfrstream-bench-tls (the listeners' stderr, the table)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD=${BUILD:-$root/build}
OUT=${OUT:-/tmp/jfrstream-bench-tls}
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac

ninja -C "$BUILD" >/dev/null
jfrstream=$BUILD/tools/jfrstream/jfrstream
if "$jfrstream" listen --tls-cert /nonexistent --tls-key /nonexistent 2>&1 |
        grep -q "built without OpenSSL"; then
    echo "tls.sh: $jfrstream was built without OpenSSL (-Dtls, Debian package libssl-dev)" >&2
    exit 1
fi
mkdir -p "$OUT"
echo "jfrstream $jfrstream; $(nproc) cores; $(date -u +%FT%TZ)"
python3 "$here/sink_kafka.py" --jfrstream "$jfrstream" --out "$OUT" \
    --modes parse,parse+tls,parse+mtls,stdout,stdout+mtls "$@" | tee "$OUT/tls.txt"
