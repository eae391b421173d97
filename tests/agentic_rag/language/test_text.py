"""agentic_rag.language.text: sentences, numbers and the question's language."""

from __future__ import annotations

from agentic_rag.checks.citations import cited_ids
from agentic_rag.language.text import detect_language, numbers, sentences


def test_sentences_keep_their_citation_and_numbers_normalise():
    assert sentences("Revenue rose 5%. [P2] Profit fell. Next line\nTable | 3") == [
        "Revenue rose 5%. [P2]", "Profit fell.", "Next line", "Table | 3"]
    assert numbers("It cost $1,200.50 in 2023 [P4], i.e. 3.0 units") == {"1200.5", "2023", "3"}
    assert cited_ids("a [P2] b [P1, P2] c [P3][P1] d [11]") == (2, 1, 3)
    assert detect_language("Wie hoch war der Umsatz im Jahr 2023?") == "de"
    assert detect_language("What was the revenue in 2023?") == "en"
