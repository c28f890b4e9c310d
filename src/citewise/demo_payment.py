"""``citewise demo --scenario payment``: the evidence-gap controller on the payment packet.

Reproduces the design documents' scenario with the bundled packet (``sample/payment``: incident
timeline, worker runbook, client excerpt, provider contract in versions 4.2 and 4.5, plus archive
notes, wiki pages and a rollback-setting history):

1. "Could a delayed retry cause a double charge?" over the 4 named documents, k = 3, one round:
   the provider's retention clause uses none of the question's words, so it is not retrieved and
   the outcome is ``gap`` (missing: provider guarantee).
2. The same ask with two rounds: the missing check's targeted query finds the clause and the
   answer is ``supported``, drawn "from the 4 documents you named".
3. The packet without the contract: still ``gap`` after the follow-up round (never supported).
4. The version filter: the rollback setting active in production (current revision and its
   approving change), then why it changed (every revision, oldest first).
"""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text

from citewise.answer.gaps import GapController, Requirements
from citewise.answer.scope import AskRequest, resolve_scope
from citewise.demo import sample_dir
from citewise.index import Index

PACKET = ["incident/inc-4471", "runbooks/payment-worker", "client/payment-client", "provider/integration-contract"]
QUESTION = "Could a delayed retry cause a double charge?"


def run_payment_demo(index_dir: Path, embedder: str, out, err, print_answer) -> None:
    """Run the payment scenario, printing to the given rich consoles."""
    root = sample_dir() / "payment"
    idx = Index.open(index_dir, embedder=embedder)
    report = idx.ingest(root / "corpus")
    for e in report.errors:
        err.print(f"skipped {e}", markup=False, highlight=False)
    reqs = Requirements.load(root / "requirements.yaml")
    ctl = GapController(idx.answerer(), reqs)
    out.rule("citewise demo: the payment retry investigation")
    out.print(f"Packet: {', '.join(PACKET)} (index {idx.path})", highlight=False, soft_wrap=True)

    def show(title: str, question: str, scope, **kw):
        out.rule(title)
        out.print(Text.assemble(("Q:", "bold"), f" {question}"), highlight=False)
        ans, trace = ctl.ask(question, AskRequest(resolve_scope(scope, idx.store), **kw))
        t = Table("round", "queries", "new chunks", "missing after")
        for r in trace.rounds:
            t.add_row(
                str(r["round"]),
                "\n".join(r["queries"]),
                str(len(r["new_chunks"])),
                ", ".join(r["missing_after"]) or "-",
            )
        out.print(t)
        out.print(Text.assemble(("outcome: ", "bold"), ans.outcome), highlight=False)
        print_answer(ans, False)

    show("1. Four named documents, k=3, one retrieval round: a recognised gap", QUESTION, PACKET, k=3, max_rounds=1)
    show(
        "2. The same ask with one follow-up round: gap -> targeted query -> scoped answer",
        QUESTION,
        PACKET,
        k=3,
        max_rounds=2,
    )
    show(
        "3. A packet without the provider contract: the gap stays named, never 'supported'",
        QUESTION,
        PACKET[:3],
        k=3,
        max_rounds=2,
    )
    show(
        "4. Version filter: the current value and its approving change",
        "Which rollback setting is active in production?",
        [],
    )
    show("5. History: why it changed, every revision", "Why did the rollback setting change?", [])
    out.rule()
    out.print(
        'Try it:  citewise ask "'
        + QUESTION
        + '" --index '
        + str(idx.path)
        + " "
        + " ".join(f"--scope {d}" for d in PACKET)
        + f" --k 3 --requirements {root / 'requirements.yaml'} --json",
        highlight=False,
        soft_wrap=True,
    )
