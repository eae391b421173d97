"""Language tools the engine uses without a model: words and sentences (`text`), what a question asks for as
weighted concepts (`concepts`), rules that classify, rewrite and split a question (`question_rules`), which
passage windows answer it (`quotes`), and an embedder that remembers its vectors (`meaning`)."""
