"""``citewise mcp``, ``citewise keys`` and ``citewise serve``."""

import json
from pathlib import Path
from typing import Optional

import typer

from citewise.core import CitewiseError, Principal
from citewise import cli_llm
from citewise.cli.common import HELP_OPTIONS, IndexOpt, JsonOpt, Table, _check_db, _index_dir, _open, app, err, out


@app.command("mcp")
def mcp_command(
    index: Optional[Path] = IndexOpt,
    groups: Optional[list[str]] = typer.Option(
        None,
        "--groups",
        help="Groups of the principal every call runs as (comma-separated, repeatable). Local, trusted use: default public documents only.",
    ),
    db: Optional[str] = typer.Option(
        None,
        "--db",
        help="Records database for ask and query_records (sqlite:///PATH or a path). Default: setting records.database ($CITEWISE_DB).",
    ),
    otlp: Optional[str] = typer.Option(
        None,
        "--otlp",
        help="Export traces to this OTLP/HTTP endpoint (e.g. http://localhost:4318); default $OTEL_EXPORTER_OTLP_ENDPOINT, else off.",
    ),
    api_key: Optional[str] = typer.Option(
        None,
        "--api-key",
        envvar="CITEWISE_API_KEY",
        help="Run every call as this API key's principal (a key from 'citewise keys add', checked against the index's key file as the HTTP service does; default $CITEWISE_API_KEY). Not with --groups.",
    ),
):
    """Serve the index to MCP clients over stdio: tools search, ask and query_records (read-only).

    The principal is the --api-key's (checked once, at start) or, for local trusted use, --groups;
    with neither, public documents only."""
    from citewise.service.mcp import serve_stdio
    from citewise.telemetry import configure

    _check_db(db)
    if api_key and groups:
        raise CitewiseError("--api-key and --groups: give one (the key's groups are the principal's)")
    if otlp:
        configure(otlp)
    folder = _index_dir(index)
    if api_key:
        from citewise.service.auth import KeyStore

        principal = KeyStore(folder).verify(api_key).principal  # AuthError (a CitewiseError): exit 2
    else:
        names = tuple(sorted({g.strip() for item in groups or () for g in item.split(",") if g.strip()}))
        principal = Principal(name="mcp-stdio", groups=names)
    serve_stdio(folder, principal, db=db)


keys_app = typer.Typer(
    no_args_is_help=True,
    context_settings=HELP_OPTIONS,
    help="API keys of the HTTP service (stored hashed in the index folder).",
)
app.add_typer(keys_app, name="keys")


@keys_app.command("add")
def keys_add(
    name: str = typer.Argument(..., help="Who or what the key is for (unique among active keys)."),
    groups: Optional[str] = typer.Option(
        None, "--groups", help="Comma-separated groups, e.g. finance,support (default: public only)."
    ),
    admin: bool = typer.Option(False, "--admin", help="May start ingests (POST /v1/ingest)."),
    index: Optional[Path] = IndexOpt,
    as_json: bool = JsonOpt,
):
    """Create an API key and print it once (only its scrypt hash is kept)."""
    from citewise.index import default_index_dir
    from citewise.service.auth import KeyStore, parse_groups

    _open(index)  # the index must exist
    parsed = parse_groups(groups)
    if groups is not None and not parsed:  # "--groups ''" / ",,,": a typo, not a wish for public only
        raise CitewiseError(f"--groups {groups!r} names no group; leave the option out for a public-only key")
    key = KeyStore(index or default_index_dir()).add(name, parsed, admin)
    if as_json:
        out.print_json(json.dumps({"name": name, "key": key, "groups": list(parsed), "admin": admin}))
        return
    err.print(
        f"key {name!r} created (groups: {','.join(parsed) or 'public only'}{'; admin' if admin else ''}); "
        "it is shown once, store it now:",
        highlight=False,
        soft_wrap=True,
    )
    out.print(key, highlight=False, soft_wrap=True)


@keys_app.command("revoke")
def keys_revoke(
    name: str = typer.Argument(..., help="Name of the key to revoke."),
    index: Optional[Path] = IndexOpt,
    as_json: bool = JsonOpt,
):
    """Revoke a key: a running server refuses it from its next request."""
    from citewise.index import default_index_dir
    from citewise.service.auth import KeyStore

    _index_dir(index, must_exist=True)  # a mistyped --index is named, not an empty key store
    n = KeyStore(index or default_index_dir()).revoke(name)
    if as_json:
        out.print_json(json.dumps({"name": name, "revoked": n}))
        return
    out.print(f"revoked {n} key(s) named {name!r}", highlight=False)


@keys_app.command("list")
def keys_list(index: Optional[Path] = IndexOpt, as_json: bool = JsonOpt):
    """Keys with their groups, admin flag and dates (never the keys themselves)."""
    from citewise.index import default_index_dir
    from citewise.service.auth import KeyStore

    _index_dir(index, must_exist=True)  # a mistyped --index is named, not an empty table
    keys = KeyStore(index or default_index_dir()).list()
    if as_json:
        out.print_json(json.dumps({"keys": keys}))
        return
    t = Table("name", "key id", "groups", "admin", "created", "revoked")
    for k in keys:
        t.add_row(
            k["name"],
            k["key_id"],
            ",".join(k["groups"]) or "(public)",
            "yes" if k["admin"] else "",
            k["created_at"],
            k["revoked_at"] or "",
        )
    out.print(t)


@app.command()
def serve(
    index: Optional[Path] = IndexOpt,
    host: Optional[str] = typer.Option(
        None,
        "--host",
        help="Address to listen on (0.0.0.0 for every interface). Default: setting service.host (127.0.0.1).",
    ),
    port: Optional[int] = typer.Option(
        None,
        "--port",
        min=0,
        max=65535,
        metavar="PORT",
        help="Port to listen on. Default: setting service.port (8000).",
    ),
    require_auth: Optional[bool] = typer.Option(
        None,
        "--require-auth",
        help="Refuse requests without an API key or token (401); default (setting service.require_auth): they are anonymous (public documents only).",
    ),
    jwt_secret_env: Optional[str] = typer.Option(
        None, "--jwt-secret-env", help="Accept HS256 JWTs signed with the secret in this environment variable."
    ),
    jwt_public_key: Optional[Path] = typer.Option(
        None, "--jwt-public-key", help="Accept RS256/ES256 JWTs verified with this PEM public key."
    ),
    jwt_jwks: Optional[Path] = typer.Option(
        None, "--jwt-jwks", help="Accept RS256/ES256 JWTs verified with this JWKS file (keys by kid)."
    ),
    jwt_groups_claim: str = typer.Option(
        "groups", "--jwt-groups-claim", help="JWT claim with the groups (dotted for nested, e.g. realm_access.roles)."
    ),
    jwt_admin_group: str = typer.Option("citewise-admin", "--jwt-admin-group", help="Token group that may ingest."),
    jwt_audience: Optional[str] = typer.Option(None, "--jwt-audience", help="Required JWT audience (aud)."),
    jwt_issuer: Optional[str] = typer.Option(None, "--jwt-issuer", help="Required JWT issuer (iss)."),
    db: Optional[str] = typer.Option(None, "--db", help="Records database for record questions (as for ask)."),
    llm: bool = typer.Option(
        False,
        "--llm",
        help="Answers written by the OpenAI-compatible endpoint of the llm settings (llm.base_url, llm.model; CITEWISE_LLM_*).",
    ),
    llm_url: Optional[str] = cli_llm.LlmUrlOpt,
    llm_model: Optional[str] = cli_llm.LlmModelOpt,
    llm_timeout: Optional[float] = cli_llm.LlmTimeoutOpt,
    llm_context: Optional[int] = cli_llm.LlmContextOpt,
    timeout: Optional[float] = typer.Option(
        None,
        "--timeout",
        min=0.1,
        metavar="SECONDS",
        help="Request timeout, seconds (504 after). Default: setting service.request_timeout_s (30); with --llm at least the LLM client's longest wait plus 15 s.",
    ),
    rate: Optional[float] = typer.Option(
        None,
        "--rate",
        help="Requests per second per key (token bucket; anonymous: per address); 0 = no limit. Default: setting service.rate (20).",
    ),
    burst: Optional[int] = typer.Option(
        None, "--burst", min=1, metavar="N", help="Token bucket size. Default: setting service.burst (40)."
    ),
    ingest_root: Optional[list[Path]] = typer.Option(
        None, "--ingest-root", help="Only ingest paths under this folder (repeatable)."
    ),
    full_documents: Optional[bool] = typer.Option(
        None,
        "--full-documents",
        help="Let callers fetch a whole document (/v1/documents/ID?full=true, the web page's 'whole document' link); default: the cited span with its context.",
    ),
    public_metrics: Optional[bool] = typer.Option(
        None,
        "--public-metrics",
        help="Serve /metrics without a credential even with --require-auth (for a scraper that cannot send one); default: /metrics needs one when auth is required.",
    ),
    eval_rate: Optional[float] = typer.Option(
        None,
        "--eval-rate",
        metavar="SHARE",
        help="Share of answers evaluated online for the faithfulness gauge of /metrics (0 = off). Default: setting service.eval_rate (0.05); with an LLM judge configured (settings llm.judge or llm) it scores them.",
    ),
):
    """Serve the index over HTTP: JSON API (/docs), web page (/), Prometheus metrics (/metrics).

    Prints "listening on URL" as soon as the port is bound, then loads the service, the index and
    its embedding model (requests wait in the socket's queue meanwhile) and prints "ready".
    """
    import os
    import time

    from citewise.settings import load_settings

    t0 = time.perf_counter()
    _check_db(db)
    index_dir = _index_dir(index)
    settings = load_settings(
        index_dir,
        {
            "records.database": db,
            "answer.generator": "llm" if llm else None,
            "service.host": host,
            "service.port": port,
            "service.require_auth": require_auth,
            "service.request_timeout_s": timeout,
            "service.rate": rate,
            "service.burst": burst,
            "service.full_documents": full_documents,
            "service.public_metrics": public_metrics,
            "service.eval_rate": eval_rate,
            **cli_llm.llm_overrides(llm_url, llm_model, llm_timeout, llm_context),
        },
    )
    sv = settings.service
    host, port = sv.host, sv.port
    jwt = None
    if jwt_secret_env or jwt_public_key or jwt_jwks:
        from citewise.service.auth import JwtConfig

        secret = None
        if jwt_secret_env:
            secret = os.environ.get(jwt_secret_env)
            if not secret:
                raise CitewiseError(f"--jwt-secret-env: environment variable {jwt_secret_env} is empty or unset")
        jwt = JwtConfig(
            secret=secret,
            public_key_file=str(jwt_public_key) if jwt_public_key else None,
            jwks_file=str(jwt_jwks) if jwt_jwks else None,
            groups_claim=jwt_groups_claim,
            admin_group=jwt_admin_group,
            audience=jwt_audience,
            issuer=jwt_issuer,
        )
    sock = _listen(host, port)  # before any "listening" line: a busy port is an error, not a promise
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}"
    err.print(
        f"citewise listening on {url}; loading the index and its embedding model (requests wait until ready) ...",
        highlight=False,
        soft_wrap=True,
    )
    import uvicorn

    from citewise.service.app import create_app, warm

    try:
        timeout_s, why = cli_llm.serve_timeout(settings, None, settings.answer.generator == "llm")
        if why:
            err.print(why, highlight=False, soft_wrap=True)
        application = create_app(
            index_dir,
            require_auth=sv.require_auth,
            jwt=jwt,
            db=None,
            settings=settings,
            generator=None,
            request_timeout_s=timeout_s,
            rate=sv.rate,
            burst=sv.burst,
            ingest_roots=ingest_root,
            host=host,
            public_metrics=sv.public_metrics,
            full_documents=sv.full_documents,
        )
        ready = warm(application.state.service)
    except BaseException:
        sock.close()
        raise
    err.print(
        f"citewise serving {index_dir} on {url} (API docs /docs, MCP /mcp; "
        f"auth {'required' if sv.require_auth else 'optional: anonymous = public documents'}): ready, "
        f"{ready['documents']} documents, {ready['chunks']} chunks; started in {time.perf_counter() - t0:.1f} s",
        highlight=False,
        soft_wrap=True,
    )
    uvicorn.Server(uvicorn.Config(application, host=host, port=bound, log_level="warning")).run(sockets=[sock])


#: ``citewise serve`` exit status when it cannot listen on --host/--port (uvicorn's startup-failure code).
EXIT_CANNOT_LISTEN = 3


def _listen(host: str, port: int):
    """A TCP socket bound to ``host:port`` and listening (``SO_REUSEADDR``, as uvicorn binds;
    IPv6 when ``host`` has a colon).

    Raises:
        typer.Exit(EXIT_CANNOT_LISTEN): after one ``error:`` line naming ``host:port`` and the
            cause (port in use, address not on this machine, permission, unknown host name).
    """
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)  # uvicorn's default backlog; listening now keeps the port ours
    except OSError as e:
        sock.close()
        cause = (e.strerror or str(e)).rstrip(".")
        hint = {
            98: "another process is listening there; stop it or choose another --port",
            13: "ports below 1024 need privileges; choose another --port",
            99: "no interface of this machine has that address; check --host",
        }.get(e.errno or 0)
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        err.print(
            f"error: cannot listen on {where}: {cause[:1].lower() + cause[1:]}" + (f" ({hint})" if hint else ""),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_CANNOT_LISTEN) from None
    return sock
