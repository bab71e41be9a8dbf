#!/usr/bin/env bash
# compressed.sh — gzip-, zip-, lz4- and zstd-wrapped recordings read
# transparently.
#
# usage: test/cli/compressed.sh JFRSTREAM FILE.jfr...
#        test/cli/compressed.sh --producers JFRSTREAM DIR   (DIR/*.jfr.gz)
#
# For each FILE, its .gz, multi-member .gz, .zip (single entry and several
# entries), .lz4 (4 MB and 64 KB blocks), .zst (one frame, two frames, a
# skippable frame before them) made here with the gzip, zip, lz4 and zstd
# tools must give byte-identical `summary` and `print --json` output to the
# plain file, at several --feed-size values, from the file and from stdin.
# Then damaged variants of a two-chunk file: truncated (stdout equals the
# plain file's output cut at the same decompressed byte), a bad CRC/checksum
# (all events out, then exit 1), flipped bytes (exit 1 and a message), a zip
# without its directory (read from its local header).
# --producers: each DIR/*.jfr.gz read directly equals its gunzipped copy
# (summary; print --json too for those under 1 MB).
set -uo pipefail
producers=false
if [ "${1:-}" = --producers ]; then
    producers=true
    shift
fi
[ $# -ge 2 ] || { echo "usage: $0 [--producers] JFRSTREAM FILE.jfr...|DIR" >&2; exit 2; }
# JFRSTREAM_TEST_WRAPPER (e.g. test/valgrind.sh): a command put before ours
# shellcheck disable=SC2206  # the wrapper is split into words on purpose
bin=(${JFRSTREAM_TEST_WRAPPER:-} "$1")
shift
for t in gzip zip lz4 zstd python3; do
    command -v $t >/dev/null 2>&1 || { echo "SKIP: no '$t' command (Debian package $t)"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

run() { # out-file err-file args... ; prints the exit status
    local out=$1 err=$2
    shift 2
    local rc=0
    "${bin[@]}" "$@" >"$out" 2>"$err" || rc=$?
    echo $rc
}

if $producers; then
    dir=$1
    [ -d "$dir" ] || { echo "SKIP: no $dir"; exit 77; }
    n=0
    for gz in "$dir"/*.jfr.gz; do
        plain="$tmp/$(basename "$gz" .gz)"
        gunzip -c "$gz" >"$plain"
        cmds=(summary "print --json")
        # print --json of the three files over 1 MB takes most of the time
        # (a minute under the sanitizers): summary only for those
        [ "$(stat -c %s "$gz")" -le 1000000 ] || cmds=(summary)
        for cmd in "${cmds[@]}"; do
            # shellcheck disable=SC2086
            rc1=$(run "$tmp/ref" "$tmp/err1" $cmd "$plain")
            # shellcheck disable=SC2086
            rc2=$(run "$tmp/out" "$tmp/err2" $cmd "$gz")
            if [ "$rc1" != "$rc2" ] || ! cmp -s "$tmp/ref" "$tmp/out"; then
                fail "$(basename "$gz"): $cmd: exit $rc2 (plain $rc1), output $(cmp -s "$tmp/ref" "$tmp/out" && echo same || echo differs)"
            else
                n=$((n + 1))
            fi
        done
        rm -f "$plain"
    done
    echo "producers: $n comparisons equal, $fails failures"
    [ "$fails" = 0 ]
    exit
fi

# ------------------------------------------------ good compressed variants
for file in "$@"; do
    [ -f "$file" ] || { echo "SKIP: $file not found"; exit 77; }
    base=$(basename "$file" .jfr)
    v="$tmp/v"
    mkdir -p "$v"
    gzip -c "$file" >"$v/$base.jfr.gz"
    half=$(($(stat -c %s "$file") / 2))
    { head -c "$half" "$file" | gzip -c; tail -c +$((half + 1)) "$file" | gzip -c; } >"$v/$base.multi.gz"
    cp "$file" "$v/$base.jfr"
    (cd "$v" && zip -q "$base.zip" "$base.jfr" &&
        echo "not a recording" >README.txt && zip -q "$base.multi.zip" README.txt "$base.jfr")
    rm "$v/$base.jfr" "$v/README.txt"
    lz4 -q "$file" "$v/$base.jfr.lz4"
    lz4 -q -B4 "$file" "$v/$base.b64k.lz4"
    zstd -q -c "$file" >"$v/$base.jfr.zst"
    # two frames (read as one stream), then the same after a skippable frame
    # (magic 0x184d2a5?, a length, ignored bytes) as pzstd writes one
    { head -c "$half" "$file" | zstd -q -c; tail -c +$((half + 1)) "$file" | zstd -q -c; } >"$v/$base.multi.zst"
    { printf '\x50\x2a\x4d\x18\x05\x00\x00\x00hello'; cat "$v/$base.multi.zst"; } >"$v/$base.skip.zst"
    for cmd in summary "print --json --stack-depth 64"; do
        # shellcheck disable=SC2086
        rc=$(run "$tmp/ref" "$tmp/err" $cmd "$file")
        [ "$rc" = 0 ] || { fail "plain $base: $cmd: exit $rc"; continue; }
        for c in "$v"/*; do
            name="$(basename "$c") $cmd"
            for fs in default 1 4096 random:1; do
                fsopt=()
                [ "$fs" = default ] || fsopt=(--feed-size "$fs")
                # shellcheck disable=SC2086
                rc=$(run "$tmp/out" "$tmp/err" "${fsopt[@]}" $cmd "$c")
                { [ "$rc" = 0 ] && cmp -s "$tmp/out" "$tmp/ref"; } ||
                    fail "$name --feed-size $fs: exit $rc, output $(cmp -s "$tmp/out" "$tmp/ref" && echo same || echo differs): $(head -c 300 "$tmp/err")"
            done
            # stdin: a pipe (format from the first bytes read), and a file
            rc=0
            # shellcheck disable=SC2086
            "${bin[@]}" --feed-size random:2 $cmd - < <(cat "$c") >"$tmp/out" 2>"$tmp/err" || rc=$?
            { [ "$rc" = 0 ] && cmp -s "$tmp/out" "$tmp/ref"; } ||
                fail "$name from a pipe: exit $rc: $(head -c 300 "$tmp/err")"
            rc=0
            # shellcheck disable=SC2086
            "${bin[@]}" $cmd - <"$c" >"$tmp/out" 2>"$tmp/err" || rc=$?
            { [ "$rc" = 0 ] && cmp -s "$tmp/out" "$tmp/ref"; } ||
                fail "$name from stdin redirected: exit $rc: $(head -c 300 "$tmp/err")"
            # only the multi-entry zip says which entry it took
            case $c in
            *.multi.zip) grep -q "reading zip entry '$base.jfr'" "$tmp/err" || fail "$name: no 'reading zip entry' message" ;;
            *) [ ! -s "$tmp/err" ] || fail "$name: unexpected stderr: $(head -c 300 "$tmp/err")" ;;
            esac
        done
        echo "ok: $base: $cmd: $(find "$v" -type f | wc -l) compressed variants x 4 feed sizes + 2 stdin, same as plain"
    done
    rm -rf "$v"
done

# ------------------------------------------------ damaged compressed input
# two chunks (the first file twice), so that events precede the damage
file=$1
two="$tmp/two.jfr"
cat "$file" "$file" >"$two"
gzip -c "$two" >"$tmp/two.gz"
(cd "$tmp" && zip -q two.zip two.jfr)
lz4 -q -B4 "$two" "$tmp/two.lz4"
# two frames: in one, the second copy would cost next to nothing (zstd's
# window holds the first), and the damage below would hit the first
{ zstd -q -c "$file"; zstd -q -c "$file"; } >"$tmp/two.zst"
cmd="print --json --stack-depth 64"
# shellcheck disable=SC2086
"${bin[@]}" $cmd "$two" >"$tmp/full" 2>/dev/null || fail "plain two-chunk file: exit $?"
# shellcheck disable=SC2086
"${bin[@]}" $cmd "$file" >"$tmp/one" 2>/dev/null || fail "plain file: exit $?"

expect_bad() { # name file message-regex [full|truncated]
    local name=$1 f=$2 re=$3 full='' truncated=
    [ "${4:-}" = full ] && full=1
    [ "${4:-}" = truncated ] && truncated=1
    local src
    for src in file pipe; do
        rc=0
        if [ $src = file ]; then
            # shellcheck disable=SC2086
            "${bin[@]}" $cmd "$f" >"$tmp/out" 2>"$tmp/err" || rc=$?
        else
            # shellcheck disable=SC2086
            "${bin[@]}" --feed-size 4096 $cmd - <"$f" >"$tmp/out" 2>"$tmp/err" || rc=$?
        fi
        if [ "$rc" != 1 ]; then
            fail "$name ($src): exit $rc, want 1: $(head -c 300 "$tmp/err")"
            continue
        fi
        if ! grep -Eq "^jfrstream: .*$re" "$tmp/err"; then
            fail "$name ($src): no message matching '$re': $(head -c 300 "$tmp/err")"
            continue
        fi
        if [ -n "$full" ]; then
            cmp -s "$tmp/out" "$tmp/full" || { fail "$name ($src): output differs from the whole file's"; continue; }
        else
            # the good decompressed prefix: the output must equal that of the
            # plain file cut at the same byte
            n=$(sed -n 's/.*(after \([0-9]*\) decompressed bytes).*/\1/p' "$tmp/err" | head -1)
            if [ -z "$truncated" ]; then
                # damaged data decompresses to anything: at least the first
                # chunk's events (the output of one copy) must be out
                local want got
                want=$(grep -c '^      "type"' "$tmp/one")
                got=$(grep -c '^      "type"' "$tmp/out")
                [ "$got" -ge "$want" ] || { fail "$name ($src): $got events out, want at least $want"; continue; }
            elif [ -n "$n" ]; then
                # shellcheck disable=SC2086
                head -c "$n" "$two" | "${bin[@]}" $cmd - >"$tmp/cut" 2>/dev/null
                cmp -s "$tmp/out" "$tmp/cut" || { fail "$name ($src): output differs from the plain file cut at $n bytes"; continue; }
                if ! { [ "$n" -gt "$(stat -c %s "$file")" ] && ! cmp -s "$tmp/out" "$tmp/full" &&
                    grep -q '"type"' "$tmp/out"; }; then
                    fail "$name ($src): the first chunk's events are missing"
                    continue
                fi
            fi
        fi
        echo "ok: $name ($src): exit 1, $(grep -E "$re" "$tmp/err" | head -1)"
    done
}

for fmt in gz zip lz4 zst; do
    c="$tmp/two.$fmt"
    csize=$(stat -c %s "$c")
    # truncated in the second chunk (zip: its directory is lost)
    head -c $((csize * 4 / 5)) "$c" >"$tmp/trunc.$fmt"
    case $fmt in
    gz) expect_bad "truncated gzip" "$tmp/trunc.$fmt" "gzip data truncated at compressed byte [0-9]+" truncated ;;
    lz4) expect_bad "truncated lz4" "$tmp/trunc.$fmt" "lz4 data truncated at compressed byte [0-9]+" truncated ;;
    zst) expect_bad "truncated zstd" "$tmp/trunc.$fmt" "zstd data truncated at compressed byte [0-9]+" truncated ;;
    # zip keeps its directory at its end: a truncated archive is read from
    # its first local header
    zip) expect_bad "truncated zip" "$tmp/trunc.$fmt" "zip data truncated at compressed byte [0-9]+" truncated ;;
    esac
    # bytes flipped in the middle of the compressed data
    python3 - "$c" "$tmp/flip.$fmt" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
for k in range(len(b) * 3 // 4, len(b) * 3 // 4 + 16):
    b[k] ^= 0x5a
open(sys.argv[2], 'wb').write(b)
EOF
    expect_bad "corrupt $fmt" "$tmp/flip.$fmt" "(gzip|zip|lz4|zstd) (entry )?data corrupt"
done
# a wrong checksum over good data: every event out, then exit 1
python3 - "$tmp/two.gz" "$tmp/crc.gz" "$tmp/two.lz4" "$tmp/crc.lz4" "$tmp/two.zst" "$tmp/crc.zst" <<'EOF'
import sys
a = sys.argv
for src, dst, off in ((a[1], a[2], 8), (a[3], a[4], 4), (a[5], a[6], 4)):
    b = bytearray(open(src, 'rb').read())
    # gzip: the CRC-32 of the trailer; lz4, zstd: the content checksum
    b[-off] ^= 0xff
    open(dst, 'wb').write(b)
EOF
expect_bad "gzip bad CRC" "$tmp/crc.gz" "gzip data corrupt \(incorrect data check\)" full
expect_bad "lz4 bad checksum" "$tmp/crc.lz4" "lz4 data corrupt .*[Cc]hecksum" full
expect_bad "zstd bad checksum" "$tmp/crc.zst" "zstd data corrupt .*checksum" full
# a zip without its directory (the last 30 bytes cut): the whole entry from
# its local header, then exit 1
head -c $(($(stat -c %s "$tmp/two.zip") - 30)) "$tmp/two.zip" >"$tmp/nodir.zip"
expect_bad "zip without its directory" "$tmp/nodir.zip" "zip archive damaged: its directory is unreadable" full
# damage anywhere: each format of the small second file (or the first) cut
# at 40 places and with 40 random bits flipped: exit 0 or 1 with a message,
# never a crash, a hang or a sanitizer report
small=${2:-$1}
gzip -c "$small" >"$tmp/s.gz"
cp "$small" "$tmp/s.jfr"
(cd "$tmp" && zip -q s.zip s.jfr)
lz4 -q -B4 "$small" "$tmp/s.lz4"
zstd -q -c "$small" >"$tmp/s.zst"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=99"
for fmt in gz zip lz4 zst; do
    python3 - "$tmp/s.$fmt" "$tmp/dmg" <<'EOF'
import os, random, sys
b = open(sys.argv[1], 'rb').read()
os.makedirs(sys.argv[2], exist_ok=True)
r = random.Random(7)
for i in range(40):
    open(f'{sys.argv[2]}/cut{i}', 'wb').write(b[:4 + (len(b) - 4) * i // 40])
    d = bytearray(b)
    d[r.randrange(4, len(d))] ^= 1 << r.randrange(8)
    open(f'{sys.argv[2]}/flip{i}', 'wb').write(d)
EOF
    bad=0 n=0
    for d in "$tmp"/dmg/*; do
        rc=0
        timeout 30 "${bin[@]}" --feed-size random:3 print --json "$d" >/dev/null 2>"$tmp/err" || rc=$?
        n=$((n + 1))
        if [ "$rc" -gt 1 ] || grep -Eq 'Sanitizer|runtime error' "$tmp/err" ||
            { [ "$rc" = 1 ] && ! grep -q '^jfrstream: ' "$tmp/err"; }; then
            fail "damaged $fmt $(basename "$d"): exit $rc: $(head -c 300 "$tmp/err")"
            bad=$((bad + 1))
        fi
    done
    echo "ok: $n damaged $fmt copies of $(basename "$small"): exit 0/1, no crash ($bad bad)"
    rm -rf "$tmp/dmg"
done

# a zip without a *.jfr entry among several
(cd "$tmp" && echo a >a.txt && echo b >b.txt && zip -q none.zip a.txt b.txt)
rc=$(run "$tmp/out" "$tmp/err" summary "$tmp/none.zip")
{ [ "$rc" = 1 ] && grep -q "none named \*.jfr" "$tmp/err"; } || fail "zip without a .jfr entry: exit $rc: $(cat "$tmp/err")"

echo "compressed: $fails failures"
[ "$fails" = 0 ]
