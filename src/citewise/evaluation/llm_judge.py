"""The configured LLM judge: which OpenAI-compatible endpoint evaluation commands ask.

The judge is the ``[llm.judge]`` use of the settings (:mod:`citewise.settings`), which inherits
``[llm]``: ``CITEWISE_LLM_JUDGE_BASE_URL`` / ``CITEWISE_LLM_JUDGE_MODEL`` (or ``[llm.judge]`` in
``citewise.toml``), else the generator's ``CITEWISE_LLM_BASE_URL`` / ``CITEWISE_LLM_MODEL``, so one
local server can both answer and judge. A judge should run at temperature 0 (the default).
"""

from __future__ import annotations

from citewise.models.chat import ChatConfig, OpenAIChatModel

NO_JUDGE = (
    "no LLM judge configured: set CITEWISE_LLM_JUDGE_BASE_URL and CITEWISE_LLM_JUDGE_MODEL (or "
    "CITEWISE_LLM_BASE_URL and CITEWISE_LLM_MODEL, or [llm.judge] in citewise.toml) to an OpenAI-compatible "
    "endpoint such as a llama.cpp server"
)


def judge_config(settings=None) -> ChatConfig | None:
    """The judge's :class:`ChatConfig` from ``settings`` (default: :func:`citewise.settings.load_settings`
    of the working directory and environment), or None when no endpoint and model are set.

    Raises:
        InputError: a settings file that cannot be read (see :mod:`citewise.settings`).
    """
    if settings is None:
        from citewise.settings import load_settings

        settings = load_settings()
    j = settings.llm.for_use("judge")
    if not j.configured:
        return None
    return ChatConfig.from_settings(settings.llm, "judge")


def judge_model(settings=None) -> OpenAIChatModel | None:
    """A chat client for the configured judge, or None (see :func:`judge_config`)."""
    config = judge_config(settings)
    return OpenAIChatModel(config) if config is not None else None
