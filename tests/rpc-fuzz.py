#!/usr/bin/env python3
"""Black-box fuzzing of flowdpd's control channel (tests/daemon.at).

  rpc-fuzz.py SOCKET SEED COUNT

Sends COUNT requests derived from valid ones for every method, each
mutated at random (seeded: a failure replays): values replaced by other
JSON types, huge or negative numbers, strings of random bytes, flow texts
with characters changed, keys dropped, and serialized lines cut short or
with bytes flipped.  Requests go over a few connections, some closed
mid-stream.  Prints how many requests were sent and replies received;
whether the daemon survived is for the caller to check.
"""

import json
import random
import socket
import sys

FLOWS = [
    "priority=100,tcp,nw_src=10.0.0.0/8,tp_dst=80,actions=output:2",
    "cookie=0x5,udp,tp_dst=1000-2000,actions=mod_nw_tos:8,dec_ttl,output:3",
    "ipv6,ipv6_src=2001:db8::1-2001:db8::ff,actions=drop",
    "arp,arp_op=1,actions=set_field:2->arp_op,in_port",
    "idle_timeout=5,icmp,actions=controller,output:1",
]

BASE = [
    ("add-flows", {"flows": FLOWS[:2]}),
    ("add-flows", {"flows": FLOWS}),
    ("mod-flows", {"flow": "tcp,actions=output:9", "strict": False}),
    ("mod-flows", {"flow": FLOWS[0], "strict": True}),
    ("del-flows", {"match": "udp", "strict": False}),
    ("del-flows", {"match": "cookie=0x5/-1", "strict": False}),
    ("replace-flows", {"flows": FLOWS[1:4]}),
    ("dump-flows", {"match": "ip", "strict": False}),
    ("dump-tables", {}),
    ("show", {}),
    ("add-port", {"port": 7, "spec": "ring:size=64"}),
    ("del-port", {"port": 7}),
    ("trace", {"packet": "tcp,nw_src=10.1.1.1,tp_dst=80"}),
]


def random_value(rng):
    return rng.choice([
        None, True, False, 0, -1, 2 ** 63, -2 ** 63, 1.5e308, 65280, 65536,
        "", "x" * rng.randint(1, 3000), [], [1, "a", None], {}, {"a": []},
        "".join(chr(rng.randint(1, 0xFFFF)) for _ in range(rng.randint(1, 40))),
        "ring", "pcap:rx=/nonexistent", "pcap:tx=/dev/null,loop=0",
        rng.choice(FLOWS) + ",", "actions=" * rng.randint(1, 20),
    ])


def mutate_text(rng, text):
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(chars) + 1)
        op = rng.randint(0, 2)
        c = rng.choice(",=/-:.>0123456789abcdefxyz_ \t\\\"'@!")
        if op == 0 and chars:
            chars[min(i, len(chars) - 1)] = c
        elif op == 1:
            chars.insert(i, c)
        elif chars:
            del chars[min(i, len(chars) - 1)]
    return "".join(chars)


def mutate(rng, method, params):
    params = json.loads(json.dumps(params))
    kind = rng.randint(0, 5)
    if kind == 0 and params:
        params[rng.choice(list(params))] = random_value(rng)
    elif kind == 1 and params:
        del params[rng.choice(list(params))]
    elif kind == 2:
        for key, value in params.items():
            if isinstance(value, str):
                params[key] = mutate_text(rng, value)
            elif isinstance(value, list):
                params[key] = [mutate_text(rng, v) if isinstance(v, str)
                               else v for v in value]
    elif kind == 3:
        params[rng.choice(["op", "flows", "extra", "strict"])] = \
            random_value(rng)
    elif kind == 4:
        method = rng.choice([method, method.upper(), "", "x" * 100])
    req = {"jsonrpc": "2.0", "id": rng.randint(0, 2 ** 31), "method": method,
           "params": params if rng.random() < 0.95 else random_value(rng)}
    line = json.dumps(req).encode()
    if kind == 5:
        b = bytearray(line)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randint(0, 255)
        line = bytes(b).replace(b"\n", b" ")
    return line + b"\n"


def main():
    path, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    sent = replies = 0
    while sent < count:
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        s.settimeout(30)
        batch = rng.randint(1, 200)
        out = b"".join(mutate(rng, *rng.choice(BASE))
                       for _ in range(min(batch, count - sent)))
        sent += min(batch, count - sent)
        if rng.random() < 0.1:
            out = out[:rng.randrange(len(out))]     # Hang up mid-request.
        try:
            s.sendall(out)
            s.shutdown(socket.SHUT_WR)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            replies += data.count(b"\n")
        except (ConnectionResetError, BrokenPipeError):
            pass
        s.close()
    print("rpc-fuzz: seed %d: %d requests sent, %d replies" %
          (seed, sent, replies))


if __name__ == "__main__":
    main()
