"""The LLM path against a real local model: a llama.cpp server (llama-cpp-python) on 127.0.0.1.

Starts ``python -m llama_cpp.server`` with a GGUF (``--gguf``; default: the one the recipe
``bench/llm_setup.sh`` builds) and measures, section by section (``--sections``):

* ``answers`` — the same questions answered by the extractive path and by the LLM path (prompt
  sized to the server's window, numbered sources, sentence attribution, streamed): per answer
  the text, outcome, citations, withdrawn sentences, seconds, the server's token counts and
  ours. Questions: a fixed sample of the bundled sample corpus's golden and out-of-scope sets and
  of ``bench/realdocs/questions-dev.jsonl`` (``--answers N`` per set, every k-th question).
* ``judge`` — the faithfulness judge on the LLM answers labelled by hand in
  ``bench/llm_local/labels.jsonl`` (agreement and Cohen's kappa; judge and labels read the reply
  against the sources it rests on: :func:`judged_sources`), and RAGAS faithfulness of wholly
  false answers.
* ``tools`` — tool selection with real tool calls on a sample of the BFCL sets (simple,
  multiple, parallel_multiple, irrelevance; ``--bfcl N`` each): TSA, argument accuracy, which
  form the calls came in, repair turns; the embedding selector beside it on the same cases.
* ``router`` — the LLM router on the sample routing set (``--router N`` questions) beside the
  rule router.
* ``agent`` — the ReAct agent on record and both questions of the sample routing set with the
  sample records database: expected tool called, citation check of the final answer.

Every exchange with the server is recorded; ``--record DIR`` stores chosen ones as replay files
for the tests (``tests/data/llm``). Results go to ``--out`` (JSONL per section and a summary);
``--report`` prints the table of a finished run (with the hand labels) without a server.

    python bench/llm_local.py --gguf MODEL.gguf --server-python VENV/bin/python --sections answers
    python bench/llm_local.py --report
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "llm_local"
HOME = Path(os.environ.get("CITEWISE_LLM_HOME", Path.home() / ".cache" / "citewise" / "llm"))
DEFAULT_GGUF = HOME / "models" / "qwen2.5-0.5b-instruct-q4_k_m.gguf"
DEFAULT_PYTHON = HOME / "venv38" / "bin" / "python"
SHARED = Path(os.environ.get("CITEWISE_SHARED_DATA", REPO.parent / "shared" / "data"))


# -- the server ------------------------------------------------------------------------------
class Server:
    """A llama-cpp-python server process on 127.0.0.1 (stopped on exit)."""

    def __init__(self, python: Path, gguf: Path, port: int, n_ctx: int, threads: int, log: Path):
        self.cmd = [
            str(python),
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(n_ctx),
            "--n_threads",
            str(threads),
            # the server's default keeps the logits of every prompt token: 7.1 GB resident for a
            # 1,759-token prompt with the 0.5B model, 0.28 GB without
            "--logits_all",
            "false",
            "--embedding",
            "false",
        ]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.log = log
        self.proc = None
        self.version = subprocess.run(
            [str(python), "-c", "import llama_cpp; print(llama_cpp.__version__)"], capture_output=True, text=True
        ).stdout.strip()

    def __enter__(self):
        self.proc = subprocess.Popen(self.cmd, stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        t0 = time.time()
        while time.time() - t0 < 600:
            if self.proc.poll() is not None:
                raise SystemExit(f"the server exited (status {self.proc.returncode}); see {self.log}")
            try:
                if httpx.get(self.base_url + "/models", timeout=5).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(2)
        raise SystemExit(f"the server did not answer within 600 s; see {self.log}")

    def model_name(self) -> str:
        """The GGUF's ``general.name`` as the server logged it ('' when not logged)."""
        m = (
            re.search(r"'general\.name': '([^']*)'", self.log.read_text(errors="replace"))
            if self.log.exists()
            else None
        )
        return m.group(1) if m else ""

    def __exit__(self, *exc):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


# -- recording -------------------------------------------------------------------------------
class _Tee(httpx.SyncByteStream):
    def __init__(self, inner, entry: dict, t0: float):
        self.inner, self.entry, self.t0 = inner, entry, t0

    def __iter__(self):
        chunks = self.entry.setdefault("chunks", [])  # kept as read: a reader may stop at [DONE]
        for chunk in self.inner:
            chunks.append([round(time.perf_counter() - self.t0, 3), chunk.decode("utf-8", "replace")])
            self.entry["seconds"] = chunks[-1][0]
            yield chunk

    def close(self):
        self.inner.close()


class Recorder(httpx.BaseTransport):
    """An httpx transport that keeps every exchange: request body, status, content type, and
    the response body as ``[seconds since the request, text]`` chunks."""

    def __init__(self):
        self.inner = httpx.HTTPTransport()
        self.log: list[dict] = []

    def handle_request(self, request):
        t0 = time.perf_counter()
        body = json.loads(request.content) if request.content else None
        resp = self.inner.handle_request(request)
        entry = {
            "method": request.method,
            "path": request.url.path,
            "request": body,
            "status": resp.status_code,
            "content_type": resp.headers.get("content-type", ""),
        }
        self.log.append(entry)
        return httpx.Response(
            resp.status_code, headers=resp.headers, stream=_Tee(resp.stream, entry, t0), extensions=resp.extensions
        )


def model(base_url: str, recorder: Recorder, use: str, **kw):
    from citewise.models.chat import ChatConfig, OpenAIChatModel

    cfg = ChatConfig(base_url, "local", read_timeout_s=kw.pop("read_timeout_s", 1800), retries=0, use=use, **kw)
    return OpenAIChatModel(cfg, transport=recorder)


# -- questions -------------------------------------------------------------------------------
def every_kth(rows: list[dict], n: int) -> list[dict]:
    """``n`` rows spread evenly over ``rows`` (indices 0, k, 2k ... with k = len // n)."""
    if n >= len(rows):
        return rows
    k = len(rows) / n
    return [rows[int(i * k)] for i in range(n)]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def answer_questions(n: int) -> list[dict]:
    """The answer questions: ``n`` sample in-scope, ``n // 3`` sample out-of-scope, ``n`` real-docs
    in-scope and ``n // 3`` real-docs out-of-scope or false-premise, every k-th of each."""
    from citewise.demo import sample_dir

    s = sample_dir()
    out = [dict(q, set="sample", in_scope=True) for q in every_kth(read_jsonl(s / "golden.jsonl"), n)]
    out += [
        dict(q, set="sample", in_scope=False) for q in every_kth(read_jsonl(s / "out_of_scope.jsonl"), max(1, n // 3))
    ]
    rd = read_jsonl(REPO / "bench" / "realdocs" / "questions-dev.jsonl")
    out += [dict(q, set="realdocs", in_scope=True) for q in every_kth([q for q in rd if q["kind"] == "in_scope"], n)]
    out += [
        dict(q, set="realdocs", in_scope=False)
        for q in every_kth([q for q in rd if q["kind"] != "in_scope"], max(1, n // 3))
    ]
    return out


# -- sections --------------------------------------------------------------------------------
def _answer_row(ans) -> dict:
    from citewise.answer.citations import split_cited_sentences

    return {
        "text": ans.text,
        "outcome": ans.outcome,
        "generator": ans.generator,
        "cited": [c.doc_id for c in ans.citations],
        "dropped": ans.dropped,
        "notes": ans.notes,
        "sentences": len(split_cited_sentences(ans.text)) if ans.outcome != "abstained" else 0,
        "reason": ans.abstain_reason,
        "seconds": round(ans.timings.get("total_s", 0.0), 3),
    }


def run_answers(args, base_url, rec) -> list[dict]:
    from citewise.answer.generators import LLMGenerator
    from citewise.core import CitewiseError
    from citewise.index import Index

    sets = args.answer_sets.split(",")
    indexes = {
        name: Index.open(path)
        for name, path in (("sample", args.sample_index), ("realdocs", args.realdocs_index))
        if name in sets
    }
    gens = {
        name: LLMGenerator(
            model(base_url, rec, "answer", stream=True), 512, units=idx.answerer().units, fallback="error"
        )
        for name, idx in indexes.items()
    }
    rows = []
    out = open(args.out / "answers.jsonl", "a", encoding="utf-8")
    done = {r["id"] for r in read_jsonl(args.out / "answers.jsonl")} if (args.out / "answers.jsonl").exists() else set()
    for q in answer_questions(args.answers):
        if q["id"] in done or q["set"] not in indexes:
            continue
        idx = indexes[q["set"]]
        ext = idx.ask(q["text"], 5)
        t0 = time.perf_counter()
        try:
            llm = idx.ask(q["text"], 5, generator=gens[q["set"]])
            llm_row = {**_answer_row(llm), "llm": llm.llm}
        except CitewiseError as e:
            llm_row = {"error": str(e)}
        llm_row["wall_s"] = round(time.perf_counter() - t0, 3)
        row = {
            "id": q["id"],
            "set": q["set"],
            "in_scope": q["in_scope"],
            "question": q["text"],
            "expected_docs": q.get("expected_docs") or sorted(q.get("relevant") or {}),
            "expected_answer": q.get("expected_answer"),
            "extractive": _answer_row(ext),
            "llm": llm_row,
        }
        rows.append(row)
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.flush()
        print(
            f"{q['id']}: {llm_row.get('outcome', 'error')} in {llm_row['wall_s']:.0f} s: "
            f"{(llm_row.get('text') or llm_row.get('error', ''))[:100]!r}",
            flush=True,
        )
    return rows


def run_tools(args, base_url, rec) -> list[dict]:
    from citewise.index import Index
    from citewise.tools.bfcl import embedding_selector, evaluate_bfcl, load_bfcl
    from citewise.models.chat import ChatError

    chat = model(base_url, rec, "router", max_output_tokens=256)
    emb = Index.open(args.sample_index).embedder
    rows = []
    for cat in ("simple_python", "multiple", "parallel_multiple", "irrelevance"):
        cases = every_kth(load_bfcl(SHARED / "bfcl", cat), args.bfcl)
        formats: list[str] = []
        errors: list[str] = []

        def select(question, tools):
            n0 = len(rec.log)
            try:
                resp = chat.chat([{"role": "user", "content": question}], tools=tools, tool_choice="auto")
            except ChatError as e:
                errors.append(str(e)[:200])
                formats.append("error")
                return []
            formats.append((resp.tool_format or "none") + ("+repair" if resp.repaired else ""))
            rows.append(
                {
                    "category": cat,
                    "question": question[:200],
                    "calls": [[c.name, c.arguments] for c in resp.tool_calls],
                    "format": formats[-1],
                    "requests": len(rec.log) - n0,
                    "seconds": round(resp.seconds, 2),
                }
            )
            return [(c.name, c.arguments) for c in resp.tool_calls]

        t0 = time.perf_counter()
        llm = evaluate_bfcl(select, cases)
        secs = time.perf_counter() - t0
        base = evaluate_bfcl(embedding_selector(emb), cases)
        summary = {
            "category": cat,
            "cases": len(cases),
            "llm_tsa": llm["tsa"],
            "llm_arg_accuracy": llm["arg_accuracy"],
            "embedding_tsa": base["tsa"],
            "formats": {f: formats.count(f) for f in sorted(set(formats))},
            "errors": errors,
            "seconds_per_case": round(secs / max(1, len(cases)), 1),
            "per_case": llm["per_case"],
        }
        rows.append({"summary": summary})
        print(json.dumps({k: v for k, v in summary.items() if k != "per_case"}), flush=True)
    with open(args.out / "tools.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return rows


def _sample_setup(args):
    from citewise.index import Index
    from citewise.tools.records import build_sample_db
    from citewise.tools.registry import build_toolset

    idx = Index.open(args.sample_index)
    db = build_sample_db()
    return idx, build_toolset(db, index=idx)


def run_router(args, base_url, rec) -> list[dict]:
    from citewise.demo import sample_dir
    from citewise.tools.router import LLMRouter, RuleRouter, index_probe
    from citewise.tools.tsa import evaluate_router, load_routing_set

    idx, ts = _sample_setup(args)
    tools = list(ts.tools.values())
    cases = every_kth(load_routing_set(sample_dir() / "routing.jsonl"), args.router)
    chat = model(base_url, rec, "router", max_output_tokens=256)
    t0 = time.perf_counter()
    llm = evaluate_router(LLMRouter(chat, tools), cases).as_dict()
    secs = time.perf_counter() - t0
    rule = evaluate_router(RuleRouter(tools, idx.embedder, index_probe(idx)), cases).as_dict()
    rows = [{"router": "llm", **llm, "seconds_per_case": round(secs / len(cases), 1)}, {"router": "rule", **rule}]
    with open(args.out / "router.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
    print(json.dumps({r["router"]: r["overall"] for r in rows}), flush=True)
    return rows


def run_agent(args, base_url, rec) -> list[dict]:
    from functools import partial

    from citewise.answer.agent_check import check_agent_answer
    from citewise.demo import sample_dir
    from citewise.tools.agent import Agent

    idx, ts = _sample_setup(args)
    chat = model(base_url, rec, "router", max_output_tokens=300)
    cases = [c for c in read_jsonl(sample_dir() / "routing.jsonl") if c["kind"] in ("record", "both")]
    cases = every_kth(cases, args.agent)
    rows = []
    for c in cases:
        t0 = time.perf_counter()
        res = Agent(
            chat, ts, max_iterations=3, tool_timeout_s=30, check=partial(check_agent_answer, embed=idx.embedder.embed)
        ).run(c["text"])
        called = [(r.name, r.arguments) for s in res.steps for r in s.calls]
        row = {
            "id": c["id"],
            "kind": c["kind"],
            "question": c["text"],
            "expected_tool": c.get("expected_tool"),
            "expected_args": c.get("expected_args"),
            "called": called,
            "stopped": res.stopped,
            "iterations": res.iterations,
            "answer": res.answer,
            "raw_answer": getattr(res, "raw_answer", res.answer),
            "withdrawn": getattr(res, "withdrawn", []),
            "notes": getattr(res, "notes", []),
            "seconds": round(time.perf_counter() - t0, 1),
        }
        row["tool_ok"] = any(n == c.get("expected_tool") for n, _ in called)
        row["args_ok"] = any(
            n == c.get("expected_tool") and all(a.get(k) == v for k, v in (c.get("expected_args") or {}).items())
            for n, a in called
        )
        rows.append(row)
        print(
            json.dumps({k: row[k] for k in ("id", "called", "stopped", "tool_ok", "args_ok", "seconds")}, default=str),
            flush=True,
        )
    with open(args.out / "agent.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
    return rows


_SOURCE = re.compile(r"<<<source-(\w+) \[(\d+)\] [^\n]*>>>\n(.*?)\n<<<end-\1>>>", re.S)


def source_texts(messages: list[dict]) -> list[str]:
    """The source texts shown in an answer prompt, in order."""
    user = next((m["content"] for m in messages if m.get("role") == "user"), "")
    return [t for _, _, t in _SOURCE.findall(user)]


def judged_sources(a: dict) -> list[str]:
    """The sources a reply rests on, as the judge and the hand labels read them: those its
    numbered markers cite; without markers, those the check cited it to; else the first shown."""
    info = a["llm"]["llm"]
    texts = source_texts(info.get("messages") or [])
    nums = sorted({int(n) for n in re.findall(r"\[(\d+)\]", info.get("raw") or "") if 1 <= int(n) <= len(texts)})
    if not nums:
        cited = set(a["llm"].get("cited") or [])
        nums = [s["n"] for s in info.get("sources") or [] if s["doc_id"] in cited]
    return [texts[n - 1] for n in nums] or texts[:1]


def _plain(text: str) -> str:
    """A reply without citation markers (what the judge reads)."""
    return " ".join(re.sub(r"\[(?:doc:[^\]]+|\d+(?:\s*,\s*\d+)*)\]|【\d+】", " ", text).split())


def run_judge(args, base_url, rec) -> list[dict]:
    from citewise.answer.judges import FAITHFULNESS_PROMPT, ClaimJudge, LLMFaithfulnessJudge
    from citewise.models.chat import document_room
    from citewise.text.tokens import truncate_tokens

    labels = {
        (r["id"]): r for r in read_jsonl(args.labels) if r.get("path") == "llm" and r.get("raw_faithful") is not None
    }
    answers = {r["id"]: r for r in read_jsonl(args.out / "answers.jsonl")}
    judge = LLMFaithfulnessJudge(
        model(base_url, rec, "judge", max_output_tokens=256, context_window=args.n_ctx), max_tokens=256
    )
    rows = []
    out = open(args.out / "judge.jsonl", "a", encoding="utf-8")
    done = {r["id"] for r in read_jsonl(args.out / "judge.jsonl")} if (args.out / "judge.jsonl").exists() else set()
    for qid, lab in labels.items():
        a = answers.get(qid)
        if qid in done or a is None or "llm" not in a["llm"]:
            continue
        contexts = judged_sources(a)
        answer = _plain(a["llm"]["llm"]["raw"])
        # the judge's prompt must fit the server's window too: the sources share what it leaves
        room = document_room(judge.model, 256, FAITHFULNESS_PROMPT, f"Question: {a['question']}\n\nAnswer:\n{answer}")
        contexts = [truncate_tokens(c, max(32, room // max(1, len(contexts)) - 12)) for c in contexts]
        t0 = time.perf_counter()
        v = judge.judge(a["question"], answer, contexts)
        row = {
            "id": qid,
            "label": lab["raw_faithful"],
            "faithful": v.faithful,
            "error": v.error,
            "unsupported_claims": list(v.unsupported_claims),
            "raw": v.raw,
            "seconds": round(time.perf_counter() - t0, 1),
        }
        rows.append(row)
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.flush()
        print(json.dumps({k: row[k] for k in ("id", "label", "faithful", "error", "seconds")}), flush=True)
    # RAGAS faithfulness of wholly false answers (every claim contradicts the context)
    cj = ClaimJudge(model(base_url, rec, "judge", max_output_tokens=256), max_tokens=256)
    false_cases = [
        (
            "How long is the refund window on Starter?",
            "The refund window on Starter is 90 days. Refunds are paid in cash at any office.",
            [
                "On Starter, you can get a full refund of a subscription charge within 14 days of the date of that charge. "
                "Refunds go back to the payment method that was charged."
            ],
        ),
        (
            "What does set -o pipefail do?",
            "pipefail makes bash print every command before running it. It is on by default.",
            [
                "pipefail: If set, the return value of a pipeline is the value of the last (rightmost) command to exit with a "
                "non-zero status, or zero if all commands in the pipeline exit successfully. This option is disabled by default."
            ],
        ),
    ]
    for q, ans, ctx in false_cases:
        t0 = time.perf_counter()
        claims = cj.claims(ans)
        support = cj.supported(claims, "\n\n".join(ctx)) if claims else None
        row = {
            "id": "false:" + q,
            "claims": claims,
            "supported": support,
            "faithfulness": sum(support) / len(claims) if claims and support else 0.0,
            "seconds": round(time.perf_counter() - t0, 1),
        }
        rows.append(row)
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.flush()
        print(json.dumps(row), flush=True)
    return rows


def run_capture(args, base_url, rec) -> list[dict]:
    """Exchanges the tests replay: a context overflow, a streamed reply to a long prompt (slow
    first token), tool calls with and without a system prompt."""
    from citewise.models.chat import ChatError

    chat = model(base_url, rec, "answer", max_output_tokens=64)
    filler = " ".join(
        f"Paragraph {i}: the refund window on the Pro plan is 30 days from the charge." for i in range(220)
    )
    try:
        chat.chat([{"role": "user", "content": filler + "\nHow long is the refund window?"}])
    except ChatError as e:
        print("overflow:", e, flush=True)
    pieces: list[str] = []
    long_prompt = " ".join(
        f"Note {i}: refunds on Starter are possible within 14 days of the charge." for i in range(45)
    )
    r = chat.chat(
        [{"role": "user", "content": long_prompt + "\nIn one sentence: how long is the Starter refund window?"}],
        on_delta=pieces.append,
    )
    print(f"stream: first token after {r.first_token_s} s, {len(pieces)} pieces: {r.content!r}", flush=True)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "invoice_status",
                "description": "Status of one invoice by its number",
                "parameters": {
                    "type": "object",
                    "properties": {"invoice_id": {"type": "integer"}},
                    "required": ["invoice_id"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "vector_search",
                "description": "Search the help-centre documents",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
            },
        },
    ]
    for system in (None, "You route questions to tools. Call the tool that answers the question."):
        msgs = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": "What is the status of invoice 2041?"}
        ]
        try:
            r = chat.chat(msgs, tools=tools, tool_choice="auto")
            print("tools:", r.tool_format, r.repaired, [(c.name, c.arguments) for c in r.tool_calls], flush=True)
        except ChatError as e:
            print("tools failed:", e, flush=True)
    return []


#: What ``--export`` picks from the recorded exchanges: file stem -> test of an exchange.
EXPORTS = {
    "context_overflow_400": lambda e: e["status"] == 400 and "context" in _body(e),
    "stream_slow_first_token": lambda e: (
        "event-stream" in e["content_type"] and e.get("chunks") and e["chunks"][0][0] > 5
    ),
    "tool_call_fenced_json": lambda e: (
        e["status"] == 200 and (e["request"] or {}).get("tools") and "```" in _content(e)
    ),
    "tool_call_tags": lambda e: (
        e["status"] == 200 and (e["request"] or {}).get("tools") and "<tool_call>" in _content(e)
    ),
    "answer_without_markers": lambda e: (
        e["status"] == 200
        and "Sources:" in json.dumps((e["request"] or {}).get("messages"))
        and _content(e).strip()
        and not re.search(r"\[\d", _content(e))
        and "no document" not in _content(e)
    ),
}


#: Kinds exported with the exchange before them (a repair turn and the reply it repaired).
EXPORT_PAIRS = {
    "tool_call_repair": lambda e: any(
        "could not be read" in (m.get("content") or "") for m in (e.get("request") or {}).get("messages") or []
    ),
}


def _body(e: dict) -> str:
    return "".join(c for _, c in e.get("chunks") or [])


def _content(e: dict) -> str:
    body = _body(e)
    if "event-stream" in e["content_type"]:
        out = []
        for line in body.splitlines():
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
                try:
                    out.append(json.loads(line[5:])["choices"][0]["delta"].get("content") or "")
                except (ValueError, KeyError, IndexError):
                    pass
        return "".join(out)
    try:
        return json.loads(body)["choices"][0]["message"].get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError):
        return ""


def export(args) -> int:
    """Write the first exchange of each :data:`EXPORTS` kind to ``--export`` as a replay file."""
    log = read_jsonl(args.record / "exchanges.jsonl")
    runs = read_jsonl(args.out / "runs.jsonl") if (args.out / "runs.jsonl").exists() else []
    meta = next((r for r in reversed(runs) if r.get("server", "").startswith("llama")), {})
    source = {
        "server": meta.get("server", ""),
        "model": meta.get("model", ""),
        "gguf": Path(meta.get("gguf", "")).name,
        "n_ctx": meta.get("n_ctx"),
        "captured": meta.get("date"),
    }
    args.export.mkdir(parents=True, exist_ok=True)
    posts = [e for e in log if e.get("method") == "POST"]
    for name, test in {**EXPORTS, **EXPORT_PAIRS}.items():
        at = next((i for i, e in enumerate(posts) if test(e)), None)
        if at is None:
            print(f"{name}: no such exchange recorded")
            continue
        chosen = posts[at - 1 : at + 1] if name in EXPORT_PAIRS else [posts[at]]
        keep = [{k: e.get(k) for k in ("request", "status", "content_type", "chunks")} for e in chosen]
        (args.export / f"{name}.json").write_text(
            json.dumps({"source": source, "exchanges": keep}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        print(f"{name}: {[len(k['chunks'] or []) for k in keep]} chunk(s), status {[k['status'] for k in keep]}")
    return 0


def recheck(args) -> int:
    """Run the citation check of this checkout again on the stored replies (no server): each
    row's ``llm`` gets the text, outcome, citations, withdrawn sentences and notes the current
    check gives; written to ``answers.rechecked.jsonl``, which the report reads when present."""
    from citewise.answer.citations import enforce_citations
    from citewise.answer.context import Context, ContextChunk
    from citewise.answer.generators import LLMGenerator
    from citewise.answer.llm_prompt import Prompt, Source
    from citewise.index import Index

    indexes = {"sample": args.sample_index, "realdocs": args.realdocs_index}
    gens: dict = {}
    fence = re.compile(r"<<<source-(\w+) \[(\d+)\] ([^\n]*)>>>\n(.*?)\n<<<end-\1>>>", re.S)
    out = []
    for a in read_jsonl(args.out / "answers.jsonl"):
        info = (a.get("llm") or {}).get("llm")
        if info and info.get("messages") and "raw" in info:
            if a["set"] not in gens:
                gens[a["set"]] = LLMGenerator(None, units=Index.open(indexes[a["set"]]).answerer().units)
            user = next(m["content"] for m in info["messages"] if m["role"] == "user")
            shown = {int(n): (head, text) for _, n, head, text in fence.findall(user)}
            sources = []
            for s in info["sources"]:
                head, text = shown[s["n"]]
                title, *heads = head.split(" › ")
                chunk = ContextChunk(
                    s["chunk_id"], s["doc_id"], title, "", "", (title, *heads), text, 0, len(text), s["n"]
                )
                sources.append(Source(s["n"], chunk, text, s.get("excerpt", False)))
            prompt = Prompt(info["messages"], sources, info["prompt_tokens"], info["max_output"], info["budget"])
            draft = gens[a["set"]].check(info["raw"], prompt, info)
            checked = enforce_citations(draft.text, Context(a["question"], [s.chunk for s in sources], 0), draft.spans)
            outcome = "partial" if draft.withdrawn and checked.outcome == "answered" else checked.outcome
            a["llm"].update(
                text=checked.text,
                outcome=outcome,
                cited=[c.doc_id for c in checked.citations],
                dropped=draft.withdrawn + checked.dropped,
                notes=draft.notes,
                sentences=len(split_cited(checked.text)) if outcome != "abstained" else 0,
                reason=str(draft.reason or "") if outcome == "abstained" else "",
            )
            a["llm"]["llm"] = draft.llm
        out.append(a)
    with open(args.out / "answers.rechecked.jsonl", "w", encoding="utf-8") as f:
        for a in out:
            f.write(json.dumps(a, ensure_ascii=False) + "\n")
    print(f"rechecked {len(out)} answers")
    return 0


def split_cited(text: str):
    from citewise.answer.citations import split_cited_sentences

    return split_cited_sentences(text)


# -- report ----------------------------------------------------------------------------------
def kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two boolean raters (None when undefined)."""
    n = len(pairs)
    if not n:
        return None
    po = sum(a == b for a, b in pairs) / n
    pa, pb = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return None if pe == 1 else (po - pe) / (1 - pe)


def report(args) -> dict:
    rechecked = args.out / "answers.rechecked.jsonl"
    answers = read_jsonl(rechecked if rechecked.exists() else args.out / "answers.jsonl")
    labels = {(r["id"], r["path"]): r for r in read_jsonl(args.labels)} if args.labels.exists() else {}
    table = {}
    for path in ("extractive", "llm"):
        rows = [a for a in answers if "error" not in a[path]]
        ins = [a for a in rows if a["in_scope"]]
        oos = [a for a in rows if not a["in_scope"]]
        lab = [labels.get((a["id"], path)) for a in rows]
        correct_cited = sum(1 for a in ins if (labels.get((a["id"], path)) or {}).get("correct") and a[path]["cited"])
        sentences = sum(a[path]["sentences"] for a in rows)
        unsupported = sum((l or {}).get("unsupported", 0) for l in lab)
        secs = [a[path]["seconds"] for a in rows]
        t = {
            "questions": len(rows),
            "in_scope": len(ins),
            "out_of_scope": len(oos),
            "labelled": sum(1 for l in lab if l),
            "correct_and_cited": correct_cited,
            "abstained_in_scope": sum(a[path]["outcome"] == "abstained" for a in ins),
            "abstained_out_of_scope": sum(a[path]["outcome"] == "abstained" for a in oos),
            "sentences": sentences,
            "unsupported_sentences": unsupported,
            "seconds_median": round(statistics.median(secs), 2) if secs else None,
            "seconds_mean": round(statistics.mean(secs), 2) if secs else None,
            "errors": sum(1 for a in answers if "error" in a[path]),
        }
        if path == "llm":
            info = [a["llm"]["llm"] for a in rows if a["llm"].get("llm")]
            usage = [i.get("usage") or {} for i in info]
            t["prompt_tokens_server_mean"] = round(
                statistics.mean([u.get("prompt_tokens", 0) for u in usage if u.get("prompt_tokens")] or [0])
            )
            t["prompt_tokens_counted_mean"] = round(statistics.mean([i["prompt_tokens_counted"] for i in info] or [0]))
            t["completion_tokens_mean"] = round(
                statistics.mean([i.get("reply_tokens_counted", 0) for i in info] or [0])
            )
            t["first_token_s_median"] = round(
                statistics.median([i["first_token_s"] for i in info if i.get("first_token_s")] or [0]), 1
            )
            t["withdrawn"] = sum(len(a["llm"]["dropped"]) for a in rows)
            t["attributed_after"] = sum((i.get("attribution") or {}).get("attributed", 0) for i in info)
        table[path] = t
    out = {"answers": table}
    for name in ("tools", "router", "agent", "judge"):
        p = args.out / f"{name}.jsonl"
        if p.exists():
            out[name] = read_jsonl(p)
    judged = [r for r in out.get("judge", []) if "label" in r]
    if judged:
        pairs = [(r["label"], r["faithful"]) for r in judged]
        out["judge_agreement"] = {
            "answers": len(pairs),
            "agreement": round(sum(a == b for a, b in pairs) / len(pairs), 3),
            "kappa": None if kappa(pairs) is None else round(kappa(pairs), 3),
            "parse_failures": sum(1 for r in judged if r["error"]),
        }
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gguf", type=Path, default=DEFAULT_GGUF)
    p.add_argument("--server-python", type=Path, default=DEFAULT_PYTHON)
    p.add_argument("--base-url", help="use this running server instead of starting one")
    p.add_argument("--port", type=int, default=18431)
    p.add_argument("--n-ctx", type=int, default=2048)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--sections", default="answers,tools,router,agent,judge")
    p.add_argument("--answers", type=int, default=12, help="in-scope questions per set")
    p.add_argument("--answer-sets", default="sample,realdocs", help="which question sets the answers section asks")
    p.add_argument("--bfcl", type=int, default=6, help="cases per BFCL category")
    p.add_argument("--router", type=int, default=10)
    p.add_argument("--agent", type=int, default=5)
    p.add_argument("--sample-index", type=Path, default=Path("/tmp/llmpath/sample"))
    p.add_argument("--realdocs-index", type=Path, default=Path("/tmp/llmpath/realdocs"))
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--labels", type=Path, default=OUT / "labels.jsonl")
    p.add_argument("--record", type=Path, help="write every exchange here (exchanges.jsonl)")
    p.add_argument(
        "--server-log", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "citewise-llm-server.log"
    )
    p.add_argument("--report", action="store_true", help="print the summary of --out and exit")
    p.add_argument("--export", type=Path, help="write replay files for the tests from --record's exchanges and exit")
    p.add_argument(
        "--recheck", action="store_true", help="run this checkout's citation check on the stored replies and exit"
    )
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.report:
        print(json.dumps(report(args), indent=1, default=str))
        return 0
    if args.export:
        return export(args)
    if args.recheck:
        return recheck(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server on kill, too
    rec = Recorder()
    sections = {
        "answers": run_answers,
        "tools": run_tools,
        "router": run_router,
        "agent": run_agent,
        "judge": run_judge,
        "capture": run_capture,
    }
    meta = {
        "date": dt.date.today().isoformat(),
        "gguf": str(args.gguf),
        "n_ctx": args.n_ctx,
        "threads": args.threads,
        "sections": args.sections,
        "command": " ".join(sys.argv),
    }
    try:
        if args.base_url:
            base = args.base_url
            meta["server"] = "given"
            for name in args.sections.split(","):
                sections[name](args, base, rec)
        else:
            with Server(args.server_python, args.gguf, args.port, args.n_ctx, args.threads, args.server_log) as srv:
                meta["server"] = f"llama-cpp-python {srv.version}"
                meta["model"] = srv.model_name()
                for name in args.sections.split(","):
                    sections[name](args, srv.base_url, rec)
    finally:
        with open(args.out / "runs.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps(meta) + "\n")
        if args.record:
            args.record.mkdir(parents=True, exist_ok=True)
            with open(args.record / "exchanges.jsonl", "a", encoding="utf-8") as f:
                for e in rec.log:
                    f.write(json.dumps(e, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
