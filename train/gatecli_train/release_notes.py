"""Release notes from ``gatecli eval --baseline PREV --json FILE``: the gate, deltas, flips.

Seed 001 ("no behaviour change without an eval"): a release lists, per suite, the turns the
new model gets right that the previous one got wrong (``fixed``) and the reverse
(``broken``), by message, so a person reads what changed rather than one number.

Usage:
    python -m gatecli_train.release_notes --eval new-vs-prev.json --version 1.2.0 \\
        --changelog models/gatecli_models/gate-small/CHANGELOG.md \\
        --baseline-out prev.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

SHOWN_PER_SUITE = 15
KEY_DELTAS = ("decision.macro_f1", "decision.safety_recall", "decision.safety_ap",
              "events.micro_f1", "events.false_positive_rate", "latency_ms.p50")  # fmt: skip


def _f(v: Any) -> str:
    return "–" if v is None else f"{v:+.3f}" if isinstance(v, float) else str(v)


def _cell(text: Any, width: int = 90) -> str:
    s = json.dumps(text, ensure_ascii=False) if not isinstance(text, str) else text
    s = s.replace("|", "\\|").replace("\n", " ")
    return s if len(s) <= width else s[: width - 1] + "…"


def baseline_results(res: dict[str, Any]) -> dict[str, Any]:
    """The baseline's half of a ``--baseline`` run, shaped like its own ``--json`` file.

    With ``--half report`` this is the previous release on the same turns as the new model
    (a separate eval of the previous folder reads both halves): the card's comparison
    (``card --compare-baseline``) and ``--baseline-out`` both read it.
    """
    if not res.get("baseline"):
        raise ValueError("the eval file has no --baseline side")
    out = {k: v for k, v in res.items() if k not in ("comparison", "gate")}
    out["model"], out["model_path"] = res["baseline"], res.get("baseline_path")
    out["baseline"], out["baseline_path"] = None, None
    out["suites"] = {n: {**{k: v for k, v in e.items() if k not in ("model", "baseline")},
                         "model": e["baseline"]}
                     for n, e in res["suites"].items() if "baseline" in e}  # fmt: skip
    return out


def section(res: dict[str, Any], version: str) -> str:
    """One CHANGELOG section: gate verdict, per-suite deltas and counts, then the flips."""
    gate = res.get("gate") or {}
    lines = [f"## {version}", "", f"Compared with `{res['baseline']}` by `gatecli eval "
             f"--baseline` on every suite (same records, same order).", ""]  # fmt: skip
    failed = [c for c in gate.get("checks", []) if not c.get("passed")]
    n_failed = f"{len(failed)} check" + ("" if len(failed) == 1 else "s")
    verdict = "passes" if gate.get("passed") else f"**fails** ({n_failed})"
    lines += [f"Release gate (`{Path(gate.get('criteria_file', '')).name}`): {verdict}.", ""]
    for c in failed:
        lines.append(f"- {c['suite']}: {c['name']}: {c['reason']}")
    if failed:
        lines.append("")
    # A change past tolerance let through as the draw of turns is a pass to read, not trust.
    noise = [c for c in gate.get("checks", []) if c.get("within_noise")]
    if noise:
        lines += ["Past tolerance, within the draw of turns (paired bootstrap):", ""]
        lines += [f"- {c['suite']}: {c['name']}: {c['reason']}" for c in noise] + [""]
    # A skipped check is not a pass a reader should take on trust: name each one.
    # (`skipped` is a field since 2026-12-03; older eval JSON says so only in the reason.)
    skipped = [
        c
        for c in gate.get("checks", [])
        if c.get("skipped") or str(c.get("reason", "")).startswith("skipped")
    ]
    if skipped:
        lines += ["Not checked:", ""]
        lines += [f"- {c['suite']}: {c['name']}: {c['reason']}" for c in skipped] + [""]
    head = "| suite | fixed | broken | " + " | ".join(f"Δ {k}" for k in KEY_DELTAS) + " |"
    lines += [head, "|---" * (len(KEY_DELTAS) + 3) + "|"]
    for name, comp in res.get("comparison", {}).items():
        d = comp.get("deltas", {})
        vals = " | ".join(_f(d.get(k, {}).get("delta")) for k in KEY_DELTAS)
        lines.append(f"| {name} | {comp['n_fixed']} | {comp['n_broken']} | {vals} |")
    lines += [
        "",
        "### Per-turn flips",
        "",
        f"The first {SHOWN_PER_SUITE} of each kind per suite; all of them are in the "
        "`gatecli eval --baseline --json` file (`comparison.<suite>.fixed|broken`).",
        "",
    ]
    for name, comp in res.get("comparison", {}).items():
        if not comp["n_fixed"] and not comp["n_broken"]:
            continue
        lines += [
            f"#### {name}: {comp['n_fixed']} fixed, {comp['n_broken']} broken",
            "",
            "| kind | head | message | gold | new | previous |",
            "|---|---|---|---|---|---|",
        ]
        for kind in ("broken", "fixed"):
            for row in comp[kind][:SHOWN_PER_SUITE]:
                lines.append(
                    f"| {kind} | {row['head']} | {_cell(row['message'])} | {_cell(row['gold'], 40)}"
                    f" | {_cell(row['model'], 40)} | {_cell(row['baseline'], 40)} |"
                )
        lines.append("")
    return "\n".join(lines) + "\n"


def write_changelog(path: Path, text: str, version: str) -> None:
    """Insert (or replace) the version's section at the top, under the file's title."""
    title = "# Changelog: gate-small\n\n"
    old = path.read_text(encoding="utf-8") if path.exists() else title
    body = old[len(title) :] if old.startswith(title) else old
    marker = f"## {version}\n"
    if marker in body:  # replace this version's earlier section
        start = body.index(marker)
        nxt = body.find("\n## ", start + len(marker))
        body = body[:start] + (body[nxt + 1 :] if nxt != -1 else "")
    path.write_text(title + text + ("\n" + body if body.strip() else ""), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eval", required=True, type=Path)
    ap.add_argument("--version", required=True)
    ap.add_argument("--changelog", required=True, type=Path)
    ap.add_argument("--baseline-out", type=Path, help="write the baseline's results here")
    args = ap.parse_args()
    res = json.loads(args.eval.read_text(encoding="utf-8"))
    if not res.get("baseline"):
        ap.error(f"{args.eval}: not a --baseline run")
    write_changelog(args.changelog, section(res, args.version), args.version)
    if args.baseline_out:
        args.baseline_out.write_text(json.dumps(baseline_results(res)), encoding="utf-8")
    print(f"wrote {args.changelog}")


if __name__ == "__main__":
    main()
