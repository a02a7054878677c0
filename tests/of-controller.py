#!/usr/bin/env python3
"""A minimal OpenFlow controller for flowdpd's tests (tests/openflow.at).

usage: of-controller.py PORTFILE LOG [PORT]

Listens on 127.0.0.1:PORT (0: any free port, written to PORTFILE once
listening), accepts one connection from the switch, and logs to LOG, one
line each: "hello V" (the switch's hello), "features DPID" (the reply to
a features request it sends), "echo" (once it answered an echo request
from the switch, its inactivity probe); then it closes and exits.  It
exits 1 if nothing connects within 20 s.
"""
import socket
import struct
import sys


def recv_msg(s, buf):
    while True:
        if len(buf[0]) >= 8:
            length = struct.unpack('!H', buf[0][2:4])[0]
            if len(buf[0]) >= length >= 8:
                msg, buf[0] = buf[0][:length], buf[0][length:]
                return msg
        data = s.recv(65536)
        if not data:
            return None
        buf[0] += data


def main():
    portfile, logname = sys.argv[1], sys.argv[2]
    port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('127.0.0.1', port))
    ls.listen(1)
    ls.settimeout(20)
    with open(portfile + '.tmp', 'w') as f:
        f.write('%d\n' % ls.getsockname()[1])
    import os
    os.rename(portfile + '.tmp', portfile)
    log = open(logname, 'a')
    try:
        s, _ = ls.accept()
    except socket.timeout:
        sys.exit(1)
    s.settimeout(20)
    s.sendall(struct.pack('!BBHIHHI', 4, 0, 16, 1, 1, 8, 1 << 4))
    buf = [b'']
    msg = recv_msg(s, buf)
    log.write('hello %d\n' % msg[0])
    s.sendall(struct.pack('!BBHI', 4, 5, 8, 7))
    echoed = featured = False
    while not (echoed and featured):
        msg = recv_msg(s, buf)
        if msg is None:
            log.write('closed\n')
            break
        if msg[1] == 6:
            log.write('features %016x\n' % struct.unpack('!Q', msg[8:16])[0])
            featured = True
        elif msg[1] == 2:
            s.sendall(bytes([msg[0], 3]) + msg[2:])
            log.write('echo\n')
            echoed = True
        log.flush()
    log.close()
    s.close()


main()
