#!/bin/sh
# Configures and builds flowdp out of tree in DIR (default _build) with the
# configure options given after it.  Runs ./bootstrap first if needed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-_build}
[ $# -gt 0 ] && shift
cd "$top"
[ -x configure ] || ./bootstrap
mkdir -p "$dir"
cd "$dir"
if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ]; then
    "$top/configure" "$@"
fi
make -j"$(nproc)"
