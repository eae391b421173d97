"""`make run`'s entry point: the Streamlit server for app.py, with the library opened and the ingestion queue
resumed as the server starts, not when the first browser tab connects.

    .venv/bin/python -m ui.serve --server.address 127.0.0.1 --server.port 8501

Streamlit runs no app code until a tab connects, so files still queued when the server stopped would otherwise
wait for someone to open the page, and the first visitor would wait for the embedding model. Here a thread opens
the shared library and queue through the same st.cache_resource functions the page uses (one process, one
cache), then the server starts as `streamlit run app.py` would. A library that cannot be opened is logged here
and reported on the page as usual (nothing is cached on failure, so the page tries again and offers the rebuild).
Imports stay inside functions: the parser's fork-server children import this module again as their main one.
"""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app.py"
log = logging.getLogger("docagent.serve")


def open_shared(environ=None) -> None:
    """Open the library and the ingestion queue the page will use, which resumes what the last run left queued."""
    import wiring
    from ui import resources

    config = wiring.Config.from_env(environ)
    try:
        resources.load_queue(config)
    except Exception:  # the page opens it again and shows the reason (or the rebuild offer) to the user
        log.exception("opening the library at %s at start failed; the page will report it", config.data_dir)
        return
    try:  # a library indexed before tables were kept gets them read from its originals, one file at a time
        for line in resources.load_library(config).fill_missing_tables():
            log.info("tables: %s", line)
    except Exception:  # the documents stay searchable; only calculations over their tables wait for a rebuild
        log.exception("reading the tables of older documents at %s failed", config.data_dir)


def main(argv: list[str] | None = None) -> int:
    """Start the opener thread, then run Streamlit on app.py with `argv` (Streamlit's own options)."""
    from streamlit.web import cli

    threading.Thread(target=open_shared, name="docagent-open-library", daemon=True).start()
    args = ["run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return cli.main.main(args=args, prog_name="streamlit", standalone_mode=False) or 0


if __name__ == "__main__":
    sys.exit(main())
