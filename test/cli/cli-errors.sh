#!/usr/bin/env bash
# cli-errors.sh — exit statuses and error messages of the jfrstream CLI.
#
# usage: test/cli/cli-errors.sh JFRSTREAM FILE.jfr
#
#   0 ok; 1 bad input with "jfrstream: ..." on stderr and the output of the
#   good chunks before the damage still printed; 2 usage errors.
set -uo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 JFRSTREAM FILE.jfr" >&2
    exit 2
fi
# JFRSTREAM_TEST_WRAPPER (e.g. test/valgrind.sh): a command put before ours
# shellcheck disable=SC2206  # a command with options: split on purpose
bin=(${JFRSTREAM_TEST_WRAPPER:-} "$1")
# scaled down (valgrind: JFRSTREAM_TEST_SCALE < 1): the usage errors (exit 2:
# the argument parsing, which ASan and UBSan see in full) and, of each
# command's three help forms, -h and help COMMAND run without the wrapper
help_bin=("${bin[@]}")
if awk -v s="${JFRSTREAM_TEST_SCALE:-1}" 'BEGIN { exit !(s < 1) }'; then
    help_bin=("$1")
fi
file=$2
[ -f "$file" ] || { echo "SKIP: $file not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

expect() { # want-status name args...
    local want=$1 name=$2 run=("${bin[@]}")
    shift 2
    [ "$want" = 2 ] && run=("${help_bin[@]}")
    "${run[@]}" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    local msg
    msg=$(head -c 200 "$tmp/err" | tr '\n' ' ')
    if [ "$rc" != "$want" ]; then
        echo "FAIL: $name: exit $rc, want $want (stderr: $msg)"
        fails=$((fails + 1))
        return 1
    fi
    if [ "$want" != 0 ] && ! grep -q '^jfrstream: ' "$tmp/err" && [ "$want" = 1 ]; then
        echo "FAIL: $name: exit $rc but stderr has no 'jfrstream: ' message: $msg"
        fails=$((fails + 1))
        return 1
    fi
    if [ "$want" = 2 ] && [ ! -s "$tmp/err" ]; then
        echo "FAIL: $name: usage error without a message on stderr"
        fails=$((fails + 1))
        return 1
    fi
    echo "ok: $name -> $rc ${msg:+($msg)}"
    return 0
}

expect 2 "no arguments"
expect 2 "unknown command" frobnicate "$file"
expect 2 "summary without a file" summary
expect 2 "bad --feed-size" --feed-size zero summary "$file"
expect 2 "--feed-size 0" --feed-size 0 summary "$file"
expect 2 "unknown option" print --no-such-option "$file"
expect 2 "two formats (print --json --xml)" print --json --xml "$file"
expect 2 "two formats (print --exact --xml)" print --xml --exact "$file"
expect 1 "missing file" summary "$tmp/does-not-exist.jfr"
printf 'not a recording at all, just a line of text that is longer than a chunk header\n' >"$tmp/text.jfr"
if expect 1 "not a JFR file" summary "$tmp/text.jfr"; then
    grep -q -i 'magic' "$tmp/err" || { echo "FAIL: not a JFR file: the message does not say 'magic': $(head -c 200 "$tmp/err")"; fails=$((fails + 1)); }
fi
# what is not a recording is called so at chunk 0, byte 0 (not "header
# bytes missing"), with its first bytes; a compression that is not read is named
expect_msg() { # regex name args... (exit 1)
    local re=$1 name=$2
    shift 2
    if expect 1 "$name" "$@" && ! grep -Eq "^jfrstream: $re" "$tmp/err"; then
        echo "FAIL: $name: stderr does not match '$re': $(head -c 300 "$tmp/err")"
        fails=$((fails + 1))
    fi
}
printf 'hello\n' >"$tmp/hello.txt"
notjfr='chunk 0 at byte 0: not a JFR recording: bad magic \(first bytes 68 65 6c 6c 6f 0a;'
expect_msg "$tmp/hello.txt: $notjfr" "6-byte text file" summary "$tmp/hello.txt"
expect_msg "<stdin>: $notjfr" "6-byte text file on stdin" summary - <"$tmp/hello.txt"
expect_msg "<stdin>: $notjfr" "6-byte text file from a pipe" print --json - < <(cat "$tmp/hello.txt")
printf 'h' >"$tmp/h.txt"
expect_msg ".*not a JFR recording: bad magic \(first bytes 68;" "1-byte file" metadata "$tmp/h.txt"
expect_msg ".*not a JFR recording: bad magic \(first bytes 6e 6f 74 20 61 20 72 65;" \
    "a longer text file" summary "$tmp/text.jfr"
# decompressed, the library says it: the same place, its own words
if command -v gzip >/dev/null; then
    gzip -c "$tmp/hello.txt" >"$tmp/hello.gz"
    expect_msg '.*/hello.gz: chunk 0 at byte 0: not a JFR chunk \(bad magic\): expected FLR\\0, found 68 65 6c 6c$' \
        "gzip-compressed 6-byte text" summary "$tmp/hello.gz"
fi
printf '\xfd7zXZ\0\0\4\xe6\xd6\xb4\x46' >"$tmp/x.jfr"
expect_msg ".*/x.jfr: chunk 0 at byte 0: not a JFR recording: xz-compressed \(first bytes fd 37 7a 58 5a 00 00 04\)" \
    "xz named" summary "$tmp/x.jfr"
printf 'BZh91AY&SY' >"$tmp/b.jfr"
expect_msg ".*not a JFR recording: bzip2-compressed \(first bytes 42 5a 68 39" "bzip2 named" summary - <"$tmp/b.jfr"
printf '7z\xbc\xaf\x27\x1c\0\4' >"$tmp/7.jfr"
expect_msg ".*not a JFR recording: 7z-compressed" "7z named" print --json "$tmp/7.jfr"
: >"$tmp/empty.jfr"
rc=0
"${bin[@]}" summary "$tmp/empty.jfr" >/dev/null 2>&1 || rc=$?
echo "info: empty file -> exit $rc"
# 99: test/valgrind.sh's status for a memory error or leak (JFRSTREAM_TEST_WRAPPER)
[ "$rc" = 99 ] && { echo "FAIL: empty file: exit 99 (valgrind found an error)"; fails=$((fails + 1)); }

size=$(stat -c %s "$file")
head -c $((size / 2)) "$file" >"$tmp/half.jfr"

# every command names the input, the chunk and the byte offset of what is
# wrong with it: a truncated file, garbage, an empty file, on stdin too
want_err() { # name exact-stderr args... (exit 1)
    local name=$1 want=$2
    shift 2
    expect 1 "$name" "$@" || return
    if [ "$(cat "$tmp/err")" != "$want" ]; then
        echo "FAIL: $name: stderr is '$(head -c 400 "$tmp/err")', want '$want'"
        fails=$((fails + 1))
    fi
}
half=$((size / 2))
cut="chunk 0 at byte $half: input ended inside a chunk: $((size - half)) bytes short of the declared chunk size $size"
printf 'garbage, not a recording\n' >"$tmp/garbage.jfr"
garbage="chunk 0 at byte 0: not a JFR recording: bad magic (first bytes 67 61 72 62 61 67 65 2c; a recording starts with 46 4c 52 00, \"FLR\\0\")"
for cmd in summary "print --json" metadata collapsed "flamegraph -o $tmp/f.html" "pprof -o $tmp/p.pb.gz"; do
    # -o OUT: not written (below)
    nw=""
    case $cmd in *" -o "*) nw="
jfrstream: ${cmd##* }: not written, as the command failed" ;; esac
    # shellcheck disable=SC2086  # the command with its options: split on purpose
    {
        want_err "truncated file ($cmd)" "jfrstream: $tmp/half.jfr: $cut$nw" $cmd "$tmp/half.jfr"
        want_err "truncated file on stdin ($cmd)" "jfrstream: <stdin>: $cut$nw" $cmd - <"$tmp/half.jfr"
        want_err "garbage ($cmd)" "jfrstream: $tmp/garbage.jfr: $garbage$nw" $cmd "$tmp/garbage.jfr"
        want_err "empty file ($cmd)" "jfrstream: $tmp/empty.jfr: chunk 0 at byte 0: empty input, no JFR chunk$nw" \
            $cmd "$tmp/empty.jfr"
    }
done

# a full disk: the write's own reason (the errno of write(2), not of whatever
# ran after it), exit 1
if [ -w /dev/full ]; then
    for cmd in summary "print --json" metadata collapsed; do
        rc=0
        # shellcheck disable=SC2086  # the command with its options: split on purpose
        "${bin[@]}" $cmd "$file" >/dev/full 2>"$tmp/err" || rc=$?
        if [ "$rc" != 1 ] || [ "$(cat "$tmp/err")" != "jfrstream: write error: No space left on device" ]; then
            echo "FAIL: $cmd >/dev/full: exit $rc, stderr '$(head -c 300 "$tmp/err")'"
            fails=$((fails + 1))
        else
            echo "ok: $cmd >/dev/full: exit 1, 'write error: No space left on device'"
        fi
    done
fi

# -o OUT: written whole or not at all. A failed command leaves no file (and
# no temporary one beside it) and an older OUT as it was; SIGTERM and SIGINT
# remove the temporary file
no_files() { # name OUT
    local left
    left=$(ls -d "$2" "$2".tmp* 2>/dev/null)
    [ -z "$left" ] || { echo "FAIL: $1: left $left"; fails=$((fails + 1)); }
}
want_err "flamegraph -o of an empty file" "jfrstream: $tmp/empty.jfr: chunk 0 at byte 0: empty input, no JFR chunk
jfrstream: $tmp/z.html: not written, as the command failed" flamegraph -o "$tmp/z.html" "$tmp/empty.jfr"
no_files "flamegraph -o of an empty file" "$tmp/z.html"
printf 'text\n' >"$tmp/t.txt"
expect 1 "pprof -o of a text file" pprof -o "$tmp/z.pb.gz" "$tmp/t.txt"
no_files "pprof -o of a text file" "$tmp/z.pb.gz"
cat "$file" "$tmp/half.jfr" >"$tmp/good-cut.jfr"
expect 1 "collapsed -o of a good chunk and a truncated one" collapsed -o "$tmp/z.txt" "$tmp/good-cut.jfr"
no_files "collapsed -o of a good chunk and a truncated one" "$tmp/z.txt"
want_err "flamegraph -o into a missing folder" "jfrstream: $tmp/no/such/z.html: No such file or directory" \
    flamegraph -o "$tmp/no/such/z.html" "$file"
echo "an older flame graph" >"$tmp/old.html"
expect 1 "flamegraph -o over an older file, failing" flamegraph -o "$tmp/old.html" "$tmp/half.jfr"
[ "$(cat "$tmp/old.html")" = "an older flame graph" ] || { echo "FAIL: the older file was changed"; fails=$((fails + 1)); }
[ -z "$(ls "$tmp"/old.html.tmp* 2>/dev/null)" ] || { echo "FAIL: a temporary file is left beside old.html"; fails=$((fails + 1)); }
if expect 0 "flamegraph -o over an older file" flamegraph -o "$tmp/old.html" "$file"; then
    grep -q '<html' "$tmp/old.html" || { echo "FAIL: old.html was not replaced"; fails=$((fails + 1)); }
    [ -z "$(ls "$tmp"/old.html.tmp* 2>/dev/null)" ] || { echo "FAIL: a temporary file is left beside old.html"; fails=$((fails + 1)); }
fi
# (a background job of a script has SIGINT ignored: env gives it back)
sigenv=()
env --default-signal=INT true 2>/dev/null && sigenv=(env --default-signal=INT,TERM)
for sig in TERM INT; do
    # the input never ends: the command is killed while it reads
    rm -f "$tmp/fifo"
    mkfifo "$tmp/fifo"
    "${sigenv[@]}" "${bin[@]}" pprof -o "$tmp/sig.pb.gz" - <"$tmp/fifo" 2>/dev/null &
    pid=$!
    exec 7>"$tmp/fifo"
    cat "$file" >&7
    for _ in $(seq 50); do
        [ -n "$(ls "$tmp"/sig.pb.gz.tmp* 2>/dev/null)" ] && break
        sleep 0.1
    done
    kill -s "$sig" "$pid"
    for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -s KILL "$pid" 2>/dev/null && echo "FAIL: SIG$sig did not end pprof -o"
    rc=0
    wait "$pid" || rc=$?
    exec 7>&-
    # killed by the signal (128 + its number); valgrind exits 99 on an error
    want=$((128 + $(kill -l "$sig")))
    if [ -n "$(ls "$tmp"/sig.pb.gz* 2>/dev/null)" ] || [ "$rc" != "$want" ]; then
        echo "FAIL: SIG$sig while pprof -o reads: exit $rc (want $want), left $(ls "$tmp"/sig.pb.gz* 2>/dev/null)"
        fails=$((fails + 1))
    else
        echo "ok: SIG$sig while pprof -o reads: exit $rc, no file left"
    fi
done
if command -v gzip >/dev/null; then
    gzip -c "$tmp/half.jfr" >"$tmp/half.jfr.gz"
    want_err "truncated file, gzip-compressed" "jfrstream: $tmp/half.jfr.gz: $cut" summary "$tmp/half.jfr.gz"
fi
# --resync: the skip of the damaged chunk's bytes has that chunk's number
want_err "truncated file (--resync summary)" "jfrstream: $tmp/half.jfr: $cut
jfrstream: $tmp/half.jfr: chunk 0 at byte 0: bytes skipped to the next chunk magic: $half bytes skipped to the end of the input (no further chunk)" \
    --resync summary "$tmp/half.jfr"
expect 1 "truncated file (summary)" summary "$tmp/half.jfr"
grep -q -i 'chunk' "$tmp/err" || { echo "FAIL: truncated: message does not name the chunk"; fails=$((fails + 1)); }
expect 1 "truncated file (print --json)" print --json "$tmp/half.jfr"

# a good chunk followed by a truncated one: the good chunk's events are printed
cat "$file" "$tmp/half.jfr" >"$tmp/good-then-cut.jfr"
good_rc=0
"${bin[@]}" print --json --stack-depth 64 "$file" >"$tmp/good.json" 2>/dev/null || good_rc=$?
if [ "$good_rc" != 0 ] || ! grep -q '"type"' "$tmp/good.json"; then
    echo "FAIL: print --json of the good file: exit $good_rc, $(grep -c '"type"' "$tmp/good.json") \"type\" lines"
    fails=$((fails + 1))
elif expect 1 "good chunk + truncated chunk (print --json)" print --json --stack-depth 64 "$tmp/good-then-cut.jfr"; then
    good_events=$(grep -c '"type"' "$tmp/good.json" || true)
    got_events=$(grep -c '"type"' "$tmp/out" || true)
    if [ "$got_events" -lt "$good_events" ]; then
        echo "FAIL: good chunk + truncated chunk: only $got_events of the good chunk's $good_events \"type\" lines printed"
        fails=$((fails + 1))
    else
        echo "ok: the good chunk's output was printed before the error ($got_events \"type\" lines, good chunk alone: $good_events)"
    fi
fi
expect 1 "good chunk + truncated chunk (summary)" summary "$tmp/good-then-cut.jfr"
# text and XML: the good chunk's events too, then the error
for fmt in "" --xml; do
    # shellcheck disable=SC2086
    "${bin[@]}" print $fmt "$file" >"$tmp/good.out" 2>/dev/null
    # shellcheck disable=SC2086
    if expect 1 "good chunk + truncated chunk (print $fmt)" print $fmt "$tmp/good-then-cut.jfr"; then
        # the same bytes as the good chunk alone (XML: its document closed)
        if cmp -s "$tmp/good.out" "$tmp/out"; then
            echo "ok: print $fmt printed the good chunk's events before the error"
        else
            echo "FAIL: print $fmt of good chunk + truncated chunk: not the good chunk's output"
            fails=$((fails + 1))
        fi
    fi
done
cat "$file" "$file" >"$tmp/two.jfr"
expect 0 "two good chunks (summary)" summary "$tmp/two.jfr"

# --resync: garbage between two copies of the file; the output equals that of
# the two clean copies, the skipped bytes are reported with offset and count
# (no 'F': no false magic; no 'D' = 68: a header after byte 68 is taken for
# the copy that JDK 14+ writes into a checkpoint, so 1 run in 256 failed)
head -c 777 /dev/urandom | tr 'FD' 'GE' >"$tmp/garbage"
cat "$file" "$tmp/garbage" "$file" >"$tmp/garbled.jfr"
expect 1 "garbage between chunks, no --resync (summary)" summary "$tmp/garbled.jfr"
if expect 1 "garbage between chunks (--resync print --json)" --resync print --json "$tmp/garbled.jfr"; then
    "${bin[@]}" print --json "$tmp/two.jfr" >"$tmp/two.json" 2>/dev/null
    if ! cmp -s "$tmp/out" "$tmp/two.json"; then
        echo "FAIL: --resync: the output differs from that of the two clean chunks"
        fails=$((fails + 1))
    fi
    if ! grep -q "at byte $size: .*777 bytes skipped; next chunk magic at byte $((size + 777))" "$tmp/err"; then
        echo "FAIL: --resync: no skip report with offset and count: $(head -c 300 "$tmp/err")"
        fails=$((fails + 1))
    fi
fi
want_err "a good chunk, then a truncated one (--resync summary)" "jfrstream: $tmp/good-then-cut.jfr: chunk 1 at byte $((size + half)): input ended inside a chunk: $((size - half)) bytes short of the declared chunk size $size
jfrstream: $tmp/good-then-cut.jfr: chunk 1 at byte $size: bytes skipped to the next chunk magic: $half bytes skipped to the end of the input (no further chunk)" \
    --resync summary "$tmp/good-then-cut.jfr"
# a count of 1 takes the singular ("1 bytes" before)
{ cat "$file"; printf x; } >"$tmp/one-more.jfr"
want_err "one byte of trailing garbage (--resync summary)" "jfrstream: $tmp/one-more.jfr: chunk 1 at byte $size: not a JFR chunk (bad magic): 1 byte at the end is not a chunk header
jfrstream: $tmp/one-more.jfr: chunk 1 at byte $size: bytes skipped to the next chunk magic: 1 byte skipped to the end of the input (no further chunk)" \
    --resync summary "$tmp/one-more.jfr"
head -c $((size - 1)) "$file" >"$tmp/one-short.jfr"
want_err "one byte short (summary)" "jfrstream: $tmp/one-short.jfr: chunk 0 at byte $((size - 1)): input ended inside a chunk: 1 byte short of the declared chunk size $size" \
    summary "$tmp/one-short.jfr"

# versions: 1.x is read (JDK 9 and 10), the others are refused naming the version
with_version() { # src bytes-4..7 (printf escapes) dst
    cp "$1" "$3"
    # shellcheck disable=SC2059  # the escapes are the format on purpose
    printf "$2" | dd of="$3" bs=1 seek=4 conv=notrunc status=none
}
want_msg() { # name expected-stderr-substring
    grep -q -F -- "$2" "$tmp/err" || { echo "FAIL: $1: stderr lacks '$2': $(head -c 300 "$tmp/err")"; fails=$((fails + 1)); }
}
with_version "$file" '\0\0\0\011' "$tmp/v0.9.jfr"
expect 1 "version 0.9 (summary)" summary "$tmp/v0.9.jfr" &&
    want_msg "version 0.9" "jfrstream: $tmp/v0.9.jfr: chunk 0 at byte 4: unsupported JFR version: version 0.9 (a JDK 7 or 8 recording; only 1.x and 2.x are supported)"
with_version "$file" '\0\03\0\0' "$tmp/v3.0.jfr"
expect 1 "version 3.0 (print --json)" print --json "$tmp/v3.0.jfr" &&
    want_msg "version 3.0" "jfrstream: $tmp/v3.0.jfr: chunk 0 at byte 4: unsupported JFR version: version 3.0 (only 1.x and 2.x are supported)"
cat "$file" "$tmp/v3.0.jfr" >"$tmp/good-then-v3.jfr"
expect 1 "good chunk + version 3.0 chunk (summary)" summary "$tmp/good-then-v3.jfr" &&
    want_msg "version 3.0, chunk 1" "jfrstream: $tmp/good-then-v3.jfr: chunk 1 at byte $((size + 4)): unsupported JFR version: version 3.0"
with_version "$file" '\0\01\0\0' "$tmp/v1.0.jfr"
if expect 0 "version 1.0 (summary)" summary "$tmp/v1.0.jfr"; then
    for want in ' Version: 1.0' ' com.oracle.jdk.Metadata ' ' com.oracle.jdk.Checkpoint '; do
        grep -q -F -- "$want" "$tmp/out" || { echo "FAIL: version 1.0: summary lacks '$want'"; fails=$((fails + 1)); }
    done
fi

# usage errors exit 2 (nothing is started), runtime failures 1: a bad
# address, port, size, count or duration is a usage error
bad_addr="(PORT, ADDR:PORT or [ADDR]:PORT; ADDR numeric or localhost)"
for a in 7091x 1.2.3:80 70000 localhost:7091x fe80::1 '[::1'; do
    expect 2 "listen $a" listen "$a" &&
        want_msg "listen $a" "jfrstream: listen: bad address '$a' $bad_addr"
done
expect 2 "listen --metrics 9464x" listen --metrics 9464x 0 &&
    want_msg "listen --metrics 9464x" "jfrstream: listen: --metrics: bad address '9464x' $bad_addr"
expect 2 "tail --metrics 1.2.3.4.5" tail --metrics 1.2.3.4.5:9464 "$tmp"
expect 2 "listen --max-bytes 1X" listen --max-bytes 1X 0
expect 2 "listen --max-connections 0" listen --max-connections 0 0
expect 2 "listen --idle-timeout -1" listen --idle-timeout -1 0
expect 2 "tail --window 0" tail --window 0 "$tmp"
expect 2 "tail --metrics-ttl x" tail --metrics-ttl x "$tmp"
# live views: a name that is neither a view nor an event type, their
# options without --view, with --json, bad values
expect 2 "listen --view no-such" listen --view no-such 0 &&
    want_msg "listen --view no-such" "jfrstream: listen: --view: no view named 'no-such' (nor an event type: a dotted name)"
expect 2 "tail --view-window 60 (no --view)" tail --view-window 60 "$tmp" &&
    want_msg "tail --view-window" "jfrstream: tail: --view-window, --view-every and --view-by need --view"
expect 2 "listen --view gc --json" listen --view gc --json 0 &&
    want_msg "listen --view gc --json" "jfrstream: listen: --view and --json both print on stdout: choose one"
expect 2 "listen --view-every 0" listen --view gc --view-every 0 0
expect 2 "listen --view-by jvm" listen --view gc --view-by jvm 0 &&
    want_msg "listen --view-by jvm" "jfrstream: listen: --view-by takes 'source'"
expect 2 "--max-memory 1Q" --max-memory 1Q summary "$file"
# a known option without its value says so (-o and --title were "unknown")
for o in -o --title; do
    expect 2 "flamegraph FILE $o" flamegraph "$file" "$o" &&
        want_msg "flamegraph FILE $o" "jfrstream: flamegraph: $o needs a value"
done
# a port in use is not a usage error: another listener holds it
"${bin[@]}" listen 0 2>"$tmp/listen1.err" &
lpid=$!
port=""
for _ in $(seq 100); do
    port=$(sed -n 's/^jfrstream: listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$tmp/listen1.err")
    [ -n "$port" ] && break
    sleep 0.1
done
if [ -n "$port" ]; then
    expect 1 "listen on a port in use" listen "$port" &&
        want_msg "listen on a port in use" "jfrstream: cannot listen on 127.0.0.1:$port: address already in use"
else
    echo "FAIL: the first listener did not start: $(head -c 300 "$tmp/listen1.err")"
    fails=$((fails + 1))
fi
kill -s TERM "$lpid"
wait "$lpid"

# tail's view counts chunk files (it said conns=1/1 of an empty folder)
mkdir -p "$tmp/repo" "$tmp/none"
python3 -c "import sys; d = bytearray(open(sys.argv[1], 'rb').read()); d[67] &= 0xfd
open(sys.argv[2], 'wb').write(d)" "$file" "$tmp/repo/a.jfr" # not the final chunk: the tail goes on
for t in "none:files=0 events=0 rate=0/s$" "repo:files=1 events=([0-9]+) replayed=\\1 rate=0/s top: "; do
    d=${t%%:*} want=${t#*:}
    rc=0
    "${bin[@]}" tail --idle-timeout 1.5 "$tmp/$d" >"$tmp/out" 2>"$tmp/err" || rc=$?
    got=$(head -1 "$tmp/out")
    if [ "$rc" != 0 ] || ! grep -Eq "^t=1s $want" <<<"$got"; then
        echo "FAIL: tail of $d: exit $rc, view '$got', want 't=1s $want...'"
        fails=$((fails + 1))
    else
        echo "ok: tail of $d: $got"
    fi
done

# the rates are of the events that arrived over the last 3 seconds (per
# second): a chunk file arriving once shows on three lines, not one; the
# help and the man page say so (the help said "in that second")
mkdir -p "$tmp/burst"
"${bin[@]}" tail --idle-timeout 6 "$tmp/burst" >"$tmp/burst.out" 2>/dev/null &
tpid=$!
for _ in $(seq 300); do # its first line: the tail runs (slow under valgrind)
    grep -q '^t=1s ' "$tmp/burst.out" && break
    sleep 0.1
done
cp "$tmp/repo/a.jfr" "$tmp/burst/a.jfr"
wait "$tpid"
nonzero=$(grep -Ec ' rate=[1-9][0-9.]*/s' "$tmp/burst.out")
if [ "$nonzero" != 3 ] || ! grep -Eq '^t=[0-9]+s files=1 events=[0-9]+ rate=0/s' "$tmp/burst.out"; then
    echo "FAIL: one chunk file's events: rates on $nonzero lines, want 3 then 0: $(head -c 400 "$tmp/burst.out")"
    fails=$((fails + 1))
else
    echo "ok: one chunk file's events: rates on 3 lines, then 0"
fi
man=$(dirname "$0")/../../doc/jfrstream.1
for c in listen tail; do
    "${bin[@]}" "$c" --help | tr '\n' ' ' | grep -q 'the events that arrived over the last 3 seconds (fewer at the start), per second' ||
        { echo "FAIL: $c --help does not say the rates are over the last 3 seconds"; fails=$((fails + 1)); }
done
if [ -f "$man" ]; then
    tr '\n' ' ' <"$man" | grep -q 'the events that arrived over the last 3 seconds (fewer at the start), per second' ||
        { echo "FAIL: the man page does not say the rates are over the last 3 seconds"; fails=$((fails + 1)); }
fi

# a tailed file that is not JFR names the file, chunk and byte (it said only
# "FILE: not a JFR chunk file")
head -c 200 /dev/zero | tr '\0' 'x' >"$tmp/notjfr.jfr"
expect_msg "$tmp/notjfr.jfr: chunk 0 at byte 0: not a JFR chunk \(bad magic\)$" \
    "tail of a text file" tail --summary --idle-timeout 5 "$tmp/notjfr.jfr"

# one chunk is "1 chunk" (it said "1 chunks")
if expect 0 "tail of one final chunk" tail --idle-timeout 5 "$file"; then
    grep -Eq "^jfrstream: .*: the JVM finished writing \(final chunk\): 1 chunk, [0-9]+ events, $size bytes$" "$tmp/err" ||
        { echo "FAIL: tail of one final chunk: $(head -c 300 "$tmp/err")"; fails=$((fails + 1)); }
fi

# help: the overview lists every command; each command's own help (--help,
# -h, help COMMAND) names its options, exit 0; a usage error in a command
# prints that command's usage line (not the overview), exit 2
"${bin[@]}" --help >"$tmp/help" 2>&1 || { echo "FAIL: --help: exit $?"; fails=$((fails + 1)); }
for c in summary print metadata collapsed flamegraph pprof listen tail; do
    grep -Eq "^  $c +[a-z]" "$tmp/help" || { echo "FAIL: --help does not list $c"; fails=$((fails + 1)); }
done
echo "ok: --help: $(wc -l <"$tmp/help") lines"
check_help() { # command options-it-must-name...
    local c=$1 form out rc o
    shift
    for form in "$c --help" "$c -h" "help $c"; do
        rc=0
        # shellcheck disable=SC2086  # the form is split on purpose
        if [ "$form" = "$c --help" ]; then
            out=$("${bin[@]}" $form 2>&1) || rc=$?
        else
            out=$("${help_bin[@]}" $form 2>&1) || rc=$?
        fi
        if [ "$rc" != 0 ] || ! grep -q "^Usage: jfrstream $c " <<<"$out" || grep -q '^Commands:' <<<"$out"; then
            echo "FAIL: '$form': exit $rc, not $c's own help: $(head -c 200 <<<"$out")"
            fails=$((fails + 1))
            continue
        fi
        for o in "$@"; do
            grep -qe "$o" <<<"$out" || { echo "FAIL: '$form' does not name $o"; fails=$((fails + 1)); }
        done
    done
    rc=0
    "${help_bin[@]}" "$c" --no-such-option >"$tmp/out" 2>"$tmp/err" || rc=$?
    if [ "$rc" != 2 ] || ! grep -q "^Usage: jfrstream $c " "$tmp/err" ||
        ! grep -q "^Try 'jfrstream $c --help'" "$tmp/err" || grep -q '^Commands:' "$tmp/err"; then
        echo "FAIL: $c --no-such-option: exit $rc, want 2 with $c's usage: $(head -c 300 "$tmp/err")"
        fails=$((fails + 1))
    fi
    echo "ok: $c: its help ($(wc -l <<<"$out") lines, $# options named) and its usage after a usage error"
}
check_help summary FILE --feed-size
check_help print --json --events --categories --stack-depth
check_help metadata --events --categories --ids --per-chunk
check_help collapsed --event --threads --dot --count "-o OUT"
check_help flamegraph --event --threads --dot --count --title "-o OUT.html"
check_help pprof --event --threads --dot --count "-o OUT.pb.gz"
check_help listen --once --max-connections --max-bytes --idle-timeout --json --summary \
    --collapsed --window ADDR:PORT
check_help tail --exit-when-done --idle-timeout --idle --json --summary --collapsed --window DIR
expect 2 "help of an unknown command" help frobnicate
expect 2 "summary without a file: its usage" summary
grep -q '^Usage: jfrstream summary FILE' "$tmp/err" || { echo "FAIL: summary without a file: no usage line"; fails=$((fails + 1)); }
echo "cli-errors: $fails failures"
[ "$fails" = 0 ]
