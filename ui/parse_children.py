"""Imported first by the parser's fork server when the page's process starts it (see ui.runtime.parse_preload).

Every parse child runs the page's main script again as __mp_main__ (Python 3.11's forkserver re-runs a main
*script*), and app.py imports ui.page: ~2.2 s of imports per uploaded file unless the fork server has imported the
page once for all children. Importing the page outside a Streamlit server makes each of its cached functions log
"No runtime found, using MemoryCacheStorageManager" (five lines per file in `make run`'s terminal): true and
harmless there, since no parse child ever calls them, so that logger is quieted in these processes only.
"""

import logging

import streamlit.runtime.caching.cache_data_api  # noqa: F401 - Streamlit sets its loggers' levels as it makes them

logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)
