"""The sidebar's Settings (retrieval, verification, the answering model) and the mode badge above the chat."""

from __future__ import annotations

import streamlit as st

import wiring
from ui import helpers as ui
from ui import resources
from ui import runtime as rt

PROVIDER_LABELS = {"gemini": "Gemini", "local": "Local model"}


def settings_panel(config: wiring.Config) -> rt.Settings:
    """Retrieval, verification and the answering model: Gemini (key field only when the environment has none)
    or a local OpenAI-compatible server (address, model from its list, optional key)."""
    with st.expander("Settings", icon=":material/tune:"):
        in_use = st.empty()  # the mode actually answering, filled once the fields below are read
        settings = _fields(config)
        in_use.markdown(in_use_note(settings))
    return settings


def in_use_note(settings: rt.Settings) -> str:
    """What answers now, as the badge says, and why when it is not what the fields choose (no key yet, no model
    listed, offline chosen)."""
    line = f"**In use:** {ui.md_text(settings.mode_label())}"
    if settings.mode != "offline":
        return line
    if settings.offline:
        return line + " — Offline mode is on."
    if settings.provider == "local":
        return line + " — choose a model your local server lists below for written answers."
    return line + " — add a Gemini API key below for written answers."


def _fields(config: wiring.Config) -> rt.Settings:
    """The Settings' fields, read into this tab's Settings."""
    strategy = st.selectbox("Retrieval strategy", list(rt.STRATEGY_LABELS), format_func=rt.STRATEGY_LABELS.get,
                            key="strategy")
    k = st.slider("Sources per question", 3, 15, 8, key="k")
    verify = st.toggle("Verify every claim against its sources", True, key="verify")
    offline = st.toggle("Offline mode (extractive, no model)", config.provider == "offline", key="offline")
    provider = st.radio("Answer with", list(PROVIDER_LABELS), format_func=PROVIDER_LABELS.get, horizontal=True,
                        index=1 if config.provider == "local" else 0, key="provider", disabled=offline)
    if provider == "local":
        base_url, local_model, local_key = local_fields(config, offline)
        return rt.Settings(strategy=strategy, k=k, verify=verify, model=config.gemini_model,
                           api_key=config.gemini_key, offline=offline, provider="local", local_base_url=base_url,
                           local_model=local_model, local_api_key=local_key)
    if config.gemini_key:
        st.caption("Gemini key: taken from the environment.")
        key = config.gemini_key
    else:
        key = st.text_input("Gemini API key", type="password", key="gemini_key", disabled=offline,
                            help="Kept in this browser tab only: never saved, logged or exported.")
    model = model_select(config, "" if offline else key.strip(), offline)
    return rt.Settings(strategy=strategy, k=k, verify=verify, model=model, api_key=key.strip(), offline=offline)


def local_fields(config: wiring.Config, offline: bool) -> tuple[str, str, str]:
    """Server address, model (from the server's /v1/models, the configured one first) and optional key."""
    base_url = st.text_input("Server address", config.local_base_url, key="local_base_url", disabled=offline,
                             help="An OpenAI-compatible server: Ollama http://127.0.0.1:11434/v1, llama-server "
                                  "http://127.0.0.1:8080/v1 (DOCAGENT_LOCAL_BASE_URL).").strip()
    if config.local_api_key:
        st.caption("Server key: taken from the environment.")
        key = config.local_api_key
    else:
        key = st.text_input("Server API key (optional)", type="password", key="local_api_key", disabled=offline,
                            help="Only for a server that asks for one. Kept in this browser tab only.").strip()
    if offline:
        choices = rt.ModelChoices((config.local_model,) if config.local_model else ())
    else:
        choices = resources.local_catalog().choices(base_url, key, config.local_model)
    if st.session_state.get("local_model") not in choices.models:
        st.session_state.pop("local_model", None)  # a model the server no longer lists: back to the configured one
    model = st.selectbox("Local model", choices.models, key="local_model", disabled=offline or not choices.models,
                         placeholder="no model listed", help="Listed by the server (DOCAGENT_LOCAL_MODEL first). "
                         "Models are never downloaded here: `ollama pull NAME` adds one.")
    if choices.note and not offline:  # md_safe: `ollama serve` shows as code, not as literal backticks
        (st.caption if choices.listed else st.warning)(ui.md_safe(choices.note))
    return base_url, model or "", key


def model_select(config: wiring.Config, key: str, offline: bool) -> str:
    """The Gemini model box: the models this key can use (listed once per key), the configured one first."""
    choices = resources.model_catalog().choices(key, config.gemini_base_url, config.gemini_model)
    if st.session_state.get("model") not in choices.models:
        st.session_state.pop("model", None)  # a model the new list lacks: back to the configured one
    model = st.selectbox("Gemini model", choices.models, key="model", disabled=offline,
                         help="Preselected: DOCAGENT_GEMINI_MODEL, else the current default Flash model.")
    if choices.note and not offline:
        st.caption(choices.note)
    return model


def header(settings: rt.Settings, config: wiring.Config) -> None:
    """Title, the mode badge (always visible) and, without a key, the offline banner."""
    st.title("Docagent", anchor=False)
    if settings.mode == "gemini":
        st.badge(settings.mode_label(), icon=":material/auto_awesome:", color="blue")
    elif settings.mode == "local":
        st.badge(settings.mode_label(), icon=":material/computer:", color="green")
    else:
        st.badge(settings.mode_label(), icon=":material/cloud_off:", color="orange")
    if settings.mode == "offline" and settings.provider == "local" and not settings.offline:
        st.info("**Offline mode** — answers quote the best passages of your documents word for word. Choose a "
                "model your local server lists in the Settings for written answers.", icon=":material/info:")
    elif not settings.api_key and not settings.offline and settings.provider == "gemini":
        where = "the Settings in the sidebar" if not config.gemini_key else "GOOGLE_API_KEY"
        st.info(f"**Offline mode** — answers quote the best passages of your documents word for word. "
                f"Add a Gemini key in {where} for written answers.", icon=":material/info:")
