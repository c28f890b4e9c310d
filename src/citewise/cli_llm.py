"""The LLM options of ``citewise ask`` and ``citewise serve``: flags into settings, streaming to
the terminal, the prompt shown, and ``serve``'s request timeout derived from the LLM client's.

Flags map onto the settings object (:mod:`citewise.settings`; a flag wins over the files and the
environment): ``--llm-url`` → ``llm.base_url``, ``--llm-model`` → ``llm.model``,
``--llm-timeout`` → ``llm.read_timeout_s``, ``--llm-context`` → ``llm.context_window``.
"""

from __future__ import annotations

from typing import Optional

import typer

LlmUrlOpt = typer.Option(
    None,
    "--llm-url",
    metavar="URL",
    help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (setting llm.base_url).",
)
LlmModelOpt = typer.Option(
    None, "--llm-model", metavar="NAME", help="Model name sent to the endpoint (setting llm.model)."
)
LlmTimeoutOpt = typer.Option(
    None,
    "--llm-timeout",
    min=1.0,
    metavar="SECONDS",
    help="Seconds to wait for the model's reply (setting llm.read_timeout_s, default 60; a small model on a CPU may need minutes).",
)
LlmContextOpt = typer.Option(
    None,
    "--llm-context",
    min=256,
    metavar="TOKENS",
    help="The model's context window (setting llm.context_window; default: asked from the server, else 4096).",
)
StreamOpt = typer.Option(
    False, "--stream", help="Show the LLM's answer as it is written, then the checked answer (with --llm)."
)
ShowPromptOpt = typer.Option(
    False,
    "--show-prompt",
    help="Print the LLM prompt and its token budget before the answer (with --llm; --json always includes it).",
)

#: Seconds ``serve`` adds to the LLM client's longest wait (retrieval, context assembly, the
#: extractive fallback) when it derives the request timeout.
SERVE_MARGIN_S = 15.0


def llm_overrides(
    url: Optional[str] = None,
    model: Optional[str] = None,
    timeout: Optional[float] = None,
    context: Optional[int] = None,
) -> dict:
    """Settings overrides (dotted keys) of the LLM flags given."""
    return {"llm.base_url": url, "llm.model": model, "llm.read_timeout_s": timeout, "llm.context_window": context}


def llm_deadline_s(settings) -> float:
    """The longest an LLM answer can wait for the model, seconds: the ``[llm.answer]`` client's
    :attr:`~citewise.models.chat.ChatConfig.deadline_s`, twice when a context overflow makes it
    ask again (the refused request answers at once, so one deadline plus the connect timeout)."""
    from citewise.models.chat import ChatConfig

    s = settings.llm.for_use("answer")
    cfg = ChatConfig(
        "x", "x", connect_timeout_s=s.connect_timeout_s, read_timeout_s=s.read_timeout_s, retries=s.retries
    )
    return cfg.deadline_s + s.connect_timeout_s


def serve_timeout(settings, given: Optional[float], llm: bool) -> tuple[float, str]:
    """``serve``'s request timeout and a line saying how it was chosen ('' when as given).

    Without the LLM: ``given``, else ``service.request_timeout_s``. With it: at least the LLM
    deadline (:func:`llm_deadline_s`) plus :data:`SERVE_MARGIN_S`, so the service never answers
    504 while its own LLM client is still waiting."""
    base = given if given is not None else settings.service.request_timeout_s
    if not llm:
        return base, ""
    need = llm_deadline_s(settings) + SERVE_MARGIN_S
    if base >= need:
        return base, ""
    return need, (
        f"request timeout raised from {base:g} s to {need:g} s: the LLM client may wait "
        f"{llm_deadline_s(settings):g} s (llm.connect_timeout_s + llm.read_timeout_s, llm.retries)"
    )


def print_prompt(out, ans) -> None:
    """The LLM prompt of an answer (its messages) and its token budget."""
    info = getattr(ans, "llm", None) or {}
    if not info.get("messages"):
        out.print("(no LLM prompt: the answer did not come from the LLM generator)", highlight=False, markup=False)
        return
    b = info.get("budget") or {}
    out.rule(f"prompt: {info.get('prompt_tokens', 0):,} tokens (o200k_base count)")
    for m in info["messages"]:
        out.print(f"[{m['role']}]", highlight=False, markup=False)
        out.print(m["content"], highlight=False, markup=False, soft_wrap=True)
    if b:
        out.print(
            f"window {b.get('context_window', 0):,} ({b.get('window_source') or 'default'}): "
            f"{b.get('output', 0):,} output + {b.get('system', 0):,} system + {b.get('question', 0):,} question + "
            f"{b.get('margin', 0):,} margin; documents {b.get('documents_used', 0):,} of {b.get('documents_available', 0):,}"
            + (f"; left out: {', '.join(info['left_out'])}" if info.get("left_out") else ""),
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    out.rule()


def ask_streaming(cw, question: str, principal, options, out):
    """Ask with the model's text printed as it arrives; returns the checked answer."""
    import sys

    started = []

    def on_delta(text: str) -> None:
        started.append(True)
        sys.stdout.write(text)
        sys.stdout.flush()

    ans = cw.ask(question, principal, options, on_delta=on_delta)
    if started:
        sys.stdout.write("\n")
        out.rule("checked answer")
    return ans
