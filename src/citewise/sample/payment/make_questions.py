"""Writes questions.jsonl, the payment question set (52 questions; see citewise.evaluation.conditions).

Run from anywhere: ``python src/citewise/sample/payment/make_questions.py``. The set is data; this
script only keeps the repeated evidence items (retry timing, key reuse, provider guarantee,
uncertain outcome) in one place. Splits alternate dev / heldout within each kind.
"""
import json
from pathlib import Path

P = ["incident/inc-4471", "runbooks/payment-worker", "client/payment-client", "provider/integration-contract"]
RT = {"doc": "runbooks/payment-worker", "text": "after 15 minutes"}
IK = {"doc": "client/payment-client", "text": "same Idempotency-Key header"}
PG = {"doc": "provider/integration-contract", "text": "10 minutes after the first request"}
UOr = {"doc": "runbooks/payment-worker", "text": "cannot tell whether the provider captured"}
UOi = {"doc": "incident/inc-4471", "text": "first capture succeeded"}
PAY = [[RT, IK, PG, UOr], [RT, IK, PG, UOi]]
qs = []
def q(kind, question, expected, scope=(), sets=(), as_=(), as_of=None, decisive=None, lexical=False, oracle=None):
    d = {"id": f"pay-{len(qs)+1:02d}", "question": question, "kind": kind, "expected": expected,
         "scope": list(scope), "evidence_sets": [list(s) for s in sets]}
    if oracle: d["oracle"] = list(oracle)
    if as_: d["as"] = list(as_)
    if as_of: d["as_of"] = as_of
    if decisive: d["decisive"] = decisive
    if lexical: d["lexical_mismatch"] = True
    qs.append(d)
# answerable payment packet questions
q("answerable", "Can the payment worker charge an order twice after a capture request times out?", "supported", P, PAY, decisive=PG)
q("answerable", "Could a delayed retry cause a double charge?", "supported", P, PAY, decisive=PG, lexical=True)
q("answerable", "Is a retry of a timed-out capture safe from a duplicate capture?", "supported", P, PAY, decisive=PG)
q("answerable", "Can order 88121 have been captured twice?", "supported", P, PAY, decisive=PG)
q("answerable", "Could the retry at 09:17 have created a second capture?", "supported", P, PAY, decisive=PG)
q("answerable", "Will a second capture happen if the worker retries after the response was lost?", "supported", P, PAY, decisive=PG, lexical=True)
# discovery over the whole corpus, version named (the archived 4.2 notes are set aside)
q("answerable", "Under integration 4.5, could a delayed retry cause a double charge?", "supported", (), PAY, lexical=True)
q("answerable", "With contract 4.5, can the payment worker charge an order twice after a capture request times out?", "supported", (), PAY)
q("answerable", "For integration 4.5, is a retry of a timed-out capture safe from a duplicate capture?", "supported", (), PAY)
q("answerable", "On integration 4.5, will a second capture happen if the worker retries after the response was lost?", "supported", (), PAY, lexical=True)
# conflicting revisions
q("conflict", "Can the payment worker charge an order twice after a capture request times out?", "conflict", oracle=[PG, {"doc": "provider/archive/contract-notes-4.2", "text": "24 hours"}])
q("conflict", "Could a delayed retry cause a double charge?", "conflict", oracle=[PG, {"doc": "provider/archive/contract-notes-4.2", "text": "24 hours"}], scope=["runbooks/payment-worker", "provider/", "client/", "incident/"], lexical=True)
q("conflict", "Can a retried capture be charged twice?", "conflict", oracle=[RT, {"doc": "provider/archive/contract-notes-4.2", "text": "after 5 minutes"}], scope=["runbooks/payment-worker", "provider/archive/contract-notes-4.2", "client/payment-client", "incident/inc-4471"])
q("conflict", "Can a retried capture be charged twice?", "conflict", oracle=[PG, {"doc": "provider/archive/contract-notes-4.2", "text": "24 hours"}], scope=["provider/integration-contract", "provider/archive/contract-notes-4.2", "runbooks/payment-worker", "client/payment-client"])
q("conflict", "Could a duplicate capture happen when the worker retries?", "conflict", oracle=[PG, {"doc": "provider/archive/contract-notes-4.2", "text": "24 hours"}], scope=["provider/", "runbooks/", "client/"])
q("conflict", "Is a retry after a lost response safe from a double charge?", "conflict", lexical=True, oracle=[PG, {"doc": "provider/archive/contract-notes-4.2", "text": "24 hours"}])
# incomplete packets (coverage): never supported
q("incomplete", "Can the payment worker charge an order twice after a capture request times out?", "gap", P[:3])
q("incomplete", "Could a delayed retry cause a double charge?", "gap", P[:3], lexical=True)
q("incomplete", "Could a delayed retry cause a double charge?", "gap", [P[0], P[1], P[3]])
q("incomplete", "Can order 88121 have been captured twice?", "gap", [P[0], P[2], P[3]])
q("incomplete", "Is a retry of a timed-out capture safe from a duplicate capture?", "gap", ["runbooks/payment-worker"])
q("incomplete", "Is a retry of a timed-out capture safe from a duplicate capture?", "gap", ["wiki/"])
q("incomplete", "Can a retried capture be charged twice?", "gap", ["client/payment-client", "provider/integration-contract"])
q("incomplete", "Could a delayed retry cause a double charge?", "gap", ["runbooks/payment-worker", "client/payment-client"])
q("incomplete", "Will a second capture happen if the worker retries after the response was lost?", "gap", P[:3])
q("incomplete", "Does the ledger block a duplicate capture of order 88121?", "abstained", ["ledger/capture-guard"])
# version filter: current value, history, stale snapshot
RB = {"doc": "deploy/rollback-setting", "text": "`blue-green`"}
CHG = {"doc": "deploy/rollback-setting", "text": "CHG-2291"}
q("version", "Which rollback setting is active in production?", "supported", sets=[[RB, CHG]])
q("version", "What rollback mode is currently used for the payment service in production?", "supported", sets=[[RB, CHG]])
q("version", "Which rollback mode is in force for the payment service?", "supported", sets=[[RB, CHG]])
HIST = [[{"doc": "deploy/rollback-setting@2", "text": "Changed from manual"}, {"doc": "deploy/rollback-setting", "text": "Blue-green replaced"}]]
q("history", "Why did the rollback setting change?", "supported", sets=HIST)
q("history", "How has the rollback mode changed over time?", "supported", sets=HIST)
q("stale", "How long does the provider retain request tokens?", "supported", as_of="2025-06-01",
  sets=[[{"doc": "provider/integration-contract@4.2", "text": "24 hours"}]])
q("stale", "How long does the provider retain request tokens?", "supported",
  sets=[[{"doc": "provider/integration-contract", "text": "10 minutes"}]])
# single-source lookups (derived checks)
def one(question, doc, text, lexical=False, extra=()):
    q("answerable", question, "supported", sets=[[{"doc": doc, "text": text}]] + [[e] for e in extra], lexical=lexical)
one("What does capture_timeout_ms do?", "config/capture-settings", "time in milliseconds the worker waits")
one("How long does the worker wait for a capture response before treating it as unknown?", "config/capture-settings",
    "time in milliseconds the worker waits", extra=[{"doc": "incident/inc-4471", "text": "expired after 30 seconds"}])
one("How often does the provider retry a failed webhook delivery?", "provider/webhooks", "every 5 minutes")
one("How many capture requests per second may a merchant account send?", "provider/integration-contract", "100 capture requests per second")
one("When do captured funds settle to the merchant's bank account?", "provider/integration-contract", "second business day")
one("What happens to a declined capture?", "runbooks/payment-worker", "declined capture is not retried")
one("When should the worker deployment be scaled out?", "runbooks/payment-worker", "more than 5,000 orders")
one("Does the worker page the on-call engineer after the last retry fails?", "runbooks/payment-worker", "after the last retry")
one("What should I do when the provider reports an outage?", "runbooks/payment-worker", "pause the capture queue")
one("How long does a merchant have to submit dispute evidence?", "provider/integration-contract", "14 days")
one("What is a request token?", "provider/integration-contract", "value a merchant sends in the Idempotency-Key header")
one("How long is an uncaptured authorisation valid?", "provider/integration-contract", "within 7 days expires", lexical=True)
one("When did the first capture for order 88121 actually succeed?", "incident/inc-4471", "succeeded at 09:02:13")
one("What did the first responder suspect caused the incident?", "incident/inc-4471", "network blip")
one("Which header carries the webhook signature?", "provider/webhooks", "X-Provider-Signature")
# absolute claims and out of scope
q("absolute", "Is a webhook with a bad signature always rejected by the provider?", "not_established", oracle=[{"doc": "provider/webhooks", "text": "Reject a webhook whose signature"}])
q("absolute", "Does the client always send the same Idempotency-Key header on a retry?", "not_established", oracle=[IK])
q("absolute", "Is the capture API guaranteed to be available all the time?", "not_established", oracle=[{"doc": "provider/integration-contract", "text": "99.95%"}])
q("out_of_scope", "What is the refund policy of Stripe?", "abstained")
# hold out half: alternate within each kind
count = {}
for d in qs:
    n = count.get(d["kind"], 0); count[d["kind"]] = n + 1
    d["split"] = "dev" if n % 2 == 0 else "heldout"
with open(Path(__file__).with_name("questions.jsonl"), "w") as f:
    for d in qs:
        f.write(json.dumps(d) + "\n")
import collections
print(len(qs), collections.Counter(d["kind"] for d in qs), collections.Counter(d["split"] for d in qs))
