"""The installed citewise version (``citewise --version``, the MCP server's ``serverInfo``)."""

from __future__ import annotations


def version() -> str:
    """The version of the installed ``citewise`` distribution (``0+unknown`` when it is run from
    a source tree that was never installed)."""
    from importlib.metadata import PackageNotFoundError, version as dist_version

    try:
        return dist_version("citewise")
    except PackageNotFoundError:
        return "0+unknown"
