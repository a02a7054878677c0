#!/bin/sh
# Installs everything flowdp needs to build, test and run on Debian 12, as
# root, from Debian's own packages.  Does nothing when all are present.
set -eu

# python3 and openvswitch-common (ovs-ofctl) run the flow-syntax tests, which
# compare flowdp-ctl's output with ovs-ofctl's; clang and libclang-rt-14-dev
# build the libFuzzer targets; tcpdump double-checks the checksums of the
# packets the datapath tests write.  libxdp-dev and libbpf-dev build the
# AF_XDP ports (configure builds them when it finds both); iproute2,
# ethtool and iputils-ping run the namespace tests (tests/netns.at) and the
# demo's live section: veth pairs, offloads off, ping and ping -6;
# libbpf-dev also loads the XDP programs of flowdp-bench's veth cases.
# openvswitch-switch (ovsdb-server, ovs-vswitchd, ovs-vsctl) is the live
# peer of tests/ovs-diff.at: the same commands against ovs-vswitchd with
# the dummy datapath (no kernel module, no root) and against flowdpd.
# Optional, not installed here: openvswitch-source, the Open vSwitch 3.1
# tree flowdp-bench's peer-ovs suite and the Open vSwitch rows of its ct
# suite are built against (configure --with-ovs-source=DIR); run
# scripts/ovs-source.sh DIR, which installs it, unpacks, configures and
# builds it in DIR.
# openvswitch-testcontroller (ovs-testcontroller) and python3-os-ken
# (osken-manager) are the two real OpenFlow controllers of
# tests/openflow-controllers.at: the first makes flowdpd a learning switch
# for traffic between namespaces, the second is the Ryu-lineage SDN
# framework whose applications install flows and answer packet-ins.
# libsystemd-dev: "make distcheck" links a program with pkg-config --static
# flowdp (tests/automake.mk), and libpcap's static dependencies (libdbus-1)
# name -lsystemd, which only the -dev package provides.
PACKAGES="gcc make autoconf automake libtool pkg-config
          check libssl-dev liburcu-dev libpcap-dev libjansson-dev libsystemd-dev
          libxdp-dev libbpf-dev
          python3 openvswitch-common openvswitch-switch
          clang libclang-rt-14-dev tcpdump
          iproute2 ethtool iputils-ping
          openvswitch-testcontroller python3-os-ken"

missing=
for pkg in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null \
         | grep -q 'install ok installed'; then
        missing="$missing $pkg"
    fi
done
if [ -z "$missing" ]; then
    exit 0
fi

if [ "$(id -u)" != 0 ]; then
    echo "install-deps.sh: missing packages:$missing; run as root to install them" >&2
    exit 1
fi
echo "install-deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
