#!/bin/sh
# tls-certs.sh DIR — the TLS tests' certificates, made with the openssl
# command (P-256 keys, valid 2 days), into DIR:
#   ca.pem ca.key              CA "jfrstream test CA"
#   server.pem server.key      of ca: CN=127.0.0.1, SAN IP:127.0.0.1, DNS:localhost
#   client.pem client.key      of ca: CN=app-1.example, SAN DNS:app-1.example,
#                              URI:spiffe://fleet/app-1
#   intruder.pem intruder.key  of ca: CN=intruder.example (no SAN): for --tls-allow
#   other-ca.pem other-ca.key  another CA "jfrstream other CA"
#   other.pem other.key        of other-ca: CN=app-1.example (the right name,
#                              the wrong CA)
# Used by test/live/live_tls.py (livelib.tls_certs), test/uv/test_tls.c and
# bench/tls_bench.py. Exit 77 when the openssl command is missing.
set -eu
dir=$1
command -v openssl >/dev/null 2>&1 || { echo "SKIP: no openssl command (Debian package openssl)"; exit 77; }
mkdir -p "$dir"
cd "$dir"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }
ca() { # NAME CN
    key "$1"
    openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 2 -subj "/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
}
leaf() { # NAME CA CN EXT
    key "$1"
    openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$3"
    printf 'basicConstraints=CA:FALSE\n%s\n' "$4" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -out "$1.pem" \
        -days 2 -extfile "$1.ext" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}
ca ca "jfrstream test CA"
ca other-ca "jfrstream other CA"
leaf server ca 127.0.0.1 "extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost"
leaf client ca app-1.example "extendedKeyUsage=clientAuth
subjectAltName=DNS:app-1.example,URI:spiffe://fleet/app-1"
leaf intruder ca intruder.example "extendedKeyUsage=clientAuth"
leaf other other-ca app-1.example "extendedKeyUsage=clientAuth"
