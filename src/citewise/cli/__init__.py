"""The ``citewise`` command line (Typer).

Every command takes ``--index DIR`` (default: ``$CITEWISE_INDEX`` or
``~/.local/share/citewise/index``); figures can be printed as JSON with ``--json``. Errors are one
line on stderr and exit status 2; never a traceback.

The commands live in one module per group (``ingest``, ``ask``, ``misc``, ``tools``, ``eval``,
``eval_runs``, ``eval_answers``, ``config``, ``index``, ``serve``, ``train``); shared pieces in
``common``. Importing them in this order registers the commands in the order ``--help`` lists.
"""

import sys

import typer

from citewise.core import CitewiseError
from citewise.cli.common import (  # noqa: F401 - names callers import from citewise.cli
    EXIT_FILE_ERRORS,
    EXIT_NO_ANSWER,
    HELP_OPTIONS,
    NO_ANSWER,
    PROGRESS_LINE_EVERY_S,
    _INTERRUPT_SAID,
    _embed_progress,
    _preload_model,
    app,
    err,
    eval_app,
    out,
    plural,
    terminal_safe,
)
from citewise.cli import ingest, ask, misc, tools, eval, eval_runs, eval_answers, config, index, serve, train  # noqa: F401,E402,I001 - registration order
from citewise.cli.ask import print_answer  # noqa: F401
from citewise.cli.serve import EXIT_CANNOT_LISTEN  # noqa: F401


_CLICK_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
#: Exit status after Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130


def _query_read_as_option(e: Exception, ctx) -> str | None:
    """The argument a ``search``/``ask`` query was typed as when Click read it as an unknown option.

    ``citewise search "-verbose"`` reaches Click as the options ``-v -e -r …`` and
    ``citewise search "--verbose"`` as one unknown long option; both leave the command without
    its query. Returns the typed argument (``-verbose``) when the error is an unknown option of
    ``search``/``ask`` and no other argument could be the query (every other word is an option
    or an option's value); else None (``search refund --frobnicate`` is a mistyped option).
    """
    command = ctx.command_path.split()[-1] if ctx is not None else ""
    if type(e).__name__ != "NoSuchOption" or command not in ("search", "ask"):
        return None
    name = getattr(e, "option_name", "") or ""
    argv = sys.argv[1:]
    if command in argv:
        argv = argv[argv.index(command) + 1 :]
    takes_value = {
        o
        for p in ctx.command.params
        if getattr(p, "opts", None)
        and not getattr(p, "is_flag", False)
        and getattr(p, "param_type_name", "") == "option"
        for o in p.opts
    }
    typed, words, i = None, 0, 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            words += len(argv) - i - 1
            break
        if a.startswith("-") and len(a) > 1:
            if typed is None and (a == name or (not a.startswith("--") and a[1:2] == name[1:2] and len(a) > 2)):
                typed = a
            elif a.split("=", 1)[0] in takes_value and "=" not in a:
                i += 1
        else:
            words += 1
        i += 1
    return typed if typed is not None and words == 0 else None


from citewise.cli_quality import register as _register_quality  # noqa: E402 - eval ragas, golden, decide

_register_quality(app, eval_app)


def main() -> None:
    """Entry point.

    Usage errors are one ``error: …`` line naming the option and the command's ``--help`` (exit
    status 2); ``typer.Exit`` codes (``status``, ``gate`` alerts) pass through; Ctrl-C prints
    "interrupted" and exits 130; citewise errors print one ``error: …`` line and exit 2, as do
    OS errors on a named path (``error: PATH: permission denied``); anything unexpected prints one
    line (never a traceback) and exits 1.
    """
    _INTERRUPT_SAID.clear()
    # at exit, what the command left is moved out of the collector's reach instead of scanned
    # once more (~0.02 s of each short command; interpreter shutdown is not bound to run the
    # finalizers of objects still alive then). Registered once however often main runs (tests).
    import atexit
    import gc

    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    for stream in (sys.stdout, sys.stderr):
        # a file name with bytes that are not UTF-8 (kept by Python as lone surrogates) prints as
        # "caf\udce9.md" instead of failing the whole output with UnicodeEncodeError
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    try:
        from citewise.telemetry import configure

        configure()  # OTLP export of traces when OTEL_EXPORTER_OTLP_ENDPOINT is set; else a no-op
        # not standalone: usage errors come here as exceptions (one line below, not Typer's box);
        # typer.Exit(code) and Ctrl-C (Typer's Exit(130)) come back as the return value
        code = app(prog_name="citewise", standalone_mode=False)
        code = code if isinstance(code, int) and not isinstance(code, bool) else 0
        if code == EXIT_INTERRUPTED and not _INTERRUPT_SAID:
            err.print("interrupted (Ctrl-C)", markup=False, highlight=False)
        sys.exit(code)
    except _CLICK_ERROR as e:
        if type(e).__name__ == "NoArgsIsHelpError":  # the help was printed (no_args_is_help)
            sys.exit(e.exit_code)
        ctx = getattr(e, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        message = e.format_message().rstrip(".")
        typed = _query_read_as_option(e, ctx)
        if typed is not None:
            # `citewise search "-verbose"` / `"--verbose"`: the query was read as options
            if typed != getattr(e, "option_name", ""):
                message += f" (in '{typed}')"
            hint = (
                f" (a query that starts with '-' goes after '--', every option before it: "
                f"'{ctx.command_path} --index DIR -- \"{typed}\"'; see '{ctx.command_path} --help')"
            )
        err.print(f"error: {message}{hint}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(e.exit_code)
    except typer.Abort as e:
        cause = e.__context__
        if isinstance(cause, EOFError):  # Click turns any EOFError into Abort: say what ran out
            err.print(
                f"error: unexpected end of data ({cause or 'EOFError'})", markup=False, highlight=False, soft_wrap=True
            )
        else:
            err.print("aborted", markup=False, highlight=False)
        sys.exit(1)
    except CitewiseError as e:  # a store fault has a status of its own (citewise.store.faults)
        err.print(f"error: {e}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(getattr(e, "exit_status", 2))
    except KeyboardInterrupt:
        err.print("interrupted (Ctrl-C)", markup=False, highlight=False)
        sys.exit(EXIT_INTERRUPTED)
    except OSError as e:  # a path the user gave that cannot be read or written: name it, no errno noise
        if e.filename is None or not e.strerror:
            err.print(f"error: {type(e).__name__}: {e}", markup=False, highlight=False, soft_wrap=True)
            sys.exit(1)
        err.print(
            f"error: {e.filename}: {e.strerror[:1].lower() + e.strerror[1:]}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(2)
    except Exception as e:  # anything unexpected: one line, no traceback
        err.print(f"error: {type(e).__name__}: {e}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(1)


def _reflow_help(typer_app: typer.Typer) -> None:
    """Join the lines of each paragraph of every command's help (docstrings are wrapped at 100
    columns; Typer's rich help kept those breaks, so ``ingest --help`` broke sentences in the
    middle of its own wrapped lines). Paragraphs stay apart; no command's help has a list or
    preformatted block that this would merge (tests/test_cli.py checks every command)."""
    import inspect

    for cmd in typer_app.registered_commands:
        doc = cmd.help or inspect.getdoc(cmd.callback) or ""
        cmd.help = "\n\n".join(" ".join(p.split()) for p in doc.split("\n\n"))
    for group in typer_app.registered_groups:
        _reflow_help(group.typer_instance)


_reflow_help(app)
