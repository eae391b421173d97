"""Docagent's web page: `streamlit run app.py` (or `make run`). The page itself is the `ui` package; the
objects it uses are built by `wiring` from the environment (DOCAGENT_DATA_DIR, GOOGLE_API_KEY, ... : see wiring).
"""

from ui.page import main

# Streamlit runs this file as __main__. The parser's worker processes re-run the main script as __mp_main__
# (Python 3.11 forkserver): the guard keeps them from drawing the whole app again for every upload.
if __name__ == "__main__":
    main()
