#!/usr/bin/env bash
# with-gunzipped.sh — run a test program on gunzipped copies of recordings.
#
# usage: test/with-gunzipped.sh DIR COMMAND [ARGS...]
#
# Gunzips DIR/*.jfr.gz into a temporary folder and runs COMMAND ARGS... FILE...
# with those copies, for test programs that read plain files only. Exits 77
# (SKIP) when DIR is absent or holds no *.jfr.gz (../shared/data is only beside
# CI and development checkouts); else COMMAND's exit status.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 DIR COMMAND [ARGS...]" >&2
    exit 2
fi
dir=$1
shift
if [ ! -d "$dir" ]; then
    echo "SKIP: $dir is absent (only CI and the development machines have ../shared)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=()
for gz in "$dir"/*.jfr.gz; do
    [ -e "$gz" ] || continue
    out="$tmp/$(basename "$gz" .gz)"
    gunzip -c "$gz" >"$out"
    files+=("$out")
done
if [ "${#files[@]}" = 0 ]; then
    echo "SKIP: no *.jfr.gz in $dir"
    exit 77
fi
rc=0
"$@" "${files[@]}" || rc=$?
exit "$rc"
