"""ui.runtime: per-tab settings, the model catalogs, background calls, the main script's imports."""

from __future__ import annotations

import wiring
from ui import runtime as rt


def test_settings_mode_and_label_hide_the_key():
    assert rt.Settings().mode == "offline" and rt.Settings().mode_label() == "Offline (extractive)"
    gemini = rt.Settings(api_key="AIza-secret", model="gemini-2.5-pro")
    assert gemini.mode == "gemini" and gemini.mode_label() == "Gemini · gemini-2.5-pro"
    assert rt.Settings(api_key="AIza-secret", offline=True).mode == "offline"
    assert "AIza-secret" not in repr(gemini)


def test_background_call_hands_events_over_in_order_and_keeps_errors():
    def work(post):
        for i in range(3):
            post(("event", i))
        return "done"

    call = rt.BackgroundCall(work)
    assert list(call.events(poll=0.01)) == [("event", 0), ("event", 1), ("event", 2)]
    assert call.result == "done" and call.error is None

    def fail(post):
        post("before")
        raise ValueError("boom")

    call = rt.BackgroundCall(fail)
    assert list(call.events(poll=0.01)) == ["before"]
    assert isinstance(call.error, ValueError) and call.result is None


def test_main_script_imports_traces_from_imports_to_their_module():
    import sys
    import types

    main = types.ModuleType("fake_launcher")
    exec("import json\nfrom textwrap import dedent\nclass Local: pass\nLIMIT = 3", main.__dict__)
    modules = {**sys.modules, "fake_launcher": main}
    assert rt.main_script_imports(main, modules) == ("json", "textwrap")


def test_the_parse_fork_server_imports_the_page_even_when_make_run_opens_the_library_first():
    """`make run` (python -m ui.serve) opens the library, so starts the parser's fork server, before Streamlit has
    run app.py; each parse child then runs app.py and would import the page itself (~2.2 s a file)."""
    import sys

    import ui.serve

    preload = rt.parse_preload(ui.serve, sys.modules)
    assert preload[:2] == ("ui.parse_children", "ui.page") and len(set(preload)) == len(preload)
    app_main = type(sys)("__main__")  # what Streamlit makes of app.py
    exec("from ui.page import main", app_main.__dict__)
    assert rt.parse_preload(app_main, sys.modules) == ("ui.parse_children", "ui.page")


def test_the_parse_children_module_quiets_only_streamlits_no_runtime_warning():
    import logging
    import subprocess
    import sys

    from tests.helpers.paths import REPO

    code = ("import ui.parse_children, ui.page, logging\n"
            "print(logging.getLogger('streamlit.runtime.caching.cache_data_api').level, "
            "logging.getLogger('streamlit').level <= logging.WARNING)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(logging.ERROR), "True"]
    assert "No runtime found" not in done.stderr


def test_strategy_labels_cover_every_strategy():
    from advanced_retrieval import STRATEGIES

    assert tuple(rt.STRATEGY_LABELS) == STRATEGIES


def test_key_fingerprint_tells_keys_apart_without_holding_them():
    assert rt.key_fingerprint("") == "" and len(rt.key_fingerprint("abc")) == 12
    assert rt.key_fingerprint("abc") != rt.key_fingerprint("abd") and "abc" not in rt.key_fingerprint("abc")


class Lister:
    """A models.list stand-in: answers from a script (a tuple, or an exception) and counts the calls."""

    def __init__(self, *answers):
        self.answers, self.calls = list(answers), []

    def __call__(self, api_key, base_url=None):
        self.calls.append((api_key, base_url))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_model_catalog_lists_once_per_key_with_the_configured_model_first():
    lister = Lister(("gemini-3.8-flash", "gemini-3.6-flash"), ("gemini-3.1-pro-preview",))
    catalog = rt.ModelCatalog(lister)
    first = catalog.choices("key-a", None, "gemini-3.6-flash")
    assert first.models == ("gemini-3.6-flash", "gemini-3.8-flash") and first.listed
    assert "2 models" in first.note
    assert catalog.choices("key-a", None, "gemini-3.6-flash") == first and len(lister.calls) == 1  # cached
    other = catalog.choices("key-b", "http://127.0.0.1:9", "gemini-3.8-flash")
    assert other.models == ("gemini-3.8-flash", "gemini-3.1-pro-preview")  # the configured one stays offered
    assert lister.calls[1] == ("key-b", "http://127.0.0.1:9")
    assert "key-a" not in repr(catalog.__dict__)  # entries are keyed by the key's fingerprint


def test_model_catalog_falls_back_and_asks_again_later():
    from agentic_rag import ModelListError

    now = [0.0]
    lister = Lister(ModelListError("Gemini's model list could not be reached (connection failed)"),
                    ("gemini-3.8-flash",))
    catalog = rt.ModelCatalog(lister, failed_ttl=60.0, clock=lambda: now[0])
    failed = catalog.choices("key", None, wiring.DEFAULT_GEMINI_MODEL)
    assert failed.models == wiring.FALLBACK_GEMINI_MODELS and not failed.listed
    assert "could not be reached" in failed.note and "built-in list" in failed.note
    now[0] = 30.0
    assert catalog.choices("key", None, "") == failed and len(lister.calls) == 1  # not asked on every rerun
    now[0] = 61.0
    assert catalog.choices("key", None, "").listed and len(lister.calls) == 2


def test_model_catalog_without_a_key_offers_the_built_in_list():
    lister = Lister()
    choices = rt.ModelCatalog(lister).choices("", None, "gemini-custom")
    assert choices.models == ("gemini-custom", *wiring.FALLBACK_GEMINI_MODELS) and lister.calls == []


def test_settings_mode_and_label_for_a_local_model():
    local = rt.Settings(provider="local", local_base_url="http://127.0.0.1:11434/v1", local_model="llama3.2",
                        local_api_key="sk-local")
    assert local.mode == "local" and local.mode_label() == "Local · llama3.2 @ 127.0.0.1:11434"
    assert "sk-local" not in repr(local)
    assert rt.Settings(provider="local", local_base_url="http://127.0.0.1:11434/v1").mode == "offline"  # no model
    assert rt.Settings(provider="local", local_model="llama3.2", local_base_url="x", offline=True).mode == "offline"


def test_local_model_catalog_lists_per_server_and_says_why_when_it_cannot():
    from agentic_rag import ModelListError

    now = [0.0]
    lister = ServerLister(("llama3.2", "qwen2.5:3b"),
                          ModelListError("The server at 127.0.0.1:9 could not be reached"), ())
    catalog = rt.LocalModelCatalog(lister, ttl=30.0, failed_ttl=10.0, clock=lambda: now[0])
    first = catalog.choices("http://127.0.0.1:11434/v1", "", "qwen2.5:3b")
    assert first.models == ("qwen2.5:3b", "llama3.2") and first.listed and "2 models" in first.note
    assert catalog.choices("http://127.0.0.1:11434/v1", "", "qwen2.5:3b") == first and len(lister.calls) == 1
    down = catalog.choices("http://127.0.0.1:9/v1", "sk-secret", "llama3.2")
    assert down.models == ("llama3.2",) and not down.listed and "could not be reached" in down.note
    assert "sk-secret" not in repr(catalog.__dict__)
    now[0] = 11.0
    empty = catalog.choices("http://127.0.0.1:9/v1", "sk-secret", "")
    assert empty.models == () and "ollama pull" in empty.note and len(lister.calls) == 3


class ServerLister(Lister):
    """list_local_models' stand-in: (base_url, api_key=...)."""

    def __call__(self, base_url, api_key=""):
        return super().__call__(api_key, base_url)
