"""OpenTelemetry traces following the GenAI semantic conventions; off (no-op) unless configured.

Spans (names and ``gen_ai.operation.name`` as the OpenTelemetry GenAI semantic conventions
define them, https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/):

=======================================  ======================  ===================================
span name                                gen_ai.operation.name   where
=======================================  ======================  ===================================
``invoke_workflow answer``               ``invoke_workflow``     :meth:`Answerer.answer` (retrieve →
                                                                 evidence → assemble → generate →
                                                                 citation check)
``invoke_workflow route``                ``invoke_workflow``     ``route_and_answer`` (record tools)
``retrieval {retriever}``                ``retrieval``           every retriever's search (hybrid
                                                                 and shipped have ``bm25`` and
                                                                 ``dense`` children)
``embeddings {model}``                   ``embeddings``          the MiniLM and hashing embedders
``chat {model}``                         ``chat``                the OpenAI-compatible client
``execute_tool {tool}``                  ``execute_tool``        ``ToolSet.call``
``invoke_agent citewise``                ``invoke_agent``        the ReAct loop (``Agent.run``)
``evaluate faithfulness``                (none)                  the LLM faithfulness judge
=======================================  ======================  ===================================

Evaluation results are span events named ``gen_ai.evaluation.result`` with
``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``, ``gen_ai.evaluation.score.label``
(and ``gen_ai.evaluation.explanation`` when there is one): the evidence score against the
abstention threshold and the citation check on every answer, and each judge verdict.

Question and document text is not recorded unless
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` (the GenAI instrumentations' switch):
then retrieval spans carry the query (``gen_ai.retrieval.query.text``) and the retrieved chunk ids.

Export: :func:`configure` installs an SDK tracer provider with an OTLP/HTTP exporter
(``opentelemetry-exporter-otlp-proto-http``) when it is given an endpoint or when
``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set. Otherwise nothing
is installed and :func:`tracer` returns the OpenTelemetry API's no-op tracer: spans are
non-recording and attribute helpers return at once (``bench/trace_overhead.py`` measures the cost).
An application that installs its own tracer provider (``opentelemetry-instrument``, a test's
in-memory exporter) gets citewise's spans there.

An unreachable collector costs a command at most about :data:`EXPORT_TIMEOUT_S` (1 s): each export
request gets that timeout (the exporter's ``timeout``; ``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`` /
``OTEL_EXPORTER_OTLP_TIMEOUT``, in seconds, win when set), the exporter's retries stay inside it,
the exit waits for the last batch no longer than the timeout plus :data:`EXIT_GRACE_S`, and after
a failed export the next :data:`RETRY_AFTER_S` seconds of spans are dropped without a connection
attempt. A failure is one ``warning:`` line on stderr naming the endpoint and the cause (the
exporter's own log lines are silenced), printed once per outage.
"""

from __future__ import annotations

from citewise.telemetry.spans import (  # noqa: F401
    _api,
    _cause,
    _export_timeout,
    _EXPORTER_LOGGER,
    _lock,
    _recording_session,
    _SCOPE,
    _shutdown_within,
    _traces_url,
    capture_content,
    CAPTURE_CONTENT_ENV,
    configure,
    DATA_SOURCE_ID,
    EMBEDDINGS_DIMENSION,
    ERROR_TYPE,
    EVALUATION_EVENT,
    evaluation_event,
    EVALUATION_EXPLANATION,
    EVALUATION_LABEL,
    EVALUATION_NAME,
    EVALUATION_SCORE,
    EXIT_GRACE_S,
    EXPORT_TIMEOUT_S,
    GuardedExporter,
    operation,
    OPERATION,
    otlp_endpoint,
    PROVIDER,
    REQUEST_MAX_TOKENS,
    REQUEST_MODEL,
    REQUEST_TEMPERATURE,
    REQUEST_TOP_K,
    RESPONSE_FINISH_REASONS,
    RESPONSE_ID,
    RESPONSE_MODEL,
    RETRIEVAL_QUERY,
    RETRY_AFTER_S,
    set_attributes,
    TOOL_NAME,
    TOOL_TYPE,
    tracer,
    USAGE_INPUT_TOKENS,
    USAGE_OUTPUT_TOKENS,
    use_provider,
    WORKFLOW_NAME,
)
from citewise.telemetry.decorators import (  # noqa: F401
    record_answer,
    traced_agent,
    traced_answer,
    traced_chat,
    traced_embeddings,
    traced_judge,
    traced_retrieval,
    traced_route,
    traced_tool_call,
)
