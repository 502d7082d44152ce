"""Fixtures shared by the test modules: the built-in LLM server, and no test reaching a real endpoint or the home cache."""

from __future__ import annotations

import pytest

from agents.llm.server import LocalLLMServer


@pytest.fixture(scope="session", autouse=True)
def _offline_session(tmp_path_factory):
    """The same for what module- and session-scoped fixtures run (a benchmark run once per module, say): they are set
    up before any test's own `_offline_env`, so without this they would call the real endpoint of OPENAI_BASE_URL and
    cache in the home directory, where a later run's identical request would be answered from the cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("OPENAI_BASE_URL", raising=False)
        patch.setenv("TEAMENVS_CACHE", str(tmp_path_factory.mktemp("session-cache")))
        yield


@pytest.fixture(scope="module")
def server():
    """The offline OpenAI-compatible server, one per test module (its fault counters live as long as it does)."""
    with LocalLLMServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch, tmp_path):
    """No test may reach a real endpoint or write a cache into the home directory."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("TEAMENVS_CACHE", str(tmp_path / "default-cache"))
