"""reStructuredText files (docutils)."""

from __future__ import annotations

from citewise.text.loaders.text import load_text as load_rst  # noqa: F401
