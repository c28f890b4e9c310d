"""Reference entries: a question about one named thing ("What does shopt -s nullglob do?",
"What does the dead_code lint detect?", "What is -C prefer-dynamic?") is answered from that
thing's own entry (its heading, definition, list item or table row), read in order, not from a
passage that merely mentions it; a question naming a flag, value or target the corpus never
mentions abstains with ``unknown name``; a code request gets the right block whole.

The pure functions are tested on literal strings. The pipeline tests use one small index, built
once per module with the real MiniLM embedder, over documentation pages written here (a lint
listing, a shell manual with definition lists, a compiler's codegen options and command-line
flags, a target table, a child-process page with two code blocks).
"""

from __future__ import annotations

import pytest

from conftest import reason_text
from citewise.answer.citations import split_cited_sentences
from citewise.answer.evidence import named_terms
from citewise.core import ABSTENTION_TEXT
from citewise.text.names import code_names, entry_offsets, heading_pattern, question_subject

from conftest import minilm_index_of

# -- names a question is about -----------------------------------------------------------------


def test_code_names_take_the_value_after_a_one_letter_flag():
    assert "nullglob" in code_names("What does shopt -s nullglob do?")
    assert "prefer-dynamic" in code_names("What is -C prefer-dynamic?")


def test_code_names_do_not_take_a_generic_word_as_a_flag_value():
    # "flag" follows -O but names the kind of thing, not a value of it
    assert code_names("What does the -O flag of rustc do?") == ["-O"]


def test_code_names_keep_target_triples_and_skip_dates():
    assert code_names("What tier is the x86_64-unknown-plan9 target in?") == ["x86_64-unknown-plan9"]
    assert code_names("What changed in the release of 2023-01-05?") == []
    assert "2023-01-05" not in code_names("Does x86_64-unknown-plan9 exist since 2023-01-05?")


def test_heading_pattern_matches_dash_for_underscore():
    assert heading_pattern("dead_code").search("dead-code") is not None
    assert heading_pattern("dead_code").search("## dead_code") is not None
    assert heading_pattern("dead_code").search("dead-code-pub") is None  # a longer name is another one


def test_heading_pattern_one_letter_flags_are_case_sensitive():
    assert heading_pattern("-C").search("-c, --check") is None
    assert heading_pattern("-C").search("-C") is not None
    assert heading_pattern("-C").search("`-C`/`--codegen`: code generation options") is not None


ENTRY_TEXT = (
    "Intro prose that says dead_code is common and mentions `dead_code` in passing.\n"  # 0: prose
    "## dead-code\n"  # 1: heading
    "* `dead_code` When set, unused items warn.\n"  # 2: backticked item
    "- **dead_code**: Warns on unused items.\n"  # 3: bold item
    "dead_code\n"  # 4: term line
    ": Warns on unused, unexported items.\n"  # 5: its definition
    "| dead_code | warn |\n"  # 6: table row
    "| unused_mut | dead_code too |\n"  # 7: row naming it later
    "- See dead_code for details.\n"  # 8: item mentioning it
    "The dead_code lint is a lint.\n"  # 9: prose
)


def _line_offsets(text: str) -> list[int]:
    out, pos = [], 0
    for line in text.splitlines(keepends=True):
        out.append(pos)
        pos += len(line)
    return out


def test_entry_offsets_find_each_entry_form_and_not_a_mention():
    starts = _line_offsets(ENTRY_TEXT)
    assert entry_offsets(ENTRY_TEXT, "dead_code") == [starts[1], starts[2], starts[3], starts[4], starts[6]]


@pytest.mark.parametrize(
    "text, name, expected",
    [
        ("Prose first.\n### shopt\nMore.\n", "shopt", [13]),
        ("Prose first.\n* `nullglob` {boolean} If set ...\n", "nullglob", [13]),
        ("Prose first.\n- **nullglob**: If set, patterns expand to null.\n", "nullglob", [13]),
        ("Prose first.\nnullglob\n: If set, patterns expand to null.\n", "nullglob", [13]),
        (
            "| Target | Notes |\n|---|---|\n| riscv64gc-unknown-linux-gnu | RISC-V Linux |\n",
            "riscv64gc-unknown-linux-gnu",
            [29],
        ),
        ("See the shopt builtin for nullglob and dotglob.\n", "nullglob", []),
        ("Setting nullglob changes expansion.\nIt is off by default.\n", "nullglob", []),
        ("| riscv32gc-unknown-linux-gnu | riscv64gc-unknown-linux-gnu is close |\n", "riscv64gc-unknown-linux-gnu", []),
    ],
)
def test_entry_offsets_each_form(text, name, expected):
    assert entry_offsets(text, name) == expected


def test_entry_offsets_count_the_section_heading():
    assert entry_offsets("By default, rustc links statically.\n", "prefer-dynamic", "prefer-dynamic") == [0]
    assert entry_offsets("By default, rustc links statically.\n", "prefer-dynamic", "opt-level") == []


def test_question_subject():
    assert question_subject("What does the --dry-run flag do?") == "--dry-run"
    assert question_subject("What does the shopt builtin do?") == "shopt"
    assert question_subject("How do I list targets?") == ""


def test_named_terms_skip_a_leading_condition_clause():
    terms = named_terms("On a machine with 2 GiB of RAM, what size does Node suggest?")
    assert "RAM" not in terms and "GiB" not in terms
    assert terms == ["Node"]


# -- the pipeline on a small reference corpus ---------------------------------------------------

#: (lint name, what it detects, example code). Several sections, the intro and the group note
#: mention ``dead_code`` in passing (in prose and in ``#![allow(dead_code)]`` lines of examples);
#: only ``## dead-code`` is its entry. The page is long enough to be split into several chunks.
LINTS = [
    (
        "array_into_iter",
        "calling into_iter on arrays in older editions",
        "#![allow(dead_code)]\nfn main() {\n    [1, 2, 3].into_iter().for_each(|n| { *n; });\n}",
    ),
    (
        "bare_trait_objects",
        "trait objects written without the dyn keyword",
        "trait Trait { }\n\nfn takes_trait_object(_: Box<Trait>) {\n}",
    ),
    (
        "unused_imports",
        "imports that are never used",
        "#![allow(dead_code)]\nuse std::collections::HashMap;\n\nfn main() {}",
    ),
    ("unused_variables", "variables which are not used in any way", "fn main() {\n    let x = 5;\n}"),
    ("dead_code", "unused, unexported items", "fn foo() {}\n\nfn main() {}"),
    ("deprecated", "use of deprecated items", "#[deprecated]\nfn foo() {}\n\nfn bar() {\n    foo();\n}"),
    (
        "ellipsis_inclusive_range_patterns",
        "the deprecated ... range pattern syntax",
        "let x = 123;\nmatch x {\n    0...100 => {}\n    _ => {}\n}",
    ),
    (
        "non_camel_case_types",
        "types, variants, traits and type parameters that do not have camel case names",
        "struct my_struct;",
    ),
    (
        "non_snake_case",
        "variables, methods, functions and modules that do not have snake case names",
        "#![allow(dead_code)]\nfn MyFunction() {}",
    ),
    ("non_upper_case_globals", "static items that do not have an upper case identifier", "static max_points: i32 = 5;"),
    ("unreachable_code", "unreachable code paths", 'fn main() {\n    panic!("stop");\n    let x = 5;\n}'),
    ("unreachable_patterns", "unreachable patterns in a match", "let x = 5;\nmatch x {\n    y => (),\n    5 => (),\n}"),
    ("unused_assignments", "assignments that will never be read", "let mut x = 5;\nx = 6;"),
    ("unused_attributes", "attributes that were not used by the compiler", "#![ignore]"),
    ("unused_braces", "unnecessary braces around an expression", "if { true } {\n    // ...\n}"),
    ("unused_parens", "if, match, while and return with parentheses they do not need", "if(true) {}"),
    ("unused_labels", "labels that are never used", "'unused_label: loop {}"),
    ("unused_macros", "macros that were not used", "#![allow(dead_code)]\nmacro_rules! unused {\n    () => {};\n}"),
    (
        "unused_must_use",
        "unused results of a type flagged with must_use",
        "#![allow(dead_code)]\nfn returns_result() -> Result<(), ()> {\n    Ok(())\n}",
    ),
    ("unused_mut", "mut variables which do not need to be mutable", "let mut x = 5;"),
    ("unused_unsafe", "unnecessary use of an unsafe block", "unsafe {}"),
    ("unused_doc_comments", "doc comments that are not used by rustdoc", "/// docs for x\nlet x = 12;"),
    (
        "unused_comparisons",
        "comparisons made useless by the limits of the types involved",
        "fn foo(x: u8) {\n    x >= 0;\n}",
    ),
    ("path_statements", "path statements with no effect", "let x = 42;\n\nx;"),
    ("while_true", "while true loops, which should be written as loop", "while true {\n\n}"),
    ("overflowing_literals", "literals out of range for their type", "let x: u8 = 1000;"),
    ("no_mangle_generic_items", "generic items that must be mangled", "#[no_mangle]\nfn foo<T>(t: T) {}"),
    ("redundant_semicolons", "unnecessary trailing semicolons", "let _ = 123;;"),
    ("renamed_and_removed_lints", "lints that have been renamed or removed", "#![deny(raw_pointer_derive)]"),
    ("unconditional_recursion", "functions that cannot return without calling themselves", "fn foo() {\n    foo();\n}"),
]

#: What follows each lint's example: a note, mentioning ``dead_code`` in some sections.
LINT_NOTES = {
    "unused_variables": "Unlike dead_code, which detects unused items, this lint detects unused local "
    "bindings; prefix a binding with an underscore to silence it.",
    "unused_mut": "Items silenced with `#[allow(dead_code)]` are still checked by it.",
    "unused_macros": "The dead_code lint does not detect unused macros; this lint detects them instead.",
    "non_snake_case": "The example allows dead_code so that only the naming lint fires.",
}

LINT_PAGE = (
    "These lints are all set to the warn level by default. Many examples below start with "
    "`#![allow(dead_code)]` so that only the lint being shown fires. The unused lint group "
    "includes dead_code, unused_imports, unused_variables and other lints that detect things "
    "declared but never used.\n\n"
    + "\n\n".join(
        f"## {name.replace('_', '-')}\n\nThe `{name}` lint detects {what}.\n\n### Example\n\n"
        f"```rust\n{code}\n```\n\nThis will produce a warning. "
        + LINT_NOTES.get(name, f"Set `{name}` to deny to make it an error instead.")
        for name, what, code in LINTS
    )
)

SHOPT_SYNOPSIS = "shopt [-pqsu] [-o] [optname ...]"

SHELL_OPTIONS = [
    (
        "autocd",
        "If set, a command name that is the name of a directory is executed as if it were "
        "the argument to the cd command.",
    ),
    ("cdspell", "If set, minor errors in the spelling of a directory component in a cd command will be corrected."),
    (
        "checkwinsize",
        "If set, the shell checks the window size after each external command and "
        "updates the values of LINES and COLUMNS.",
    ),
    ("dotglob", "If set, the shell includes filenames beginning with a dot in the results of filename expansion."),
    ("extglob", "If set, the extended pattern matching features are enabled."),
    (
        "failglob",
        "If set, patterns which fail to match filenames during filename expansion result in an expansion error.",
    ),
    (
        "globstar",
        "If set, the pattern ** used in a filename expansion context will match all files "
        "and zero or more directories and subdirectories.",
    ),
    (
        "histappend",
        "If set, the history list is appended to the history file when the shell exits, "
        "rather than overwriting the file.",
    ),
    (
        "nocaseglob",
        "If set, the shell matches filenames in a case-insensitive fashion when performing filename expansion.",
    ),
    ("nullglob", "If set, filename patterns which match no files expand to a null string, rather than themselves."),
    ("xpg_echo", "If set, the echo builtin expands backslash-escape sequences by default."),
]

NL = "\n"

SHELL_PAGE = f"""
## Shell builtin commands

set
: set [-abefhkmnptuvxBCEHPT] [-o option-name] [--] [argument ...]

Change the values of shell options and set the positional parameters, or display the names and
values of shell variables.

shift
: shift [n]

Shift the positional parameters to the left by n. If n is not supplied, it is assumed to be 1.

shopt
: {SHOPT_SYNOPSIS}

Toggle the values of settings controlling optional shell behavior. The settings can be either those
listed below, or, if the -o option is used, those available with the -o option to the set builtin.
With no options, or with the -p option, a list of all settable options is displayed, with an
indication of whether or not each is set.

source
: source filename [arguments]

Read and execute commands from the filename argument in the current shell context.

type
: type [-afptP] [name ...]

Indicate how each name would be interpreted if used as a command name.

## Optional shell behavior

The list of shopt options is:

{"".join(f"{name}{NL}: {text}{NL}{NL}" for name, text in SHELL_OPTIONS)}
## Filename expansion

After word splitting, the shell scans each word for the characters *, ? and [. If one of these
characters appears, the word is regarded as a pattern and replaced with an alphabetically sorted
list of filenames matching the pattern. If no matching filenames are found and the shell option
nullglob is disabled, the word is left unchanged. See the shopt builtin for nullglob and dotglob.
"""

PREFER_DYNAMIC_1 = "By default, rustc prefers to statically link dependencies."
PREFER_DYNAMIC_2 = (
    "This option will indicate that dynamic linking should be used if possible if "
    "both a static and dynamic version of a library are available."
)

#: (option, description) of the codegen options page; ``prefer-dynamic`` is one of them, and
#: other entries talk about dynamic linking and preferences too.
CODEGEN_OPTIONS = [
    (
        "code-model",
        "This option lets you choose which code model to use. Code models put constraints "
        "on address ranges that the program and its symbols may use.",
    ),
    (
        "codegen-units",
        "This flag controls the maximum number of code generation units the crate is "
        "split into. It takes an integer greater than 0.",
    ),
    ("debuginfo", "This flag controls the generation of debug information. It takes 0, 1 or 2."),
    (
        "embed-bitcode",
        "This flag controls whether or not the compiler embeds LLVM bitcode into object "
        "files. It takes one of the values y, yes, on, true or n, no, off, false.",
    ),
    (
        "force-frame-pointers",
        "This flag forces the use of frame pointers. It is useful for profiling with tools that walk the stack.",
    ),
    ("link-arg", "This flag lets you append a single extra argument to the linker invocation."),
    (
        "link-dead-code",
        "Tries to generate and link dead code that would otherwise be removed. It helps code coverage tools.",
    ),
    (
        "linker",
        "This flag controls which linker rustc invokes to link your code. It takes a path to the linker executable.",
    ),
    (
        "lto",
        "This flag controls whether LLVM uses link time optimizations to produce better optimized "
        "code. It takes one of the values fat, thin or off.",
    ),
    ("opt-level", "This flag controls the optimization level. It takes a number from 0 to 3, or s or z for size."),
    ("panic", "This option lets you control what happens when the code panics. It takes unwind or abort."),
    ("prefer-dynamic", f"{PREFER_DYNAMIC_1} {PREFER_DYNAMIC_2}"),
    (
        "relocation-model",
        "This option controls generation of position-independent code. Dynamic "
        "libraries and executables built as position independent need pic.",
    ),
    (
        "rpath",
        "This flag controls whether rpath is enabled. Combined with -C prefer-dynamic, it lets a "
        "binary find the dynamic standard library next to it at run time.",
    ),
    ("strip", "This flag controls stripping of debuginfo and similar auxiliary data from binaries."),
    (
        "target-cpu",
        "This instructs rustc to generate code specifically for a particular processor. "
        "Pass native to build for the host processor.",
    ),
]

CODEGEN_PAGE = (
    "All of these options are passed to rustc via the -C flag, short for codegen. You can "
    "see the full list with rustc -C help.\n\n" + "\n\n".join(f"## {name}\n\n{text}" for name, text in CODEGEN_OPTIONS)
)

CLI_PAGE = """
## `-O`: optimize

This flag is equivalent to -C opt-level=3.

## `-C`/`--codegen`: code generation options

This flag will allow you to set codegen options. Each option is given as a key and a value.

## `--emit`: specifies the types of output files to generate

This flag controls the types of output files generated by the compiler.
"""

TARGET_ROWS = [
    ("aarch64-unknown-linux-gnu", "ARM64 Linux (kernel 4.1, glibc 2.17)"),
    ("aarch64-unknown-linux-musl", "ARM64 Linux with musl 1.2.3"),
    ("arm-unknown-linux-gnueabi", "Armv6 Linux (kernel 3.2, glibc 2.17)"),
    ("arm-unknown-linux-gnueabihf", "Armv6 Linux, hardfloat (kernel 3.2, glibc 2.17)"),
    ("armv7-unknown-linux-gnueabihf", "Armv7-A Linux, hardfloat (kernel 3.2, glibc 2.17)"),
    ("i586-unknown-linux-gnu", "32-bit Linux without SSE (kernel 3.2, glibc 2.17)"),
    ("i686-unknown-linux-gnu", "32-bit Linux (kernel 3.2, glibc 2.17)"),
    ("i686-unknown-freebsd", "32-bit FreeBSD"),
    ("loongarch64-unknown-linux-gnu", "LoongArch64 Linux, LP64D ABI (kernel 5.19, glibc 2.36)"),
    ("mips-unknown-linux-gnu", "MIPS Linux (kernel 4.4, glibc 2.23)"),
    ("powerpc-unknown-linux-gnu", "PowerPC Linux (kernel 3.2, glibc 2.17)"),
    ("powerpc64-unknown-linux-gnu", "PPC64 Linux (kernel 3.2, glibc 2.17)"),
    ("powerpc64le-unknown-linux-gnu", "PPC64LE Linux (kernel 3.10, glibc 2.17)"),
    ("riscv32gc-unknown-linux-gnu", "RISC-V Linux (kernel 5.4, glibc 2.33)"),
    ("riscv64gc-unknown-linux-gnu", "RISC-V Linux (kernel 4.20, glibc 2.29)"),
    ("riscv64gc-unknown-linux-musl", "RISC-V Linux with musl 1.2.3"),
    ("s390x-unknown-linux-gnu", "S390x Linux (kernel 3.2, glibc 2.17)"),
    ("sparc64-unknown-linux-gnu", "SPARC Linux (kernel 4.4, glibc 2.23)"),
    ("sparcv9-sun-solaris", "SPARC Solaris 11"),
    ("thumbv7neon-unknown-linux-gnueabihf", "Thumb2-mode Armv7-A Linux with NEON (kernel 4.4, glibc 2.23)"),
    ("wasm32-unknown-unknown", "WebAssembly"),
    ("wasm32-wasip1", "WebAssembly with WASI"),
    ("x86_64-apple-darwin", "64-bit macOS (10.12+, Sierra+)"),
    ("x86_64-pc-windows-gnu", "64-bit MinGW (Windows 10+)"),
    ("x86_64-pc-windows-msvc", "64-bit MSVC (Windows 10+)"),
    ("x86_64-unknown-freebsd", "64-bit FreeBSD"),
    ("x86_64-unknown-illumos", "illumos"),
    ("x86_64-unknown-linux-gnu", "64-bit Linux (kernel 3.2, glibc 2.17)"),
    ("x86_64-unknown-linux-musl", "64-bit Linux with musl 1.2.3"),
    ("x86_64-unknown-netbsd", "NetBSD/amd64"),
]

TARGETS_PAGE = (
    "## Tier 2 with host tools\n\nTier 2 targets are guaranteed to build. The table lists each "
    "target with its minimum kernel and C library where they apply.\n\n"
    "| target | notes |\n|--------|-------|\n" + "\n".join(f"| `{t}` | {n} |" for t, n in TARGET_ROWS)
)

EXEC_CODE = """```js
const { exec } = require('node:child_process');

exec('cat *.js missing_file | wc -l', (error, stdout, stderr) => {
  if (error) {
    console.error(`exec error: ${error}`);
    return;
  }
  console.log(`stdout: ${stdout}`);
  console.error(`stderr: ${stderr}`);
});
```"""

SPAWN_CODE = """```js
const { spawn } = require('node:child_process');

const server = spawn('node', ['server.js'], {
  detached: true,
  stdio: 'ignore',
});

server.unref();
```"""

CHILD_PAGE = f"""
## Running a command in a shell with exec

The exec function spawns a shell and runs a command within that shell, passing the stdout and
stderr to a callback function when complete. The command string is processed directly by the
shell, so pipes and redirections work.

{EXEC_CODE}

## Keeping a detached server running

A detached child process keeps running after its parent exits. To let the parent exit on its own,
ignore the child's standard streams and call unref on it.

{SPAWN_CODE}
"""


@pytest.fixture(scope="module")
def ref_index(tmp_path_factory):
    """(index, {doc id: source file text}) over the reference pages above."""
    return minilm_index_of(
        tmp_path_factory,
        {
            "rustc/lints": ("Warn-by-default lints", LINT_PAGE),
            "bash/shopt": ("Shell builtins and options", SHELL_PAGE),
            "rustc/codegen": ("Codegen options", CODEGEN_PAGE),
            "rustc/cli": ("Command-line arguments", CLI_PAGE),
            "rustc/targets": ("Platform support", TARGETS_PAGE),
            "node/child": ("Child processes", CHILD_PAGE),
        },
    )


def cited(answer) -> list[tuple[str, list]]:
    return split_cited_sentences(answer.text)


@pytest.mark.parametrize(
    "question, doc, entry",
    [
        ("What does the dead_code lint detect?", "rustc/lints", "## dead-code\n"),
        ("What does shopt -s nullglob do?", "bash/shopt", "nullglob\n: If set"),
        ("What does the shopt builtin do?", "bash/shopt", "shopt\n: shopt [-pqsu]"),
        ("What is -C prefer-dynamic?", "rustc/codegen", "## prefer-dynamic\n"),
        (
            "What are the minimum kernel and glibc versions for riscv64gc-unknown-linux-gnu?",
            "rustc/targets",
            "| `riscv64gc-unknown-linux-gnu` |",
        ),
    ],
)
def test_the_chunk_holding_the_entry_is_pinned_first(ref_index, question, doc, entry):
    idx, _ = ref_index
    top = idx.retriever("shipped").search(question, 3)[0]
    assert (top.doc_id, top.stage) == (doc, "pinned")
    assert entry in idx.store.get_chunks([top.chunk_id])[top.chunk_id].text


def test_a_question_naming_no_entry_pins_nothing(ref_index):
    idx, _ = ref_index
    hits = idx.retriever("shipped").search("How do I stop a lint from firing?", 5)
    assert hits and all(h.stage == "rrf" for h in hits)


def test_lint_question_quotes_the_lint_entry_not_a_mention(ref_index):
    idx, src = ref_index
    a = idx.ask("What does the dead_code lint detect?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert a.text.startswith("The dead_code lint detects unused, unexported items."), a.text
    assert cited(a)[0] == ("The dead_code lint detects unused, unexported items.", [("doc", "rustc/lints")])
    c = a.citations[0]
    assert c.doc_id == "rustc/lints"
    assert src["rustc/lints"][c.start : c.end] == "The `dead_code` lint detects unused, unexported items."
    # sentences of other lints that merely mention dead_code are not part of its answer
    assert "local bindings" not in a.text and "unused macros" not in a.text, a.text
    assert "unused lint group" not in a.text, a.text


def test_flag_value_question_quotes_the_option_definition_first(ref_index):
    idx, src = ref_index
    a = idx.ask("What does shopt -s nullglob do?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    first, cites = cited(a)[0]
    assert first == (
        "nullglob: If set, filename patterns which match no files expand to a null string, rather than themselves."
    ), a.text
    assert cites == [("doc", "bash/shopt")]
    c = a.citations[0]
    assert src["bash/shopt"][c.start : c.end] == (
        "nullglob\n: If set, filename patterns which match no files expand to a null string, rather than themselves."
    )


def test_builtin_question_never_quotes_the_bare_synopsis(ref_index):
    """The entry ``shopt`` / ``: shopt [-pqsu] [-o] [optname ...]`` opens with a synopsis: it
    shows how the command is written, not what it does, and is never quoted on its own
    (``citewise.answer.select.format.is_synopsis``). Which of the entry's sentences opens the
    answer is measured in bench/answer_cases.jsonl (``shopt-synopsis``)."""
    idx, _ = ref_index
    a = idx.ask("What does the shopt builtin do?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert "[-pqsu]" not in a.text and SHOPT_SYNOPSIS not in a.text, a.text


def test_codegen_value_question_reads_the_entry_in_order(ref_index):
    idx, _ = ref_index
    a = idx.ask("What is -C prefer-dynamic?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert PREFER_DYNAMIC_1 in a.text and PREFER_DYNAMIC_2 in a.text, a.text
    assert a.text.index(PREFER_DYNAMIC_1) < a.text.index(PREFER_DYNAMIC_2), a.text
    # the entry opens the answer, its two sentences in text order, both cited to the codegen page
    assert cited(a)[:2] == [
        (PREFER_DYNAMIC_1, [("doc", "rustc/codegen")]),
        (PREFER_DYNAMIC_2, [("doc", "rustc/codegen")]),
    ], a.text
    assert a.citations[0].doc_id == "rustc/codegen"


def test_target_table_row_answers_for_its_target_not_the_near_one(ref_index):
    idx, _ = ref_index
    a = idx.ask("What are the minimum kernel and glibc versions for riscv64gc-unknown-linux-gnu?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert "kernel 4.20, glibc 2.29" in a.text, a.text
    first, cites = cited(a)[0]
    assert first == "target: riscv64gc-unknown-linux-gnu; notes: RISC-V Linux (kernel 4.20, glibc 2.29).", a.text
    assert cites == [("doc", "rustc/targets")]
    # the neighbouring riscv32gc row has other minimums; they are not this target's
    assert "riscv32gc" not in a.text and "kernel 5.4, glibc 2.33" not in a.text, a.text


@pytest.mark.parametrize(
    "question, reason",
    [
        ("What values does -C hyper-opt accept?", "unknown name: hyper-opt"),
        ("What tier is the x86_64-unknown-plan9 target in?", "unknown name: x86_64-unknown-plan9"),
        ("What does shopt -s smartglob enable?", "unknown name: smartglob"),
    ],
)
def test_false_premise_names_abstain(ref_index, question, reason):
    idx, _ = ref_index
    a = idx.ask(question)
    assert (a.outcome, a.text, a.citations) == ("abstained", ABSTENTION_TEXT, []), a.text
    assert a.abstain_reason.startswith("unknown name"), a.abstain_reason
    assert a.abstain_reason == reason


@pytest.mark.parametrize(
    "question, first, doc",
    [
        # the same shapes of question about names the corpus has are answered from their entries
        # (a values question reads the entry on: "It takes ..." follows the sentence it leans on)
        (
            "What values does -C lto accept?",
            (
                "This flag controls whether LLVM uses link time optimizations to produce better optimized code.",
                "It takes one of the values fat, thin or off.",
            ),
            "rustc/codegen",
        ),
        (
            "What tier is the x86_64-unknown-netbsd target in?",
            ("target: x86_64-unknown-netbsd; notes: NetBSD/amd64.",),
            "rustc/targets",
        ),
    ],
)
def test_same_shapes_about_existing_names_are_answered(ref_index, question, first, doc):
    idx, _ = ref_index
    a = idx.ask(question)
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert cited(a)[: len(first)] == [(f, [("doc", doc)]) for f in first], a.text


def test_code_request_gets_the_block_under_the_matching_heading_whole(ref_index):
    idx, src = ref_index
    a = idx.ask("Example of running a shell pipeline with exec and printing its stdout and stderr")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert EXEC_CODE in a.text, a.text  # verbatim, indentation included
    assert EXEC_CODE in src["node/child"]  # as written in the source
    assert "spawn(" not in a.text and "server.unref" not in a.text, a.text
    blocks = [(s, c) for s, c in cited(a) if s.startswith("```")]
    assert blocks == [(EXEC_CODE, [("doc", "node/child")])]


# -- read on, slot names, flag values with '=' ------------------------------------------------


def test_names_from_slots_flag_values_and_commands():
    from citewise.text.names import entry_names, slot_names

    assert slot_names("In vim, how do I search and replace a word?") == ["vim"]
    assert slot_names("How do I enable extended globbing in zsh with setopt?") == ["zsh", "setopt"]
    assert slot_names("What does the autofixup builtin do in bash?") == ["autofixup", "bash"]
    assert code_names("How do I use rustc --emit=wasm-text?") == ["--emit", "wasm-text"]
    assert entry_names("disown -h what does it do") == ["-h", "disown"]  # '-h what': 'what' is no value
    assert question_subject("what is a metacharacter in bash") == "metacharacter"


@pytest.mark.parametrize(
    "question, reason",
    [
        ("In vim, how do I list the options of the shopt builtin?", "unknown name: vim"),
        ("How do I turn on nullglob in zsh with setopt?", "unknown name: zsh"),
        ("What does --emit=wasm-text produce?", "unknown name: wasm-text"),
    ],
)
def test_tools_and_values_the_corpus_lacks_abstain(ref_index, question, reason):
    idx, _ = ref_index
    a = idx.ask(question)
    assert (a.outcome, a.abstain_reason) == ("abstained", reason), a.text


def test_a_named_thing_missing_from_every_evidence_chunk_is_reported():
    """The rule behind "How do I use the retry reserved word ... in bash?" on the real-docs set:
    'retry' occurs in the corpus (Node.js pages), but not in any retrieved bash chunk."""
    from citewise.answer.evidence import EvidenceScorer
    from citewise.text.analyzer import analyze

    seen = set(
        analyze(
            "Reserved words are words that have special meaning to the shell: if then "
            "else elif fi case esac for select while until do done in function time."
        )
    )
    q = "How do I use the retry reserved word to re-run a failed command in bash?"
    assert reason_text(EvidenceScorer.missing_name(q, seen)) == "not in the evidence: retry"
    assert reason_text(EvidenceScorer.missing_name("How do I use the until reserved word?", seen)) == ""
    assert reason_text(EvidenceScorer.missing_name("What does fs.rm() do?", seen)) == "not in the evidence: fs.rm()"
    assert (
        reason_text(EvidenceScorer.missing_name("What does SHA-256 do?", seen)) == ""
    )  # names with digits: spelt many ways


def test_what_question_about_a_flag_value_opens_with_its_entry_not_a_mention(ref_index):
    """ "What number does -C opt-level take?" is not definitional ("what is/does X"), yet the
    opt-level entry answers it: the entry's opening sentence comes first, before the command-line
    page's "equivalent to -C opt-level=3" that merely mentions it (quoted first before)."""
    idx, _ = ref_index
    a = idx.ask("What number does -C opt-level take?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert cited(a)[:2] == [
        ("This flag controls the optimization level.", [("doc", "rustc/codegen")]),
        ("It takes a number from 0 to 3, or s or z for size.", [("doc", "rustc/codegen")]),
    ], a.text


# -- code blocks a question does not ask for by name -----------------------------------------

EXAMPLE_PATH_PAGE = """
## path.relative(from, to)

The path.relative() method returns the relative path from `from` to `to` based on the current
working directory. If `from` and `to` each resolve to the same path, a zero-length string is returned.

```js
path.relative('/srv/app/lib/util', '/srv/app/docs/api');
// Returns: '../../docs/api'
```

## path.basename(path[, suffix])

The path.basename() method returns the last portion of a path, similar to the Unix basename command.
Trailing directory separators are ignored.

```js
path.basename('/srv/app/index.html');
// Returns: 'index.html'
```
"""
OUTPUT_LINT_PAGE = """
## unused-labels

The `unused_labels` lint detects labels that are never used.

### Example

```rust
'label: loop {}
```

This will produce:

```text
warning: unused label
 --> lint.rs:1:1
```

## while-true

The `while_true` lint detects while true loops, which should be written as loop.
"""


CONFIG_PAGE = """
## Build configuration

The [build] section sets defaults for every build, such as the number of parallel jobs. Optional
features of the compiler are enabled with flags, not in this file.

```toml
[build]
jobs = 4
```
"""


STRIP_PAGE = """
## strip

The option -C strip=val controls stripping of debug information and similar auxiliary data from
binaries during linking. Supported values for this option are:

- `none` - debug information and symbols are copied to the produced binary.
- `debuginfo` - debug information sections and debuginfo symbols are stripped at link time and are
  not copied to the produced binary.
- `symbols` - same as debuginfo, but the rest of the symbol table section is stripped as well.

The default is none.
"""


FLAGS_PAGE = """
## `--cap-warnings`: set the most severe warning level

This flag lets you cap them; see the levels page for more.

## `--explain`: provide a detailed explanation of an error message

Each error of the compiler has a code; this flag prints its long description.
"""


DEPRECATIONS_PAGE = """
## DEP0006: child_process options.customFds

Type: End-of-Life.

Within the child_process module's spawn() method, the options.customFds option is deprecated. The
options.stdio option should be used instead.

## DEP0007: cluster worker.suicide

Type: Runtime.

The suicide property of a cluster worker is deprecated in favour of exitedAfterDisconnect.
"""


@pytest.fixture(scope="module")
def example_index(tmp_path_factory):
    """(index, sources) over a path page whose examples show return values in comments, a
    lint page that shows the compiler's output in a block and a configuration page."""
    return minilm_index_of(
        tmp_path_factory,
        {
            "node/path": ("Path", EXAMPLE_PATH_PAGE),
            "rustc/lints": ("Lints", OUTPUT_LINT_PAGE),
            "tool/config": ("Configuration", CONFIG_PAGE),
            "rustc/strip": ("Codegen options", STRIP_PAGE),
            "tool/flags": ("Command-line flags", FLAGS_PAGE),
            "node/deprecations": ("Deprecations", DEPRECATIONS_PAGE),
        },
    )


def test_a_question_that_asks_for_no_code_gets_no_code_block(example_index):
    idx, _ = example_index
    b = idx.ask("What does path.basename do?")
    assert b.outcome == "answered" and "```" not in b.text, b.text
    assert b.text.startswith("The path.basename() method returns the last portion of a path"), b.text


# -- comparisons ---------------------------------------------------------------------------------


def test_compared_names():
    from citewise.text.names import compared_names

    assert compared_names("What is the difference between npm ci and npm install?") == ["npm ci", "npm install"]
    assert compared_names("queueMicrotask vs process.nextTick which one should I use") == [
        "queueMicrotask",
        "process.nextTick",
    ]
    assert compared_names("Differences between a login shell and an interactive shell") == [
        "login shell",
        "interactive shell",
    ]
    assert compared_names("How do I run a command?") == []


def test_a_comparison_with_a_side_no_unit_names_abstains(ref_index):
    """ "shell" and "targets" both occur in the corpus, but no sentence or entry names them
    together: the comparison is about a thing the evidence does not have (before, the exec
    paragraph was quoted). The same shape about two things the pages do describe is answered."""
    idx, _ = ref_index
    a = idx.ask("What is the difference between shell targets and exec?")
    assert (a.outcome, a.text) == ("abstained", ABSTENTION_TEXT), a.text
    assert a.abstain_reason == "not in the evidence: shell targets"
    b = idx.ask("exec vs spawn")
    assert b.outcome == "answered", (b.abstain_reason, b.text)
    assert b.text.startswith("The exec function spawns a shell and runs a command within that shell"), b.text


def test_a_bracketed_section_the_evidence_never_writes_abstains(example_index):
    """ "features" and "section" occur on the configuration page, "[features]" does not: the
    question is about a section the documents do not have. The section they do have is answered."""
    idx, _ = example_index
    a = idx.ask("How do I declare optional features in the [features] section?")
    assert (a.outcome, a.abstain_reason) == ("abstained", "not in the evidence: [features]"), a.text
    b = idx.ask("What does the [build] section set?")
    assert b.outcome == "answered", (b.abstain_reason, b.text)
    assert b.text.startswith("The [build] section sets defaults for every build"), b.text


def test_a_comparison_opens_with_the_unit_about_each_side(example_index):
    """The two values' items read alike (on the rustc book the redundancy rule kept only one,
    and the debuginfo item, which mentions symbols, stood for both): each side gets the item led
    by it, the two opening the answer (before, "The default is none." came between them). Their
    order is measured in bench/answer_cases.jsonl (``strip-comparison-order``)."""
    idx, _ = example_index
    a = idx.ask("rustc -C strip=symbols vs strip=debuginfo difference")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    first_two = {s for s, _ in cited(a)[:2]}
    assert first_two == {
        "symbols - same as debuginfo, but the rest of the symbol table section is stripped as well.",
        "debuginfo - debug information sections and debuginfo symbols are stripped at link time "
        "and are not copied to the produced binary.",
    }, a.text


def test_a_status_line_does_not_open_an_entry(example_index):
    """ "Type: End-of-Life." follows the entry's heading but says nothing about what it is: the
    answer opens with the sentence after it."""
    idx, _ = example_index
    a = idx.ask("child_process customFds option")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert a.text.startswith(
        "Within the child_process module's spawn() method, the options.customFds option is deprecated."
    ), a.text


GLOSSARY_PAGE = """
## Shell options

pipeguard
: If set, the return status of a pipeline is the status of the last command that failed. The
option is off by default. It applies to every pipeline of the shell.

nullmatch
: If set, patterns which match no files expand to nothing. Patterns are otherwise left as typed.
"""


def test_the_answer_reads_on_inside_a_definition_past_its_first_sentence(tmp_path_factory):
    """A definition's later sentences sit under its term (heading path + term): reading on from
    the definition takes them, and stops at the next term."""
    idx, _ = minilm_index_of(tmp_path_factory, {"shell/options": ("Options", GLOSSARY_PAGE)})
    a = idx.ask("What does the pipeguard option do?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert a.text.startswith("pipeguard: If set, the return status of a pipeline"), a.text
    assert "The option is off by default." in a.text, a.text
    assert "nullmatch" not in a.text, a.text
