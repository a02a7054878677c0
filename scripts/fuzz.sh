#!/bin/bash
# Builds the libFuzzer targets (tests/fuzz/) with clang, ASan and UBSan,
# and runs each for FUZZ_SECONDS seconds (default 20) from seed FUZZ_SEED
# (default 1, so that a CI run is repeatable; FUZZ_SEED=0 lets libFuzzer
# pick one), starting from the checked-in inputs of
# tests/fuzz/corpus/TARGET/ (past crashes and samples: add every crash
# found there).  Needs a configured build in _build for config.h.  Prints
# one line per target:
#   fuzz: NAME: ok (N runs)   or   fuzz: NAME: FAILED
# and exits non-zero if any target fails.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
seconds=${FUZZ_SECONDS:-20}
seed=${FUZZ_SEED:-1}
out=_build-fuzz
mkdir -p "$out"

if ! command -v clang >/dev/null; then
    echo "fuzz: clang not found (Debian packages: clang, libclang-rt-14-dev)"
    exit 1
fi
[ -f _build/config.h ] || { echo "fuzz: run scripts/build.sh first"; exit 1; }

cflags="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
        -I$top/include -I$top -I$top/_build $(pkg-config --cflags liburcu-memb libpcap)"
libs="$(pkg-config --libs libcrypto liburcu-memb libpcap) -lpthread"
# The AF_XDP port, if _build found libxdp and libbpf, needs them too.
if grep -q '^#define HAVE_XDP 1' _build/config.h; then
    libs="$libs $(pkg-config --libs libxdp libbpf)"
fi
objs=()
for src in lib/*.c datapath/*.c; do
    extra=
    case $src in
        *-sse42.c) extra="-msse4.2 -mpclmul" ;;
        *-avx2.c) extra="-mavx2" ;;
    esac
    obj=$out/$(basename "${src%.c}").o
    # shellcheck disable=SC2086
    clang $cflags $extra -c "$src" -o "$obj" || exit 1
    objs+=("$obj")
done

status=0
for target in tests/fuzz/fuzz-*.c; do
    name=$(basename "${target%.c}")
    # shellcheck disable=SC2086
    if ! clang $cflags -fsanitize=fuzzer "$target" "${objs[@]}" $libs \
            -o "$out/$name"; then
        echo "fuzz: $name: FAILED (build)"
        status=1
        continue
    fi
    mkdir -p "$out/$name.corpus"
    if "$out/$name" -max_total_time="$seconds" -max_len=4096 -seed="$seed" \
            "$out/$name.corpus" "tests/fuzz/corpus/$name" \
            > "$out/$name.log" 2>&1; then
        runs=$(grep -o 'Done [0-9]* runs' "$out/$name.log" | tail -1)
        echo "fuzz: $name: ok (${runs#Done }, seed $seed)"
    else
        tail -30 "$out/$name.log"
        echo "fuzz: $name: FAILED"
        status=1
    fi
done
exit $status
