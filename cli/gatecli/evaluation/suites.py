"""Evaluation suites: names to files under ``data/``, and reading labeled turns (spec §6).

Suites are named so that a person types ``--suite xstest`` instead of a path, and so that
``--suite all`` means the same set on every machine; anything else is read as a path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gatecli.records import HEAD_NAMES, iter_jsonl

CORPUS_SUITES = ("test", "dev")
EXTERNAL_SUITES = (
    "when2call", "xstest", "coconot", "simple_safety_tests", "harmbench", "home_assistant", "xsid",
)  # fmt: skip
# issue 13: held-out ordinary turns (false refusal per language) and risk in surrounding text
BOUNDARY_SUITES = (
    "ordinary_en", "ordinary_zh", "ordinary_fr", "oasst1_fr", "mgsm", "risk_in_context",
    "passages_heldout",
)  # fmt: skip
# issue 12: pairs that must not flip, and turns whose earlier turns decide (built after split);
# issue 14: agents' tool lists, freely named (tools_unseen), in the catalog's names and in
# Home Assistant's intent names
CONTEXT_SUITES = (
    "invariance", "context", "tools_unseen", "tools_catalog", "tools_home_assistant",
)  # fmt: skip
SUITE_NAMES = (*CORPUS_SUITES, "seeds", *EXTERNAL_SUITES, *BOUNDARY_SUITES, *CONTEXT_SUITES)


class SuiteError(ValueError):
    """A suite name that resolves to no file, or a file that is not JSONL; one line."""


def default_data_dir() -> Path:
    """``$GATECLI_DATA``, else ``./data`` (a checkout's corpus when run from its root).

    Installed code never guesses a path relative to a checkout it may not be in.
    """
    return Path(os.environ.get("GATECLI_DATA", "data"))


def _candidates(name: str, data: Path) -> list[Path]:
    if name in CORPUS_SUITES:
        return [data / "corpus" / f"{name}.jsonl.gz", data / "corpus" / f"{name}.jsonl"]
    extra = [data / "suites" / f"{name}.jsonl"] if name == "seeds" else []
    return [data / "eval" / f"{name}.jsonl.gz", data / "eval" / f"{name}.jsonl", *extra]


def resolve_suites(
    specs: list[str], data_dir: str | Path | None = None
) -> tuple[dict[str, Path], list[str]]:
    """Map ``--suite`` values to files; returns ``({name: path}, [skipped notes])``.

    ``all`` expands to every named suite that exists (missing ones are noted, not fatal);
    an explicit name or path that does not exist raises :class:`SuiteError`, and so does a
    request that finds no suite at all (``all`` run outside a checkout: its release gate,
    checked over nothing, passed).

    Example:
        >>> resolve_suites(["seeds"])[0]  # doctest: +SKIP
        {'seeds': PosixPath('.../data/eval/seeds.jsonl.gz')}
    """
    data = Path(data_dir) if data_dir else default_data_dir()
    out: dict[str, Path] = {}
    skipped: list[str] = []
    for spec in specs or ["test"]:
        if spec == "all":
            for name in SUITE_NAMES:
                found = next((p for p in _candidates(name, data) if p.is_file()), None)
                if found is None:
                    skipped.append(f"{name}: no file under {data}")
                else:
                    out.setdefault(name, found)
            continue
        if spec in SUITE_NAMES:
            cands = _candidates(spec, data)
            found = next((p for p in cands if p.is_file()), None)
            if found is None:
                raise SuiteError(
                    f"suite {spec!r}: none of {', '.join(map(str, cands))} exists; build the data "
                    f"with `gatecli data build` or pass --data-dir"
                )
            out[spec] = found
            continue
        path = Path(spec)
        if not path.is_file():
            raise SuiteError(f"suite {spec!r} is neither a suite name ({', '.join(SUITE_NAMES)}) "
                             f"nor a file")  # fmt: skip
        name = path.name.removesuffix(".gz").removesuffix(".jsonl")
        out[name if name not in out else str(path)] = path
    if not out:  # `all` found nothing: a gate over no suite would pass, and a card read 0 turns
        raise SuiteError(
            f"no suite found under {data} (run from a checkout's root, set GATECLI_DATA or pass "
            f"--data-dir; build the data with `gatecli data build`)"
        )
    return out, skipped


def _normalise(raw: dict[str, Any], line: int) -> dict[str, Any]:
    """A §6 record, or a flat §1 record with ``labels`` beside it, as one shape."""
    inp = raw.get("input")
    if not isinstance(inp, dict):
        inp = {k: v for k, v in raw.items() if k not in ("labels", "source", "split", "lang")}
    got = raw.get("labels")
    labels: dict[str, Any] = got if isinstance(got, dict) else {}
    rid = str(raw.get("id") if raw.get("id") is not None else f"line:{line}")
    return {
        "id": rid,
        # The turns that move together (a dialogue, a base and its variants): the gate's
        # bootstrap draws them whole, and the held-out halves split by them.
        "group": str(raw.get("group") or rid),
        "line": line,
        "source": raw.get("source") or "unknown",
        "lang": raw.get("lang"),
        "input": inp,
        "labels": {h: labels.get(h) for h in HEAD_NAMES},
    }


def load_suite(
    path: str | Path, limit: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Read a JSONL or JSONL.gz suite; returns ``(records, errors)`` (errors keep their line).

    Example:
        >>> recs, errs = load_suite("data/eval/xstest.jsonl.gz", limit=10)  # doctest: +SKIP
    """
    path = Path(path)
    records: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []

    def bad(line: int, message: str) -> None:
        errors.append({"id": None, "line": line, "error": message})

    try:
        for n, raw in iter_jsonl(path, on_error=bad):
            if limit is not None and len(records) + len(errors) >= limit:
                break
            if not isinstance(raw, dict):
                bad(n, "not a JSON object")
                continue
            records.append(_normalise(raw, n))
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise SuiteError(f"{path}: cannot read ({exc})") from exc
    if limit is not None:
        del errors[max(0, limit - len(records)) :]
    return records, errors
