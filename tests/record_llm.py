"""Record real LLM responses for the LLM-backed unit tests (run by hand against a live server).

    /work/llm/venv38/bin/python -m llama_cpp.server --model MODEL.gguf --host 127.0.0.1 --port 8099 --n_ctx 4096 &
    .venv/bin/python tests/record_llm.py --base-url http://127.0.0.1:8099/v1 --model NAME judge ragas golden

Writes tests/data/llm/<scenario>.jsonl (tests/llm_replay.py replays them) and prints what each
scenario measured (the judge's agreement with the hand labels of tests/data/judge/hr_labels.jsonl).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from llm_replay import Recorder  # noqa: E402

from citewise.models.chat import ChatConfig, OpenAIChatModel  # noqa: E402


def model_for(args, rec):
    return OpenAIChatModel(ChatConfig(args.base_url, args.model, timeout=600.0), transport=rec)


def judge(args):
    from citewise.answer.judges import LLMFaithfulnessJudge
    from citewise.evaluation.judge_agreement import measure_agreement, read_labels

    rec = Recorder()
    labels = read_labels(HERE / "data" / "judge" / "hr_labels.jsonl")
    ag = measure_agreement(
        labels,
        LLMFaithfulnessJudge(model_for(args, rec)),
        labels_path="tests/data/judge/hr_labels.jsonl",
        progress=lambda: print(".", end="", flush=True),
    )
    rec.save("judge_hr.jsonl")
    print(
        f"\njudge {args.model}: n={ag.n} accuracy={ag.accuracy:.3f} kappa={ag.kappa:.3f} confusion={ag.confusion} "
        f"errors={ag.judge_errors}"
    )


def ragas(args):
    from citewise.answer.generators import LLMGenerator
    from citewise.answer.judges import ClaimJudge
    from citewise.evaluation.ragas import read_ragas_set, run_ragas
    from citewise.evaluation.ragas_noise import noise_probe
    from citewise.models.embedders import make_embedder

    rec = Recorder()
    m = model_for(args, rec)
    rows = read_ragas_set(HERE / "data" / "ragas" / "hr.jsonl")
    j = ClaimJudge(m)
    # one row scored (6 judge calls); --noise also regenerates its answer twice (the other rows are
    # the noise pool), which took longer than the client's timeout on 2 busy cores
    rep = run_ragas(
        rows[-1:],
        j,
        make_embedder("hashing"),
        dataset="hr.jsonl",
        judge_name=args.model,
        noise=noise_probe(rows, LLMGenerator(m), j, 1) if args.noise else None,
    )
    rec.save("ragas_hr.jsonl")
    print(rep.to_dict()["means"])


def golden(args):
    from citewise.evaluation.golden_generate import generate

    rec = Recorder()
    idx = hr_index()
    res = generate(idx.store, model_for(args, rec), seeds=2, per_chunk=3)
    rec.save("golden_hr.jsonl")
    print(f"{len(res.rows)} rows, skipped {res.skipped}")


HR_QUESTIONS = ["How many vacation days do I get?", "Can I work from home?", "What is the hotel limit per night?"]


def hr_index():
    from citewise.index import Index

    idx = Index.open(Path(tempfile.mkdtemp()) / "hr", embedder="hashing")
    assert not idx.ingest(HERE / "data" / "hr").errors
    idx.record_usage = False
    return idx


def answers(args):
    from citewise.answer.judges import LLMFaithfulnessJudge
    from citewise.evaluation.answer_judging import judge_answers

    rec = Recorder()
    idx = hr_index()
    asked = {f"q{i}": (q, idx.ask(q)) for i, q in enumerate(HR_QUESTIONS, start=1)}
    got = judge_answers(asked, idx.store, LLMFaithfulnessJudge(model_for(args, rec)))
    rec.save("answers_hr.jsonl")
    print({k: v for k, v in got.items() if k != "per_question"})


def online(args):
    from citewise.answer.judges import ClaimJudge
    from citewise.service.metrics import Metrics
    from citewise.service.online_eval import OnlineEvaluator, sample_of

    rec = Recorder()
    idx = hr_index()
    m = Metrics()
    ev = OnlineEvaluator(m, 1.0, ClaimJudge(model_for(args, rec)))
    ev.submit(sample_of(idx, HR_QUESTIONS[2], idx.ask(HR_QUESTIONS[2])))
    ev.drain(600)
    rec.save("online_hr.jsonl")
    print(m.render().decode().count("citewise_rag"), list(ev.faith), list(ev.relevance))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--noise", action="store_true", help="ragas: also measure noise sensitivity")
    ap.add_argument("scenarios", nargs="+", choices=["judge", "ragas", "golden", "answers", "online"])
    a = ap.parse_args()
    for s in a.scenarios:
        t0 = time.perf_counter()
        globals()[s](a)
        print(f"{s}: {time.perf_counter() - t0:.0f} s")
