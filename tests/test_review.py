"""Review queue in Label Studio's task import format, import-labels round trip, Ray engine."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gatecli.labeling.import_labels import import_labels
from gatecli.labeling.pipeline import label


@pytest.fixture(scope="module")
def queue(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("review")
    src = tmp / "turns.jsonl"
    msgs = ["louder", "提醒我开会", "send an email to Tom", "what's the weather", "关灯"]
    with open(src, "w", encoding="utf-8") as f:
        for i in range(400):
            rec = {"id": f"t{i}", "user_message": f"{msgs[i % 5]} {i}",
                   "connected_accounts": ["google_calendar"] if i % 2 else []}  # fmt: skip
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    q = tmp / "queue.json"
    s = label([src], tmp / "out.jsonl", model=tiny_model_dir, review_queue=q, review_size=30,
              chunk_size=64)  # fmt: skip
    assert s.review_tasks == 30
    return q


def test_queue_matches_label_studio_task_format_and_config(queue: Path) -> None:
    """Documented import format: a list of tasks, each {"data": {...}, "predictions": [
    {"model_version", "score", "result": [{"from_name", "to_name", "type", "value"}]}]};
    from_name names a control tag and to_name an object tag of the labeling config."""
    tasks = json.loads(queue.read_text(encoding="utf-8"))
    root = ET.fromstring(Path(str(queue) + ".label_config.xml").read_text(encoding="utf-8"))
    assert root.tag == "View"
    objects = {el.get("name"): el.get("value") for el in root.iter("Text")}
    controls = {el.get("name"): el for el in root.iter("Choices")}
    assert set(controls) == {"decision", "events", "scenario_tags", "missing_slots"}
    assert controls["decision"].get("choice") == "single"
    assert isinstance(tasks, list) and len(tasks) == 30
    scores = [t["data"]["uncertainty"] for t in tasks]
    assert scores == sorted(scores, reverse=True)
    for task in tasks:
        assert set(task) == {"data", "predictions"}
        for name, var in objects.items():  # every $variable of the config is in data
            assert var == f"${name}" and isinstance(task["data"][name], str)
        assert task["data"]["text"] == task["data"]["input"]["user_message"]
        (pred,) = task["predictions"]
        assert isinstance(pred["model_version"], str) and isinstance(pred["score"], float)
        assert pred["result"], "every task carries at least the decision"
        for res in pred["result"]:
            assert set(res) == {"from_name", "to_name", "type", "value"}
            assert res["type"] == "choices" and res["to_name"] in objects
            allowed = {c.get("value") for c in controls[res["from_name"]].iter("Choice")}
            assert res["value"]["choices"] and set(res["value"]["choices"]) <= allowed
            if controls[res["from_name"]].get("choice") == "single":
                assert len(res["value"]["choices"]) == 1


def test_queue_respects_per_decision_quota() -> None:
    from gatecli.labeling.review import select

    def c(d: str, s: float, n: int) -> dict:
        return {"score": s, "line": n, "prediction": {"decision": d}}

    pool = [c("ask", 0.9 - i / 100, i) for i in range(10)] + [c("refuse", 0.1, 50)]
    chosen = select([pool], 4, ["execute", "ask", "refuse"])
    assert [x["line"] for x in chosen] == [0, 1, 2, 50]  # quota 1 each, spare to the best


def test_import_labels_round_trip(queue: Path, tmp_path: Path) -> None:
    tasks = json.loads(queue.read_text(encoding="utf-8"))
    export = []
    for k, t in enumerate(tasks[:5]):  # a reviewer accepts or corrects the prediction
        result = [dict(r) for r in t["predictions"][0]["result"]]
        if k == 0:
            result = [{"from_name": "decision", "to_name": "text", "type": "choices",
                       "value": {"choices": ["safety"]}}]  # fmt: skip
        export.append(
            {
                "id": 100 + k,
                "data": t["data"],
                "annotations": [
                    {"id": k, "completed_by": 1, "was_cancelled": False, "result": result}
                ],
            }
        )
    export.append({"id": 999, "data": tasks[5]["data"], "annotations": []})
    out = tmp_path / "reviewed.jsonl"
    res = import_labels_file(export, tmp_path, out)
    assert res.records == 5 and [s["task"] for s in res.skipped] == [999]
    recs = [json.loads(s) for s in out.read_text(encoding="utf-8").splitlines()]
    assert recs[0]["labels"] == {"decision": "safety", "events": [], "scenario_tags": [],
                                 "missing_slots": []}  # fmt: skip
    for rec, task in zip(recs, tasks[:5], strict=True):
        assert rec["input"] == task["data"]["input"]  # context fields survive the trip
        assert rec["provenance"] == "authored" and "Label Studio" in rec["note"]
        assert set(rec) == {"id", "source", "split", "lang", "input", "labels", "provenance",
                            "note"}  # fmt: skip
    pred = {r["from_name"]: r["value"]["choices"] for r in tasks[1]["predictions"][0]["result"]}
    assert recs[1]["labels"]["decision"] == pred["decision"][0]
    assert recs[1]["labels"]["scenario_tags"] == pred.get("scenario_tags", [])


def import_labels_file(export: list, tmp: Path, out: Path):  # noqa: ANN201
    path = tmp / "export.json"
    path.write_text(json.dumps(export, ensure_ascii=False), encoding="utf-8")
    return import_labels(path, out)


@pytest.mark.slow
def test_ray_engine_matches_local(tiny_model_dir: Path, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    src = tmp_path / "turns.jsonl"
    lines = [json.dumps({"id": f"t{i}", "user_message": f"louder {i}"}) for i in range(300)]
    lines[7] = "{oops"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        s = label([src], tmp_path / "ray.jsonl", model=tiny_model_dir, engine="ray", workers=2,
                  chunk_size=50)  # fmt: skip
    finally:
        ray.shutdown()
    label([src], tmp_path / "local.jsonl", model=tiny_model_dir, chunk_size=50)

    def rows(p: Path) -> list[dict]:
        return [{k: v for k, v in json.loads(x).items() if k != "latency_ms"}
                for x in p.read_text(encoding="utf-8").splitlines()]  # fmt: skip

    assert (s.rows, s.errors, s.engine) == (300, 1, "ray")
    assert rows(tmp_path / "ray.jsonl") == rows(tmp_path / "local.jsonl")
