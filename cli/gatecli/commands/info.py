"""``gatecli info``: what a model folder contains (heads, labels, thresholds, catalog, card).

:func:`model_info` returns the facts as a dict (``--json`` prints it as is); the command
renders them for a person. Reading a folder checks it the same way ``classify`` does, so
``info`` is also the quickest way to see why a folder is rejected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from gatecli.commands._util import ModelOpt, fail

HELP = """Show a model folder: heads, labels, thresholds, catalog events and the card summary.

Examples:

\b
  gatecli info
  gatecli info --model models/gatecli_models/gate-small --json
"""

CARD_LINES = 8


def model_info(model: str | Path | None = None, *, card_lines: int = CARD_LINES) -> dict[str, Any]:
    """Read and check a model folder and return its description (raises ArtifactError).

    Example:
        >>> model_info(str(default_model_dir()))["heads"]["decision"]["labels"]  # doctest: +SKIP
        ['execute', 'ask', 'connect', 'refuse', 'safety']
    """
    from gatecli.artifact import ArtifactError, load_model_folder
    from gatecli.catalog import Catalog
    from gatecli.policy import load_policy

    folder = load_model_folder(model)
    cfg = folder.config
    try:
        catalog = Catalog.from_mapping(folder.catalog)
        policy = load_policy(folder.policy, catalog)
    except ValueError as exc:  # CatalogError, PolicyError
        raise ArtifactError(f"{folder.path}: {exc}") from exc
    card: list[str] = []
    if folder.card_path.is_file():
        lines = folder.card_path.read_text(encoding="utf-8", errors="replace").splitlines()
        card = [ln for ln in lines if ln.strip()][:card_lines]
    return {
        "path": str(folder.path),
        "model": cfg.model_id,
        "max_length": cfg.max_length,
        "onnx_inputs": list(cfg.onnx_inputs),
        "sha256": cfg.model_sha256,
        "confidence_bands": dict(cfg.confidence_bands),
        "heads": {
            name: {
                "kind": h.kind,
                "output": h.output,
                "temperature": h.temperature,
                "labels": list(h.labels),
                "thresholds": {lab: h.threshold(lab) for lab in h.labels},
            }
            for name, h in cfg.heads.items()
        },
        "events": [
            {
                "name": e.name,
                "risk": e.risk,
                "confirm": e.confirm,
                "requires": list(e.requires),
                "required_slots": list(e.required_slots),
                "tools": list(e.tools),
            }
            for e in catalog.events.values()
        ],
        "systems": {name: list(aliases) for name, aliases in catalog.systems.items()},
        "known_tools": sorted(catalog.known_tools),
        "policy": {
            "rules": [r.rule_id for r in policy.rules],
            "guards": [g.rule_id for g in policy.guards],
        },
        "card": card,
    }


def render_info(data: dict[str, Any]) -> None:
    """Print :func:`model_info`'s dict as a few rich tables."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{data['model']}[/]  {data['path']}  (max_length {data['max_length']})")
    heads = Table("head", "kind", "labels (threshold)", title="heads", title_justify="left")
    for name, h in data["heads"].items():
        labels = ", ".join(f"{lab} ({t:.2f})" for lab, t in h["thresholds"].items())
        heads.add_row(name, h["kind"], labels)
    console.print(heads)
    events = Table("event", "risk", "confirm", "requires", "required slots", title="catalog")
    for e in data["events"]:
        events.add_row(
            e["name"], e["risk"], "yes" if e["confirm"] else "",
            ", ".join(e["requires"]), ", ".join(e["required_slots"]),
        )  # fmt: skip
    console.print(events)
    for e in data["events"]:  # tool names the policy reads as offering the event
        if e["tools"]:
            console.print(f"declared tools of {e['name']}: " + ", ".join(e["tools"]), markup=False)
    if data["known_tools"]:  # read too, so a list of only declared and known names is closed
        console.print("known tools (no event): " + ", ".join(data["known_tools"]), markup=False)
    for kind in ("rules", "guards"):
        console.print(
            f"policy {kind}: " + (", ".join(data["policy"][kind]) or "none"), markup=False
        )
    if data["card"]:
        console.print("\n".join(data["card"]), markup=False)


def info_cli(
    model: ModelOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the description as JSON.")] = False,
) -> None:
    from gatecli.artifact import ArtifactError

    try:
        data = model_info(model)
    except ArtifactError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        render_info(data)


def register(app: typer.Typer) -> None:
    app.command("info", help=HELP)(info_cli)
