"""What the tests and the benchmarks both run, so that neither imports the other: local stub servers for Gemini
and OpenAI-compatible models, a real Chroma server, the kill-and-restart steps (crash) and the damaged-store steps
(damage). Not product code: nothing in the app, the CLI or the engines imports it."""
