#!/usr/bin/env bash
# with-gunzipped.sh — run a test program on gunzipped copies of recordings.
#
# usage: test/with-gunzipped.sh [--max-kib N] DIR COMMAND [ARGS...]
#
# Gunzips DIR/*.jfr.gz into a temporary folder and runs COMMAND ARGS... FILE...
# with those copies, for test programs that read plain files only; with
# --max-kib, only the copies of at most N KiB (find's -size +Nk drops the
# others). COMMAND runs under $JFRSTREAM_TEST_WRAPPER (valgrind.sh in `meson
# test --setup valgrind`) when it is set. Exits 77 (SKIP) when DIR is absent
# or holds no *.jfr.gz (../shared/data is only beside CI and development
# checkouts); else COMMAND's exit status.
set -euo pipefail
max_kib=
if [ "${1:-}" = --max-kib ] && [ $# -ge 2 ]; then
    max_kib=$2
    shift 2
fi
if [ $# -lt 2 ]; then
    echo "usage: $0 [--max-kib N] DIR COMMAND [ARGS...]" >&2
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
for gz in "$dir"/*.jfr.gz; do
    [ -e "$gz" ] || continue
    gunzip -c "$gz" >"$tmp/$(basename "$gz" .gz)"
done
if [ -n "$max_kib" ]; then
    find "$tmp" -name '*.jfr' -size +"$max_kib"k -delete
fi
files=()
for f in "$tmp"/*.jfr; do
    [ -e "$f" ] && files+=("$f")
done
if [ "${#files[@]}" = 0 ]; then
    echo "SKIP: no *.jfr.gz in $dir${max_kib:+ of at most $max_kib KiB}"
    exit 77
fi
rc=0
# shellcheck disable=SC2086
${JFRSTREAM_TEST_WRAPPER:-} "$@" "${files[@]}" || rc=$?
exit "$rc"
