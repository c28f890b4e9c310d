"""A short code block (a configuration line, a command) may answer a question that does not ask
for code; a long one may not, and neither follows another unit.

Our own text: a configuration reference whose answer to "make new commits secret by default"
is the two-line example block, beside a long example program.
"""

from __future__ import annotations

import pytest
from conftest import minilm_index_of

from citewise.answer.select.features import SHORT_CODE_CHARS

PHASES = """
## Phases

Every changeset is in one of three phases: public, draft or secret. Secret changesets are never
pushed, pulled or cloned.

New changesets start in the draft phase. To make every new commit secret, set:

```
[phases]
new-commit = secret
```

## Publishing

A publishing server turns the changesets pushed to it public. Pulling from it never changes the
phase of local changesets.
"""

LONG = "\\n".join(f"    step_{i} = run(step_{i - 1}, limit={i})" for i in range(1, 30))
HOOKS = f"""
## Hooks

A hook runs a command when an event happens, such as a commit or a push. Hooks are listed in the
hooks section, one per line.

```
def program():
{LONG}
```
"""


@pytest.fixture(scope="module")
def idx(tmp_path_factory):
    index, _ = minilm_index_of(tmp_path_factory, {"vcs/phases": ("Phases", PHASES), "vcs/hooks": ("Hooks", HOOKS)})
    return index


def test_a_short_block_answers_a_keyword_query(idx):
    a = idx.ask("new commits secret by default setting")
    assert a.outcome == "answered" and "new-commit = secret" in a.text, a.text


def test_a_long_block_never_answers_a_question_that_asks_for_no_code(idx):
    assert len(HOOKS) > SHORT_CODE_CHARS
    a = idx.ask("Which events does a hook run on?")
    assert a.outcome == "answered" and "step_1" not in a.text, a.text


HOOK_SYNTAX = """
## Python hooks

Hooks can be written in Python as well as in the shell.

The syntax for Python hooks is as follows:

```
hookname = python:modulename.submodule.callable
hookname = python:/path/to/python/module.py:callable
```

Python hooks are run within the program's own process. Each hook is called with at least three
keyword arguments: a ui object, a repository object and a hooktype keyword.
"""


def test_a_code_block_is_read_with_its_lead_in(tmp_path_factory):
    """The block's own words share little with the question; its lead-in ("The syntax for Python
    hooks is as follows:") says what it is, and counts as the block's words."""
    idx, _ = minilm_index_of(tmp_path_factory, {"vcs/python-hooks": ("Python hooks", HOOK_SYNTAX)})
    a = idx.ask("What is the syntax for an in-process Python hook?")
    assert a.outcome == "answered" and "hookname = python:modulename.submodule.callable" in a.text, a.text
    assert "run within the program's own process" not in a.text.split("hookname")[0], a.text


TIMEOUTS = """
## Timeouts

Connections are pooled per worker and reused between requests.

The idle timeout closes a connection that has sent nothing for a while:

```
idle_timeout = 30
```

the default is 60 seconds, and 0 turns the timeout off.
"""


def test_a_block_after_an_unquotable_lead_in_brings_no_other_paragraph(tmp_path_factory):
    """The block's lead-in ends in ':' and is never quoted; the paragraph before it is about
    something else and is not the block's lead sentence."""
    idx, _ = minilm_index_of(tmp_path_factory, {"srv/timeouts": ("Timeouts", TIMEOUTS)})
    a = idx.ask("What is the default idle timeout?")
    assert "the default is 60 seconds" in a.text and "pooled per worker" not in a.text, a.text


EARLY = """
## Early options

Options given before the command are read early, before the configuration.

Since version 4.4 the parsing of early options may be restricted by setting STRICT=1. Then all
early options must come first and cannot be injected anywhere:

```
$ STRICT=1 tool -R repo log
```
"""


def test_a_lead_sentence_in_the_lead_ins_paragraph_comes_with_the_block(tmp_path_factory):
    idx, _ = minilm_index_of(tmp_path_factory, {"cli/early": ("Early options", EARLY)})
    a = idx.ask("How do I stop early options from being injected anywhere on the command line?")
    assert "restricted by setting STRICT=1" in a.text and "$ STRICT=1 tool -R repo log" in a.text, a.text
    assert a.text.index("restricted by setting") < a.text.index("$ STRICT=1 tool"), a.text
