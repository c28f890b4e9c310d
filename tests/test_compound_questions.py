"""A compound question gets a unit for each of its parts (citewise.answer.question.question_parts,
ExtractiveGenerator._parts): the part's ranking joined with the whole question's."""

from __future__ import annotations

from conftest import minilm_fixture

PAGES = {
    "errors/W-401": (
        "W-401 Archive checksum mismatch",
        "The archive was unpacked, but the checksum stored in its footer differs from the one "
        "computed over its members. The unpacked files may be damaged.\n\n"
        "## How to fix\n\n"
        "1. Download the archive again from the mirror list.\n"
        "2. Run `packer verify` on the new copy.\n"
        "3. Unpack it into an empty folder.\n",
    ),
    "errors/W-402": (
        "W-402 Mirror unreachable",
        "The mirror named in the configuration did not answer within the connect timeout.\n\n"
        "## How to fix\n\n"
        "1. Check the network connection of the machine.\n"
        "2. Pick another mirror with `packer mirrors --set`.\n",
    ),
    "guide/limits": (
        "Limits",
        "An archive holds at most 65,535 members. Larger sets of files are split into volumes "
        "of 4 GiB each.\n\n"
        "## Raising the limits\n\n"
        "Set `volume_size` in the configuration file to write larger volumes; the member limit "
        "cannot be raised.\n",
    ),
}

idx = minilm_fixture(PAGES, "idx")


def test_each_part_of_a_compound_question_is_answered(idx):
    a = idx.ask("What does warning W-401 mean and how do I fix it?")
    assert a.outcome == "answered"
    # the meaning first, then the fix's procedure from the same page, in order
    meaning = a.text.index("differs from the one computed over its members")
    first, last = a.text.index("Download the archive again"), a.text.index("Unpack it into an empty folder")
    assert meaning < first < last
    # never the other warning's fix: "it" is W-401 (the whole question's ranking joins the part's)
    assert "Check the network connection" not in a.text and "Pick another mirror" not in a.text
    assert {c.doc_id for c in a.citations} == {"errors/W-401"}


def test_a_second_part_in_another_section_is_answered(idx):
    a = idx.ask("How many members can an archive hold, and can I raise that limit?")
    assert a.text.startswith("An archive holds at most 65,535 members.")
    assert "the member limit cannot be raised" in a.text


def test_a_part_with_no_unit_it_may_quote_adds_nothing(minilm):
    from citewise.answer.context import Context, ContextChunk
    from citewise.answer.select.generator import ExtractiveGenerator
    from citewise.answer.unit_cache import UnitCache

    # a chunk holding only a code block: quotable for the how-to part, not for "is it safe?"
    text = "```\npacker verify --all archive.pk\n```"
    chunk = ContextChunk("c#1", "c", "Verify", "", "", ("Verify",), text, 0, len(text), 1, score=1.0)
    draft = ExtractiveGenerator(UnitCache(minilm)).generate(
        "How do I verify an archive? Is it safe?", Context("q", [chunk], 1000)
    )
    assert draft.text == f"{text} [doc:c]"


def test_each_part_naming_its_own_identifier_is_answered_from_its_page(idx):
    a = idx.ask("How do I fix W-401 and how do I fix W-402?")
    assert "Download the archive again" in a.text and "Check the network connection" in a.text
    assert a.text.index("Download the archive again") < a.text.index("Check the network connection")


def test_a_first_part_pointing_forward_is_read_with_the_identifier_named_later(idx):
    a = idx.ask("What does it mean and how do I fix W-401?")
    assert a.text.startswith("The archive was unpacked, but the checksum stored in its footer differs")
    assert "Download the archive again" in a.text and "Check the network connection" not in a.text


EXPORTS = {
    "account/cancel": (
        "Cancelling a workspace",
        "When you cancel your workspace, it becomes read-only for 30 days. Your data is deleted 90 "
        "days after you cancel.\n",
    ),
    "billing/void": (
        "Invoices of a cancelled subscription",
        "When a customer cancels a subscription, its open invoices are voided. Exported invoice "
        "data marks voided invoices, so your exports keep them apart.\n",
    ),
    "billing/refund": (
        "Refunds after you cancel",
        "If you cancel a subscription, refunded invoices appear in your invoice exports with the "
        "refund date in the data columns.\n",
    ),
    "exports/csv": (
        "Exporting invoices",
        "You can export your invoices as CSV files from Reports, Export. The file holds every "
        "invoice of the period you pick.\n",
    ),
}

exports_idx = minilm_fixture(EXPORTS, "exports_idx")


def test_each_part_of_a_compound_question_is_searched_on_its_own(exports_idx):
    """Sub-question retrieval (Answerer.part_hits): the whole question's search ranks the
    cancellation pages first; the second part alone finds the export page, which takes a place
    among the k hits."""
    q = "What happens to my data if I cancel my workspace, and can I export my invoices first?"
    answerer = exports_idx.answerer()
    whole = [h.doc_id for h in answerer.retriever.search(q, 2)]
    assert "exports/csv" not in whole  # one search for the whole question misses it
    hits = answerer.assess(q, 2).hits
    assert [h.doc_id for h in hits] == ["account/cancel", "exports/csv"]
    assert [h.rank for h in hits] == [1, 2]
    a = exports_idx.ask(q)
    assert a.text.startswith("When you cancel your workspace") or a.text.startswith("Your data is deleted")
    assert "You can export your invoices as CSV files" in a.text


def test_a_part_naming_its_own_subject_is_answered_from_its_page(idx):
    """ "how do I raise volume_size?" names its own subject: it is searched and ranked as it is,
    not as a question about W-401, and answered from the limits page."""
    a = idx.ask("What does warning W-401 mean and how do I raise volume_size?")
    assert "differs from the one computed over its members" in a.text
    assert "Set volume_size in the configuration file to write larger volumes" in a.text, a.text


def test_a_part_naming_nothing_is_read_with_the_part_before(idx):
    """ "how do I raise it?" names nothing: the subject of the part before is said again with it."""
    a = idx.ask("How many members can an archive hold, and how do I raise the limit?")
    assert a.text.startswith("An archive holds at most 65,535 members."), a.text
    assert "the member limit cannot be raised" in a.text
