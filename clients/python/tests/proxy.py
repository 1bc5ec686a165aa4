"""A forwarding HTTP proxy that loses answers on purpose: the request reaches
the real server, which acts on it, but the client's connection is closed
before the answer is passed on. That is what a network failure after the
server's commit looks like to a client."""

from __future__ import annotations

import http.client
import socket
import threading


def _read_request(conn: socket.socket) -> tuple[bytes, bytes] | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        body += chunk
    return head, body


class LossyProxy:
    def __init__(self, upstream_port: int, lose_first: int = 1):
        self.upstream_port = upstream_port
        self.lose_left = lose_first
        self.lost_answers: list[bytes] = []  # bodies the client never saw
        self._lock = threading.Lock()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            request = _read_request(conn)
            if request is None:
                return
            head, body = request
            lines = head.split(b"\r\n")
            method, target, _ = lines[0].decode("latin-1").split(" ", 2)
            headers = {}
            for line in lines[1:]:
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() not in ("host", "connection", "content-length"):
                    headers[name] = value.strip()
            upstream = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=30)
            try:
                upstream.request(method, target, body=body, headers=headers)
                r = upstream.getresponse()
                answer = r.read()
                status, reason, answer_headers = r.status, r.reason, r.getheaders()
            finally:
                upstream.close()
            with self._lock:
                lose = self.lose_left > 0
                if lose:
                    self.lose_left -= 1
                    self.lost_answers.append(answer)
            if lose:
                return  # closed without a byte of the answer
            out = f"HTTP/1.1 {status} {reason}\r\n".encode("latin-1")
            for name, value in answer_headers:
                if name.lower() not in ("connection", "content-length", "transfer-encoding"):
                    out += f"{name}: {value}\r\n".encode("latin-1")
            out += f"Content-Length: {len(answer)}\r\nConnection: close\r\n\r\n".encode("latin-1")
            conn.sendall(out + answer)

    def close(self) -> None:
        self._sock.close()
