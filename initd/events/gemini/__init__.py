"""Gemini CLI's own rules: where its settings files are and which of their hooks run
(settings.py), what its hooks' answers mean (answers.py), and how Gemini CLI calls initd
and reads its answer (wires/gemini.py). The format itself is dialects/gemini.py."""
