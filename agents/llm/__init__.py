"""LLM policies over any OpenAI-compatible endpoint: the client, the policy, and a local test server."""

from agents.llm.client import Budget, BudgetExceeded, ChatResult, LLMClient, LLMError, Usage
from agents.llm.policy import LLMPolicy, make_llm_policies, split_reply
from agents.llm.server import LocalLLMServer

__all__ = [
    "Budget", "BudgetExceeded", "ChatResult", "LLMClient", "LLMError", "LLMPolicy", "LocalLLMServer",
    "Usage", "make_llm_policies", "split_reply",
]
