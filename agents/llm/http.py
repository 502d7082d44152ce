"""A lean asyncio HTTP/1.1 client for JSON requests: the hot path of `LLMClient` (transport "http").

The `openai` package builds and parses every request through layers of typed models; for a chat
completion that is most of a call's CPU (3-5 ms), more than a local server needs to answer. This
client sends the JSON body it is given and hands back the reply's bytes:

- one `HTTPPool` per endpoint and event loop, keeping connections alive (HTTP/1.1 keep-alive) and
  reusing the most recently used one; a kept connection the server has closed meanwhile is noticed
  and the request is sent again on a fresh one (only when nothing of a reply was read);
- `http://` and `https://` (TLS with the system's certificates, or the `ssl` context given);
- replies framed by `Content-Length`, chunked transfer encoding, or the connection's end;
- every request bounded by one deadline (`timeout` seconds for connecting, sending and reading it
  all), so a server that stalls, or trickles its reply a byte at a time, cannot hold a caller longer;
- hostile replies fail with a `TransportError` that says what was wrong (not an HTTP status line,
  garbled headers or chunk sizes, a body cut short, headers or body past the size limits), and the
  connection they came on is dropped, never reused.

Proxies are not supported: `LLMClient` uses the `openai` transport when one is configured.
"""

from __future__ import annotations

import asyncio
import json
import re
import ssl as _ssl
import sys
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import quote, urlsplit

from teamenvs.core.text import printable

# Each request of teamenvs' client says which attempt of its call it is (0, then 1, 2, ... for the retries), so that a
# server injecting faults (the built-in one) can draw them per call, the same in every run, whatever calls came before
RETRY_COUNT_HEADER = "X-Retry-Count"
MAX_HEADER_BYTES = 64 * 1024  # a reply's status line and headers, together
MAX_BODY_BYTES = 64 * 2**20  # a reply's body
CLIP = 300


class TransportError(Exception):
    """A request that got no usable reply; `describe()` says why in a few words."""

    retryable = True

    def describe(self) -> str:
        return str(self)


class ConnectError(TransportError):
    """No connection could be made (refused, unknown host, TLS handshake failed)."""

    def describe(self) -> str:
        return f"could not connect ({self})"


class RequestTimeout(TransportError):
    """The whole request (connect, send, read) took longer than its timeout."""

    def describe(self) -> str:
        return "the request timed out"


class ConnectionLost(TransportError):
    """The connection broke (reset, or closed by the server) before the reply was complete."""

    def describe(self) -> str:
        return f"the connection was lost before the reply was complete ({self})"


class ProtocolError(TransportError):
    """A reply that is not readable HTTP, or a body that is not what was expected."""

    def describe(self) -> str:
        return f"the reply could not be read ({self})"


class StatusError(TransportError):
    """A complete reply with an error status (4xx, 5xx)."""

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        super().__init__(f"HTTP {status}")
        self.status, self.headers, self.body = status, dict(headers), body

    def describe(self) -> str:
        return f"HTTP {self.status}: {status_message(self.status, self.body)}"


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # names in lower case; repeated headers joined with ", "
    body: bytes

    def json(self) -> Any:
        """The body as JSON; raises ProtocolError when it is not."""
        try:
            return json.loads(self.body)
        except RecursionError:
            raise ProtocolError("JSON nested too deeply") from None
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
            raise ProtocolError(type(exc).__name__) from None


def clip(text: str, limit: int = CLIP) -> str:
    """A server's text on one line (runs of whitespace as one space), its control characters shown as escapes
    (an error page's ESC must not act on the terminal that prints the error), cut at `limit` characters."""
    text = printable(" ".join(text.split()), keep_newlines=False)
    return text if len(text) <= limit else text[:limit] + "..."


# query parameter names whose values are credentials (`key=`, `api_key=`, `access_token=`, `X-Amz-Signature=`, ...)
_SECRET_PARAM = re.compile(r"key|token|secret|passw|pwd|sig|auth|credential|session", re.IGNORECASE)


def redact_url(url: str) -> str:
    """`url` fit to show in a message or a log: its userinfo (`user:password@`) and the values of query
    parameters named like credentials replaced by `***`."""
    scheme, sep, rest = url.partition("://") if "://" in url else ("", "", url)
    # up to the last "@" before the query, not only before the path: a password with an unescaped "/" is still hidden
    at = rest[:min((i for i in map(rest.find, "?#") if i >= 0), default=len(rest))].rfind("@")
    if at >= 0:
        url = f"{scheme}{sep}***@{rest[at + 1:]}"
    head, sep, query = url.partition("?")
    query, hash_, fragment = query.partition("#")
    params = [name + "=***" if _SECRET_PARAM.search(name) and eq else name + eq + value
              for name, eq, value in (param.partition("=") for param in query.split("&"))]
    return head + sep + "&".join(params) + hash_ + fragment


def check_base_url(base_url: Any) -> tuple[Any, int | None]:
    """(the URL's parts, its port or None) of an endpoint's base URL; ValueError unless it is an http:// or https://
    URL with a host, a valid port and no spaces or control characters (which no server address has: a pasted
    terminal escape or line break would otherwise reach the HTTP library, or be retried for minutes as a host name)."""
    if not isinstance(base_url, str):
        raise ValueError(f"the base URL must be text, e.g. http://localhost:8000/v1, got {type(base_url).__name__}")
    redacted = redact_url(base_url)
    shown = repr(redacted[:80]) + ("..." if len(redacted) > 80 else "")  # repr: a stray space or control character shows
    parts = urlsplit(base_url) if base_url.isprintable() and not any(c.isspace() for c in base_url) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"an http:// or https:// URL without spaces or control characters is needed, got {shown}")
    try:
        return parts, parts.port
    except ValueError:
        raise ValueError(f"the URL {shown} has a bad port") from None


def status_message(status: int, body: bytes | str | None) -> str:
    """What an error reply says: the `error.message` of an OpenAI-style JSON body (or `message`,
    `detail`, `error` as a string), else an HTML page's title, else the body's text, clipped; the
    status's name when the body says nothing."""
    from http import HTTPStatus

    text = body.decode("utf-8", "replace") if isinstance(body, (bytes, bytearray)) else (body or "")
    text = text.strip()
    try:
        data = json.loads(text) if text[:1] in ("{", "[", '"') else None
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        error = data.get("error", data)
        for candidate in (error.get("message") if isinstance(error, dict) else error, data.get("message"), data.get("detail")):
            if isinstance(candidate, str) and candidate.strip():
                return clip(candidate)
    if text.lstrip()[:1] == "<":  # an HTML error page (a proxy's, a gateway's)
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
        plain = title.group(1) if title else re.sub(r"<[^>]*>", " ", text)
        if plain.strip():
            return clip(plain)
    if text:
        return clip(text)
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "no message"


_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def check_header(name: Any, value: Any) -> None:
    """Raises ValueError unless `name: value` is a header that cannot split a request (no line breaks)."""
    if not isinstance(name, str) or not name or not set(name) <= _TOKEN:
        raise ValueError(f"a header name must be a word of letters, digits and -, got {clip(repr(name), 60)}")
    if not isinstance(value, str) or any(c in value for c in "\r\n\0"):
        raise ValueError(f"the value of header {name!r} must be a string without line breaks")
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError(f"the value of header {name!r} must be Latin-1 text (HTTP headers cannot carry other characters)") from None


class _Conn:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def usable(self) -> bool:
        """Whether a kept connection may take another request: open, and nothing unread on it."""
        return not (self.writer.is_closing() or self.reader.at_eof() or getattr(self.reader, "_buffer", b""))

    def close(self) -> None:
        try:
            self.writer.close()
        except Exception:  # a transport of a closed loop
            pass


class _Stale(Exception):
    """A kept connection that the server closed before any byte of the reply: send again on a new one."""


if sys.version_info >= (3, 11):
    async def within(seconds: float, awaitable: Any) -> Any:
        """`await awaitable`, or TimeoutError once `seconds` have passed (one deadline for the whole of it)."""
        async with asyncio.timeout(seconds):
            return await awaitable
else:  # pragma: no cover - Python 3.10
    async def within(seconds: float, awaitable: Any) -> Any:
        return await asyncio.wait_for(awaitable, seconds)


class HTTPPool:
    """Kept-alive HTTP/1.1 connections to one origin, for one event loop.

    `base_url` is the endpoint (`http://host:port/v1`); `request(method, path, body)` sends to
    `base_url + path`. `headers` go with every request (e.g. `Authorization`); `max_idle` bounds
    the connections kept open between requests.
    """

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        max_idle: int = 64,
        ssl_context: _ssl.SSLContext | None = None,
        max_body: int = MAX_BODY_BYTES,
    ) -> None:
        parts, port = check_base_url(base_url)
        self.scheme, self.host = parts.scheme, parts.hostname
        self.port = port or (443 if parts.scheme == "https" else 80)
        self.prefix = quote(parts.path.rstrip("/"), safe="/:@!$&'()*+,;=%-._~")
        self.query = parts.query
        self.timeout, self.max_idle, self.max_body = float(timeout), max_idle, max_body
        self._ssl = ssl_context
        host = f"[{self.host}]" if ":" in self.host else self.host
        default_port = self.port == (443 if self.scheme == "https" else 80)
        fixed = {"Host": host if default_port else f"{host}:{self.port}", "User-Agent": "teamenvs",
                 "Accept": "application/json", **(headers or {})}
        for name, value in fixed.items():
            check_header(name, value)
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in fixed.items())
        self._idle: list[_Conn] = []
        self._busy: set[_Conn] = set()
        self.opened = 0  # connections made so far

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def _head(self, method: str, path: str, length: int | None, headers: Mapping[str, str] | None) -> bytes:
        target = self.prefix + path + (f"?{self.query}" if self.query else "")
        extra = ""
        if headers:
            for name, value in headers.items():
                check_header(name, value)
            extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        sized = "" if length is None else f"Content-Type: application/json\r\nContent-Length: {length}\r\n"
        return f"{method} {target} HTTP/1.1\r\n{self._fixed}{sized}{extra}\r\n".encode("latin-1")

    async def post_json(self, path: str, payload: Any, *, headers: Mapping[str, str] | None = None,
                        timeout: float | None = None) -> Response:
        body = json.dumps(payload).encode()
        return await self.request("POST", path, body, headers=headers, timeout=timeout)

    async def request(self, method: str, path: str, body: bytes | None = None, *, headers: Mapping[str, str] | None = None,
                      timeout: float | None = None) -> Response:
        """One request; the reply whatever its status. Raises TransportError when there is no complete reply."""
        head = self._head(method, path, None if body is None else len(body), headers)
        data = head + body if body else head
        seconds = self.timeout if timeout is None else float(timeout)
        try:
            return await within(seconds, self._send(data))
        except (TimeoutError, asyncio.TimeoutError):  # the same class from Python 3.11 on
            raise RequestTimeout(f"no complete reply within {seconds:g} s") from None

    async def _send(self, data: bytes) -> Response:
        while True:
            conn, reused = await self._checkout()
            self._busy.add(conn)
            keep = False
            try:
                conn.writer.write(data)
                if len(data) > 65536:
                    await conn.writer.drain()
                response, keep = await self._read(conn.reader, reused)
                return response
            except _Stale:
                continue  # the server had closed the kept connection: nothing was answered, so send again
            except (ConnectionError, OSError) as exc:
                raise ConnectionLost(_why(exc)) from None
            finally:
                self._busy.discard(conn)
                if keep and conn.usable() and len(self._idle) < self.max_idle:
                    self._idle.append(conn)
                else:
                    conn.close()

    async def _checkout(self) -> tuple[_Conn, bool]:
        while self._idle:
            conn = self._idle.pop()  # the most recently used: the likeliest to be alive
            if conn.usable():
                return conn, True
            conn.close()
        if self.scheme == "https" and self._ssl is None:
            self._ssl = _ssl.create_default_context()
        try:
            reader, writer = await asyncio.open_connection(
                self.host, self.port, ssl=self._ssl if self.scheme == "https" else None, limit=MAX_HEADER_BYTES,
                server_hostname=self.host if self.scheme == "https" else None)
        except (OSError, _ssl.SSLError) as exc:
            raise ConnectError(f"{self.origin}: {_why(exc)}") from None
        self.opened += 1
        return _Conn(reader, writer), False

    async def _read(self, reader: asyncio.StreamReader, reused: bool) -> tuple[Response, bool]:
        """The reply (skipping 1xx interim replies) and whether the connection may be kept."""
        first = True
        while True:
            try:
                raw = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError as exc:
                if first and reused and not exc.partial:
                    raise _Stale() from None
                if not exc.partial:
                    raise ConnectionLost("the server closed the connection without replying") from None
                raise ProtocolError(f"the reply ended inside its headers: {clip(exc.partial.decode('latin-1'), 80)!r}") from None
            except asyncio.LimitOverrunError:
                raise ProtocolError(f"the reply's headers are longer than {MAX_HEADER_BYTES:,} bytes") from None
            except ConnectionResetError:
                if first and reused:
                    raise _Stale() from None
                raise
            first = False
            version, status, headers = _parse_head(raw)
            if 100 <= status < 200 and status != 101:
                continue  # 100 Continue and the like: the real reply follows
            break
        tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
        keep = "close" not in tokens if version == "HTTP/1.1" else "keep-alive" in tokens
        if status in (204, 304) or status == 101:
            return Response(status, headers, b""), keep and status != 101
        coding = headers.get("transfer-encoding", "").lower()
        try:
            if coding:
                if coding.split(",")[-1].strip() != "chunked":
                    raise ProtocolError(f"unsupported Transfer-Encoding {clip(coding, 60)!r}")
                body = await self._chunked(reader)
            elif "content-length" in headers:
                length = _content_length(headers["content-length"])
                if length > self.max_body:
                    raise ProtocolError(f"a body of {length:,} bytes is more than this client reads ({self.max_body:,})")
                try:
                    body = await reader.readexactly(length)
                except asyncio.IncompleteReadError as exc:
                    raise ProtocolError(f"the body ended after {len(exc.partial):,} of its {length:,} bytes") from None
            else:  # the body ends when the connection does
                body = await self._to_end(reader)
                keep = False
        except asyncio.LimitOverrunError:
            raise ProtocolError("a chunk size line is too long") from None
        return Response(status, headers, body), keep

    async def _chunked(self, reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        total = 0
        try:
            while True:
                line = await reader.readuntil(b"\r\n")
                text = line.split(b";", 1)[0].strip()
                if not text or len(text) > 16 or any(c not in b"0123456789abcdefABCDEF" for c in text):
                    raise ProtocolError(f"bad chunk size {clip(line.decode('latin-1'), 40)!r}")
                size = int(text, 16)
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, dropped
                        pass
                    return b"".join(parts)
                total += size
                if total > self.max_body:
                    raise ProtocolError(f"a chunked body of more than {self.max_body:,} bytes")
                chunk = await reader.readexactly(size + 2)
                if chunk[-2:] != b"\r\n":
                    raise ProtocolError("a chunk is longer than its size says")
                parts.append(chunk[:-2])
        except asyncio.IncompleteReadError:
            raise ProtocolError(f"the chunked body ended early, after {total:,} bytes") from None

    async def _to_end(self, reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        total = 0
        while chunk := await reader.read(65536):
            total += len(chunk)
            if total > self.max_body:
                raise ProtocolError(f"a body of more than {self.max_body:,} bytes")
            parts.append(chunk)
        return b"".join(parts)

    def close_now(self) -> None:
        """Close every connection (kept or in use) without waiting for them to close."""
        conns = self._idle + list(self._busy)
        self._idle, self._busy = [], set()
        for conn in conns:
            conn.close()

    async def aclose(self) -> None:
        """Close every connection (kept or in use)."""
        conns = self._idle + list(self._busy)
        self._idle, self._busy = [], set()
        for conn in conns:
            conn.close()
        for conn in conns:
            try:
                await asyncio.wait_for(conn.writer.wait_closed(), 1.0)
            except Exception:  # reset, TLS shutdown refused, already gone
                pass


def _why(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return clip(text, 160)


def _content_length(value: str) -> int:
    values = {v.strip() for v in value.split(",")}
    if len(values) != 1:
        raise ProtocolError(f"conflicting Content-Length values {clip(value, 60)!r}")
    text = values.pop()
    if not text.isdigit() or not text.isascii() or len(text) > 18:
        raise ProtocolError(f"Content-Length is not a number of bytes: {clip(text, 40)!r}")
    return int(text)


def _parse_head(raw: bytes) -> tuple[str, int, dict[str, str]]:
    lines = raw[:-4].decode("latin-1").split("\r\n")
    status_line = lines[0]
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or parts[0] not in ("HTTP/1.1", "HTTP/1.0") or len(parts[1]) != 3 or not parts[1].isdigit():
        raise ProtocolError(f"not an HTTP/1.x status line: {clip(status_line, 80)!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise ProtocolError(f"a garbled header line: {clip(line, 80)!r}")
        name, value = name.lower(), value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return parts[0], int(parts[1]), headers
