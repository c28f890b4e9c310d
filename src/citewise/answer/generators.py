"""Generators behind one interface: ``generate(question, context) -> Draft``.

* :class:`citewise.answer.select.generator.ExtractiveGenerator` (default, deterministic, no LLM):
  quotes the units a learned selector ranks best, each followed by ``[doc:ID]``.
* :class:`LLMGenerator`: any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server,
  OpenAI) through :class:`citewise.models.chat.OpenAIChatModel`, with numbered sources fenced as
  untrusted data in a prompt sized to the model (:mod:`citewise.answer.llm_prompt`), its
  sentences checked against the sources (:mod:`citewise.answer.attribution`).

A draft is never shown as is: :func:`citewise.answer.citations.enforce_citations` checks it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from citewise.answer.context import Context
from citewise.answer.draft import Draft  # noqa: F401 - re-exported
from citewise.core import ABSTENTION_TEXT, CitewiseError

GENERATORS = ("extractive", "llm")


@runtime_checkable
class Generator(Protocol):
    """Anything that drafts a cited answer from a context."""

    name: str

    def generate(self, question: str, context: Context, **signals) -> Draft:
        """Draft an answer to ``question`` from ``context`` only. ``signals`` may carry
        ``qvec`` (question embedding) and ``evidence`` (:class:`~citewise.answer.evidence.Evidence`),
        which a generator may use or ignore."""
        ...


def trusted_context(context: Context) -> tuple[Context, list[str]]:
    """``context`` without its untrusted chunks (text that reads as instructions to a model,
    :func:`citewise.text.trust.instruction_like`) when at least one trusted chunk remains, and the
    ids of the chunks left out. An injected page also carries the false facts it wants repeated
    (Greshake et al. 2023), so the model never reads it beside a page that may state the asked
    fact; with no trusted chunk the context is kept whole (the model's reply is still checked
    sentence by sentence, and instruction units support nothing)."""
    from dataclasses import replace

    from citewise.text.trust import instruction_like

    untrusted = [c for c in context.chunks if instruction_like(c.text)]
    if not untrusted or len(untrusted) == len(context.chunks):
        return context, []
    kept = [c for c in context.chunks if c not in untrusted]
    return replace(context, chunks=kept), [c.chunk_id for c in untrusted]


class LLMGenerator:
    """Draft answers with a chat model.

    Per question: untrusted chunks are left out while a trusted one remains
    (:func:`trusted_context`), the prompt is sized to the model's context window
    (:func:`citewise.answer.llm_prompt.build_prompt`; the window from the settings, else from the
    server, else 4,096), sent (streamed to ``on_delta`` when given), and the reply's numbered
    markers mapped back to ids and every sentence checked against the sources
    (:mod:`citewise.answer.attribution`). A context-overflow error is answered once with a prompt
    sized to the window the server named, scaled by the ratio of the server's token count to
    ours. When the model fails (connection, timeout, HTTP error), ``fallback = "extractive"``
    answers with the extractive generator and says so in the draft's notes; ``"error"`` raises.

    Args:
        model: a :class:`citewise.models.chat.ChatModel` (``OpenAIChatModel``).
        max_tokens: output tokens to reserve (``llm.max_output_tokens``).
        units: the index's :class:`~citewise.answer.units.UnitCache` (ranking the sources and
            the dense half of attribution; None: lexical attribution, context order).
        fallback: ``extractive`` | ``error``.
        max_prompt_tokens: cap of the whole prompt (None: what the window leaves).

    Raises (from :meth:`generate`, with ``fallback = "error"``):
        ChatError: the endpoint failed.
    """

    name = "llm"
    FALLBACKS = ("extractive", "error")

    def __init__(
        self, model, max_tokens: int = 512, units=None, fallback: str = "error", max_prompt_tokens: int | None = None
    ):
        if fallback not in self.FALLBACKS:
            raise CitewiseError(f"llm.fallback must be one of {', '.join(self.FALLBACKS)}, got {fallback!r}")
        self.model = model
        self.max_tokens = max_tokens
        self.units = units
        self.fallback = fallback
        self.max_prompt_tokens = max_prompt_tokens
        self._extractive = None

    @classmethod
    def from_settings(cls, settings=None, units=None, **overrides) -> "LLMGenerator":
        """The generator of ``[llm]`` / ``[llm.answer]`` (:class:`citewise.settings.Settings`;
        None: :func:`~citewise.settings.load_settings`); keyword overrides (``base_url``,
        ``model``, ``api_key`` ...) win.

        Raises:
            ChatError: no endpoint or model configured.
        """
        import dataclasses

        from citewise.models.chat import ChatConfig, OpenAIChatModel
        from citewise.settings import load_settings

        llm = (settings or load_settings()).llm
        cfg = ChatConfig.from_settings(llm, "answer")
        cfg = dataclasses.replace(cfg, **{k: v for k, v in overrides.items() if v is not None})
        return cls(
            OpenAIChatModel(cfg),
            cfg.max_output_tokens,
            units=units,
            fallback=llm.fallback,
            max_prompt_tokens=cfg.max_prompt_tokens,
        )

    @classmethod
    def from_env(cls, **overrides) -> "LLMGenerator":
        """:meth:`from_settings` with the settings files and environment."""
        return cls.from_settings(None, **overrides)

    def _window(self) -> tuple[int, str]:
        from citewise.models.chat import DEFAULT_CONTEXT_WINDOW

        if hasattr(self.model, "context_window"):
            return self.model.context_window(), getattr(self.model, "window_source", "")
        return DEFAULT_CONTEXT_WINDOW, "default"

    def prompt(self, question: str, context: Context, qvec=None, window: int | None = None):
        """The :class:`~citewise.answer.llm_prompt.Prompt` for ``question`` (``window``: tokens,
        default the model's)."""
        from citewise.answer.llm_prompt import build_prompt

        w, source = self._window() if window is None else (window, "overflow")
        return build_prompt(
            question,
            context,
            context_window=w,
            max_output_tokens=self.max_tokens,
            max_prompt_tokens=self.max_prompt_tokens,
            qvec=qvec,
            units=self.units,
            window_source=source,
        )

    def generate(self, question: str, context: Context, **signals) -> Draft:
        from citewise.models.chat import ChatError, ContextOverflow
        from citewise.text.tokens import count_tokens

        qvec = signals.get("qvec")
        if qvec is None and self.units is not None:
            qvec = self.units.embedder.embed([question])[0]
        on_delta = signals.get("on_delta")
        context, withheld = trusted_context(context)
        prompt = self.prompt(question, context, qvec)
        info: dict = {"model": getattr(getattr(self.model, "config", None), "model", ""), "tries": 1}
        if withheld:
            info["untrusted_withheld"] = withheld
        try:
            try:
                resp = self.model.chat(prompt.messages, max_tokens=prompt.max_output, on_delta=on_delta)
            except ContextOverflow as e:
                window = e.context_window or int(prompt.budget["context_window"] * 0.6)
                if e.prompt_tokens:  # the server's tokenizer counts more than o200k: size for its count
                    window = int(window * min(1.0, prompt.tokens / e.prompt_tokens))
                info.update(overflow=str(e), tries=2, overflow_counted=prompt.tokens, overflow_server=e.prompt_tokens)
                prompt = self.prompt(question, context, qvec, window=window)
                resp = self.model.chat(prompt.messages, max_tokens=prompt.max_output, on_delta=on_delta)
        except ChatError as e:
            if self.fallback != "extractive":
                raise
            return self._fall_back(question, context, e, prompt, info, signals)
        info.update(
            _prompt_info(prompt),
            usage=dict(resp.usage or {}),
            seconds=round(resp.seconds, 3),
            first_token_s=resp.first_token_s,
            raw=(resp.content or ""),
        )
        info["prompt_tokens_counted"] = prompt.tokens
        info["reply_tokens_counted"] = count_tokens(resp.content or "")
        return self.check(resp.content or "", prompt, info)

    def check(self, reply: str, prompt, info: dict | None = None) -> Draft:
        """A draft from the model's ``reply`` to ``prompt``: markers mapped, every sentence
        attributed or withdrawn (:mod:`citewise.answer.attribution`)."""
        from citewise.answer.attribution import attribute, context_sources, map_markers
        from citewise.answer.citations import is_abstention, split_cited_sentences
        from citewise.core import Reason, ReasonCode

        info = dict(info or {})
        reply = reply.strip()
        first = split_cited_sentences(reply)[:1]
        # the abstention sentence first is an abstention, whatever follows (small models go on
        # to repeat the prompt's rules: "I have no document on this. At most three sentences.")
        if is_abstention(reply) or (first and is_abstention(first[0][0])):
            return Draft(
                ABSTENTION_TEXT,
                self.name,
                messages=prompt.messages,
                llm=info,
                reason=Reason.of(ReasonCode.MODEL_ABSTAINED),
            )
        mapped, bad = map_markers(reply, [f"[doc:{s.chunk.doc_id}]" for s in prompt.sources])
        sources = context_sources([s.chunk for s in prompt.sources], self.units)
        embed = self.units.embedder.embed if self.units is not None else None
        checked = attribute(mapped, sources, embed, bad)
        info["attribution"] = {
            "attributed": len(checked.attributed),
            "recited": len(checked.recited),
            "withdrawn": len(checked.withdrawn),
            "malformed": checked.malformed,
            "fabricated": checked.fabricated,
            "support": {s: list(v) for s, v in checked.alignments.items()},
        }
        if not checked.kept:
            return Draft(
                ABSTENTION_TEXT,
                self.name,
                messages=prompt.messages,
                notes=checked.notes,
                withdrawn=checked.withdrawn,
                llm=info,
                fabricated=checked.fabricated,
                reason=Reason.of(ReasonCode.MODEL_ANSWER_UNSUPPORTED, withdrawn=len(checked.withdrawn)),
            )
        return Draft(
            checked.text,
            self.name,
            messages=prompt.messages,
            notes=checked.notes,
            withdrawn=checked.withdrawn,
            llm=info,
            fabricated=checked.fabricated,
        )

    def _fall_back(self, question, context, error, prompt, info, signals) -> Draft:
        if self._extractive is None:
            from citewise.answer.select.generator import ExtractiveGenerator
            from citewise.answer.unit_cache import UnitCache

            if self.units is None:
                raise CitewiseError(
                    f"the language model failed ({error}) and no extractive fallback is set up"
                ) from None
            self._extractive = ExtractiveGenerator(
                self.units if isinstance(self.units, UnitCache) else UnitCache(self.units.embedder)
            )
        draft = self._extractive.generate(question, context, **{k: v for k, v in signals.items() if k != "on_delta"})
        info.update(_prompt_info(prompt), error=str(error), fallback="extractive")
        draft.generator = "extractive (llm fallback)"
        draft.messages = prompt.messages
        draft.llm = info
        draft.notes = [
            f"The language model failed ({error}); this answer was written by the extractive "
            f'generator instead (llm.fallback = "extractive").'
        ] + list(draft.notes)
        return draft


def _prompt_info(prompt) -> dict:
    return {
        "messages": prompt.messages,
        "prompt_tokens": prompt.tokens,
        "max_output": prompt.max_output,
        "budget": dict(prompt.budget),
        "compact": prompt.compact,
        "sources": [
            {"n": s.number, "doc_id": s.chunk.doc_id, "chunk_id": s.chunk.chunk_id, "excerpt": s.excerpt}
            for s in prompt.sources
        ],
        "left_out": list(prompt.left_out),
    }


def make_generator(name: str, embedder=None, units=None, **kw) -> Generator:
    """A generator by name: ``extractive`` (needs ``embedder`` or a ``units`` cache) or ``llm``
    (configured from ``settings=`` or the settings files and environment; ``base_url``,
    ``model``, ``api_key`` ... override it).

    Raises:
        CitewiseError: unknown name (the message lists the valid ones); ChatError when the LLM
            is not configured.
    """
    if name == "extractive":
        from citewise.answer.select.generator import ExtractiveGenerator
        from citewise.answer.unit_cache import UnitCache

        return ExtractiveGenerator(units or UnitCache(embedder), **kw)
    if name == "llm":
        return LLMGenerator.from_settings(kw.pop("settings", None), units=units, **kw)
    raise CitewiseError(f"unknown generator '{name}' (valid: {', '.join(GENERATORS)})")
