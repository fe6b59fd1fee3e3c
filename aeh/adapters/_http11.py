"""HTTP/1.1 keep-alive connections to one origin, on asyncio streams, for the chat client.

httpx's own stack (client, httpcore's pool, anyio, h11) costs about 1 ms of CPU a request here,
and its pool visits every connection (polling the idle ones) whenever a request starts or ends,
so a pool of 64 busy connections costs several ms a request (`benchmarks/http_concurrency.py`).
This pool keeps idle connections on a stack: taking one and giving it back is O(1) at any
number in flight, and a connection the server closed is known from its EOF, not from a poll.

A streamed reply (`request(..., sink=...)`, a 2xx `text/event-stream` body) is handed to the sink
piece by piece as it arrives instead of being kept: the caller reads the events while the
server is still generating.

Failures are raised as httpx's exceptions (`ConnectError`, `ReadTimeout`, `RemoteProtocolError`
…), each chained to the OS error beneath, as httpx would raise them. Cancelling a request (an
attempt's budget running out) aborts its connection, so the server sees the client go away.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import httpx

__all__ = ["Http11Pool", "RawResponse"]

#: An idle connection older than this is closed, not reused (httpcore's keep-alive expiry):
#: servers drop idle connections after a few seconds, and reusing one they just closed fails.
KEEPALIVE_EXPIRY_S = 5.0
#: Idle connections kept at most (the openai SDK's pool allows 1000 connections).
MAX_IDLE = 1000
_HEAD_LIMIT = 1 << 20  # a reply's status line and headers: 1 MiB at most
#: Takes a streamed body's bytes as they arrive (it may raise: the request then fails with it).
Sink = Callable[[bytes], None]


@dataclass(frozen=True, slots=True)
class RawResponse:
    """A reply as read off the wire: status, headers (lower-cased names) and the decoded body."""

    status: int
    headers: dict[str, str]
    body: bytes
    streamed: bool = False
    """The body went to the request's sink as it arrived (`body` is then empty)."""


class _Connection:
    __slots__ = ("reader", "writer", "idle_since")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.idle_since = 0.0

    def reusable(self, now: float) -> bool:
        return (not self.reader.at_eof() and not self.writer.is_closing()
                and now - self.idle_since < KEEPALIVE_EXPIRY_S)

    def abort(self) -> None:
        self.writer.transport.abort()


class _Stale(Exception):
    """A reused connection the server had closed before reading the request."""


class Http11Pool:
    """Keep-alive HTTP/1.1 connections to `url`'s origin (http or https)."""

    def __init__(self, url: httpx.URL, timeout: httpx.Timeout, ssl_context: ssl.SSLContext | None) -> None:
        self.host = url.host
        self.port = url.port or (443 if url.scheme == "https" else 80)
        self.ssl = (ssl_context or httpx.create_ssl_context()) if url.scheme == "https" else None
        self.timeout = timeout
        self._idle: list[_Connection] = []
        self._busy: set[_Connection] = set()
        self.closed = False
        self.opened = 0
        """Connections opened so far (a figure for tests and benchmarks)."""

    async def request(self, head: bytes, body: bytes, *, sink: Sink | None = None) -> RawResponse:
        """Send `head` (request line and headers, ending in a blank line) and `body`; read the reply.

        With `sink`, a 2xx `text/event-stream` body (not content-encoded) goes to `sink` as it
        arrives, and the returned body is empty; any other reply is read and returned whole.
        """
        if self.closed:
            raise RuntimeError("the HTTP connection pool is closed")
        conn = self._take()
        if conn is not None:
            try:
                return await self._exchange(conn, head, body, reused=True, sink=sink)
            except _Stale:
                pass  # the server had closed it: one more try on a fresh connection
        conn = await self._connect()
        try:
            return await self._exchange(conn, head, body, reused=False, sink=sink)
        except _Stale as exc:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.") from exc.__cause__

    def _take(self) -> _Connection | None:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if conn.reusable(now):
                return conn
            conn.abort()
        return None

    def _give_back(self, conn: _Connection) -> None:
        self._busy.discard(conn)
        if self.closed or len(self._idle) >= MAX_IDLE:
            conn.abort()
            return
        conn.idle_since = time.monotonic()
        self._idle.append(conn)

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.timeout.connect):
                infos = await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
                error: OSError | None = None
                for family, _, _, _, address in infos:
                    try:
                        reader, writer = await asyncio.open_connection(
                            str(address[0]), int(address[1]), family=family, ssl=self.ssl, limit=_HEAD_LIMIT,
                            server_hostname=self.host if self.ssl is not None else None)
                        break
                    except OSError as exc:  # the next address (IPv6, then IPv4, …)
                        error = exc
                else:
                    raise error or OSError(f"no address for {self.host}")
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"connecting to {self.host}:{self.port} timed out") from exc
        except OSError as exc:
            raise httpx.ConnectError(str(exc)) from exc
        self.opened += 1
        return _Connection(reader, writer)

    async def _exchange(self, conn: _Connection, head: bytes, body: bytes, *, reused: bool,
                        sink: Sink | None) -> RawResponse:
        self._busy.add(conn)
        try:
            response, keep = await self._send_and_read(conn, head, body, reused, sink)
        except BaseException:
            self._busy.discard(conn)
            conn.abort()  # cancelled or failed mid-request: the server sees the client leave
            raise
        if keep:
            self._give_back(conn)
        else:
            self._busy.discard(conn)
            conn.abort()
        return response

    async def _send_and_read(self, conn: _Connection, head: bytes, body: bytes,
                             reused: bool, sink: Sink | None) -> tuple[RawResponse, bool]:
        try:
            conn.writer.write(head + body)
            async with asyncio.timeout(self.timeout.write):
                await conn.writer.drain()
        except TimeoutError as exc:
            raise httpx.WriteTimeout("writing the request timed out") from exc
        except OSError as exc:
            if reused:
                raise _Stale() from exc
            raise httpx.WriteError(str(exc)) from exc
        try:
            async with asyncio.timeout(self.timeout.read):
                raw_head = await conn.reader.readuntil(b"\r\n\r\n")
        except TimeoutError as exc:
            raise httpx.ReadTimeout("reading the response timed out") from exc
        except asyncio.IncompleteReadError as exc:
            if reused and not exc.partial:
                raise _Stale() from exc
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.") from exc
        except asyncio.LimitOverrunError as exc:
            raise httpx.RemoteProtocolError("response headers too long") from exc
        except OSError as exc:
            if reused:
                raise _Stale() from exc
            raise httpx.ReadError(str(exc)) from exc
        status, headers, keep = _parse_head(raw_head)
        streamed = (sink is not None and 200 <= status < 300 and not headers.get("content-encoding")
                    and headers.get("content-type", "").lower().startswith("text/event-stream"))
        data = await self._read_body(conn.reader, headers, status, sink if streamed else None)
        if "content-length" not in headers and "transfer-encoding" not in headers and status >= 200 \
                and status not in (204, 304):
            keep = False  # the body ran to the end of the connection
        return RawResponse(status, headers, _decode(data, headers.get("content-encoding")), streamed), keep

    async def _read_body(self, reader: asyncio.StreamReader, headers: dict[str, str], status: int,
                         sink: Sink | None = None) -> bytes:
        """The body (whole), or b"" after handing it to `sink` piece by piece."""
        if status in (204, 304) or 100 <= status < 200:
            return b""
        try:
            async with asyncio.timeout(self.timeout.read):
                if "chunked" in headers.get("transfer-encoding", "").lower():
                    return await _read_chunked(reader, sink)
                length = headers.get("content-length")
                if sink is not None:
                    await _read_to_sink(reader, int(length) if length is not None else None, sink)
                    return b""
                if length is not None:
                    return await reader.readexactly(int(length))
                return await reader.read()
        except TimeoutError as exc:
            raise httpx.ReadTimeout("reading the response timed out") from exc
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            raise httpx.RemoteProtocolError(f"malformed or truncated response body: {exc}") from exc
        except OSError as exc:
            raise httpx.ReadError(str(exc)) from exc

    async def aclose(self) -> None:
        """Close every connection (in-flight ones too)."""
        self.closed = True
        conns, self._idle = [*self._idle, *self._busy], []
        self._busy.clear()
        for conn in conns:
            conn.abort()
        await asyncio.sleep(0)  # let the transports run their close callbacks


def _parse_head(raw: bytes) -> tuple[int, dict[str, str], bool]:
    """(status, headers, keep-alive) from the status line and header lines."""
    try:
        lines = raw[:-4].decode("latin-1").split("\r\n")
        version, code = lines[0].split(" ", 2)[:2]
        status = int(code)
    except (ValueError, IndexError) as exc:
        raise httpx.RemoteProtocolError(f"malformed status line: {raw[:80]!r}") from exc
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise httpx.RemoteProtocolError(f"malformed header line: {line[:80]!r}")
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    connection = headers.get("connection", "").lower()
    keep = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)
    return status, headers, keep


async def _read_chunked(reader: asyncio.StreamReader, sink: Sink | None = None) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip(), 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass  # trailers
            return b"".join(parts)
        piece = (await reader.readexactly(size + 2))[:-2]
        if sink is not None:
            sink(piece)
        else:
            parts.append(piece)


async def _read_to_sink(reader: asyncio.StreamReader, length: int | None, sink: Sink) -> None:
    """`length` bytes (None: to the end of the connection) to `sink`, as they arrive."""
    left = length
    while left is None or left > 0:
        piece = await reader.read(65536 if left is None else min(65536, left))
        if not piece:
            if left is not None:
                raise asyncio.IncompleteReadError(b"", left)
            return
        sink(piece)
        if left is not None:
            left -= len(piece)


def _decode(data: bytes, encoding: str | None) -> bytes:
    """The body without its content-encoding (gzip and deflate are the ones the client accepts)."""
    if not encoding or encoding.lower() == "identity" or not data:
        return data
    try:
        for coding in reversed([c.strip().lower() for c in encoding.split(",")]):
            if coding == "gzip":
                data = zlib.decompress(data, zlib.MAX_WBITS | 16)
            elif coding == "deflate":
                with contextlib.suppress(zlib.error):
                    data = zlib.decompress(data)
                    continue
                data = zlib.decompress(data, -zlib.MAX_WBITS)
            elif coding != "identity":
                raise httpx.DecodingError(f"unsupported content-encoding {coding!r}")
    except zlib.error as exc:
        raise httpx.DecodingError(f"cannot decode a {encoding} body: {exc}") from exc
    return data
