"""A free-cash-flow question and the line items a filing states it in."""

from __future__ import annotations

QUESTION = "What was Acme's free cash flow in 2023?"
LINE_ITEM = "net cash provided by operating activities purchases of property and equipment"
