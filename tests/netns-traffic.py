#!/usr/bin/env python3
"""Traffic for the namespace tests (tests/netns.at) and the demo.

Each subcommand runs inside one namespace (ip netns exec):

  tcp-server ADDR PORT OUT     accept one connection, write what it sends
                               to OUT, then close
  tcp-client ADDR PORT IN [SRC[:SPORT]]
                               connect (from address SRC and port SPORT if
                               given), send IN, half-close, wait for the
                               server to close
  tcp-servers ADDR PORT N OUT  accept N connections, one after the other:
                               write what the i-th sends to OUT-i.bin and
                               its peer's "ADDR PORT" as a line of
                               OUT.peers
  tcp-blocked ADDR PORT SECS   try to connect for SECS seconds; succeed
                               only if no connection was made (a firewall
                               dropped the SYNs)
  udp-echo-server ADDR PORT N  answer N datagrams with their own bytes
  udp-echo-client ADDR PORT N  send N datagrams, check each answer
  udp-burst ADDR PORT N SIZE   send N datagrams of SIZE payload bytes,
                               expecting no answer (a closed port)
  sum-flows FILE FIELD=VALUE   from a dump-flows output, the sum of
                               n_packets of the flows whose match has
                               FIELD=VALUE (e.g. in_port=1)
  flow-stats FILE COOKIE [packets]
                               from a dump-flows output, "n_packets=N,
                               n_bytes=M" of the flow with COOKIE (or N)
  port-counter FILE PORT WHAT  from a "show" output, the counter WHAT
                               (rx_pkts, rx_bytes, rx_drop, tx_pkts,
                               tx_bytes, tx_drop) of PORT

Every socket has a timeout, so a broken datapath fails the test instead
of hanging it.
"""
import re
import socket
import sys
import time

TIMEOUT = 20.0


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def tcp_server(addr, port, out):
    s = socket.socket(family(addr), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, int(port)))
    s.listen(1)
    s.settimeout(TIMEOUT)
    conn, _ = s.accept()
    conn.settimeout(TIMEOUT)
    with open(out, "wb") as f:
        while True:
            data = conn.recv(65536)
            if not data:
                break
            f.write(data)
    conn.close()


def tcp_servers(addr, port, n, out):
    s = socket.socket(family(addr), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, int(port)))
    s.listen(int(n))
    s.settimeout(TIMEOUT)
    with open(out + ".peers", "w") as peers:
        for i in range(int(n)):
            conn, peer = s.accept()
            conn.settimeout(TIMEOUT)
            peers.write("%s %d\n" % (peer[0], peer[1]))
            peers.flush()
            with open("%s-%d.bin" % (out, i), "wb") as f:
                while True:
                    data = conn.recv(65536)
                    if not data:
                        break
                    f.write(data)
            conn.close()


def tcp_client(addr, port, path, src=None):
    # The server may still be starting in the other namespace.
    deadline = time.time() + TIMEOUT
    while True:
        try:
            s = socket.socket(family(addr), socket.SOCK_STREAM)
            s.settimeout(TIMEOUT)
            if src:
                host, _, sport = src.rpartition(":") if src.count(":") == 1 \
                    else (src, "", "0")
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((host, int(sport or 0)))
            s.connect((addr, int(port)))
            break
        except ConnectionRefusedError:
            s.close()
            if time.time() > deadline:
                raise
            time.sleep(0.1)
    with open(path, "rb") as f:
        s.sendall(f.read())
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
    s.close()


def tcp_blocked(addr, port, secs):
    s = socket.socket(family(addr), socket.SOCK_STREAM)
    s.settimeout(float(secs))
    try:
        s.connect((addr, int(port)))
    except (socket.timeout, OSError) as e:
        if isinstance(e, ConnectionRefusedError):
            sys.exit("tcp-blocked: refused: the SYN reached the other side")
        print("tcp-blocked: no connection in %s s" % secs)
        return
    sys.exit("tcp-blocked: connected to %s port %s" % (addr, port))


def udp_echo_server(addr, port, n):
    s = socket.socket(family(addr), socket.SOCK_DGRAM)
    s.bind((addr, int(port)))
    s.settimeout(TIMEOUT)
    for _ in range(int(n)):
        data, peer = s.recvfrom(65536)
        s.sendto(data, peer)


def udp_echo_client(addr, port, n):
    s = socket.socket(family(addr), socket.SOCK_DGRAM)
    s.settimeout(1.0)
    for i in range(int(n)):
        msg = ("datagram %d" % i).encode()
        for attempt in range(int(TIMEOUT)):
            s.sendto(msg, (addr, int(port)))
            try:
                data, _ = s.recvfrom(65536)
                break
            except socket.timeout:
                continue
        else:
            sys.exit("udp-echo-client: no answer to datagram %d" % i)
        if data != msg:
            sys.exit("udp-echo-client: datagram %d came back as %r" % (i, data))
    print("udp echo: %s datagrams answered" % n)


def udp_burst(addr, port, n, size):
    s = socket.socket(family(addr), socket.SOCK_DGRAM)
    payload = bytes(range(256)) * (int(size) // 256 + 1)
    for i in range(int(n)):
        s.sendto(payload[:int(size)], (addr, int(port)))
        # Paced, so that no queue on the way overflows: the count must be
        # exact.
        time.sleep(0.002)


def sum_flows(path, cond):
    total = 0
    for line in open(path):
        m = re.search(r"n_packets=(\d+)", line)
        if not m:
            continue
        match = line.split("idle_age=")[-1]
        fields = re.split(r"[ ,]", match)
        if cond in fields:
            total += int(m.group(1))
    print(total)


def flow_stats(path, cookie, what=None):
    for line in open(path):
        if line.strip().startswith("cookie=%s," % cookie):
            p = re.search(r"n_packets=(\d+)", line).group(1)
            b = re.search(r"n_bytes=(\d+)", line).group(1)
            print(p if what == "packets" else "n_packets=%s, n_bytes=%s" % (p, b))
            return
    sys.exit("flow-stats: no flow with cookie %s in %s" % (cookie, path))


def port_counter(path, port, what):
    direction, kind = what.split("_")
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        if re.match(r"\s*port\s+%s:" % re.escape(port), line):
            for follow in lines[i + 1:i + 3]:
                m = re.match(r"\s*%s pkts=(\d+), bytes=(\d+), drop=(\d+)"
                             % direction, follow)
                if m:
                    print(m.group({"pkts": 1, "bytes": 2, "drop": 3}[kind]))
                    return
    sys.exit("port-counter: no %s for port %s in %s" % (what, port, path))


COMMANDS = {
    "tcp-server": tcp_server,
    "tcp-client": tcp_client,
    "tcp-servers": tcp_servers,
    "tcp-blocked": tcp_blocked,
    "udp-echo-server": udp_echo_server,
    "udp-echo-client": udp_echo_client,
    "udp-burst": udp_burst,
    "sum-flows": sum_flows,
    "flow-stats": flow_stats,
    "port-counter": port_counter,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](*sys.argv[2:])
