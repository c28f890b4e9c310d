"""The API's OpenAPI document and its interactive docs.

* ``/openapi.json`` declares how to authenticate (``bearer``: ``Authorization: Bearer <API key or
  JWT>``; ``apiKey``: the ``X-API-Key`` header) on every ``/v1`` route and ``/metrics``, the
  error responses each route can give (``{"error": {"message", "type"}}``: 400, 401, 403, 404,
  413, 422, 429, 504) and typed bodies for the routes whose handlers return plain dicts
  (:mod:`citewise.service.schemas`).
* ``/docs`` (Swagger UI 5) and ``/redoc`` (ReDoc) load their scripts and styles from the
  ``fastapi-offline`` package's static folder (``/docs-assets/...``), so they work with no
  network.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse

from citewise.service.schemas import DocumentResponse, ErrorResponse, IngestJobResponse, StatusResponse

#: The error responses documented on every API route (a route may give fewer of them).
ERRORS = {
    "400": "Bad input (an empty or wordless query, a bad filter or date), in one line.",
    "401": "No credential where the server requires one, or a bad, expired or revoked one.",
    "403": "Not allowed (ingest needs an admin key; whole documents need --full-documents).",
    "404": "Not found, or not visible to the caller (the two look the same).",
    "413": "The query or the request body is too long.",
    "422": "A field has the wrong type or is out of range.",
    "429": "Rate limit exceeded; retry after the Retry-After header's seconds.",
    "504": "The request took longer than the server's request timeout.",
}
#: Typed 200 bodies of routes whose handlers return plain dicts: (path, method) -> model.
TYPED = {
    ("/v1/status", "get"): StatusResponse,
    ("/v1/documents/{doc_id}", "get"): DocumentResponse,
    ("/v1/ingest", "post"): IngestJobResponse,
    ("/v1/ingest/{job_id}", "get"): IngestJobResponse,
}


def _schema_ref(schema: dict, model) -> dict:
    """``model``'s JSON Schema added to ``schema``'s components; returns a ``$ref`` to it."""
    comps = schema.setdefault("components", {}).setdefault("schemas", {})
    body = model.model_json_schema(ref_template="#/components/schemas/{model}")
    for name, sub in body.pop("$defs", {}).items():
        comps.setdefault(name, sub)
    comps[model.__name__] = body
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def openapi_schema(app: FastAPI, require_auth: bool) -> dict:
    """The app's OpenAPI document with the security schemes, error responses and typed bodies
    (see module docstring); built once and cached on the app."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    comps = schema.setdefault("components", {})
    comps["securitySchemes"] = {
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key from 'citewise keys add', or a JWT the server accepts.",
        },
        "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "The same API key."},
    }
    error = _schema_ref(schema, ErrorResponse)
    security = [{"bearer": []}, {"apiKey": []}] + ([] if require_auth else [{}])
    for path, ops in schema.get("paths", {}).items():
        if not (path.startswith("/v1/") or path == "/metrics"):
            continue
        for method, op in ops.items():
            op["security"] = security
            responses = op.setdefault("responses", {})
            for code, words in ERRORS.items():
                responses[code] = {"description": words, "content": {"application/json": {"schema": error}}}
            model = TYPED.get((path, method))
            if model is not None:
                ok = responses.setdefault("200" if method != "post" or path != "/v1/ingest" else "202", {})
                ok["content"] = {"application/json": {"schema": _schema_ref(schema, model)}}
    comps.get("schemas", {}).pop("HTTPValidationError", None)
    comps.get("schemas", {}).pop("ValidationError", None)
    app.openapi_schema = schema
    return schema


def assets_folder() -> str:
    """The folder of Swagger UI's and ReDoc's files in the ``fastapi-offline`` package."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("fastapi_offline")
    return str(Path(spec.origin).parent / "static")


def install_api_docs(app: FastAPI, require_auth: bool) -> None:
    """Replace FastAPI's CDN-based ``/docs`` and ``/redoc`` with pages whose assets come from
    the ``fastapi-offline`` package, and install :func:`openapi_schema`."""
    from starlette.staticfiles import StaticFiles

    app.router.routes[:] = [
        r for r in app.router.routes if getattr(r, "path", None) not in ("/docs", "/docs/oauth2-redirect", "/redoc")
    ]
    app.mount("/docs-assets", StaticFiles(directory=assets_folder()), name="docs-assets")
    app.openapi = lambda: openapi_schema(app, require_auth)

    @app.get("/docs", include_in_schema=False, response_class=HTMLResponse)
    async def docs():
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} API",
            swagger_js_url="/docs-assets/swagger-ui-bundle.js",
            swagger_css_url="/docs-assets/swagger-ui.css",
            swagger_favicon_url="/docs-assets/favicon.png",
            swagger_ui_parameters={"persistAuthorization": True},
        )

    @app.get("/redoc", include_in_schema=False, response_class=HTMLResponse)
    async def redoc():
        return get_redoc_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} API",
            redoc_js_url="/docs-assets/redoc.standalone.js",
            redoc_favicon_url="/docs-assets/favicon.png",
            with_google_fonts=False,
        )
