"""The configured LLM judge: which OpenAI-compatible endpoint evaluation commands ask.

``CITEWISE_JUDGE_BASE_URL``, ``CITEWISE_JUDGE_MODEL`` and ``CITEWISE_JUDGE_API_KEY`` name the
judge; each falls back to the generator's ``CITEWISE_LLM_*`` (and ``OPENAI_*``) variable
(:class:`citewise.models.chat.ChatConfig`), so one local server can both answer and judge. A
judge should run at temperature 0 (the client's default).
"""

from __future__ import annotations

import os

from citewise.models.chat import ChatConfig, ChatError, OpenAIChatModel


def judge_config(timeout: float = 120.0) -> ChatConfig | None:
    """The judge's :class:`ChatConfig`, or None when no endpoint and model are configured."""
    env = os.environ
    overrides = {"base_url": env.get("CITEWISE_JUDGE_BASE_URL"), "model": env.get("CITEWISE_JUDGE_MODEL"),
                 "api_key": env.get("CITEWISE_JUDGE_API_KEY"), "timeout": timeout}
    try:
        return ChatConfig.from_env(**overrides)
    except ChatError:
        return None


def judge_model(timeout: float = 120.0) -> OpenAIChatModel | None:
    """A chat client for the configured judge, or None (see :func:`judge_config`)."""
    config = judge_config(timeout)
    return OpenAIChatModel(config) if config is not None else None


NO_JUDGE = ("no LLM judge configured: set CITEWISE_JUDGE_BASE_URL and CITEWISE_JUDGE_MODEL (or CITEWISE_LLM_BASE_URL "
            "and CITEWISE_LLM_MODEL) to an OpenAI-compatible endpoint such as a llama.cpp server")
