"""Readers: every input format, error rows in place with line numbers, never a gap."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gatecli.readers import InputError, RowError, read_rows, validate_record

EXAMPLES = Path(__file__).resolve().parent.parent / "data" / "examples"


def rows_of(data: bytes | str, fmt: str = "auto", **kw: object) -> list:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return list(read_rows(io.BytesIO(raw), fmt, **kw))  # type: ignore[arg-type]


def errors(rows: list) -> list[tuple[int, str]]:
    return [(n, r.message) for n, r in rows if isinstance(r, RowError)]


def test_four_lines_one_malformed_one_empty() -> None:
    data = '{"user_message": "a"}\n{"user_message": \n\n{"id": "d", "user_message": "d"}\n'
    rows = rows_of(data)
    assert [n for n, _ in rows] == [1, 2, 3, 4]
    assert [n for n, _ in errors(rows)] == [2, 3]
    assert "malformed JSON" in rows[1][1].message and rows[2][1].message == "empty line"
    assert rows[3][1]["id"] == "d"


def test_invalid_utf8_is_an_error_row() -> None:
    rows = rows_of(b'{"user_message": "ok"}\n{"user_message": "\xff\xfe"}\nplain\n', "gate")
    assert errors(rows)[0][0] == 2 and "invalid UTF-8" in errors(rows)[0][1]
    assert len(rows) == 3 and "malformed JSON" in errors(rows)[1][1]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"id": "x"}, "missing user_message"),
        ({"user_message": "   "}, "user_message is empty"),
        ({"user_message": 5}, "user_message must be a string, got int"),
        ({"user_message": "hi", "connected_accounts": 3},
         "connected_accounts must be a list of strings, got int"),
        ({"user_message": "hi", "available_tools": "a"},
         "available_tools must be a list of strings, got str"),
        ({"user_message": "hi", "connected_accounts": ["gmail", 3]},
         "connected_accounts must be a list of strings, got a list holding int"),
        ({"user_message": "hi", "available_tools": [{"type": "function"}]},
         "available_tools must be a list of strings, got a list holding dict (the tool names, "
         "not OpenAI tool objects: a chat record's `tools` takes those)"),
        ({"user_message": "hi", "available_tools": [None]},
         "available_tools must be a list of strings, got a list holding null"),
        ({"user_message": "hi", "conversation_context": 1},
         "conversation_context must be a string or a list of turns, got int"),
        ({"user_message": "hi", "user_profile": []}, "user_profile must be an object, got list"),
        ([1, 2], "record must be a JSON object, got list"),
    ],
)  # fmt: skip
def test_wrong_fields_are_errors(record: object, message: str) -> None:
    assert validate_record(record) == message
    rows = rows_of(json.dumps(record) + "\n", "gate")
    assert errors(rows) == [(1, message)]


def test_huge_message_is_a_record_not_an_error() -> None:
    rows = rows_of(json.dumps({"user_message": "x" * 100_000}) + "\n")
    assert errors(rows) == [] and len(rows[0][1]["user_message"]) == 100_000


def test_chat_jsonl_every_user_turn_with_context() -> None:
    rows = list(read_rows(EXAMPLES / "transcript.jsonl"))
    assert errors(rows) == []
    turns = [(n, r["id"], r["turn_index"]) for n, r in rows]
    assert turns == [
        (1, "conv-en", 1), (1, "conv-en", 3), (1, "conv-en", 5),
        (2, "conv-zh", 0), (2, "conv-zh", 2), (3, "conv-fr", 0), (3, "conv-fr", 2),
    ]  # fmt: skip
    third = rows[2][1]
    assert third["available_tools"] == ["device.volume.adjust", "knowledge.web.search"]
    assert [t["role"] for t in third["conversation_context"]] == ["user", "assistant"] * 2
    assert rows[1][1]["conversation_context"][0]["content"] == "It's way too quiet in here"
    assert rows[4][1]["connected_accounts"] == ["google_calendar"]
    assert rows[5][1]["user_message"].startswith("Monte le son")  # content parts


def test_chat_last_and_json_document(tmp_path: Path) -> None:
    last = list(read_rows(EXAMPLES / "transcript.jsonl", last=True))
    assert [(n, r["turn_index"]) for n, r in last] == [(1, 5), (2, 2), (3, 2)]
    conv = json.loads((EXAMPLES / "transcript.jsonl").read_text(encoding="utf-8").splitlines()[1])
    doc = tmp_path / "one.json"
    doc.write_text(json.dumps(conv, indent=2, ensure_ascii=False), encoding="utf-8")
    rows = list(read_rows(doc))
    assert [(n, r["turn_index"]) for n, r in rows] == [(1, 0), (1, 2)]
    # the same pretty-printed document from stdin is detected too
    assert [r["turn_index"] for _, r in rows_of(doc.read_text(encoding="utf-8"))] == [0, 2]
    many = tmp_path / "many.json"
    many.write_text(json.dumps([conv, {"messages": []}]), encoding="utf-8")
    rows = list(read_rows(many, last=True))
    assert rows[0][1]["turn_index"] == 2 and errors(rows) == [(2, "chat record has no user turn")]


def test_chat_bad_turns_stay_in_place() -> None:
    conv = {
        "id": "c",
        "messages": [{"role": "user", "content": ""}, "junk", {"role": "user", "content": "hi"}],
    }
    rows = rows_of(json.dumps(conv) + "\n", "chat")
    turns = [(n, r.turn_index if isinstance(r, RowError) else r["turn_index"]) for n, r in rows]
    assert turns == [(1, 0), (1, 1), (1, 2)]
    assert rows[0][1].message == "user_message is empty" and rows[0][1].id == "c"
    assert (
        rows_of('{"user_message": "x"}\n', "chat")[0][1].message
        == "chat record needs a messages list"
    )


def test_gate_jsonl_example_and_mixed_auto() -> None:
    rows = list(read_rows(EXAMPLES / "gate-input.jsonl"))
    assert [r["id"] for _, r in rows] == ["ex-1", "ex-2", "ex-3", "ex-4", "ex-5"]
    mixed = '{"user_message": "a"}\n{"messages": [{"role": "user", "content": "b"}]}\n'
    assert [r["user_message"] for _, r in rows_of(mixed)] == ["a", "b"]


def test_plain_text_lines() -> None:
    rows = rows_of("声音调到90\r\n\nmonte le son\n")
    assert [(n, r["user_message"]) for n, r in rows if isinstance(r, dict)] == [
        (1, "声音调到90"),
        (3, "monte le son"),
    ]
    assert errors(rows) == [(2, "user_message is empty")]


def test_csv_with_columns_and_multiline_rows(tmp_path: Path) -> None:
    path = tmp_path / "turns.csv"
    path.write_bytes(
        b'id,utterance,ctx\n1,"turn it up",\n2,"two\nlines",earlier text\n3,,\n4,"bad \xff",\n'
    )
    rows = list(read_rows(path, text_column="utterance", context_column="ctx"))
    assert [n for n, _ in rows] == [2, 3, 5, 6]
    assert rows[1][1]["conversation_context"] == "earlier text" and rows[1][1]["id"] == "2"
    assert errors(rows) == [(5, "user_message is empty"), (6, "invalid UTF-8")]
    with pytest.raises(InputError, match="no column 'nope'"):
        list(read_rows(path, text_column="nope"))
    with pytest.raises(InputError, match="--text-column"):
        list(read_rows(path))


def test_parquet(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "turns.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "text": ["声音调到90", " "]}), path)
    rows = list(read_rows(path))
    assert rows[0] == (1, {"user_message": "声音调到90", "id": "a"})
    assert errors(rows) == [(2, "user_message is empty")]


def test_missing_file_and_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        list(read_rows(tmp_path / "nope.jsonl"))
    with pytest.raises(InputError, match="unknown --format"):
        list(read_rows(tmp_path / "nope.jsonl", "xml"))


def test_data_records_are_read_as_their_input_with_their_id() -> None:
    """Spec §6 records (the corpus, the eval suites) classify as they are."""
    rec = {"id": "x:1", "input": {"user_message": "hi", "connected_accounts": ["gmail"]},
           "labels": {"decision": "execute"}, "source": "x"}  # fmt: skip
    rows = rows_of(json.dumps(rec) + '\n{"input": {"text": "no message"}}\n')
    assert rows[0][1] == {"user_message": "hi", "connected_accounts": ["gmail"], "id": "x:1"}
    assert isinstance(rows[1][1], RowError)  # not a data record: the usual error


def test_gzip_input_is_read_by_its_inner_suffix(tmp_path: Path) -> None:
    import gzip

    def gz(name: str, body: str) -> Path:
        path = tmp_path / name
        path.write_bytes(gzip.compress(body.encode("utf-8")))
        return path

    rows = list(read_rows(gz("t.csv.gz", "message\nturn it up\n")))
    assert [r["user_message"] for _, r in rows] == ["turn it up"]
    # .txt decides over content: a JSON-looking line is one message, not a record
    rows = list(read_rows(gz("t.txt.gz", '{"user_message": "a"}\n')))
    assert rows[0][1]["user_message"] == '{"user_message": "a"}'
    # a bare .gz is sniffed like any unnamed input, bad lines stay in place
    rows = list(read_rows(gz("t.gz", '{"user_message": "a"}\n{oops\n')))
    assert rows[0][1]["user_message"] == "a" and isinstance(rows[1][1], RowError)
    # streams too (stdin)
    rows = rows_of(gzip.compress(b'{"user_message": "b"}\n'))
    assert rows[0][1]["user_message"] == "b"


def test_gzip_faults_are_input_errors(tmp_path: Path) -> None:
    import gzip

    body = gzip.compress(b'{"user_message": "a"}\n' * 200)
    (tmp_path / "cut.jsonl.gz").write_bytes(body[:12])
    with pytest.raises(InputError, match="cannot be decompressed"):
        list(read_rows(tmp_path / "cut.jsonl.gz"))
    bad = bytearray(body)
    bad[20:40] = b"\xff" * 20  # corrupt deflate data: zlib.error, not OSError
    (tmp_path / "bad.jsonl.gz").write_bytes(bytes(bad))
    with pytest.raises(InputError, match="cannot be decompressed"):
        list(read_rows(tmp_path / "bad.jsonl.gz"))
    (tmp_path / "t.parquet.gz").write_bytes(body)
    with pytest.raises(InputError, match="gzipped Parquet"):
        list(read_rows(tmp_path / "t.parquet.gz"))


def test_data_records_in_a_json_array_keep_their_own_input_id(tmp_path: Path) -> None:
    recs = [{"id": "outer", "input": {"id": "inner", "user_message": "a"}},
            {"id": "r2", "input": {"user_message": "b"}}]  # fmt: skip
    (tmp_path / "recs.json").write_text(json.dumps(recs), encoding="utf-8")
    rows = list(read_rows(tmp_path / "recs.json"))
    assert [(r["id"], r["user_message"]) for _, r in rows] == [("inner", "a"), ("r2", "b")]


def test_chat_built_in_tools_are_listed_by_their_type() -> None:
    """A Responses API built-in tool has a type and no name; it is still a tool the agent
    has, so a weather question under it and a function tool is not read as lacking search."""
    conv = {
        "messages": [{"role": "user", "content": "will it rain tomorrow"}],
        "tools": [
            {"type": "function", "function": {"name": "send_email"}},
            {"type": "web_search_preview"},
            {"type": "function"},  # nameless function: nothing to list
        ],
    }
    rows = rows_of(json.dumps(conv) + "\n", "chat")
    assert errors(rows) == []
    assert rows[0][1]["available_tools"] == ["send_email", "web_search_preview"]
