"""reStructuredText (and Sphinx sources) to Markdown-like text, through docutils.

The text is parsed by docutils' own reStructuredText parser into a document tree, which is then
written out as the Markdown-like text the chunker reads: sections as ``#`` headings (their depth
in the tree), paragraphs, literal blocks as fenced code, bullet and enumerated lists, definition,
field and option lists as ``- **term**: definition`` items, tables as pipe tables, admonitions as
``Note: ...`` paragraphs.

Sphinx sources use roles and directives docutils does not know (``:func:``, ``:ref:``,
``.. code-block::``, ``.. autofunction::``, ``.. versionadded::``). Before parsing, every role
and directive name the text uses that docutils does not know is registered with a generic
implementation that keeps its text: a role's text (``Label <target>`` shows ``Label``; a leading
``~`` or ``!`` is dropped) as inline code, or as plain text for the cross-reference roles of
:data:`TEXT_ROLES`; a directive's arguments as a paragraph and its content parsed as
reStructuredText, or as a code block for the code directives of :data:`CODE_DIRECTIVES`.
Navigation directives (:data:`NAV_DIRECTIVES`: ``toctree``, ``contents``) are dropped and noted.
docutils prints nothing (its report level is above every message); its error messages are
collected as notes. File inclusion and raw output are disabled (a document cannot read other
files), and no ``docutils.conf`` is read.
"""

from __future__ import annotations

import io
import re

#: Sphinx roles whose text is prose (a cross-reference's title, a term), not code.
TEXT_ROLES = frozenset("ref doc term abbr numref download guilabel menuselection dfn keyword token any".split())
#: Directives whose content is code.
CODE_DIRECTIVES = frozenset("code-block sourcecode code highlight productionlist".split())
#: Sphinx's code directives, whose options (``:caption:``, ``:emphasize-lines:``) docutils' own
#: ``code`` directive refuses.
SPHINX_CODE = frozenset(("code-block", "sourcecode"))
#: Sphinx directives that render nothing (settings for the directives after them, index entries).
SILENT_DIRECTIVES = frozenset(
    (
        "currentmodule module default-role default-domain highlight index tabularcolumns "
        "sectionauthor moduleauthor codeauthor py:currentmodule py:module"
    ).split()
)
#: Directives that are navigation: a table of contents, the pages of a book.
NAV_DIRECTIVES = frozenset("toctree contents".split())

_ROLE_USE = re.compile(r"(?<![\w`]):((?:(?!_)\w)+(?:[-._+:](?:(?!_)\w)+)*):`")
_DIRECTIVE_USE = re.compile(r"^[ \t]*\.\.[ \t]+((?:(?!_)\w)+(?:[-._+:](?:(?!_)\w)+)*)[ \t]*::", re.M)


def _register_unknown(text: str) -> None:
    """Register a generic role / directive for every name in ``text`` docutils does not know."""
    from docutils import nodes, utils
    from docutils.parsers.rst import Directive, directives, roles
    from docutils.parsers.rst.languages import en

    def generic_role(name, rawtext, text, lineno, inliner, options=None, content=None):
        shown = utils.unescape(text)
        m = re.match(r"^(.*?)\s*<[^<>]*>$", shown, re.S)
        if m and m.group(1).strip():
            shown = m.group(1)
        shown = shown.lstrip("~!")
        base = name.lower().rsplit(":", 1)[-1]
        node = nodes.inline(rawtext, shown) if base in TEXT_ROLES else nodes.literal(rawtext, shown)
        return [node], []

    class AnyOptions(dict):
        def __missing__(self, key):
            return directives.unchanged

        def __contains__(self, key):
            return True

        def __bool__(self):  # docutils reads options only for a directive that declares some
            return True

    class Generic(Directive):
        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True
        option_spec = AnyOptions()

        def run(self):
            name = self.name.lower().rsplit(":", 1)[-1]
            arg = " ".join(self.arguments).strip()
            if name in NAV_DIRECTIVES:
                return [nodes.comment("", f"citewise-nav {name}")]
            if self.name.lower() in SILENT_DIRECTIVES or name in SILENT_DIRECTIVES:
                return []
            if name in CODE_DIRECTIVES:
                code = "\n".join(self.content)
                return (
                    [nodes.literal_block(code, code, classes=["code", arg] if arg else ["code"])]
                    if code.strip()
                    else []
                )
            out = []
            if arg:
                out.append(nodes.paragraph("", "", nodes.strong("", f"{name}: "), nodes.literal("", arg)))
            if self.content:
                box = nodes.container()
                self.state.nested_parse(self.content, self.content_offset, box)
                if any(m.get("level", 0) >= 3 for m in box.findall(nodes.system_message)):
                    code = "\n".join(self.content)  # not reStructuredText (an example's code): verbatim
                    box = nodes.literal_block(code, code)
                out.append(box)
            return out

    for name in set(_ROLE_USE.findall(text)):
        key = name.lower()
        if key not in roles._roles and key not in roles._role_registry and key not in en.roles:
            roles.register_local_role(key, generic_role)
    for name in set(_DIRECTIVE_USE.findall(text)):
        key = name.lower()
        if (
            key in NAV_DIRECTIVES
            or key in SPHINX_CODE
            or key in SILENT_DIRECTIVES
            or (
                key not in directives._directives
                and key not in directives._directive_registry
                and key not in en.directives
            )
        ):
            directives.register_directive(key, Generic)


def _doctree(text: str, source: str):
    from docutils.core import publish_doctree

    _register_unknown(text)
    settings = {
        "report_level": 5,
        "halt_level": 5,
        "warning_stream": io.StringIO(),
        "file_insertion_enabled": False,
        "raw_enabled": False,
        "_disable_config": True,
        "doctitle_xform": True,
        "sectsubtitle_xform": False,
        "syntax_highlight": "none",
        "input_encoding": "unicode",
        "traceback": True,
        "embed_stylesheet": False,
    }
    return publish_doctree(text, source_path=source, settings_overrides=settings)


class _Writer:
    """Walks a docutils tree, writing Markdown-like blocks."""

    def __init__(self):
        self.blocks: list[str] = []
        self.notes: list[tuple[int, str]] = []  # (line, what was dropped or wrong)

    def inline(self, node) -> str:
        from docutils import nodes

        if isinstance(node, nodes.Text):
            return str(node)
        if isinstance(node, nodes.literal):
            t = " ".join(node.astext().split())
            return f"``{t}``" if "`" in t else f"`{t}`" if t else ""
        if isinstance(node, (nodes.footnote_reference, nodes.citation_reference)):
            return f"[{node.astext()}]"
        if isinstance(node, (nodes.problematic, nodes.system_message, nodes.target, nodes.substitution_definition)):
            return node.astext() if isinstance(node, nodes.problematic) else ""
        return "".join(self.inline(c) for c in node.children)

    def para(self, node) -> str:
        return " ".join(self.inline(node).split())

    def walk(self, node, depth: int, indent: str = "") -> None:
        for child in node.children:
            self.block(child, depth, indent)

    def block(self, n, depth: int, indent: str = "") -> None:  # noqa: C901 - one branch per node type
        from docutils import nodes

        out = self.blocks.append
        if isinstance(n, nodes.section):
            title = next((c for c in n.children if isinstance(c, nodes.title)), None)
            if title is not None:
                out("#" * min(depth + 1, 6) + " " + self.para(title))
            self.walk(n, depth + 1)
        elif isinstance(n, (nodes.title, nodes.subtitle)):
            return
        elif isinstance(n, (nodes.paragraph, nodes.rubric, nodes.caption, nodes.attribution)):
            t = self.para(n)
            if t:
                out(indent + (("\\" + t) if re.match(r"[#>|<]|```|~~~|[=\-]+$", t) else t))
        elif isinstance(n, (nodes.literal_block, nodes.doctest_block)):
            body = n.astext()
            lang = next((c for c in n.get("classes", []) if c not in ("code", "literal-block")), "")
            fence = "```"
            while fence in body:
                fence += "`"
            out(f"{fence}{lang}\n{body}\n{fence}")
        elif isinstance(n, (nodes.bullet_list, nodes.enumerated_list)):
            start = n.get("start", 1)
            lines = []
            for k, item in enumerate(c for c in n.children if isinstance(c, nodes.list_item)):
                marker = f"{start + k}. " if isinstance(n, nodes.enumerated_list) else "- "
                lines.extend(self.item(item, indent, marker))
            out("\n".join(lines))
        elif isinstance(n, (nodes.definition_list, nodes.field_list, nodes.option_list, nodes.docinfo)):
            lines = []
            for item in n.children:
                if isinstance(n, nodes.docinfo) and not isinstance(item, nodes.field):
                    # bibliographic elements: author, version, date ... (authors: a group)
                    lines.append(
                        f"{indent}- **{item.tagname.capitalize()}**: "
                        + "; ".join(
                            self.para(a) for a in (item.children if isinstance(item, nodes.authors) else [item])
                        )
                    )
                    continue
                head, body = self.term_and_body(item)
                sub = _Writer()
                if body is not None:
                    sub.walk(body, depth, "")
                text = (
                    " ".join(b for b in sub.blocks if not b.startswith(("```", "- ", "#"))) if body is not None else ""
                )
                if head:
                    lines.append(f"{indent}- **{head}**" + (f": {text}" if text else ""))
                elif text:
                    lines.append(f"{indent}- {text}")
                lines.extend(b for b in sub.blocks if b.startswith(("```", "- ")))
            out("\n".join(lines))
        elif isinstance(n, nodes.table):
            out(self.table(n))
        elif isinstance(n, nodes.Admonition):
            label = n.tagname.capitalize() if n.tagname != "admonition" else ""
            sub = _Writer()
            sub.walk(n, depth)
            if label and sub.blocks and not sub.blocks[0].startswith(("```", "- ", "|")):
                sub.blocks[0] = f"{label}: {sub.blocks[0]}"
            self.blocks.extend(sub.blocks)
        elif isinstance(n, nodes.line_block):
            out("\n".join(indent + self.para(line) for line in n.findall(nodes.line)))
        elif isinstance(n, nodes.system_message):
            if n.get("level", 0) >= 3:
                self.notes.append(
                    (
                        n.get("line") or 0,
                        "reStructuredText error: "
                        + " ".join(self.para(c) for c in n.children if isinstance(c, nodes.paragraph))[:160],
                    )
                )
        elif isinstance(n, nodes.comment):
            if n.astext().startswith("citewise-nav "):
                self.notes.append((n.line or 0, f"navigation: {n.astext().split()[1]} directive"))
        elif isinstance(n, nodes.topic) and "contents" in n.get("classes", []):
            self.notes.append((n.line or 0, "navigation: contents directive"))
        elif isinstance(
            n,
            (
                nodes.target,
                nodes.substitution_definition,
                nodes.transition,
                nodes.raw,
                nodes.pending,
                nodes.meta if hasattr(nodes, "meta") else nodes.pending,
            ),
        ):
            return
        elif isinstance(n, (nodes.footnote, nodes.citation)):
            label = next((c.astext() for c in n.children if isinstance(c, nodes.label)), "")
            sub = _Writer()
            sub.walk(n, depth)
            text = " ".join(b for b in sub.blocks if b != label)
            if text:
                out(f"[{label}] {text}" if label else text)
        elif isinstance(n, nodes.Element):
            self.walk(n, depth, indent)
        elif isinstance(n, nodes.Text) and str(n).strip():
            out(indent + " ".join(str(n).split()))

    def item(self, item, indent: str, marker: str) -> list[str]:
        sub = _Writer()
        sub.walk(item, 0, "")
        first = [b for b in sub.blocks if not b.startswith(("```", "- ", "|")) and not re.match(r"\d+\. ", b)]
        rest = [b for b in sub.blocks if b not in first]
        lines = [indent + marker + " ".join(first)] if first or not rest else []
        for b in rest:
            lines.extend(("  " + ln if not b.startswith("```") else ln) for ln in b.split("\n"))
        return lines

    def term_and_body(self, item):
        from docutils import nodes

        heads, body = [], None
        for c in item.children:
            if isinstance(c, (nodes.term, nodes.field_name, nodes.option_group, nodes.classifier)):
                heads.append(self.para(c))
            elif isinstance(c, (nodes.definition, nodes.field_body, nodes.description)):
                body = c
            elif isinstance(c, nodes.TextElement):  # docinfo fields: author, version ...
                heads.append(c.tagname.capitalize())
                body = c
        return " ".join(h for h in heads if h), body

    def table(self, n) -> str:
        from docutils import nodes  # noqa: F811

        rows = []
        header = 0
        for part in n.findall(lambda x: isinstance(x, (nodes.thead, nodes.tbody))):
            for row in part.children:
                if isinstance(row, nodes.row):
                    rows.append(
                        [
                            " ".join(self.para(p) for p in e.findall(nodes.paragraph)).replace("|", "\\|")
                            for e in row.children
                            if isinstance(e, nodes.entry)
                        ]
                    )
            if isinstance(part, nodes.thead):
                header = len(rows)
        if not rows:
            return ""
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        if not header:
            rows.insert(0, [""] * width)
        lines = ["| " + " | ".join(rows[0]) + " |", "| " + " | ".join(["---"] * width) + " |"]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows[1:]])


def rst_to_markdown(text: str, source: str = "<string>") -> tuple[str, str, list[tuple[int, str]]]:
    """Markdown-like text of a reStructuredText document, its title ('' when it has none), and
    notes on what was dropped or could not be read: ``[(line, note), ...]``."""
    tree = _doctree(text, source)
    w = _Writer()
    title = tree.get("title", "") or ""
    if title:
        w.blocks.append("# " + " ".join(title.split()))
    w.walk(tree, 1 if title else 0)
    body = "\n\n".join(b for b in w.blocks if b.strip())
    return (body + "\n") if body.strip() else "", title, w.notes
