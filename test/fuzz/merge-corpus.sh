#!/usr/bin/env bash
# merge-corpus.sh BUILD_DIR [RECORDING_OR_DIR...] — remake the committed
# corpora, minimised.
#
# For each target, the candidates are the fixture seeds (mkseeds.py), the
# corpus already committed, and seeds cut from real recordings by
# realseeds.py: by default the recordings of ../shared/data (other
# producers, JDK 9) when that folder is there, plus any recording or folder
# given (e.g. test/gen-recordings.sh's output). libFuzzer's -merge=1 keeps
# the smallest set of them that has every feature (coverage) of the whole,
# and the kept files replace the corpus; regress-* inputs are always kept.
# Prints each target's coverage (cov/ft at INITED) before and after.
# Needs the fuzzers: CC=clang meson setup BUILD_DIR -Dfuzz=true.
#
#   test/fuzz/merge-corpus.sh build-fuzz /tmp/genrec
set -euo pipefail
if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [RECORDING_OR_DIR...]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
sources=("$@")
[ -d "$root/../shared/data" ] && sources=("$root/../shared/data" "${sources[@]}")
[ ${#sources[@]} -gt 0 ] || { echo "merge-corpus: no recordings (no ../shared/data, none given)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/merge-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 "$here/mkseeds.py" >/dev/null
python3 "$here/realseeds.py" "$work/real" "${sources[@]}" | tail -1

cov() { # $1 target, $2 dir -> "cov: N ft: M"
    "$build/test/fuzz/$1" -runs=0 -max_len=200000 "$2" >"$work/cov.log" 2>&1 || true
    grep -m1 -E '(INITED|DONE) cov' "$work/cov.log" | grep -oE 'cov: [0-9]+ ft: [0-9]+'
}

for t in fuzz_whole fuzz_sliced fuzz_live fuzz_json; do
    exe="$build/test/fuzz/$t"
    [ -x "$exe" ] || { echo "merge-corpus: no $exe" >&2; exit 2; }
    corpus="$here/corpus/$t"
    before=$(cov "$t" "$corpus")
    # every candidate by a content hash, to give the kept ones their names back
    mkdir -p "$work/all/$t" "$work/kept/$t"
    cp "$corpus"/* "$work/all/$t/"
    cp "$work/real/$t"/* "$work/all/$t/" # a fresh cut replaces the committed one
    (cd "$work" && nice -n 19 "$exe" -merge=1 -max_len=200000 -timeout=30 \
        "$work/kept/$t" "$work/all/$t" >"$work/$t.log" 2>&1) || {
        echo "merge-corpus: $t: merge failed, see below" >&2
        tail -20 "$work/$t.log" >&2
        exit 1
    }
    declare -A name=()
    for f in "$work/all/$t"/*; do # libFuzzer cuts inputs at -max_len
        h=$(head -c 200000 "$f" | sha1sum | cut -c1-40)
        name[$h]=$(basename "$f")
    done
    find "$corpus" -type f ! -name 'regress-*' -delete
    for f in "$work/kept/$t"/*; do
        h=$(sha1sum <"$f" | cut -c1-40)
        n=${name[$h]:-}
        [ -n "$n" ] || { echo "merge-corpus: $t: kept $f matches no candidate" >&2; exit 1; }
        case $n in regress-*) ;; *) cp "$work/all/$t/$n" "$corpus/$n" ;; esac
    done
    unset name
    after=$(cov "$t" "$corpus")
    printf '%-12s %s -> %s; %d files, %s\n' "$t" "$before" "$after" \
        "$(find "$corpus" -type f | wc -l)" "$(du -sh "$corpus" | cut -f1)"
done
