"""cli.py: the `parse` command on good and bad files, its exit codes, lines and JSON; the command table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import docx
import pytest

import cli
from tests.helpers.paths import REPO


@pytest.fixture
def mixed_dir(tmp_path) -> Path:
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\nThe launch code is PLANTED-CLI.\n", encoding="utf-8")
    document = docx.Document()
    document.add_paragraph("A short memo.")
    document.save(str(folder / "memo.docx"))
    (folder / "empty.pdf").write_bytes(b"")
    (folder / "tool.exe").write_bytes(b"MZ")
    (folder / "cut.docx").write_bytes((folder / "memo.docx").read_bytes()[:2000])
    (folder / ".hidden.txt").write_text("never listed")
    return folder


def test_parse_mixed_directory_reports_every_file_and_exits_1(mixed_dir, capsys):
    code = cli.main(["parse", str(mixed_dir)])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 1
    assert [Path(line.split()[1]).name for line in lines] == ["cut.docx", "empty.pdf", "memo.docx", "notes.md", "tool.exe"]
    by_name = {Path(line.split()[1]).name: line for line in lines}
    assert by_name["memo.docx"].startswith("ok ") and "1 chunks" in by_name["memo.docx"]
    assert "paragraphs" in by_name["memo.docx"] and by_name["memo.docx"].endswith(" s")
    assert by_name["notes.md"].startswith("ok ") and "lines" in by_name["notes.md"]
    assert by_name["empty.pdf"].startswith("failed ") and "the file is empty (0 bytes)" in by_name["empty.pdf"]
    assert "unsupported file type '.exe'" in by_name["tool.exe"]
    assert "damaged or truncated zip package" in by_name["cut.docx"]


def test_parse_json_shape(mixed_dir, capsys):
    code = cli.main(["parse", str(mixed_dir / "notes.md"), str(mixed_dir / "empty.pdf"), "--json"])
    results = json.loads(capsys.readouterr().out)
    assert code == 1 and [r["status"] for r in results] == ["ok", "failed"]
    ok, failed = results
    for entry in results:
        assert {"file", "status", "reason", "kind", "unit_name", "units", "chunks", "chunk_count", "seconds"} <= set(entry)
    assert (ok["unit_name"], ok["units"], ok["chunk_count"], ok["kind"]) == ("lines", 4, 1, "")
    chunk = ok["chunks"][0]
    assert set(chunk) >= {"text", "location", "heading_path", "id"}
    assert "PLANTED-CLI" in chunk["text"] and chunk["location"] == {"lines": [1, 3]}
    assert chunk["heading_path"] == ["Notes"] and len(chunk["id"]) == 32
    assert (failed["kind"], failed["reason"], failed["chunks"]) == ("empty", "the file is empty (0 bytes)", [])


def test_parse_exits_0_when_every_file_parsed(mixed_dir, capsys):
    assert cli.main(["parse", str(mixed_dir / "memo.docx"), str(mixed_dir / "notes.md")]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 2


def test_missing_path_is_reported_not_raised(tmp_path, capsys):
    assert cli.main(["parse", str(tmp_path / "absent.pdf")]) == 1
    assert "failed" in capsys.readouterr().out


def test_command_line_never_prints_a_traceback(mixed_dir):
    run = subprocess.run([sys.executable, str(REPO / "cli.py"), "parse", str(mixed_dir)], capture_output=True,
                         text=True, timeout=120, cwd=REPO)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr + run.stdout
    assert len(run.stdout.strip().splitlines()) == 5


def test_data_dir_comes_from_flag_then_environment_then_default(monkeypatch):
    seen = []
    monkeypatch.setitem(cli.COMMANDS, "probe", (lambda args: seen.append(args.data_dir) or 0, lambda p: None, "probe"))
    monkeypatch.delenv(cli.DATA_DIR_ENV, raising=False)
    assert cli.main(["probe"]) == 0
    monkeypatch.setenv(cli.DATA_DIR_ENV, "/tmp/from-env")
    assert cli.main(["probe"]) == 0
    assert cli.main(["--data-dir", "/tmp/flag", "probe"]) == 0
    assert seen == [Path("data").resolve(), Path("/tmp/from-env"), Path("/tmp/flag")]


def test_bad_arguments_exit_2():
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["parse", "x.pdf", "--timeout", "-1"])
    assert exit_info.value.code == 2


def _cli(*argv: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, str(REPO / "cli.py"), *argv], capture_output=True, text=True, timeout=180,
                          cwd=REPO, env={**os.environ, **(env or {})}, **kwargs)


def test_unreachable_server_and_bad_setting_are_one_line_errors_not_tracebacks(tmp_path):
    (tmp_path / "a.txt").write_text("Some text to index.")
    down = _cli("--data-dir", str(tmp_path / "data"), "docs", env={"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": "1"})
    assert down.returncode == 1 and "Traceback" not in down.stderr, down.stderr[-2000:]
    assert down.stderr.strip().splitlines()[-1].startswith("error: cannot reach Chroma at http://127.0.0.1:1:")
    bad = _cli("--data-dir", str(tmp_path / "data"), "ingest", str(tmp_path / "a.txt"),
               env={"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": "eighty"})
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "error: bad configuration: CHROMA_PORT must be a number, got 'eighty'" in bad.stderr


def test_a_reader_that_goes_away_ends_the_output_quietly(tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("\n\n".join(f"Paragraph {i} about the quarterly figures of the harbour." * 8 for i in range(600)))
    proc = subprocess.Popen([sys.executable, str(REPO / "cli.py"), "parse", "--json", str(big)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.read(200)  # the output is far larger than a pipe holds: the writer blocks, then we leave
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141, err.decode()[-2000:]
    assert b"Traceback" not in err and b"BrokenPipe" not in err


def test_ask_prints_the_checked_answer_when_it_differs_from_what_streamed(monkeypatch, capsys, tmp_path):
    from types import SimpleNamespace

    import wiring

    final = {"answer": "", "citations": [{"n": 1, "file": "a.pdf", "location": {"page": 2}}], "mode": "gemini",
             "confidence": 0.5, "usage": {"llm_calls": 3}, "seconds": 1.0, "warnings": []}

    class Agent:
        def ask(self, question, *, on_token, **options):
            for piece in ("Revenue was ", "$5m [1]."):
                on_token(piece)
            return SimpleNamespace(to_dict=lambda: final)

    monkeypatch.setattr(wiring, "make_embedder", lambda config: None)
    monkeypatch.setattr(wiring, "make_agent", lambda *a, **k: Agent())
    monkeypatch.setattr(cli, "_open_kb", lambda args, embedder=None: None)
    final["answer"] = "Revenue was $5m [1]."
    assert cli.main(["--data-dir", str(tmp_path), "ask", "What was revenue?", "--offline"]) == 0
    out = capsys.readouterr().out
    assert out.count("Revenue was $5m [1].") == 1 and "after checking" not in out
    assert "[1] a.pdf  p. 2" in out
    final["answer"] = "Revenue was $5m [1]. ⚠ (not supported by the cited passages)"
    assert cli.main(["--data-dir", str(tmp_path), "ask", "What was revenue?", "--offline"]) == 0
    out = capsys.readouterr().out
    assert "--- the answer after checking ---\nRevenue was $5m [1]. ⚠ (not supported" in out


def test_ask_prints_a_documents_image_or_link_as_text_with_its_address(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("DOCAGENT_FAKE_EMBEDDER", "1")
    (tmp_path / "memo.txt").write_text("The harbour lantern budget is 4,000 euros ![seal](https://outside.example/"
                                       "?q=lantern) as [the memo](https://outside.example/memo) says.")
    assert cli.main(["--data-dir", str(tmp_path / "data"), "ingest", str(tmp_path / "memo.txt")]) == 0
    capsys.readouterr()
    assert cli.main(["--data-dir", str(tmp_path / "data"), "ask", "What is the harbour lantern budget?",
                     "--offline"]) == 0
    out = capsys.readouterr().out
    answer = out.split("--- the answer after checking ---")[-1]
    assert "4,000 euros" in answer and "![" not in answer and "](https" not in answer
    assert "seal (image not loaded: `https://outside.example/?q=lantern`)" in answer
    assert "the memo (`https://outside.example/memo`)" in answer


def test_rebuild_on_a_whole_library_changes_nothing_and_says_so(monkeypatch, capsys, tmp_path):
    """`rebuild` indexes only kept originals the library lacks (tests/advanced_retrieval/library/test_restore.py runs
    it on lost and unreadable stores in fresh processes); on a whole library it writes nothing."""
    monkeypatch.setenv("DOCAGENT_FAKE_EMBEDDER", "1")  # wiring's seam for the embedder
    (tmp_path / "a.txt").write_text("Lanterns light the harbour.")
    assert cli.main(["--data-dir", str(tmp_path / "data"), "ingest", str(tmp_path / "a.txt")]) == 0
    capsys.readouterr()
    assert cli.main(["--data-dir", str(tmp_path / "data"), "rebuild"]) == 0
    assert "rebuilt 0 of 0 kept original(s); the library holds 1 document(s)" in capsys.readouterr().out
    assert cli.main(["--data-dir", str(tmp_path / "data"), "rebuild", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_ask_takes_the_provider_from_the_environment_and_offline_overrides_it(monkeypatch, capsys, tmp_path):
    from types import SimpleNamespace

    import wiring

    seen = []
    answer = {"answer": "quoted", "citations": [], "mode": "offline", "confidence": 0.5, "usage": {"llm_calls": 0},
              "seconds": 0.1, "warnings": []}

    def make_agent(kb, embedder, config, *, model=None, provider=None):
        config = wiring.model_config(config, gemini_model=model, provider=provider)  # what wiring checks
        seen.append(config)
        return SimpleNamespace(ask=lambda question, **options: SimpleNamespace(to_dict=lambda: answer))

    monkeypatch.setattr(wiring, "make_embedder", lambda config: None)
    monkeypatch.setattr(wiring, "make_agent", make_agent)
    monkeypatch.setattr(cli, "_open_kb", lambda args, embedder=None: None)
    monkeypatch.setenv("DOCAGENT_PROVIDER", "local")
    monkeypatch.delenv("DOCAGENT_LOCAL_MODEL", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "k-from-the-other-name")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("DOCAGENT_GEMINI_MODEL", raising=False)
    # A local provider without a model: one line naming the fix, no traceback.
    assert cli.main(["--data-dir", str(tmp_path), "ask", "What was revenue?", "--json"]) == 2
    assert "DOCAGENT_LOCAL_MODEL" in capsys.readouterr().err and not seen
    assert cli.main(["--data-dir", str(tmp_path), "ask", "What was revenue?", "--offline", "--json"]) == 0
    assert seen[-1].provider == "offline"  # --offline wins over DOCAGENT_PROVIDER
    monkeypatch.setenv("DOCAGENT_PROVIDER", "gemini")
    assert cli.main(["--data-dir", str(tmp_path), "ask", "What was revenue?", "--json"]) == 0
    assert seen[-1].gemini_key == "k-from-the-other-name"  # GEMINI_API_KEY is read as GOOGLE_API_KEY is
    assert seen[-1].gemini_model == wiring.DEFAULT_GEMINI_MODEL
