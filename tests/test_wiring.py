"""wiring: the one reading of the environment (Config), the model choice (which brain the environment names), the
embedder and library it builds."""

from __future__ import annotations

import re

import pytest

import wiring
from agentic_rag import LOCAL_BUDGETS, LocalBrain
from testing.openai_stub import OpenAIStub
from tests.helpers.local_model import KEY, MODEL, MODEL_MODE, QUESTION
from ui.runtime import Settings


def test_config_from_env(tmp_path):
    cfg = wiring.Config.from_env({"DOCAGENT_DATA_DIR": str(tmp_path), "DOCAGENT_FAKE_EMBEDDER": "1",
                                 "GOOGLE_API_KEY": " secret ", "DOCAGENT_GEMINI_BASE_URL": "http://127.0.0.1:9"})
    assert cfg.data_dir == tmp_path and cfg.models == tmp_path / "models" and cfg.fake_embedder
    assert cfg.gemini_key == "secret" and cfg.gemini_base_url == "http://127.0.0.1:9"
    assert "secret" not in repr(cfg)
    default = wiring.Config.from_env({"GEMINI_API_KEY": "k2", "DOCAGENT_MODEL_DIR": str(tmp_path / "m")})
    assert default.data_dir.name == "data" and default.gemini_key == "k2" and default.models == tmp_path / "m"
    assert not default.fake_embedder and default.gemini_base_url is None
    assert default.gemini_model == wiring.DEFAULT_GEMINI_MODEL == Settings().model
    chosen = wiring.Config.from_env({"DOCAGENT_GEMINI_MODEL": " gemini-3.6-flash "})
    assert chosen.gemini_model == "gemini-3.6-flash"


def test_config_reads_the_local_model(tmp_path):
    cfg = wiring.Config.from_env({"DOCAGENT_PROVIDER": " Local ", "DOCAGENT_LOCAL_BASE_URL": "http://127.0.0.1:8080/v1",
                                 "DOCAGENT_LOCAL_MODEL": "qwen2.5:3b", "DOCAGENT_LOCAL_API_KEY": "sk-local"})
    assert (cfg.provider, cfg.local_base_url, cfg.local_model) == ("local", "http://127.0.0.1:8080/v1", "qwen2.5:3b")
    assert cfg.local_api_key == "sk-local" and "sk-local" not in repr(cfg)
    default = wiring.Config.from_env({})
    assert default.provider == "" and default.local_base_url == wiring.DEFAULT_LOCAL_BASE_URL
    assert wiring.Config.from_env({"DOCAGENT_PROVIDER": "ollama"}).provider == ""  # shown unselected, not a crash


def test_config_keeps_the_chroma_settings_and_the_conversations_path(tmp_path):
    cfg = wiring.Config.from_env({"DOCAGENT_DATA_DIR": str(tmp_path), "CHROMA_HOST": "127.0.0.1", "OTHER": "x"})
    assert cfg.chroma == {"CHROMA_HOST": "127.0.0.1"}
    assert cfg.conversations == tmp_path / "conversations.sqlite3"
    assert wiring.Config.from_env({}, data_dir=tmp_path / "given").data_dir == tmp_path / "given"


def test_the_fake_embedder_and_the_library_come_from_the_configuration(tmp_path):
    from vector_db import HashingEmbedder

    cfg = wiring.Config.from_env({"DOCAGENT_DATA_DIR": str(tmp_path), "DOCAGENT_FAKE_EMBEDDER": "yes"})
    assert isinstance(wiring.make_embedder(cfg), HashingEmbedder)
    kb = wiring.open_library(cfg)
    try:
        assert kb.documents() == [] and (tmp_path / "chroma").is_dir()
    finally:
        kb.close()


def test_a_gemini_model_config_carries_the_stub_address():
    cfg = wiring.Config.from_env({"GOOGLE_API_KEY": "k", "DOCAGENT_GEMINI_BASE_URL": "http://127.0.0.1:9"})
    model = wiring.model_config(cfg, gemini_model="gemini-x")
    assert (model.provider, model.gemini_model, model.gemini_base_url) == ("gemini", "gemini-x", "http://127.0.0.1:9")
    assert model.gemini_key == "k" and "gemini_key" not in repr(model)
    with pytest.raises(ValueError, match="GOOGLE_API_KEY"):
        wiring.model_config(wiring.Config.from_env({}), provider="gemini")


@pytest.fixture
def stub():
    with OpenAIStub() as server:
        yield server


def test_wiring_answers_with_the_local_model_the_environment_names(stub, corpus, fake_embedder):
    env = {"DOCAGENT_PROVIDER": "local", "DOCAGENT_LOCAL_BASE_URL": stub.base_url, "DOCAGENT_LOCAL_MODEL": MODEL,
           "DOCAGENT_LOCAL_API_KEY": KEY}
    agent = wiring.make_agent(_Library(corpus), fake_embedder, wiring.Config.from_env(env))
    assert isinstance(agent.brain, LocalBrain) and agent.budgets == LOCAL_BUDGETS
    assert agent.brain.label() == f"Local · {MODEL} @ {stub.base_url.split('/')[2]}"
    result = agent.ask(QUESTION)
    assert result.mode == MODEL_MODE and result.warnings == () and {r.api_key for r in stub.requests} == {KEY}
    offline = wiring.make_agent(_Library(corpus), fake_embedder, wiring.Config.from_env(env), provider="offline")
    assert offline.mode == "offline"


@pytest.mark.parametrize("env, provider", [({}, "offline"), ({"DOCAGENT_PROVIDER": "Offline"}, "offline"),
                                           ({"DOCAGENT_PROVIDER": "gemini"}, "gemini")])
def test_the_provider_defaults_to_gemini_with_a_key(env, provider):
    keyed = wiring.Config.from_env({**env, "GOOGLE_API_KEY": "k"})
    assert wiring.model_config(keyed).provider == ("gemini" if not env else provider)
    assert wiring.model_config(wiring.Config.from_env({})).provider == "offline"


@pytest.mark.parametrize("env, words", [({"DOCAGENT_PROVIDER": "ollama"}, "allowed: gemini, local, offline"),
                                        ({"DOCAGENT_PROVIDER": "local"}, "DOCAGENT_LOCAL_MODEL"),
                                        ({"DOCAGENT_PROVIDER": "gemini"}, "GOOGLE_API_KEY")])
def test_bad_provider_configuration_names_what_is_allowed(env, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        wiring.model_config(wiring.Config.from_env(env))


class _Library:
    """What make_agent needs of a knowledge base: its retriever and its tables (none here)."""

    def __init__(self, retriever):
        self.retriever = retriever
        self.tables = None


def test_the_embedding_runtime_comes_from_the_configuration(tmp_path, monkeypatch):
    import vector_db

    made = []
    monkeypatch.setattr(vector_db, "OnnxEmbedder", lambda models, **options: made.append((models, options)))
    for value, runtime in (("onnxruntime", "onnxruntime"), ("OpenVINO-bf16", "openvino-bf16"), ("", None)):
        config = wiring.Config.from_env({"DOCAGENT_DATA_DIR": str(tmp_path), "DOCAGENT_EMBED_RUNTIME": value})
        wiring.make_embedder(config)
        assert made[-1] == (tmp_path / "models", {"runtime": runtime})
