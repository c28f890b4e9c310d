"""citewise as a service: an HTTP API (FastAPI), API keys and JWT bearer tokens, a server-rendered
web page and Prometheus metrics. Start it with ``citewise serve --index DIR``.

Modules: :mod:`~citewise.service.wire` (the JSON shapes shared with the CLI; no web imports),
:mod:`~citewise.service.auth` (credentials to principals), :mod:`~citewise.service.ratelimit`,
:mod:`~citewise.service.metrics`, :mod:`~citewise.service.documents` (the permission-checked
source view), :mod:`~citewise.service.web` (the HTML pages), :mod:`~citewise.service.app`
(``create_app``).
Importing this package imports no web framework.
"""
