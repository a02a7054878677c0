#!/usr/bin/env python3
"""A raw OpenFlow client for flowdpd's tests (tests/openflow.at).

usage: of-raw.py TARGET [--version V] [--hello HEX] [--expect-close] MSG...

TARGET is unix:PATH or tcp:HOST:PORT.  The client sends a hello of version
V (default 4, OpenFlow 1.3; with a version bitmap of just V), or the raw
message HEX instead, and reads the switch's hello (printed as "hello
VERSION").  Then, for each MSG (hex, spaces allowed), it sends MSG and an
echo request (xid 0xeeeeeeee) and prints, one line each in hex, every
message that comes back before the echo reply (which is not printed).  A
connection the switch closes prints "closed" and ends the run.  Each line
can be decoded with "ovs-ofctl ofp-print HEX".
"""
import socket
import struct
import sys

ECHO_XID = 0xeeeeeeee


def connect(target):
    if target.startswith('unix:'):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(target[5:])
    elif target.startswith('tcp:'):
        host, port = target[4:].rsplit(':', 1)
        s = socket.create_connection((host, int(port)))
    else:
        sys.exit('of-raw.py: bad target %s' % target)
    s.settimeout(10)
    return s


def recv_msg(s, buf):
    """One whole message from 's' (None at EOF), with 'buf' the bytes
    already read (a one-element list)."""
    while True:
        if len(buf[0]) >= 8:
            length = struct.unpack('!H', buf[0][2:4])[0]
            if length >= 8 and len(buf[0]) >= length:
                msg, buf[0] = buf[0][:length], buf[0][length:]
                return msg
        try:
            data = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            data = b''
        if not data:
            return None
        buf[0] += data


def main():
    args = sys.argv[1:]
    version, hello = 4, None
    target = args.pop(0)
    msgs = []
    while args:
        a = args.pop(0)
        if a == '--version':
            version = int(args.pop(0))
        elif a == '--hello':
            hello = bytes.fromhex(args.pop(0).replace(' ', ''))
        else:
            msgs.append(bytes.fromhex(a.replace(' ', '')))
    s = connect(target)
    if hello is None:
        hello = struct.pack('!BBHIHHI', version, 0, 16, 1, 1, 8,
                            1 << version)
    s.sendall(hello)
    buf = [b'']
    msg = recv_msg(s, buf)
    if msg is None:
        print('closed')
        return
    print('hello %d' % msg[0])
    sys.stdout.flush()
    for m in msgs:
        try:
            s.sendall(m + struct.pack('!BBHI', version, 2, 8, ECHO_XID))
        except (BrokenPipeError, ConnectionResetError):
            # The switch closed first: print what it sent before.
            pass
        while True:
            r = recv_msg(s, buf)
            if r is None:
                print('closed')
                return
            if r[1] == 3 and struct.unpack('!I', r[4:8])[0] == ECHO_XID:
                break
            print(r.hex())
            sys.stdout.flush()


main()
