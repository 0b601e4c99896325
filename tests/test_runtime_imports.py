"""The runtime classifies with torch, transformers, datasets and sklearn unimportable."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
for name in ("torch", "transformers", "datasets", "sklearn", "matplotlib", "pyarrow", "ray"):
    sys.modules[name] = None  # any import of these now raises ImportError
import json
from gatecli.commands.classify import classify
from gatecli.main import app  # every registered command must import without them too
rows = classify(sys.argv[1], model=sys.argv[2])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers", "sklearn")
               and sys.modules[m] is not None)
print(json.dumps({"n": len(rows), "decision": rows[0]["decision"], "heavy": heavy}))
"""


def test_runtime_without_training_deps(tiny_model_dir: Path) -> None:
    examples = Path(__file__).resolve().parent.parent / "data" / "examples" / "gate-input.jsonl"
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(examples), str(tiny_model_dir)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["n"] == 5 and out["heavy"] == [] and out["decision"]
