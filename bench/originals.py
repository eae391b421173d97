"""What keeping an original in a shared store costs (issue 27, item 4): a library on a Chroma server keeps every
original's bytes in the store (vector_db.blobs), so that each data directory sharing it can view and rebuild
every document. For originals of N MB (random bytes: PDFs and Office files do not compress): seconds to store
one in a real `chroma run` on 127.0.0.1, seconds to read it back, and how much the server's storage grew.

    .venv/bin/python bench/originals.py --smoke     # one 1 MB original
    .venv/bin/python bench/originals.py             # 1, 10 and 40 MB

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from testing.chroma_server import CHROMA, ChromaServer  # noqa: E402
from vector_db import HashingEmbedder, VectorStore, make_client  # noqa: E402

MB = 1 << 20


def disk_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def one_size(store: VectorStore, server_data: Path, size_mb: int) -> dict:
    data = os.urandom(size_mb * MB)
    doc_id = f"bench{size_mb:04d}" + "0" * 55
    before = disk_bytes(server_data)
    start = time.perf_counter()
    store.keep_original(doc_id, f"file-{size_mb}.pdf", ".pdf", data)
    wrote = time.perf_counter() - start
    grew = disk_bytes(server_data) - before
    start = time.perf_counter()
    got = store.original(doc_id)
    read = time.perf_counter() - start
    if got is None or got[2] != data:
        raise SystemExit(f"the {size_mb} MB original did not come back whole")
    return {"mb": size_mb, "write_s": round(wrote, 2), "read_s": round(read, 2),
            "server_disk_mb": round(grew / MB, 1), "disk_per_byte": round(grew / len(data), 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="one 1 MB original")
    args = parser.parse_args(argv)
    size = "smoke" if args.smoke else "full"
    if not CHROMA.exists():
        print(json.dumps({"bench": "originals", "size": size, "skipped": "no chroma command beside this Python"}))
        return 0
    sizes = [1] if args.smoke else [1, 10, 40]
    with tempfile.TemporaryDirectory() as tmp:
        server = ChromaServer(Path(tmp) / "server-data")
        server.start()
        try:
            store = VectorStore(make_client(Path(tmp), host="127.0.0.1", port=server.port), HashingEmbedder())
            rows = [one_size(store, server.path, mb) for mb in sizes]
        finally:
            server.stop()
    for row in rows:
        print(f"{row['mb']:>3} MB original: stored in {row['write_s']} s, read in {row['read_s']} s, "
              f"server storage +{row['server_disk_mb']} MB ({row['disk_per_byte']} bytes per byte)")
    print(json.dumps({"bench": "originals", "size": size, "originals": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
