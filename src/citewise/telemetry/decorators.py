"""The ``traced_*`` decorators that wrap citewise's retrievers, embedders, answerers, router,
judges, chat client, tools and agent in GenAI spans (:mod:`citewise.telemetry`)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, TypeVar, cast

from citewise.telemetry.spans import (
    DATA_SOURCE_ID,
    EMBEDDINGS_DIMENSION,
    ERROR_TYPE,
    OPERATION,
    PROVIDER,
    REQUEST_MAX_TOKENS,
    REQUEST_MODEL,
    REQUEST_TEMPERATURE,
    REQUEST_TOP_K,
    RESPONSE_FINISH_REASONS,
    RESPONSE_ID,
    RESPONSE_MODEL,
    RETRIEVAL_QUERY,
    TOOL_NAME,
    TOOL_TYPE,
    USAGE_INPUT_TOKENS,
    USAGE_OUTPUT_TOKENS,
    WORKFLOW_NAME,
    capture_content,
    evaluation_event,
    operation,
    set_attributes,
    tracer,
)


if TYPE_CHECKING:
    from opentelemetry import trace


_F = TypeVar("_F", bound=Callable[..., Any])


def traced_retrieval(fn: _F) -> _F:
    """Decorate a retriever's ``search(query, k, ...)`` (or ``candidates``) with a
    ``retrieval {name}`` span: ``gen_ai.data_source.id`` (the retriever), ``gen_ai.request.top_k``
    and ``citewise.retrieval.hits`` (how many came back)."""

    @functools.wraps(fn)
    def wrapper(self, query, k=10, *args, **kwargs):
        with tracer().start_as_current_span(f"retrieval {self.name}") as span:
            if not span.is_recording():
                return fn(self, query, k, *args, **kwargs)
            span.set_attributes({OPERATION: "retrieval", DATA_SOURCE_ID: self.name, REQUEST_TOP_K: int(k)})
            if capture_content():
                span.set_attribute(RETRIEVAL_QUERY, str(query))
            result = fn(self, query, k, *args, **kwargs)
            span.set_attribute("citewise.retrieval.hits", len(result))
            if capture_content():
                span.set_attribute("citewise.retrieval.chunk_ids", [getattr(h, "chunk_id", "") for h in result])
            return result

    return cast(_F, wrapper)  # functools.wraps: the signature of fn


def traced_embeddings(fn: Callable) -> Callable:
    """Decorate an embedder's ``embed(texts)`` with an ``embeddings {model}`` span:
    ``gen_ai.request.model`` (the embedder's name), ``gen_ai.embeddings.dimension.count`` and
    ``citewise.embeddings.inputs`` (texts embedded)."""

    @functools.wraps(fn)
    def wrapper(self, texts, *args, **kwargs):
        with tracer().start_as_current_span(f"embeddings {self.name}") as span:
            if span.is_recording():
                span.set_attributes(
                    {
                        OPERATION: "embeddings",
                        REQUEST_MODEL: self.name,
                        EMBEDDINGS_DIMENSION: int(self.dim),
                        "citewise.embeddings.inputs": len(texts),
                    }
                )
            return fn(self, texts, *args, **kwargs)

    return wrapper


def traced_answer(fn: Callable) -> Callable:
    """Decorate ``Answerer.answer(question, ...)`` with an ``invoke_workflow answer`` span.

    Attributes: ``citewise.answer.outcome``, ``citewise.answer.citations``,
    ``citewise.answer.abstain_reason``, ``citewise.answer.generator``. Events
    (``gen_ai.evaluation.result``): ``evidence_score`` (the evidence score; label ``sufficient``
    when it reaches the answerer's threshold, else ``insufficient``, explanation the abstention
    reason) and ``citation_check`` (score = fabricated citations dropped; label ``pass`` when none
    was fabricated and no sentence was dropped, else ``dropped``).
    """

    @functools.wraps(fn)
    def wrapper(self, question, *args, **kwargs):
        with tracer().start_as_current_span("invoke_workflow answer") as span:
            if not span.is_recording():
                return fn(self, question, *args, **kwargs)
            span.set_attributes({OPERATION: "invoke_workflow", WORKFLOW_NAME: "answer"})
            ans = fn(self, question, *args, **kwargs)
            record_answer(span, ans)
            evidence = getattr(ans, "evidence", None)
            if evidence:
                threshold = getattr(self, "threshold", None)
                sufficient = threshold is None or ans.best_score >= threshold
                evaluation_event(
                    "evidence_score",
                    ans.best_score,
                    "sufficient" if sufficient else "insufficient",
                    None if sufficient or ans.reason is None else ans.reason.code.value,
                    span=span,
                )
            if ans.context_ids:  # a draft was generated and its citations checked
                clean = not ans.fabricated and not ans.dropped
                evaluation_event(
                    "citation_check",
                    len(ans.fabricated),
                    "pass" if clean else "dropped",
                    None
                    if clean
                    else f"{len(ans.fabricated)} fabricated citation(s), {len(ans.dropped)} sentence(s) dropped",
                    span=span,
                )
            return ans

    return wrapper


def record_answer(span: trace.Span, ans: Any) -> None:
    """Set an Answer's outcome, citation count, abstention reason and generator on ``span``."""
    if ans is None or not span.is_recording():
        return
    set_attributes(
        span,
        {
            "citewise.answer.outcome": ans.outcome,
            "citewise.answer.citations": len(ans.citations),
            # the reason's code only: its fields can hold the question's words
            "citewise.answer.abstain_reason": ans.reason.code.value if ans.reason is not None else None,
            "citewise.answer.generator": ans.generator or None,
            "citewise.answer.tool_calls": len(ans.tool_calls) or None,
        },
    )


def traced_route(fn: Callable) -> Callable:
    """Decorate ``route_and_answer`` with an ``invoke_workflow route`` span; ``citewise.route``
    is ``records`` when a record tool answered, else ``documents`` (the caller answers)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with tracer().start_as_current_span("invoke_workflow route") as span:
            if not span.is_recording():
                return fn(*args, **kwargs)
            span.set_attributes({OPERATION: "invoke_workflow", WORKFLOW_NAME: "route"})
            ans = fn(*args, **kwargs)
            span.set_attribute("citewise.route", "records" if ans is not None else "documents")
            record_answer(span, ans)
            return ans

    return wrapper


def traced_judge(name: str) -> Callable[[Callable], Callable]:
    """Decorate a judge's ``judge(...) -> Verdict`` with a ``{name}`` evaluation span whose
    ``gen_ai.evaluation.result`` event carries the verdict (label ``pass``/``fail``, score 1/0,
    explanation the failure reason or the unsupported claims)."""

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with tracer().start_as_current_span(f"evaluate {name}") as span:
                verdict = fn(*args, **kwargs)
                if span.is_recording():
                    why = verdict.error or "; ".join(verdict.unsupported_claims)
                    evaluation_event(
                        name,
                        1.0 if verdict.passed else 0.0,
                        "pass" if verdict.passed else "fail",
                        why or None,
                        span=span,
                    )
                return verdict

        return wrapper

    return decorate


def traced_chat(fn: Callable) -> Callable:
    """Decorate ``OpenAIChatModel.chat`` with a ``chat {model}`` span.

    Attributes: ``gen_ai.provider.name`` (``openai``: the wire format spoken), ``gen_ai.request.model``,
    ``gen_ai.request.max_tokens``, ``gen_ai.request.temperature``, ``server.address`` /
    ``server.port``, ``citewise.chat.tools`` (tools offered); from the response
    ``gen_ai.response.model``, ``gen_ai.response.id``, ``gen_ai.response.finish_reasons`` and the
    token usage the endpoint reports (``usage.prompt_tokens`` → ``gen_ai.usage.input_tokens``,
    ``usage.completion_tokens`` → ``gen_ai.usage.output_tokens``). A failure sets ``error.type``
    (``ChatError``) and the span status.
    """

    @functools.wraps(fn)
    def wrapper(self, messages, tools=None, tool_choice=None, max_tokens=None, **kw):
        config = self.config
        with operation("chat", config.model) as span:
            if span.is_recording():
                from urllib.parse import urlsplit

                url = urlsplit(config.base_url)
                set_attributes(
                    span,
                    {
                        PROVIDER: "openai",
                        REQUEST_MODEL: config.model,
                        REQUEST_MAX_TOKENS: max_tokens,
                        REQUEST_TEMPERATURE: config.temperature,
                        "server.address": url.hostname,
                        "server.port": url.port,
                        "citewise.chat.tools": len(tools) if tools else None,
                    },
                )
            resp = fn(self, messages, tools=tools, tool_choice=tool_choice, max_tokens=max_tokens, **kw)
            if span.is_recording():
                raw, usage = resp.raw or {}, resp.usage or {}

                def count(key):
                    v = usage.get(key)
                    return v if isinstance(v, int) and not isinstance(v, bool) else None

                set_attributes(
                    span,
                    {
                        RESPONSE_MODEL: raw.get("model") if isinstance(raw.get("model"), str) else None,
                        RESPONSE_ID: raw.get("id") if isinstance(raw.get("id"), str) else None,
                        RESPONSE_FINISH_REASONS: [resp.finish_reason] if resp.finish_reason else None,
                        USAGE_INPUT_TOKENS: count("prompt_tokens"),
                        USAGE_OUTPUT_TOKENS: count("completion_tokens"),
                        "citewise.chat.tool_calls": len(resp.tool_calls) or None,
                    },
                )
            return resp

    return wrapper


def traced_tool_call(fn: Callable) -> Callable:
    """Decorate ``ToolSet.call(name, args)`` with an ``execute_tool {name}`` span:
    ``gen_ai.tool.name``, ``gen_ai.tool.type`` (``function``), ``citewise.tool.rows`` (rows in the
    observation) and, for an error observation, ``error.type`` = ``tool_error`` and the message in
    ``citewise.tool.error``."""

    @functools.wraps(fn)
    def wrapper(self, name, args, *rest, **kwargs):
        with operation("execute_tool", str(name)) as span:
            if not span.is_recording():
                return fn(self, name, args, *rest, **kwargs)
            set_attributes(span, {TOOL_NAME: str(name), TOOL_TYPE: "function"})
            obs = fn(self, name, args, *rest, **kwargs)
            if isinstance(obs, dict) and "error" in obs:
                set_attributes(span, {ERROR_TYPE: "tool_error", "citewise.tool.error": str(obs["error"])[:500]})
            elif isinstance(obs, dict) and isinstance(obs.get("row_count"), int):
                span.set_attribute("citewise.tool.rows", obs["row_count"])
            return obs

    return wrapper


def traced_agent(fn: Callable) -> Callable:
    """Decorate ``Agent.run(question)`` with an ``invoke_agent citewise`` span
    (``gen_ai.agent.name``; ``citewise.agent.stopped`` and ``citewise.agent.iterations`` from the
    result). Its chat and tool calls are children (the agent carries the context into its threads)."""

    @functools.wraps(fn)
    def wrapper(self, question, *args, **kwargs):
        with operation("invoke_agent", "citewise", **{"gen_ai.agent.name": "citewise"}) as span:
            result = fn(self, question, *args, **kwargs)
            set_attributes(
                span, {"citewise.agent.stopped": result.stopped, "citewise.agent.iterations": result.iterations}
            )
            return result

    return wrapper
