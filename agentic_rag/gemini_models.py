"""The Gemini models an API key may use for answers, from google-genai's models.list.

Kept are the models that support generateContent and write text: Gemini models other than the embedding,
speech, image, live/audio, robotics and computer-use ones. A failure raises ModelListError with a reason that is
safe to show (the key is scrubbed from it).
"""

from __future__ import annotations

import re

from agentic_rag.gemini_call import describe, remote_errors, scrub

LIST_TIMEOUT_SECONDS = 5.0
_NOT_FOR_ANSWERS = re.compile(r"embedding|tts|image|live|audio|robotics|computer-use|omni|veo|imagen|aqa",
                              re.IGNORECASE)


class ModelListError(Exception):
    """The model list could not be fetched; `reason` is safe to show."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def list_gemini_models(api_key: str, *, base_url: str | None = None,
                       timeout: float = LIST_TIMEOUT_SECONDS) -> tuple[str, ...]:
    """Names ('gemini-3.8-flash', ...) of the text Gemini models `api_key` can call, in the service's order.

    Raises:
        ValueError: no key.
        ModelListError: the service could not be asked or refused (bad key, offline, timeout).
    """
    if not api_key:
        raise ValueError("listing models needs a Gemini API key")
    from google import genai
    from google.genai import types

    options = types.HttpOptions(base_url=base_url, timeout=int(timeout * 1000),
                                retry_options=types.HttpRetryOptions(attempts=1))
    try:
        client = genai.Client(api_key=api_key, http_options=options)
        models = list(client.models.list(config={"page_size": 100}))
    except remote_errors() as exc:
        raise ModelListError(scrub(f"Gemini's model list {describe(exc, timeout)}", (api_key,))) from exc
    return tuple(dict.fromkeys(name for m in models if (name := answer_model(m.name, m.supported_actions))))


def answer_model(name: str | None, actions) -> str:
    """The short name of a model that can write answers, or '' for one that cannot."""
    short = (name or "").removeprefix("models/")
    if not short.startswith("gemini") or "generateContent" not in (actions or ()):
        return ""
    return "" if _NOT_FOR_ANSWERS.search(short) else short
