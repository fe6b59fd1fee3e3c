"""The OTLP/HTTP trace receiver: `POST /v1/traces` (JSON or protobuf, gzip or not) and `POST /v1/stop`.

It only speaks the protocol: it decodes and checks a request body, hands the document to a
`TraceIntake`, and answers as the OTLP/HTTP specification says — 200 with a partial-success
body, 400 with a `Status` naming the problem, 429 with `Retry-After` when the intake is full.
The standard library's `ThreadingHTTPServer` serves it; what the traces become is the intake's job.
"""

from __future__ import annotations

import json
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from aeh._util.files import InputJsonError, max_input_bytes
from aeh.errors import ValidationError
from aeh.importers._otel import _from_protobuf, _json_stream
from aeh.importers._otel_shape import otlp_problems

__all__ = ["IntakeFull", "OtlpReceiver", "TraceIntake"]

_JSON, _PROTOBUF = "application/json", "application/x-protobuf"
_RETRY_AFTER_S = 1


class IntakeFull(Exception):
    """The intake's queue is full: the client should retry later (429 with Retry-After)."""


class BadRequest(Exception):
    """A request the receiver refuses, with the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class TraceIntake(Protocol):
    """Where checked OTLP documents go."""

    def accept(self, document: dict[str, Any]) -> tuple[int, str]:
        """Take a document; returns (spans rejected, why) for the partial-success answer.
        Raises IntakeFull to push back, ValidationError for a document it cannot read."""

    def request_stop(self) -> None:
        """`POST /v1/stop`: finish the run."""


def _gunzip(body: bytes, limit: int) -> bytes:
    """Decompress at most `limit` bytes: a small gzip body must not unpack into gigabytes."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise BadRequest(f"Content-Encoding is gzip but the body does not decompress: {exc}") from None
    if len(out) > limit:
        raise BadRequest(f"the decompressed body is over {limit} bytes", status=413)
    return out


def decode_body(body: bytes, content_type: str, encoding: str) -> dict[str, Any]:
    """The OTLP document a request body holds, checked; raises BadRequest naming what is wrong."""
    encoding = encoding.strip().lower()
    if encoding == "gzip":
        body = _gunzip(body, max_input_bytes())
    elif encoding not in ("", "identity"):
        raise BadRequest(f"Content-Encoding {encoding!r} is not supported (send gzip or none)", status=415)
    kind = content_type.split(";")[0].strip().lower()
    if kind == _PROTOBUF:
        if not body:
            return {"resourceSpans": []}  # an empty ExportTraceServiceRequest encodes as no bytes
        try:
            document: Any = _from_protobuf(Path("request body"), body)
        except ValidationError as exc:
            raise BadRequest("; ".join(p.message for p in exc.problems)) from None
    elif kind == _JSON:
        try:
            document = _json_stream(body.decode("utf-8"))
        except UnicodeDecodeError:
            raise BadRequest("the JSON body is not UTF-8") from None
        except (json.JSONDecodeError, InputJsonError) as exc:
            raise BadRequest(f"the body is not valid JSON: {exc}") from None
    else:
        raise BadRequest(f"Content-Type {content_type!r} is not OTLP: send {_JSON} or {_PROTOBUF}", status=415)
    if not isinstance(document, dict) or not isinstance(document.get("resourceSpans", []), list):
        raise BadRequest("the body is not an ExportTraceServiceRequest (an object with a resourceSpans list)")
    problems = otlp_problems("request body", document)
    if problems:
        raise BadRequest("; ".join(f"{p.field}: {p.message}" for p in problems))
    return document


def _protobuf_answer(status: int, rejected: int, message: str) -> bytes:
    if status == 200:
        # the otel extra's protobuf classes only for a protobuf request
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        response = ExportTraceServiceResponse()
        if rejected or message:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = message
        return bytes(response.SerializeToString())
    from google.rpc.status_pb2 import Status

    return bytes(Status(code=_rpc_code(status), message=message).SerializeToString())


def _rpc_code(status: int) -> int:
    return {400: 3, 413: 3, 415: 3, 404: 5, 429: 8, 503: 14}.get(status, 2)  # INVALID_ARGUMENT, …


def _json_answer(status: int, rejected: int, message: str) -> bytes:
    if status == 200:
        partial = {"rejectedSpans": str(rejected), "errorMessage": message} if rejected or message else {}
        return json.dumps({"partialSuccess": partial}).encode()
    return json.dumps({"code": _rpc_code(status), "message": message}).encode()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive: the SDK exporter reuses its connection

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: one line per export would drown the run's own output."""

    def do_POST(self) -> None:
        as_protobuf = self.headers.get("Content-Type", "").split(";")[0].strip().lower() == _PROTOBUF
        try:
            body = self._body()
            if self.path == "/v1/stop":
                self.server.intake.request_stop()
                self._answer(200, 0, "", as_protobuf)
            elif self.path == "/v1/traces":
                document = decode_body(body, self.headers.get("Content-Type", ""),
                                       self.headers.get("Content-Encoding", ""))
                rejected, message = self.server.intake.accept(document)
                self._answer(200, rejected, message, as_protobuf)
            else:
                raise BadRequest(f"no such endpoint {self.path!r}: POST traces to /v1/traces", status=404)
        except BadRequest as exc:
            self._answer(exc.status, 0, str(exc), as_protobuf)
        except ValidationError as exc:
            self._answer(400, 0, "; ".join(f"{p.field}: {p.message}" for p in exc.problems), as_protobuf)
        except IntakeFull as exc:
            self._answer(429, 0, str(exc) or "the receiver is busy grading: retry later", as_protobuf)

    def _body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise BadRequest("a request needs a Content-Length", status=411)
        if int(length) > max_input_bytes():
            raise BadRequest(f"the body is over {max_input_bytes()} bytes", status=413)
        return self.rfile.read(int(length))

    def _answer(self, status: int, rejected: int, message: str, as_protobuf: bool) -> None:
        body = (_protobuf_answer if as_protobuf else _json_answer)(status, rejected, message)
        self.send_response(status)
        self.send_header("Content-Type", _PROTOBUF if as_protobuf else _JSON)
        self.send_header("Content-Length", str(len(body)))
        if status in (429, 503):
            self.send_header("Retry-After", str(_RETRY_AFTER_S))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a client that keeps its connection open must not hold up the stop

    def __init__(self, address: tuple[str, int], intake: TraceIntake) -> None:
        super().__init__(address, _Handler)
        self.intake = intake


class OtlpReceiver:
    """An OTLP/HTTP receiver on `host:port` (port 0: a free one) feeding `intake`, served on a thread."""

    def __init__(self, intake: TraceIntake, host: str = "127.0.0.1", port: int = 4318) -> None:
        self._server = _Server((host, port), intake)
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        """The (host, port) it listens on."""
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop taking requests and free the port."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()
