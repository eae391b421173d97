"""Docagent's web page (Streamlit): the chat, the library, the evaluate page, the answer and source views.

`streamlit` is imported only in this package. Modules: page (assembly), chat, library (uploads, the document
list), evaluate, sources (the source viewer tab), settings, resources (the shared heavy objects), session (a tab's
state), seams (what the UI needs from the library and the engine), and the streamlit-free helpers: helpers,
answer_view, source_viewer, runtime. `app.py` at the top level is the entry Streamlit runs.
"""
