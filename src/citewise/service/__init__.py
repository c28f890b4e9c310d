"""citewise as a service: an HTTP API (FastAPI), API keys and JWT bearer tokens, a server-rendered
web page, Prometheus metrics and an MCP server. Start it with ``citewise serve --index DIR`` (HTTP,
with MCP's Streamable HTTP endpoint at ``/mcp``) or ``citewise mcp`` (MCP over stdio).

Modules: :mod:`~citewise.service.payloads` (the JSON shapes shared by the CLI, the HTTP API and the MCP
tools; no web imports),
:mod:`~citewise.service.auth` (credentials to principals), :mod:`~citewise.service.ratelimit`,
:mod:`~citewise.service.metrics`, :mod:`~citewise.service.documents` (the permission-checked
source view), :mod:`~citewise.service.web` (the HTML pages), :mod:`~citewise.service.app`
(``create_app``), :mod:`~citewise.service.mcp` (the MCP tools, stdio and HTTP mount).
Importing this package imports no web framework.
"""
