"""Malformed HTTP against the built-in server (`agents.llm.server`, hardening issue, item 9).

Every request of a corpus sent over raw sockets (bodies that are not JSON objects, bad or huge
Content-Length, hostile `X-Fault` values, wrong field types, garbled request lines and headers, schemas
whose instance would be endless)
must get the right status and an OpenAI-style JSON error saying what is wrong, in bounded time;
stalled and trickling clients are dropped with 408 after the server's read timeout; past
`max_connections` a connection gets 503 at once; and afterwards the server still answers a
normal request. Nothing may reach stderr (no traceback) and no thread may die of an exception.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from agents.llm.server import LocalLLMServer, parse_faults

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")

READ_TIMEOUT = 0.4  # the server's, kept short so that stalls resolve quickly
ANSWER_WITHIN = 2.0  # seconds any malformed request may take to be answered
MAX_CONNECTIONS = 16
MESSAGES = [{"role": "user", "content": "Valid actions now:\n- wait: do nothing (e.g. wait)\nEnd with ACTION: <command>"}]


@pytest.fixture
def server(capfd):
    """A server with a short read timeout and few connection slots; stderr must stay empty throughout."""
    with LocalLLMServer(read_timeout=READ_TIMEOUT, max_body=1 << 20, max_connections=MAX_CONNECTIONS) as server:
        yield server
    assert capfd.readouterr().err == "", "the server wrote to stderr (a traceback?)"


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: dict
    seconds: float

    @property
    def message(self) -> str:
        return self.body["error"]["message"]


class NoAnswer(AssertionError):
    """The server dropped the connection, stalled, or answered something that is not JSON."""


def read_reply(sock: socket.socket, started: float) -> Reply:
    """The HTTP response on `sock`; raises NoAnswer if there is none, or its body is not JSON."""
    response = http.client.HTTPResponse(sock)
    try:
        response.begin()
        data = response.read()
    except (http.client.HTTPException, OSError) as exc:
        raise NoAnswer(f"no HTTP response (the connection was dropped or stalled): {exc!r}") from None
    try:
        body = json.loads(data)
    except ValueError:
        raise NoAnswer(f"the {response.status} response is not JSON: {data[:200]!r}") from None
    return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, body, time.monotonic() - started)


def exchange(port: int, data: bytes, half_close: bool = False) -> Reply:
    """Send raw bytes on a fresh connection and read the answer."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=ANSWER_WITHIN + 3) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        return read_reply(sock, started)


def request(body: bytes, path: str = "/v1/chat/completions", headers: dict[str, str] | None = None,
            length: str | None = "auto", method: str = "POST") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    if length is not None:
        lines.append(f"Content-Length: {len(body) if length == 'auto' else length}")
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def chat(**fields) -> bytes:
    return json.dumps({"model": "random-valid", "messages": MESSAGES, **fields}).encode()


def faulted(spec: str) -> bytes:
    return request(chat(), headers={"X-Fault": spec})


def structured(schema: dict) -> bytes:
    """A chat request asking for an instance of `schema` (`response_format` json_schema)."""
    return request(chat(response_format={"type": "json_schema", "json_schema": {"name": "s", "schema": schema}}))


def nested_arrays(min_items: int, depth: int) -> dict:
    return {"type": "array", "minItems": min_items, **({"items": nested_arrays(min_items, depth - 1)} if depth > 1 else {})}


def embeddings(**fields) -> bytes:
    return request(json.dumps({"model": "hashing", **fields}).encode(), "/v1/embeddings")


def assert_serves(server: LocalLLMServer) -> None:
    """A normal chat completion still works."""
    req = urllib.request.Request(f"{server.url}/chat/completions", data=chat(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as response:
        body = json.loads(response.read())
    assert body["choices"][0]["message"]["content"].endswith("ACTION: wait")


# (request bytes, status, a phrase the error message must contain)
CORPUS = {
    "json array body": (request(b"[1, 2, 3]"), 400, "must be a JSON object, got an array"),
    "json string body": (request(b'"hello"'), 400, "must be a JSON object, got a string"),
    "not json": (request(b"model=random-valid"), 400, "not JSON"),
    "not utf-8": (request(b"\xff\xfe\xfa{"), 400, "not JSON"),
    "empty body": (request(b""), 400, "empty"),
    "NaN in the body": (request(chat()[:-1] + b', "temperature": NaN}'), 400, "NaN is not a JSON number"),
    "deeply nested": (request(b"[" * 200_000), 400, "nested too deeply"),
    "5000-digit number": (request(b'{"model": ' + b"9" * 5000 + b"}"), 400, "not JSON"),
    "Content-Length 10^12": (request(b"{}", length=str(10**12)), 413, "accepts at most 1,048,576"),
    "negative Content-Length": (request(b"{}", length="-5"), 400, "Content-Length must be a whole number"),
    "Content-Length not a number": (request(b"{}", length="lots"), 400, "Content-Length must be a whole number"),
    "Content-Length 10^40": (request(b"{}", length="1" + "0" * 40), 400, "Content-Length must be a whole number"),
    "no Content-Length": (request(b"{}", length=None), 411, "needs a Content-Length"),
    "two Content-Lengths": (request(b"{}", headers={"Content-Length": "7"}), 400, "conflicting Content-Length"),
    "chunked": (request(b"2\r\n{}\r\n0\r\n\r\n", length=None, headers={"Transfer-Encoding": "chunked"}), 411, "chunked"),
    "latency=1e300": (faulted("latency=1e300"), 400, "latency must be milliseconds from 0 to 60000"),
    "latency=nan": (faulted("latency=nan"), 400, "latency must be"),
    "latency=inf": (faulted("latency=inf"), 400, "latency must be"),
    "latency=-1": (faulted("latency=-1"), 400, "latency must be"),
    "hang for a day": (faulted("hang=86400"), 400, "hang must be seconds from 0 to 60"),
    "retry_after=1e9": (faulted("retry_after=1e9"), 400, "retry_after must be"),
    "fault not a number": (faulted("latency=soon"), 400, "write name=number"),
    "unknown fault": (faulted("explode=1"), 400, "unknown fault 'explode'"),
    "probability above 1": (faulted("p429=2"), 400, "p429 must be a probability"),
    "rates above 1 in all": (faulted("p429=0.7,p500=0.7"), 400, "add up to 1.4"),
    "seed not whole": (faulted("p500=0.1,seed=1.5"), 400, "seed must be a whole number"),
    "fault in the model suffix": (request(chat(model="random-valid+latency=1e300")), 400, "latency must be"),
    "model a number": (request(chat(model=5)), 400, "'model' must be a non-empty string, got a number"),
    "model null": (request(chat(model=None)), 400, "'model' must be a non-empty string, got null"),
    "model empty": (request(chat(model="")), 400, "'model' must be a non-empty string"),
    "messages a string": (request(chat(messages="hi")), 400, "'messages' must be a non-empty array"),
    "messages empty": (request(chat(messages=[])), 400, "'messages' must be a non-empty array"),
    "no messages": (request(json.dumps({"model": "random-valid"}).encode()), 400, "'messages' must be"),
    "message a number": (request(chat(messages=[1])), 400, "messages[0] must be an object"),
    "role a number": (request(chat(messages=[{"role": 5, "content": "x"}])), 400, "messages[0].role must be a string"),
    "content an object": (request(chat(messages=[{"role": "user", "content": {"a": 1}}])), 400, "messages[0].content must be"),
    "temperature a string": (request(chat(temperature="hot")), 400, "'temperature' must be a number from 0 to 2"),
    "temperature negative": (request(chat(temperature=-1)), 400, "'temperature' must be"),
    "temperature 1e999": (request(chat()[:-1] + b', "temperature": 1e999}'), 400, "'temperature' must be"),
    "temperature a 400-digit integer": (request(chat(temperature=10**400)), 400, "'temperature' must be"),
    "temperature true": (request(chat(temperature=True)), 400, "'temperature' must be"),
    "max_tokens 0": (request(chat(max_tokens=0)), 400, "'max_tokens' must be a whole number"),
    "max_tokens a string": (request(chat(max_tokens="5")), 400, "'max_tokens' must be"),
    "stream not a boolean": (request(chat(stream="yes")), 400, "'stream' must be true or false"),
    "stream_options without stream": (request(chat(stream_options={"include_usage": True})), 400, "only allowed when 'stream' is true"),
    "tools": (request(chat(tools=[{"type": "function"}])), 400, "'tools' is not supported"),
    "n 1000": (request(chat(n=1000)), 400, "'n' must be a whole number from 1 to 128"),
    "stop an object": (request(chat(stop={"a": 1})), 400, "'stop' must be"),
    # schemas whose instance never ended (and grew in memory until it died): refused at the bound, naming the keyword
    "pattern count 10^9": (structured({"type": "string", "pattern": "a{1000000000}"}), 400,
                           "the pattern's repetition {1000000000} asks for more than the 250,000 items and characters"),
    "minItems 10^8": (structured({"type": "array", "minItems": 100_000_000}), 400,
                      "'minItems' 100,000,000 asks for more than the 250,000"),
    "minItems 2000 nested 3 deep": (structured(nested_arrays(2000, 3)), 400, "'minItems' 2,000, with its items, asks for more than"),
    "minLength 3*10^9": (structured({"type": "string", "minLength": 3_000_000_000}), 400,
                         "'minLength' 3,000,000,000 asks for more than the 250,000"),
    "maxItems 10^12": (structured({"type": "array", "maxItems": 10**12}), 400, "'maxItems' 1,000,000,000,000 asks for more"),
    "minItems 10^30": (structured({"type": "array", "minItems": 10**30}), 400, "asks for more than the 250,000"),
    "embeddings input 5": (embeddings(input=5), 400, "'input' must be a string or a non-empty array of strings"),
    "embeddings input null": (embeddings(input=None), 400, "'input' must be"),
    "embeddings no input": (embeddings(), 400, "'input' must be"),
    "embeddings nested": (embeddings(input=[[1, 2], [3]]), 400, "token arrays are not supported"),
    "embeddings empty": (embeddings(input=[]), 400, "got an empty array"),
    "embeddings array body": (request(b"[]", "/v1/embeddings"), 400, "must be a JSON object"),
    "embeddings model a number": (embeddings(input="x", model=5), 400, "'model' must be a string"),
    "garbled request line": (b"HELLO\r\n\r\n", 400, "Bad request syntax"),
    "request line of blanks": (b" \t \r\nHost: x\r\n\r\n", 400, "the request line is empty"),
    "20 empty lines before the request": (b"\r\n" * 20 + request(chat()), 400, "the request line is empty"),
    "bad HTTP version": (b"GET /v1/models HTTP/9.9\r\n\r\n", 505, "Invalid HTTP version"),
    # HTTP/0.9: the standard library sends no headers to it, and the server's one-write answer crashed on that
    "HTTP/0.9 GET": (b"GET / HTTP/0.9\r\n\r\n", 505, "HTTP/0.9 is not served: send HTTP/1.1"),
    "HTTP/0.9 chat": (b"POST /v1/chat/completions HTTP/0.9\r\nContent-Length: 2\r\n\r\n{}", 505, "HTTP/0.9 is not served"),
    "unknown method": (b"BREW /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", 501, "Unsupported method"),
    "request line of 70 kB": (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414, "URI Too Long"),
    "header line of 70 kB": (b"GET /v1/models HTTP/1.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n", 431, "Line too long"),
    "150 headers": (b"GET /v1/models HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(150)) + b"\r\n", 431, "Too many headers"),
    "unknown endpoint": (request(b"{}", "/v1/" + "x" * 5000), 404, "no such endpoint /v1/xxx"),
}


def test_every_malformed_request_gets_its_status_and_a_json_reason(server):
    wrong = []
    for name, (data, status, phrase) in CORPUS.items():
        try:
            reply = exchange(server.port, data)
        except NoAnswer as exc:
            wrong.append(f"{name}: {exc}")
            continue
        error = reply.body.get("error") if isinstance(reply.body, dict) else None
        if (reply.status != status or not isinstance(error, dict) or error.get("code") != status
                or phrase not in error.get("message", "") or reply.seconds > ANSWER_WITHIN):
            wrong.append(f"{name}: {reply.status} after {reply.seconds:.2f}s: {reply.body}")
        elif len(error["message"]) > 400:
            wrong.append(f"{name}: the message echoes the input ({len(error['message'])} characters)")
    assert not wrong, "\n".join(wrong)
    assert_serves(server)


@pytest.mark.parametrize("before", [b"\r\n", b"\n", b"\r\n" * 8])
def test_empty_lines_before_a_request_line_are_skipped(server, before):
    # RFC 9112 section 2.2 (some clients send a CRLF after a body): the request is answered as if they were not there
    reply = exchange(server.port, before + request(chat()))
    assert reply.status == 200 and reply.body["choices"][0]["message"]["content"].endswith("ACTION: wait")


def test_empty_lines_then_nothing_stall_into_a_408_or_close_quietly(server):
    reply = exchange(server.port, b"\r\n\r\n")  # the request never comes: the read timeout ends the wait
    assert reply.status == 408 and READ_TIMEOUT * 0.9 <= reply.seconds < READ_TIMEOUT + 1.0
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"\r\n")
        sock.shutdown(socket.SHUT_WR)  # the client leaves: nothing to answer, and nothing on stderr (the fixture)
        assert sock.recv(100) == b"" and time.monotonic() - started < ANSWER_WITHIN
    assert_serves(server)


def test_a_body_shorter_than_its_content_length_is_a_400(server):
    reply = exchange(server.port, request(b'{"model": "rand', length="100"), half_close=True)
    assert reply.status == 400 and "ended after 15 of its 100 bytes" in reply.message
    assert_serves(server)


def test_a_kept_alive_connection_goes_on_after_a_400(server):
    # a 400 whose body was read in full leaves the connection usable for the next request
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(request(b"[1]"))
        assert read_reply(sock, started).status == 400
        sock.sendall(request(chat()))
        reply = read_reply(sock, started)
    assert reply.status == 200 and reply.body["choices"][0]["message"]["content"].endswith("ACTION: wait")


def test_an_oversized_body_being_sent_still_gets_its_413(server):
    # the server refuses before reading; the client, still sending, must be able to read the answer
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(request(b"", length=str(4 << 20)) + b"x" * (256 << 10))
        reply = read_reply(sock, started)
    assert reply.status == 413 and "4,194,304 bytes" in reply.message
    assert reply.headers.get("connection") == "close"


@pytest.mark.parametrize("sent, what", [
    (request(b"", length="100") + b'{"model":', "a body that stops"),
    (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Le", "headers that stop"),
    (b"POST /v1/chat/compl", "a request line that stops"),
])
def test_a_stalled_request_gets_408_after_the_read_timeout(server, sent, what):
    reply = exchange(server.port, sent)
    assert reply.status == 408, what
    assert f"did not arrive within {READ_TIMEOUT:g} s" in reply.message
    assert READ_TIMEOUT * 0.9 <= reply.seconds < READ_TIMEOUT + 1.0
    assert_serves(server)


def test_a_trickling_client_cannot_hold_a_thread(server):
    # one byte every third of the read timeout never trips a per-read timeout; the request's deadline does
    data = request(chat())
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        for byte in data:
            if select.select([sock], [], [], READ_TIMEOUT / 3)[0]:
                break  # answered
            sock.sendall(bytes([byte]))
        reply = read_reply(sock, started)
    assert reply.status == 408
    assert reply.seconds < READ_TIMEOUT + 1.0


def test_an_idle_connection_is_closed_after_the_read_timeout(server):
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        assert sock.recv(1024) == b""  # closed without a word: there was no request to answer
    assert READ_TIMEOUT * 0.9 <= time.monotonic() - started < READ_TIMEOUT + 1.0


def handler_threads() -> int:
    return sum("process_request_thread" in t.name for t in threading.enumerate())


def test_a_hundred_stalled_connections_get_408_or_503_and_threads_stay_bounded(server):
    stall = request(b"", length="100")  # headers announce a body that never comes
    socks = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(100)]
    started = time.monotonic()
    try:
        for sock in socks:
            sock.sendall(stall)
        time.sleep(READ_TIMEOUT / 2)
        peak = handler_threads()
        with ThreadPoolExecutor(max_workers=100) as pool:
            replies = list(pool.map(lambda s: read_reply(s, started), socks))
    finally:
        for sock in socks:
            sock.close()
    statuses = [r.status for r in replies]
    assert set(statuses) == {408, 503}, statuses
    assert statuses.count(408) <= MAX_CONNECTIONS and peak <= MAX_CONNECTIONS
    busy = [r for r in replies if r.status == 503]
    assert all("at most 16 connections" in r.message and r.headers.get("retry-after") for r in busy)
    assert max(r.seconds for r in replies) < READ_TIMEOUT + 1.5
    time.sleep(0.1)
    assert_serves(server)


def test_latency_and_waits_are_capped_at_a_minute():
    assert parse_faults("latency=60000,hang=60,retry_after=60,timeout_after=60") == {
        "latency": 60000.0, "hang": 60.0, "retry_after": 60.0, "timeout_after": 60.0}
    for spec in ("latency=60001", "hang=60.5", "retry_after=61", "timeout_after=1e300"):
        with pytest.raises(ValueError, match="from 0 to 60"):
            parse_faults(spec)
    assert parse_faults("hang") == {"hang": 30.0}  # a bare hang keeps its 30 s default


def test_server_limits_are_validated():
    for bad in ({"read_timeout": 0}, {"max_body": 0}, {"max_connections": 0}):
        with pytest.raises(ValueError, match="read_timeout and max_body must be positive"):
            LocalLLMServer(**bad)


@pytest.mark.parametrize("port", [-1, 65536, 10**20, 1.5, "8765", True])
def test_a_port_out_of_range_is_a_clear_error(port):
    with pytest.raises(ValueError, match="port must be a whole number from 0 to 65535"):
        LocalLLMServer(port=port)


def test_a_taken_port_says_so_and_the_cli_exits_2(capsys):
    """A failed bind once raised AttributeError from the server's clean-up (its list of refused connections did not
    exist yet), hiding the reason; `teamenvs serve-llm` printed that traceback."""
    from teamenvs.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=f"cannot serve on 127.0.0.1:{port}"):
            LocalLLMServer(port=port)
        assert main(["serve-llm", "--port", str(port)]) == 2
    assert f"cannot serve on 127.0.0.1:{port}" in capsys.readouterr().err
    assert main(["serve-llm", "--port", "99999999"]) == 2
    assert "port must be a whole number from 0 to 65535" in capsys.readouterr().err
