"""The ``gatecli`` command line: one module per command under ``gatecli.commands``.

Each command module exposes ``register(app)``; heavy imports (onnxruntime, torch) happen
inside the command functions so ``gatecli --help`` stays fast and the runtime never
imports training code.
"""

from __future__ import annotations

import importlib

import typer

from gatecli import __version__

COMMAND_MODULES = ("classify", "info", "data", "train", "eval", "label")

app = typer.Typer(
    name="gatecli",
    help="A local gate for conversational agents: decision, events, scenario tags and "
    "missing slots for every user turn, in milliseconds on a CPU.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gatecli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """gatecli: classify transcripts, build data, train, evaluate and label at scale."""


for _name in COMMAND_MODULES:
    try:
        _module = importlib.import_module(f"gatecli.commands.{_name}")
    except ModuleNotFoundError as exc:  # a command not written yet is absent, not broken
        if exc.name != f"gatecli.commands.{_name}":
            raise
        continue
    _module.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
