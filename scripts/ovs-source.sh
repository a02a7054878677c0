#!/bin/sh
# Prepares an Open vSwitch 3.1 source tree in DIR for flowdp-bench's peer-ovs
# suite (configure --with-ovs-source=DIR): Debian's openvswitch-source
# package (a tarball under /usr/src/openvswitch/), unpacked into DIR,
# configured and built in place, as docs/PERFORMANCE.md says the peer
# figures were measured.  Only the static library is built (make
# lib/libopenvswitch.la), not the daemons.
#
# Usage: scripts/ovs-source.sh DIR
#
# Installs openvswitch-source with apt-get when it is missing (as root;
# otherwise says so and stops).  Runs again harmlessly: a DIR already
# unpacked is configured and built only where it is not yet.
#
# --disable-ssl and --disable-libcapng: the benchmark needs neither, and
# without them the tree does not need libssl's or libcap-ng's development
# files; flowdp's configure links peer-ovs with whatever the tree's
# libtool archive records.
set -eu

if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 DIR (where to unpack, configure and build Open vSwitch 3.1)" >&2
    exit 2
fi
dir=$1
src=/usr/src/openvswitch

if ! dpkg-query -W -f='${Status}' openvswitch-source 2>/dev/null \
     | grep -q 'install ok installed'; then
    if [ "$(id -u)" != 0 ]; then
        echo "ovs-source.sh: openvswitch-source is not installed; run as root, or apt-get install openvswitch-source" >&2
        exit 1
    fi
    echo "ovs-source.sh: installing openvswitch-source"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends openvswitch-source >/dev/null
fi

# Exactly one 3.1 tarball is expected; anything else is named, not guessed.
set -- "$src"/openvswitch*.tar.*
if [ $# -ne 1 ] || [ ! -f "$1" ]; then
    echo "ovs-source.sh: expected one openvswitch tarball in $src, found: $*" >&2
    exit 1
fi
tarball=$1

mkdir -p "$dir"
if [ ! -f "$dir/configure.ac" ]; then
    echo "ovs-source.sh: unpacking $tarball into $dir"
    tar -xf "$tarball" -C "$dir" --strip-components=1
fi
cd "$dir"
version=$(sed -n 's/^AC_INIT(openvswitch, *\([^,)]*\).*/\1/p' configure.ac)
case $version in
    3.1.*) ;;
    *) echo "ovs-source.sh: $dir holds Open vSwitch '$version'; peer-ovs needs 3.1" >&2
       exit 1 ;;
esac
if [ ! -x configure ]; then
    ./boot.sh
fi
if [ ! -f config.h ]; then
    ./configure --disable-ssl --disable-libcapng
fi
jobs=$(nproc)
[ "$jobs" -gt 2 ] && jobs=2
# "make lib/libopenvswitch.la" alone does not make the generated headers
# (the tree's BUILT_SOURCES: include/odp-netlink.h, the IDL files...),
# which "make all" makes first; ask make for their names and make them.
built=$(printf 'print-built-sources:\n\t@echo $(BUILT_SOURCES)\n' \
        | make -s -f Makefile -f - print-built-sources)
# shellcheck disable=SC2086
make -j"$jobs" $built
make -j"$jobs" lib/libopenvswitch.la
echo "ovs-source.sh: Open vSwitch $version built in $dir; configure flowdp with --with-ovs-source=$(pwd)"
