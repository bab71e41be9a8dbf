#!/usr/bin/env bash
# kafka-ir.sh BUILD FILE — the instructions `jfrstream listen --once --kafka`
# executes (callgrind, --cache-sim=no: the whole process, librdkafka's threads
# included) for FILE sent on one connection into librdkafka's mock cluster
# (BUILD/test/sink/mock_kafka, 1 broker, 1 partition). Counts do not depend on
# the machine's load: compare two builds (release) on the same FILE.
# Prints: Ir, the listener's Kafka line (produced, delivered, pauses).
set -euo pipefail
[ $# = 2 ] || { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
B=$(cd "$1" && pwd) FILE=$(realpath "$2")
J=$B/tools/jfrstream/jfrstream M=$B/test/sink/mock_kafka
W=$(mktemp -d /tmp/kafka-ir.XXXXXX)
trap 'rm -rf "$W"; [ -n "${MK_PID:-}" ] && kill "$MK_PID" 2>/dev/null' EXIT
coproc MK { "$M" 1 jfr-events:1; }
read -r boot <&"${MK[0]}"
port=$(python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])")
valgrind --tool=callgrind --cache-sim=no --callgrind-out-file="$W/cg" --log-file="$W/log" \
    "$J" listen --once --kafka "$boot" "127.0.0.1:$port" >/dev/null 2>"$W/err" &
V=$!
python3 - "$port" "$FILE" <<'PY'
import socket, sys, time
end = time.monotonic() + 60
while True:  # the listener starts slowly under callgrind
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        break
    except OSError:
        if time.monotonic() > end:
            raise
        time.sleep(0.2)
s.sendall(open(sys.argv[2], "rb").read())
s.shutdown(socket.SHUT_WR)
try:
    s.recv(1)
except OSError:
    pass
PY
wait $V || true
echo "Ir $(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$W/log" | tail -1)"
grep -E "kafka: .*produced" "$W/err" | tail -1
