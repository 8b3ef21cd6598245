"""The proxy offline commands on the local backend are pointed at: it forwards to loopback
and refuses everything else.

The host's network cannot be taken away from a local command, so its proxy variables are what
keeps clients off other hosts. A proxy address where nothing listens would do that too, but it
also breaks loopback traffic for code that hands the proxies to its client itself (requests'
``Session.proxies = urllib.request.getproxies()``, a ``urllib3.ProxyManager``), which ignores
``NO_PROXY``: a test talking to a server on 127.0.0.1 would pass where the network is really
cut (Docker, or `prepare`'s own run) and fail here. This proxy forwards plain HTTP requests and
``CONNECT`` tunnels whose target is a loopback address or ``localhost`` (never resolving any
other name). Anything else is refused so that a client fails as it does without a network: a
tunnel with ``502 Network is unreachable`` (``Tunnel connection failed``, a ``ProxyError``), a
plain request by closing the connection unanswered (``RemoteDisconnected``); an HTTP error
response would reach the test as an ordinary response instead.
One proxy serves every sandbox of the process; it runs in a daemon thread.
"""

from __future__ import annotations

import ipaddress
import select
import socket
import socketserver
import threading
from urllib.parse import urlsplit

_LOCK = threading.Lock()
_SERVER: socketserver.ThreadingTCPServer | None = None
_HEAD_LIMIT = 65536
_DROPPED = (b"proxy-connection", b"connection", b"keep-alive", b"proxy-authorization")
# A tunnel elsewhere is refused in words clients put in their error ("Tunnel connection failed:
# 502 Network is unreachable"), which a test log's reader knows as the network's absence.
_UNREACHABLE = b"HTTP/1.1 502 Network is unreachable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (never resolves a name)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    sockets = [a, b]
    while True:
        readable, _, _ = select.select(sockets, [], [], 300)
        if not readable:
            return
        for source in readable:
            data = source.recv(65536)
            if not data:
                return
            (b if source is a else a).sendall(data)


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        client: socket.socket = self.request
        head = b""
        while b"\r\n\r\n" not in head and len(head) < _HEAD_LIMIT:
            chunk = client.recv(65536)
            if not chunk:
                return
            head += chunk
        header, _, rest = head.partition(b"\r\n\r\n")
        lines = header.split(b"\r\n")
        try:
            method, target, version = lines[0].decode("latin-1").split(" ", 2)
        except ValueError:
            return
        if method.upper() == "CONNECT":
            host, _, port = target.rpartition(":")
            if not is_loopback(host) or not port.isdigit():
                client.sendall(_UNREACHABLE)
                return
            with socket.create_connection((_address(host), int(port)), 30) as upstream:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
                _pipe(client, upstream)
            return
        url = urlsplit(target)
        if url.scheme != "http" or not url.hostname or not is_loopback(url.hostname):
            return
        path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        kept = [line for line in lines[1:]
                if line.split(b":", 1)[0].strip().lower() not in _DROPPED]
        request = b"\r\n".join([f"{method} {path} {version}".encode("latin-1"), *kept,
                                b"Connection: close", b"", b""]) + rest
        with socket.create_connection((_address(url.hostname), url.port or 80), 30) as upstream:
            upstream.sendall(request)
            _pipe(client, upstream)


def _address(host: str) -> str:
    host = host.strip("[]")
    return "127.0.0.1" if host.lower() == "localhost" or host.endswith(".localhost") else host


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A refused or dropped upstream connection ends that client's connection, quietly."""


def loopback_proxy() -> str:
    """The address of the process's loopback-only proxy (started on first use)."""
    global _SERVER
    with _LOCK:
        if _SERVER is None:
            server = _Server(("127.0.0.1", 0), _Handler)
            threading.Thread(target=server.serve_forever, name="loopback-proxy",
                             daemon=True).start()
            _SERVER = server
        return f"http://127.0.0.1:{_SERVER.server_address[1]}"
