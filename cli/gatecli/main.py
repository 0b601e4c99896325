"""The ``gatecli`` command line: one module per command under ``gatecli.commands``.

Each command module exposes ``register(app)``; :data:`COMMANDS` below is the one list of
them, imported explicitly so that a broken command fails loudly instead of vanishing.
Command modules import only typer and the shared helpers at the top; heavy imports
(onnxruntime, torch, starlette) happen inside the command functions, so ``gatecli --help``
stays fast and the runtime never imports training code.
"""

from __future__ import annotations

import typer

from gatecli import __version__
from gatecli.commands import calibrate, classify, data, info, label, serve, train
from gatecli.commands import eval as eval_cmd
from gatecli.commands._util import APP_SETTINGS

# In the order `gatecli --help` lists them.
COMMANDS = (classify, info, label, serve, eval_cmd, data, train, calibrate)

app = typer.Typer(
    name="gatecli",
    help="A local gate for conversational agents: decision, events, scenario tags and "
    "missing slots for every user turn, in milliseconds on a CPU.",
    **APP_SETTINGS,
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
    """gatecli: classify transcripts, serve, build data, train, evaluate and label at scale."""


for _command in COMMANDS:
    _command.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
