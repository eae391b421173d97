"""Plain helpers several test files import (fixtures live in the conftest.py files; what tests and benches share
lives in the `testing` package)."""
