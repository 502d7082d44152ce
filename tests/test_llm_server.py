"""The built-in OpenAI-compatible server (`agents.llm.server`) as the official clients and raw HTTP see it.

Covers what the server honours beyond a plain completion: `stop`, `n`, `seed`, `stream=True`
(server-sent events read by `openai.OpenAI` and `openai.AsyncOpenAI`, and byte for byte over
raw HTTP and curl), `GET /v1/models/{id}`, and the 400 that names each parameter it does not
implement. Malformed HTTP is `tests/hostile/test_server.py`'s; retries, cache and budget are
`tests/test_llm_client.py`'s. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import shutil
import subprocess
import urllib.error
import urllib.request

import hashlib

import numpy as np
import openai
import pytest

from agents.llm.server import MAX_CHOICES, UNSUPPORTED, schema_instance

EXAMPLES = [f"move {d} {k}" for d in ("north", "south", "east", "west") for k in (1, 2, 3)]
VALID = "Valid actions now:\n" + "\n".join(f"- {e}: a step (e.g. {e})" for e in EXAMPLES)
ECHOED = "alpha beta STOP gamma END delta"


def ask(tag: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"[{tag}]\n\n{VALID}\n\nEnd with ACTION: <command>"}]


def action(text: str) -> str:
    assert text.startswith("I weighed") and "\nACTION: " in text, text
    return text.rpartition("ACTION: ")[2]


@pytest.fixture(scope="module")
def client(server):
    with openai.OpenAI(base_url=server.url, api_key="x", max_retries=0, timeout=5) as client:
        yield client


def post(server, body: dict, path: str = "/chat/completions") -> tuple[int, dict[str, str], bytes]:
    """(status, lower-cased headers, raw body) of a POST over urllib."""
    request = urllib.request.Request(f"{server.url}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def events(raw: bytes) -> list[str]:
    """The data of each server-sent event, checking the framing: events end with a blank line, one `data:` line each."""
    text = raw.decode()
    assert text.endswith("\n\n"), text[-80:]
    blocks = text[:-2].split("\n\n")
    assert all(b.startswith("data: ") and "\n" not in b for b in blocks), blocks
    return [b.removeprefix("data: ") for b in blocks]


def joined(chunks, index: int = 0) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices and c.choices[0].index == index)


# ---------------------------------------------------------------------------- stop, n, seed


def test_stop_ends_the_reply_before_the_first_stop_string(client):
    messages = [{"role": "user", "content": ECHOED}]
    for stop, expected in ((["END", "STOP"], "alpha beta "), ("END", "alpha beta STOP gamma "), ("absent", ECHOED)):
        choice = client.chat.completions.create(model="echo", messages=messages, stop=stop).choices[0]
        assert (choice.message.content, choice.finish_reason) == (expected, "stop"), stop
    cut = client.chat.completions.create(model="echo", messages=messages, stop="END", max_tokens=2).choices[0]
    assert (cut.message.content, cut.finish_reason) == ("alpha be", "length")  # the limit falls before the stop


def test_n_choices_are_drawn_independently_and_reproducibly(client):
    first = client.chat.completions.create(model="random-valid", messages=ask("n"), n=8)
    picks = [action(c.message.content) for c in sorted(first.choices, key=lambda c: c.index)]
    assert [c.index for c in first.choices] == list(range(8))
    assert set(picks) <= set(EXAMPLES) and len(set(picks)) >= 4, picks
    again = client.chat.completions.create(model="random-valid", messages=ask("n"), n=8)
    assert [action(c.message.content) for c in again.choices] == picks
    single = client.chat.completions.create(model="random-valid", messages=ask("n"))
    assert action(single.choices[0].message.content) == picks[0]  # n does not change the first choice
    assert first.usage.completion_tokens == sum(len(c.message.content) // 4 for c in first.choices)
    assert first.usage.prompt_tokens == single.usage.prompt_tokens


def test_a_request_seed_changes_the_draw_reproducibly(client):
    def pick(seed=None, tag="seed"):
        extra = {} if seed is None else {"seed": seed}
        return action(client.chat.completions.create(model="random-valid", messages=ask(tag), **extra).choices[0].message.content)

    by_seed = {seed: pick(seed) for seed in range(12)}
    assert len(set(by_seed.values())) >= 4, by_seed
    assert all(pick(seed) == by_seed[seed] for seed in (0, 5, 11))
    assert pick(2**63 - 1) == pick(2**63 - 1) and pick(-3) == pick(-3)
    unseeded = [pick(tag=f"seed {i}") for i in range(6)]
    assert [pick(7, f"seed {i}") for i in range(6)] != unseeded  # a seed is not the same as no seed


def test_a_seed_changes_a_structured_reply_too(client):
    schema = {"type": "object", "properties": {"amount": {"type": "integer", "minimum": 0, "maximum": 10**6}},
              "required": ["amount"], "additionalProperties": False}
    response_format = {"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}

    def amount(seed):
        reply = client.chat.completions.create(model="random-valid", messages=ask("schema"), seed=seed,
                                               response_format=response_format).choices[0].message.content
        return json.loads(reply)["amount"]

    assert len({amount(seed) for seed in range(5)}) == 5
    assert amount(3) == amount(3)


def test_schemas_within_the_size_bound_give_the_instances_they_gave_before_it():
    """The bound on an instance's size (tests/hostile/test_server.py) draws nothing: seeded replies are unchanged."""
    pinned = {
        json.dumps({"type": "string", "pattern": "^(?:invest (group|individual) [0-9]{2,3}|wait)$"}):
            ['"wait"', '"invest individual 901"', '"wait"'],
        json.dumps({"type": "array", "minItems": 2, "maxItems": 4, "items": {"type": "object", "properties": {
            "n": {"type": "integer", "minimum": 0, "maximum": 9}, "ok": {"type": "boolean"}}}}):
            ['[{"n": 6, "ok": true}, {"n": 2, "ok": false}, {"n": 0, "ok": false}, {"n": 0, "ok": false}]',
             '[{"n": 5, "ok": true}, {"n": 9, "ok": false}, {"n": 1, "ok": true}]',
             '[{"n": 2, "ok": false}, {"n": 2, "ok": false}, {"n": 8, "ok": false}, {"n": 0, "ok": false}]'],
        json.dumps({"type": "string", "minLength": 30, "maxLength": 40}):
            ['"agree round fair together plan plan"', '"round trust lake plan round trust lake p"', '"fair share fair next north next"'],
    }
    for schema, instances in pinned.items():
        assert [json.dumps(schema_instance(json.loads(schema), np.random.default_rng(seed))) for seed in range(3)] == instances
    large = {"type": "array", "minItems": 1000, "items": {"type": "object", "properties": {k: {"type": "string"} for k in "abcde"}}}
    text = json.dumps(schema_instance(large, np.random.default_rng(0)))  # 159,330 characters: within the bound
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == "beaeaca10e1ca09f"


def test_max_completion_tokens_is_honoured_like_max_tokens(client):
    choice = client.chat.completions.create(model="echo", messages=[{"role": "user", "content": ECHOED}],
                                            max_completion_tokens=3).choices[0]
    assert (choice.message.content, choice.finish_reason) == (ECHOED[:12], "length")


# ---------------------------------------------------------------------------- streaming


def test_streaming_with_the_sync_client_joins_to_the_reply_and_ends_with_usage(client):
    plain = client.chat.completions.create(model="random-valid", messages=ask("stream"))
    chunks = list(client.chat.completions.create(model="random-valid", messages=ask("stream"), stream=True,
                                                 stream_options={"include_usage": True}))
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert len(chunks) > 4  # a word at a time, not one block
    assert chunks[0].choices[0].delta.role == "assistant"
    assert joined(chunks) == plain.choices[0].message.content
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert last.usage.model_dump() == plain.usage.model_dump()
    assert all(c.usage is None for c in chunks[:-1])


def test_streaming_without_include_usage_sends_no_usage_chunk(client):
    chunks = list(client.chat.completions.create(model="echo", messages=[{"role": "user", "content": ECHOED}], stream=True))
    assert joined(chunks) == ECHOED
    assert all(c.choices and c.usage is None for c in chunks)


def test_streaming_with_the_async_client_n_choices_stop_and_length(server):
    async def run():
        async with openai.AsyncOpenAI(base_url=server.url, api_key="x", max_retries=0, timeout=5) as client:
            plain = await client.chat.completions.create(model="random-valid", messages=ask("async"), n=3)
            stream = await client.chat.completions.create(model="random-valid", messages=ask("async"), n=3, stream=True,
                                                          stream_options={"include_usage": True})
            chunks = [chunk async for chunk in stream]
            cut = await client.chat.completions.create(model="echo", messages=[{"role": "user", "content": ECHOED}],
                                                       stream=True, stop=["gamma"], max_tokens=2)
            return plain, chunks, [chunk async for chunk in cut]

    plain, chunks, cut = asyncio.run(run())
    assert [joined(chunks, i) for i in range(3)] == [c.message.content for c in plain.choices]
    assert chunks[-1].usage.completion_tokens == plain.usage.completion_tokens
    assert joined(cut) == "alpha be" and cut[-1].choices[0].finish_reason == "length"


def test_server_sent_events_over_raw_http(server):
    body = {"model": "echo", "messages": [{"role": "user", "content": "one two three"}], "stream": True,
            "stream_options": {"include_usage": True}}
    status, headers, raw = post(server, body)
    assert status == 200 and headers["content-type"] == "text/event-stream"
    data = events(raw)
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    assert [c["choices"][0]["delta"] for c in chunks[:-2]] == [
        {"role": "assistant", "content": ""}, {"content": "one "}, {"content": "two "}, {"content": "three"}]
    assert chunks[-2]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] == {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}


def test_a_kept_alive_connection_goes_on_after_a_stream(server):
    # the chunked body must end where it says, or the next response on the connection is garbage
    body = json.dumps({"model": "echo", "messages": [{"role": "user", "content": "first"}], "stream": True})
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        connection.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        assert response.getheader("Transfer-Encoding") == "chunked"
        assert events(response.read())[-1] == "[DONE]"
        connection.request("POST", "/v1/chat/completions", body=body.replace("first", "second").replace('"stream": true', '"stream": false'),
                           headers={"Content-Type": "application/json"})
        second = json.loads(connection.getresponse().read())
    finally:
        connection.close()
    assert second["choices"][0]["message"]["content"] == "second"


def test_a_fault_ends_a_stream_before_it_starts_or_as_an_unreadable_event(server, client):
    faulted = client.with_options(default_headers={"X-Fault": "429=1"})
    with pytest.raises(openai.RateLimitError):
        list(faulted.chat.completions.create(model="echo", messages=[{"role": "user", "content": "faulted stream"}], stream=True))
    status, headers, raw = post(server, {"model": "random-valid+badjson", "messages": ask("badjson"), "stream": True})
    assert status == 200 and events(raw) == ["{this is not json", "[DONE]"]


curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


@curl
def test_curl_reads_the_stream_and_the_400s(server):
    def run(body: dict, *options: str) -> subprocess.CompletedProcess:
        return subprocess.run(["curl", "-sS", "-N", *options, f"{server.url}/chat/completions", "-H",
                               "Content-Type: application/json", "-d", json.dumps(body)],
                              capture_output=True, timeout=10, check=True)

    streamed = run({"model": "echo", "messages": [{"role": "user", "content": "hello curl"}], "stream": True})
    data = events(streamed.stdout)
    assert data[-1] == "[DONE]"
    assert "".join(json.loads(d)["choices"][0]["delta"].get("content", "") for d in data[:-1]) == "hello curl"
    refused = run({"model": "echo", "messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]},
                  "-w", "\n%{http_code}")
    body, _, code = refused.stdout.decode().rpartition("\n")
    assert code == "400" and "'tools' is not supported" in json.loads(body)["error"]["message"]


# ---------------------------------------------------------------------------- models


def test_a_model_can_be_retrieved_by_id(client):
    for model in ("random-valid", "echo", "random-valid+latency=1"):
        found = client.models.retrieve(model)
        assert (found.id, found.object, found.owned_by) == (model, "model", "teamenvs")
    with pytest.raises(openai.NotFoundError, match="'gpt-4o' not found; the built-in server has: random-valid, echo"):
        client.models.retrieve("gpt-4o")


def test_a_query_string_is_no_part_of_the_endpoint_s_path(server):
    # Azure-style clients add ?api-version=...; it was read as part of the path, a 404
    status, _, body = post(server, {"model": "random-valid", "messages": [{"role": "user", "content": "hi"}]},
                           path="/chat/completions?api-version=2024-06-01")
    assert status == 200 and json.loads(body)["choices"]
    status, _, _ = post(server, {"model": "random-valid", "messages": []}, path="/chat/nothing?x=1")
    assert status == 404


def test_an_unknown_model_id_is_a_json_404(server):
    for model in ("nope", "echo+explode=1"):
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(f"{server.url}/models/{model}", timeout=5)
        error = json.loads(raised.value.read())["error"]
        assert raised.value.code == 404 == error["code"] and model in error["message"]


def test_a_model_with_a_context_window_states_it_and_refuses_longer_requests(client):
    """`ctx=N`: the window as vLLM states it (`max_model_len`) and vLLM's refusal of a prompt plus output limit over it."""
    assert client.models.retrieve("random-valid+ctx=512").model_extra["max_model_len"] == 512
    assert "max_model_len" not in (client.models.retrieve("random-valid").model_extra or {})
    short = [{"role": "user", "content": "x" * 400}]  # 100 tokens
    ok = client.chat.completions.create(model="echo+ctx=512", messages=short, max_tokens=400)
    assert ok.choices[0].message.content == "x" * 400
    with pytest.raises(openai.BadRequestError, match=r"maximum context length is 512 tokens\. However, you requested 513 "
                                                     r"tokens \(100 in the messages, 413 in the completion\)"):
        client.chat.completions.create(model="echo+ctx=512", messages=short, max_tokens=413)


# ---------------------------------------------------------------------------- what it refuses

REFUSED = {
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
    "tool_choice": "auto",
    "parallel_tool_calls": True,
    "functions": [{"name": "f", "parameters": {}}],
    "function_call": "auto",
    "logprobs": True,
    "top_logprobs": 3,
    "logit_bias": {"50256": -100},
    "audio": {"voice": "alloy", "format": "wav"},
    "modalities": ["text", "audio"],
    "prediction": {"type": "content", "content": "x"},
    "web_search_options": {},
}


def test_every_unimplemented_parameter_is_listed():
    assert set(REFUSED) == set(UNSUPPORTED)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_an_unimplemented_parameter_is_a_400_naming_it(server, name):
    status, _, raw = post(server, {"model": "random-valid", "messages": ask("refused"), name: REFUSED[name]})
    error = json.loads(raw)["error"]
    assert status == 400 == error["code"]
    assert error["message"].startswith(f"'{name}' is not supported")


def test_the_openai_client_gets_a_bad_request_error_naming_the_parameter(client):
    with pytest.raises(openai.BadRequestError, match="'logprobs' is not supported"):
        client.chat.completions.create(model="random-valid", messages=ask("logprobs"), logprobs=True)
    plain = client.chat.completions.create(model="random-valid", messages=ask("logprobs"), logprobs=False, modalities=["text"])
    assert plain.choices[0].message.content  # false and text-only ask for nothing it lacks


@pytest.mark.parametrize("field, value, phrase", [
    ("n", 0, "'n' must be a whole number from 1 to 128"),
    ("n", MAX_CHOICES + 1, "'n' must be"),
    ("n", "2", "'n' must be"),
    ("seed", 1.5, "'seed' must be a whole number"),
    ("seed", True, "'seed' must be"),
    ("seed", 2**63, "'seed' must be"),
    ("stop", 5, "'stop' must be a non-empty string or an array of at most 4"),
    ("stop", "", "'stop' must be"),
    ("stop", ["a", "b", "c", "d", "e"], "'stop' must be"),
    ("stop", ["a", None], "'stop' must be"),
    ("stream", "yes", "'stream' must be true or false"),
    ("stream", 1, "'stream' must be true or false"),
    ("stream_options", {"include_usage": True}, "'stream_options' is only allowed when 'stream' is true"),
    ("max_completion_tokens", 0, "'max_completion_tokens' must be a whole number >= 1"),
    ("presence_penalty", 3, "'presence_penalty' must be a number from -2 to 2"),
])
def test_bad_values_are_400s_naming_the_parameter(server, field, value, phrase):
    status, _, raw = post(server, {"model": "random-valid", "messages": ask("bad"), field: value})
    assert status == 400 and phrase in json.loads(raw)["error"]["message"]


def test_bad_stream_options_are_a_400(server):
    status, _, raw = post(server, {"model": "echo", "messages": ask("bad"), "stream": True, "stream_options": {"include_usage": 1}})
    assert status == 400 and "'stream_options' must be an object like" in json.loads(raw)["error"]["message"]


@pytest.mark.parametrize("schema, phrase", [
    ({"type": "string", "pattern": "^\\d{3}$"}, "regex features this server cannot generate ('\\d')"),
    ({"type": "string", "pattern": "^\\p{L}+$"}, "regex features this server cannot generate ('\\p')"),
    ({"type": "string", "pattern": "^\\u0041$"}, "regex features this server cannot generate ('\\u')"),
    ({"type": "string", "pattern": "^a+?b$"}, "regex features this server cannot generate ('+?')"),
    ({"type": "string", "pattern": "^(?=a)a$"}, "regex features this server cannot generate ('(?')"),
    ({"type": "number", "minimum": -1e308, "maximum": 1e308}, "cannot be generated (the range overflows)"),
])
def test_a_schema_feature_the_server_cannot_generate_is_a_400(server, schema, phrase):
    """Found by review: regex escapes such as \\d, \\p{..}, \\uXXXX and lazy quantifiers were generated as literal text
    (a reply its own schema refuses), and a number range of +-1e308 overflowed to the invalid JSON `Infinity`. The
    server's rule for what it cannot generate holds for them: a 400 that says so."""
    response_format = {"type": "json_schema", "json_schema": {"name": "a", "schema": {
        "type": "object", "properties": {"value": schema}, "required": ["value"]}}}
    status, _, raw = post(server, {"model": "random-valid", "messages": ask("cannot"), "response_format": response_format})
    assert status == 400 and phrase in json.loads(raw)["error"]["message"], raw


def test_escapes_the_server_can_generate_are_still_generated():
    rng = np.random.default_rng(0)
    assert schema_instance({"type": "string", "pattern": "^a\\nb\\.c\\-$"}, rng) == "a\nb.c-"
    assert -1e300 <= schema_instance({"type": "number", "minimum": -1e300, "maximum": 1e300}, rng) <= 1e300
