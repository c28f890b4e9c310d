"""citewise as a service: HTTP API, MCP server (:mod:`citewise.service.mcp`)."""
