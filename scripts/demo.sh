#!/bin/sh
# The main job: installs dependencies, builds flowdp and shows what it does.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh" _build --enable-Werror >/dev/null
ctl="$top/_build/utilities/flowdp-ctl"
bench="$top/_build/utilities/flowdp-bench"

echo "== CPU level (FLOWDP_CPU=generic|sse42|avx2 overrides) =="
"$ctl" cpu
echo
echo "== Hashing a 5-tuple key (nw_src 192.168.0.1, nw_dst 10.0.0.1, tcp 80 -> 80) =="
"$ctl" hash --basis=0x12345678 0x0a000001c0a80001 0x0000000600500050
echo
echo "== The same key with the portable code: same CRC32C, fast hash jhash2 =="
FLOWDP_CPU=generic "$ctl" hash --basis=0x12345678 0x0a000001c0a80001 0x0000000600500050
echo
echo "== Hash speed (flowdp-bench hash --quick) =="
"$bench" --quick hash
