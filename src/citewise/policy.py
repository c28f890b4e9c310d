"""Permission policy files: path globs → groups, for documents that carry no permissions of their own.

A policy file is YAML::

    rules:
      - glob: "internal/finance/**"      # relative to the ingested folder, '/'-separated
        groups: [finance]
      - glob: "internal/**/*.pdf"
        groups: [staff]
      - glob: "hr/**"
        groups: [hr]
        override: true                   # front matter cannot widen or change these

Globs: ``**`` matches any number of folders (also none), ``*`` any characters except ``/``, ``?``
one character except ``/``, ``[abc]`` one of the characters. A glob without ``/`` matches the
file name in any folder (like ``.gitignore``).

Which groups a document gets (:meth:`Policy.groups_for`), in order:

1. If any matching rule has ``override: true``: the union of the groups of the matching override
   rules (front matter is ignored: an administrator's lock).
2. Else, if the document declares ``permissions`` (front matter / HTML meta): those — the document
   is the more specific statement.
3. Else, if any rule matches: the union of the groups of every matching rule.
4. Else: ``None`` — the index's default permission (``public`` or ``deny``) applies.

``citewise ingest PATH --policy FILE`` keeps a copy as ``<index>/policy.yaml`` and later ingests
(and ``citewise watch``) use it until another ``--policy`` is given, so forgetting the option
cannot silently widen permissions. A policy or default-permission change rewrites the affected
documents' groups without re-embedding them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from citewise.core import InputError


@lru_cache(maxsize=1024)
def glob_to_regex(glob: str) -> re.Pattern:
    """Compile a path glob (see module docstring) to an anchored regular expression.

    >>> bool(glob_to_regex("internal/finance/**").match("internal/finance/a/b.md"))
    True
    >>> bool(glob_to_regex("internal/*.md").match("internal/x/y.md"))
    False
    >>> bool(glob_to_regex("*.pdf").match("a/b/c.pdf"))
    True
    """
    pat = glob.strip().lstrip("/")
    if "/" not in pat.rstrip("/"):
        pat = "**/" + pat
    out, i = [], 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pat.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = pat[i + 1 : j].replace("\\", "\\\\")
                out.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
                i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    if pat.endswith("/"):
        out.append(".*")
    return re.compile("".join(out) + r"\Z")


@dataclass(frozen=True)
class PolicyRule:
    """One rule: files matching ``glob`` get ``groups``; ``override`` beats front matter."""

    glob: str
    groups: tuple[str, ...]
    override: bool = False

    def matches(self, rel_path: str) -> bool:
        """Whether ``rel_path`` ('/'-separated, relative to the ingested folder) matches."""
        return glob_to_regex(self.glob).match(rel_path) is not None


@dataclass(frozen=True)
class Policy:
    """An ordered list of rules (order does not change the result: matching groups are unioned)."""

    rules: tuple[PolicyRule, ...] = ()
    source: str = ""

    @classmethod
    def load(cls, path: str | Path) -> "Policy":
        """Read a policy YAML file.

        Raises:
            InputError: unreadable file, bad YAML, or a rule without a string ``glob`` or a list
                of group names in ``groups`` (naming the rule number).
        """
        path = Path(path)
        src = str(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise InputError(src, f"cannot read policy file: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise InputError(src, "policy file is not UTF-8 text") from None
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            raise InputError(
                src, f"bad YAML: {getattr(e, 'problem', None) or e}", mark.line + 1 if mark is not None else None
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
            raise InputError(src, "a policy file needs a 'rules:' list of {glob, groups} entries")
        rules = []
        for n, r in enumerate(data["rules"], start=1):
            if not isinstance(r, dict) or not isinstance(r.get("glob"), str) or not r["glob"].strip():
                raise InputError(src, f"rule {n}: needs 'glob: <pattern>' (a string)")
            groups = r.get("groups")
            if isinstance(groups, str):
                groups = [groups]
            if (
                not isinstance(groups, list)
                or not groups
                or not all(isinstance(g, (str, int)) and str(g).strip() for g in groups)
            ):
                raise InputError(src, f"rule {n} ({r['glob']}): 'groups' must be a non-empty list of group names")
            unknown = sorted(set(r) - {"glob", "groups", "override"})
            if unknown:
                raise InputError(
                    src, f"rule {n} ({r['glob']}): unknown key '{unknown[0]}' (valid: glob, groups, override)"
                )
            if not isinstance(r.get("override", False), bool):
                raise InputError(src, f"rule {n} ({r['glob']}): 'override' must be true or false")
            rules.append(
                PolicyRule(
                    r["glob"].strip(), tuple(sorted({str(g).strip() for g in groups})), bool(r.get("override", False))
                )
            )
        return cls(tuple(rules), src)

    def groups_for(self, rel_path: str, declared: tuple[str, ...] = ()) -> tuple[str, ...] | None:
        """Groups for a document at ``rel_path`` that declares ``declared`` (see module docstring).

        Returns:
            sorted unique group names, or None when neither the document nor any rule says
            anything (the index default applies).
        """
        matched = [r for r in self.rules if r.matches(rel_path)]
        forced = [g for r in matched if r.override for g in r.groups]
        if forced:
            return tuple(sorted(set(forced)))
        if declared:
            return tuple(sorted(set(declared)))
        if matched:
            return tuple(sorted({g for r in matched for g in r.groups}))
        return None
