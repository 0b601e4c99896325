"""The coach JSON schema (``assets/coach_schema.json``) and a validator for its subset.

The runtime may not depend on ``jsonschema``; the schema only needs ``type`` (one or a
list), ``enum``, ``required``, ``properties``, ``additionalProperties: false``, ``items``,
``minItems``/``maxItems`` and ``minLength``/``maxLength``, so that is all this checks.
Keywords it does not know are ignored, which is why the schema file must stay inside
this subset (a test validates every local template answer against it).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

SCHEMA_FILE = "coach_schema.json"

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


@lru_cache(maxsize=1)
def coach_schema() -> dict[str, Any]:
    """The seed-000 coach schema shipped as package data (``$comment`` removed).

    Example:
        >>> sorted(coach_schema()["required"])[:2]
        ['default_path', 'execution_brief']
    """
    text = (resources.files("gatecli") / "assets" / SCHEMA_FILE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    schema.pop("$comment", None)
    return schema


def _type_ok(value: Any, names: str | list[str]) -> bool:
    for name in [names] if isinstance(names, str) else names:
        kinds = _TYPES.get(name, ())
        # bool is an int subclass; it only satisfies "boolean".
        if isinstance(value, bool) and name != "boolean":
            continue
        if isinstance(value, kinds):
            return True
    return False


def validate(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Return the ways ``value`` breaks ``schema`` (empty when valid), one line each.

    Example:
        >>> validate({"a": "x"}, {"type": "object", "required": ["a", "b"]})
        ['$: missing required property b']
    """
    errors: list[str] = []
    if "type" in schema and not _type_ok(value, schema["type"]):
        return [f"{path}: expected {schema['type']}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{path}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: longer than {schema['maxLength']} characters")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: more than {schema['maxItems']} items")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                errors.extend(validate(item, schema["items"], f"{path}[{i}]"))
    if isinstance(value, dict):
        props: dict[str, Any] = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing required property {key}")
        for key, item in value.items():
            if key in props:
                errors.extend(validate(item, props[key], f"{path}.{key}"))
            elif schema.get("additionalProperties", True) is False:
                errors.append(f"{path}: unexpected property {key}")
    return errors
