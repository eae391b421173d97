"""How soon an uploaded file can be asked about while the rest of its batch is still being indexed.

    .venv/bin/python bench/ingest_queue.py            # 10 real PDFs from ../shared/data, all-MiniLM-L6-v2 on ONNX Runtime
    .venv/bin/python bench/ingest_queue.py --quick    # 4 generated text files, the fake embedder
    .venv/bin/python bench/ingest_queue.py --smoke    # 2 short generated text files, the fake embedder (a smoke run)

The batch is enqueued at once into an IngestQueue over a fresh data directory (built as wiring builds it:
isolated parsing, the real embedder). A watcher thread asks each file's own question with the offline agent the
moment the queue reports that file indexed, while the worker goes on with the next ones; a question counts as
answered when the answer cites that file. Printed per file and, last, as one JSON line: seconds from upload to
indexed and to the first answer citing it, how long each answer took while indexing went on, and the batch end
(before the queue, a tab's chat box stayed disabled until the whole batch had ended).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA, REPO  # noqa: E402  (bench/ is on sys.path when run as a script)

MODEL_CACHE = REPO / "test-artifacts" / "model-cache"
FB = DATA / "bench" / "financebench_subset" / "pdfs"
# (file, a question that file answers): the answer must cite the file.
BATCH = (
    (DATA / "papers" / "attention_is_all_you_need.pdf", "What is multi-head attention in the Transformer?"),
    (DATA / "papers" / "adam_1412.6980.pdf", "How does Adam correct the bias of its moment estimates?"),
    (DATA / "papers" / "bert_1810.04805.pdf", "What is the masked language model objective of BERT?"),
    (DATA / "papers" / "resnet_1512.03385.pdf", "How do residual connections help train very deep networks?"),
    (FB / "ULTABEAUTY_2023Q4_EARNINGS.pdf", "What were Ulta Beauty's net sales in the fourth quarter of fiscal 2023?"),
    (FB / "AMCOR_2023Q4_EARNINGS.pdf", "What were Amcor's net sales for fiscal 2023?"),
    (FB / "JOHNSON_JOHNSON_2023_8K_dated-2023-08-30.pdf", "What did Johnson & Johnson report in its 8-K of August 2023?"),
    (FB / "PEPSICO_2023Q1_EARNINGS.pdf", "What was PepsiCo's organic revenue growth in the first quarter of 2023?"),
    (FB / "MGMRESORTS_2022Q4_EARNINGS.pdf", "What was MGM Resorts' Las Vegas Strip net revenue in the fourth quarter?"),
    (DATA / "pdf_hard" / "tracemonkey.pdf", "How does TraceMonkey record and compile hot loop traces?"),
)


def quick_batch(folder: Path, files: int = 4, filler_lines: int = 60) -> tuple[tuple[Path, str], ...]:
    """`files` generated text files (at most 4), each a planted fact and `filler_lines` lines, with its question."""
    facts = (("penguins", "Emperor penguins survive the Antarctic winter by huddling together in large groups.",
              "How do emperor penguins survive the Antarctic winter?"),
             ("volcanoes", "Shield volcanoes are built by fluid basalt lava flowing far from the vent.",
              "How are shield volcanoes built?"),
             ("glaciers", "Glaciers carve deep fjords as they grind down valleys towards the sea.",
              "How do glaciers carve fjords?"),
             ("comets", "Comets carry frozen water and dust from the outer solar system.",
              "What do comets carry?"))
    out = []
    for topic, fact, question in facts[:files]:
        path = folder / f"{topic}.txt"
        filler = [f"Section {i} of the {topic} notes lists field observations, dates and places."
                  for i in range(filler_lines)]
        path.write_text("\n\n".join([fact, *filler]))
        out.append((path, question))
    return tuple(out)


def run(batch, embedder, root: Path) -> dict:
    import wiring

    kb = wiring.open_knowledge_base(root, embedder=embedder, environ={})  # embedded Chroma, whatever the shell says
    agent = wiring.build_for(wiring.ModelConfig("offline"), kb, embedder)
    agent.ask("warm up")  # loads what the first question would otherwise load
    queue = wiring.open_ingest_queue(root, kb)
    questions, rows, lock = {}, {}, threading.Lock()
    started = time.monotonic()
    for path, question in batch:
        t = time.monotonic()
        item = queue.enqueue(path.read_bytes(), path.name)
        questions[item.entry_id] = (path.name, question)
        rows[path.name] = {"file": path.name, "queued_s": round(time.monotonic() - started, 3),
                           "enqueue_ms": round((time.monotonic() - t) * 1000, 1)}
    asked = set()

    def watch():
        while len(asked) < len(batch):
            version = queue.version
            for item in queue.items():
                if item.finished and item.entry_id not in asked:
                    asked.add(item.entry_id)
                    ask(item)
            queue.wait(lambda _items, v=version: queue.version != v, 5.0)

    def ask(item):
        name, question = questions[item.entry_id]
        row = rows[name]
        row.update(state=item.state, indexed_s=round(item.finished_at - _wall(started), 2),
                   pending_while_asking=len(queue.pending_names()))
        if item.state not in ("indexed", "replaced"):
            row["reason"] = item.reason
            return
        t = time.monotonic()
        answer = agent.ask(question)
        cited = name in {c.file for c in answer.citations}
        with lock:
            row.update(answered_s=round(time.monotonic() - started, 2), ask_s=round(time.monotonic() - t, 2),
                       cites_it=cited, chunks=item.result.chunks)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    watcher.join(3600)
    batch_end = max(r.get("indexed_s", 0) for r in rows.values())
    queue.stop()
    return {"rows": list(rows.values()), "batch_end_s": round(batch_end, 2), "total_s": round(time.monotonic() - started, 2)}


def _wall(monotonic_start: float) -> float:
    """The wall-clock time of a monotonic instant (queue items carry wall-clock times)."""
    return time.time() - (time.monotonic() - monotonic_start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 generated files, the fake embedder")
    parser.add_argument("--smoke", action="store_true", help="a smoke run: 2 short generated files, the fake embedder")
    args = parser.parse_args()
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    with tempfile.TemporaryDirectory(prefix="bench-queue-") as tmp:
        root = Path(tmp)
        if size != "full":
            from vector_db import HashingEmbedder

            batch = quick_batch(root, 2, 10) if size == "smoke" else quick_batch(root)
            embedder = HashingEmbedder()
        else:
            missing = [str(p) for p, _q in BATCH if not p.is_file()]
            if missing:
                sys.exit(f"missing documents (../shared/data is needed): {', '.join(missing)}")
            from vector_db import OnnxEmbedder

            batch, embedder = BATCH, OnnxEmbedder(MODEL_CACHE)
        report = run(batch, embedder, root / "data")
    print(f"{'file':45} {'queued':>7} {'indexed':>8} {'answered':>9} {'ask':>6} cites  pending  chunks")
    for row in report["rows"]:
        print(f"{row['file'][:45]:45} {row['queued_s']:7.2f} {row.get('indexed_s', float('nan')):8.2f} "
              f"{row.get('answered_s', float('nan')):9.2f} {row.get('ask_s', float('nan')):6.2f} "
              f"{str(row.get('cites_it', '-')):5}  {row.get('pending_while_asking', '-'):>7}  "
              f"{row.get('chunks', row.get('reason', ''))}")
    first = min((r for r in report["rows"] if r.get("cites_it")), key=lambda r: r["answered_s"], default=None)
    if first is not None:
        print(f"\nfirst answerable question: {first['file']} answered {first['answered_s']:.2f} s after the batch "
              f"was uploaded, {report['batch_end_s'] - first['answered_s']:.2f} s before the batch ended "
              f"({report['batch_end_s']:.2f} s; {first['answered_s'] / report['batch_end_s']:.2f} of it)")
    print(json.dumps({"bench": "ingest_queue", "size": size, "first_answer_s": first and first["answered_s"], "batch_end_s": report["batch_end_s"],
                      "answered_citing_their_file": sum(bool(r.get("cites_it")) for r in report["rows"]),
                      "files": len(report["rows"]), "enqueue_ms_max": max(r["enqueue_ms"] for r in report["rows"])}))


if __name__ == "__main__":
    main()
