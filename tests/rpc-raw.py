#!/usr/bin/env python3
"""Talks raw bytes to flowdpd's control socket, for tests of its input
checks.

  rpc-raw.py SOCKET                send stdin, print each reply line
  rpc-raw.py SOCKET --big N        send one N-byte line (a JSON string that
                                   never ends), print what comes back
  rpc-raw.py SOCKET --half         send half a request and hang up
  rpc-raw.py SOCKET --tls CA [CERT KEY] [--port P]
                                   TLS on 127.0.0.1:P (SOCKET unused);
                                   prints the reply to one request or
                                   "refused: REASON"
"""

import json
import socket
import ssl
import sys


def read_all(sock):
    out = b""
    sock.settimeout(10)
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            out += chunk
    except (ConnectionResetError, BrokenPipeError):
        pass
    return out.decode("utf-8", "replace")


def main():
    args = sys.argv[1:]
    if len(args) >= 3 and args[1] == "--tls":
        port = int(args[args.index("--port") + 1])
        ctx = ssl.create_default_context(cafile=args[2])
        ctx.check_hostname = False
        if len(args) >= 5 and args[3] != "--port":
            ctx.load_cert_chain(args[3], args[4])
        try:
            raw = socket.create_connection(("127.0.0.1", port), timeout=10)
            s = ctx.wrap_socket(raw)
            s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"dump-tables"}\n')
            reply = s.recv(65536)
            if not reply:
                print("refused: connection closed")
            else:
                print("ok" if json.loads(reply).get("result") else reply)
        except (ssl.SSLError, OSError) as e:
            print("refused: %s" % type(e).__name__)
        return 0

    s = socket.socket(socket.AF_UNIX)
    s.connect(args[0])
    if len(args) == 3 and args[1] == "--big":
        line = b'{"jsonrpc":"2.0","id":1,"method":"x","params":"' \
            + b"a" * int(args[2]) + b'"}\n'
        try:
            s.sendall(line)
        except (ConnectionResetError, BrokenPipeError):
            pass
    elif len(args) == 2 and args[1] == "--half":
        s.sendall(b'{"jsonrpc":"2.0","id":1,"meth')
        s.close()
        return 0
    else:
        s.sendall(sys.stdin.buffer.read())
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    sys.stdout.write(read_all(s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
