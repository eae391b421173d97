"""document_processor.limits: bad limits name the rule."""

from __future__ import annotations

import pytest

from document_processor import Limits


@pytest.mark.parametrize("kwargs", [{"chunk_chars": 10}, {"overlap_chars": 900}, {"timeout_s": 0}, {"max_bytes": -1},
                                    {"max_memory_mb": 10}, {"max_zip_ratio": "big"}])
def test_bad_limits_raise_value_error_naming_the_rule(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        Limits(**kwargs)
