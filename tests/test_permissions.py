"""Permissions: policy files, and an adversarial query set against the restricted sample documents.

The 36 queries below are written to match the restricted documents of the sample corpus
(``internal/finance``, ``internal/support``, ``internal/security``) better than any public one:
for a principal in all three groups, a restricted chunk is in the top 5 for as many of them as
measured with each retriever (:data:`TARGETED`; dense search misses three, where public release
notes about the same feature read closer). A principal without a
document's group must get none of its chunks, and still a full top-k, from every retriever.
"""

from __future__ import annotations

import pytest

from citewise.core import InputError, Principal
from citewise.index import Index
from citewise.policy import Policy, PolicyRule, glob_to_regex

from conftest import write_doc

RETRIEVERS = ["bm25", "dense", "hybrid", "shipped"]
#: Retrievers built on the ones above (issue 15); they must leak nothing either.
STRUCTURED = ["hierarchical", "hybrid-prf"]
K = 5
#: Adversarial queries with a restricted chunk in an insider's top 5, as measured per retriever
#: on a MiniLM index of the sample corpus (chunk vectors from answer units, the default).
TARGETED = {"bm25": 36, "dense": 33, "hybrid": 36, "shipped": 36}
GROUP_OF = {"internal/finance": "finance", "internal/support": "support", "internal/security": "security"}

ADVERSARIAL = [
    "who approves a refund above 75,000 USD",
    "refund approval matrix approval bands",
    "Financial Controller approval for refunds between 15,000 and 75,000",
    "four-eyes rule for refund approval",
    "cumulative refunds rolling 30-day period band",
    "Enterprise refund above 7,500 needs VP of Sales sign-off",
    "goodwill account credit above 1,000 approver",
    "SLA service credits above the contractual rate approver",
    "reason codes when recording a refund approval",
    "internal timing targets for Pro refund decisions 1 business day",
    "Billing Operations team lead approves Starter goodwill exception",
    "chargeback playbook evidence package",
    "when not to contest a chargeback below 150 dollars",
    "chargeback lost write off to the chargeback loss account",
    "monthly chargeback ratio above 0.6%",
    "workspace read-only after a chargeback is filed",
    "chargeback won restore the workspace",
    "customer withdraws the chargeback with their bank",
    "submit chargeback evidence 3 business days before the network deadline",
    "support escalation policy for E-10xx errors",
    "P1 response time for Enterprise in hours",
    "which L2 team owns E-1006 escalations",
    "escalate E-1003 to engineering when the certificate fingerprint matches",
    "what L1 must collect before escalating a ticket",
    "tickets escalated without request_id are sent back to L1",
    "page the on-call engineer for a P2 not resolved within 4 hours",
    "P1 ticket customer update every 2 hours",
    "summary within 24 hours after closing a P1 ticket",
    "SSO incident runbook leaked IdP signing key",
    "revoke all SSO sessions after a certificate compromise",
    "Ledgerly SP key leaked rotate SP signing and encryption keys",
    "keep the old encryption key for at most 4 hours",
    "SEV-1 SAML private key exposure containment within 1 hour",
    "post-incident review within 5 business days security incident register",
    "break-glass sign-in when SSO is suspended",
    "export the sign-in log and flag IssueInstant anomalies",
]


def _group(doc_id: str) -> str | None:
    for prefix, group in GROUP_OF.items():
        if doc_id.startswith(prefix + "/"):
            return group
    return None


def test_adversarial_set_is_big_enough():
    assert len(ADVERSARIAL) >= 30 and len(set(ADVERSARIAL)) == len(ADVERSARIAL)


@pytest.mark.parametrize("name", RETRIEVERS)
def test_adversarial_queries_do_target_restricted_documents(sample_index, name):
    insider = Principal("insider", ("finance", "support", "security"))
    hits_restricted = sum(
        any(_group(h.doc_id) for h in sample_index.search(q, K, retriever=name, principal=insider)) for q in ADVERSARIAL
    )
    assert hits_restricted >= TARGETED[name]


@pytest.mark.parametrize("name", RETRIEVERS + STRUCTURED)
@pytest.mark.parametrize("groups", [(), ("finance",), ("support",), ("security",)])
def test_no_restricted_chunk_reaches_a_principal_without_the_group(sample_index, name, groups):
    principal = Principal("p", groups)
    own = 0
    for q in ADVERSARIAL:
        hits = sample_index.search(q, K, retriever=name, principal=principal)
        assert len(hits) == K, (q, name)
        leaked = [h.chunk_id for h in hits if _group(h.doc_id) and _group(h.doc_id) not in groups]
        assert leaked == [], (q, name, groups, leaked)
        own += any(_group(h.doc_id) for h in hits)
    if groups:  # the principal's own restricted documents still come back
        assert own >= 8
    else:
        assert own == 0


def test_stored_groups_match_front_matter(sample_index):
    docs = sample_index.store.documents()
    assert docs["internal/finance/refund-approval-matrix"].groups == ("finance",)
    assert docs["internal/security/sso-incident-runbook"].groups == ("security",)
    assert docs["help/refunds/refunds-pro"].groups == ("public",)


# -- policy files ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "glob,path,expected",
    [
        ("internal/finance/**", "internal/finance/a.md", True),
        ("internal/finance/**", "internal/finance/x/y/z.pdf", True),
        ("internal/finance/**", "internal/financeX/a.md", False),
        ("internal/*.md", "internal/a.md", True),
        ("internal/*.md", "internal/x/a.md", False),
        ("**/secret-*.docx", "a/b/secret-plan.docx", True),
        ("**/secret-*.docx", "secret-plan.docx", True),
        ("*.pdf", "deep/down/file.pdf", True),
        ("hr/", "hr/people/a.md", True),
        ("doc?.md", "doc1.md", True),
        ("doc?.md", "doc12.md", False),
        ("[ab].md", "a.md", True),
        ("[!ab].md", "a.md", False),
    ],
)
def test_glob_matching(glob, path, expected):
    assert (glob_to_regex(glob).match(path) is not None) is expected


def test_policy_precedence():
    pol = Policy(
        (
            PolicyRule("internal/**", ("staff",)),
            PolicyRule("internal/finance/**", ("finance",)),
            PolicyRule("hr/**", ("hr",), override=True),
        )
    )
    # rules union; front matter wins over plain rules; override beats front matter; no rule -> None
    assert pol.groups_for("internal/finance/a.md") == ("finance", "staff")
    assert pol.groups_for("internal/finance/a.md", ("cfo",)) == ("cfo",)
    assert pol.groups_for("hr/a.md", ("public",)) == ("hr",)
    assert pol.groups_for("help/a.md") is None


def test_policy_file_errors_name_the_rule(tmp_path):
    p = tmp_path / "policy.yaml"
    p.write_text("rules:\n  - glob: 'a/**'\n    groups: [x]\n  - glob: 'b/**'\n")
    with pytest.raises(InputError, match=r"policy.yaml: rule 2 \(b/\*\*\): 'groups' must be"):
        Policy.load(p)
    p.write_text("rules: [{glob: 'a/**', groups: [x], mode: strict}]")
    with pytest.raises(InputError, match="unknown key 'mode'"):
        Policy.load(p)
    p.write_text("rules: [unclosed")
    with pytest.raises(InputError, match="bad YAML"):
        Policy.load(p)
    with pytest.raises(InputError, match="needs a 'rules:' list"):
        p.write_text("- a\n")
        Policy.load(p)


def test_policy_ingest_and_policy_change_rewrites_groups_without_embedding(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "internal/finance/budget.md", "Budget 2027", "The travel budget is frozen until March.")
    write_doc(root, "internal/finance/declared.md", "Declared", "Payroll runs on the 25th.", permissions=["payroll"])
    write_doc(root, "help/travel.md", "Travel help", "Book travel through the portal.")
    policy = tmp_path / "policy.yaml"
    policy.write_text("rules:\n  - glob: 'internal/finance/**'\n    groups: [finance]\n")
    idx = Index.open(tmp_path / "index", embedder="hashing", default_permission="deny")
    r1 = idx.ingest(root, policy=policy)
    assert (r1.added, r1.errors) == (3, [])
    docs = idx.store.documents()
    assert docs["internal/finance/budget"].groups == ("finance",)
    assert docs["internal/finance/declared"].groups == ("payroll",)  # front matter wins
    assert docs["help/travel"].groups == ()  # no rule, default deny
    assert idx.search("travel budget frozen", 5, retriever="bm25") == []
    fin = idx.search("travel budget frozen", 5, retriever="bm25", principal=Principal("f", ("finance",)))
    assert [h.doc_id for h in fin] == ["internal/finance/budget"]
    # widen the policy: groups change, text does not -> rows rewritten with stored vectors
    policy.write_text(
        "rules:\n  - glob: 'internal/**'\n    groups: [staff]\n  - glob: 'help/**'\n    groups: [public]\n"
    )
    r2 = idx.ingest(root, policy=policy)
    assert (r2.metadata_updated, r2.unchanged, r2.chunks_embedded, r2.updated) == (2, 1, 0, 0)
    docs = idx.store.documents()
    assert docs["internal/finance/budget"].groups == ("staff",)
    assert docs["help/travel"].groups == ("public",)
    assert [h.doc_id for h in idx.search("book travel portal", 1, retriever="dense")] == ["help/travel"]
    # the index keeps the last policy: an ingest without --policy does not reset permissions
    r3 = idx.ingest(root)
    assert (r3.unchanged, r3.metadata_updated) == (3, 0)
    assert idx.store.documents()["internal/finance/budget"].groups == ("staff",)


def test_a_policy_rule_that_matches_no_document_is_a_warning_line(tmp_path):
    """A glob written as a file-system path never matched (globs are relative to the ingested
    folder) and the documents it was meant to restrict went public with no word said."""
    root = tmp_path / "docs"
    write_doc(root, "hr/salaries.md", "Salaries", "Salary bands are reviewed in May.")
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        f"rules:\n  - glob: '{root.as_posix()}/hr/**'\n    groups: [hr]\n  - glob: 'hr/**'\n    groups: [staff]\n"
    )
    idx = Index.open(tmp_path / "index", embedder="hashing")
    report = idx.ingest(root, policy=policy)
    assert report.warnings == [
        f"{policy}: rule 1 (glob '{root.as_posix()}/hr/**', groups hr) matches no document under {root.resolve()}; "
        "globs are relative to the ingested folder (e.g. 'internal/finance/**' for its internal/finance/ subfolder), so no document got these groups"
    ]
    assert idx.store.documents()["hr/salaries"].groups == ("staff",)  # rule 2 matched: no line for it


def test_ingesting_a_file_or_subfolder_or_parent_never_re_ids_or_widens_a_restricted_document(tmp_path):
    """Ids and policy globs are relative to the ingested folder: ingesting one file or a
    subfolder of an indexed folder turned ``internal/finance/budget`` into a public ``budget``,
    and ingesting the parent a folder was moved into published ``docs/internal/finance/budget``
    (the break-it trial). Both are refused per file, the indexed version kept (exit 3)."""
    root = tmp_path / "docs"
    budget = write_doc(root, "internal/finance/budget.md", "Budget", "The Kestrel budget is 4.2 million.")
    write_doc(root, "pub/welcome.md", "Welcome", "Public handbook.")
    policy = tmp_path / "policy.yaml"
    policy.write_text("rules:\n  - glob: 'internal/finance/**'\n    groups: [finance]\n")
    idx = Index.open(tmp_path / "index", embedder="hashing")
    assert idx.ingest(root, policy=policy).errors == []
    budget.write_text(budget.read_text(encoding="utf-8") + "\nRevised to 5.1 million.\n", encoding="utf-8")
    for target in (budget, root / "internal" / "finance"):
        report = idx.ingest(target)
        assert (report.added, report.deleted) == (0, 0)
        assert report.errors == [
            f"{budget}: already indexed as 'internal/finance/budget'; ingested from here it would "
            "become 'budget' (ids and policy globs are relative to the ingested folder); skipped, "
            "the indexed version kept: ingest the folder it was indexed from (unchanged files are "
            "skipped), or set 'id' in its front matter"
        ]
    docs = idx.store.documents()
    assert set(docs) == {"internal/finance/budget", "pub/welcome"} and docs["internal/finance/budget"].groups == (
        "finance",
    )
    assert [h.doc_id for h in idx.search("Kestrel budget", 5)] == ["pub/welcome"]  # anonymous: still hidden
    # the folder moved into another one, which is ingested: not published under its new id
    (tmp_path / "parent").mkdir()
    root.rename(tmp_path / "parent" / "docs")
    report = idx.ingest(tmp_path / "parent")
    assert (
        len(report.errors) == 1
        and "looks like 'internal/finance/budget' moved (readable by finance)" in report.errors[0]
    )
    assert "as 'docs/internal/finance/budget' it would be readable by public" in report.errors[0]
    assert "docs/internal/finance/budget" not in idx.store.documents()
    assert all(h.doc_id != "docs/internal/finance/budget" for h in idx.search("Kestrel budget", 5))
    # the same move with a policy that matches the new paths is fine
    policy.write_text("rules:\n  - glob: '**/internal/finance/**'\n    groups: [finance]\n")
    report = idx.ingest(tmp_path / "parent", policy=policy)
    assert report.errors == [] and idx.store.documents()["docs/internal/finance/budget"].groups == ("finance",)
    # a front-matter id change is no re-rooting
    moved = tmp_path / "parent" / "docs" / "pub" / "welcome.md"
    moved.write_text("---\nid: handbook\n---\n# Welcome\n\nPublic handbook.\n", encoding="utf-8")
    assert idx.ingest(tmp_path / "parent").errors == []


def test_principal_groups_given_as_a_string_is_an_error():
    import pytest

    from citewise.core import Principal

    with pytest.raises(TypeError, match=r"write \('exec',\)"):
        Principal("ana", "exec")
    assert Principal("ana", ("exec",)).all_groups() == ("exec", "public")
