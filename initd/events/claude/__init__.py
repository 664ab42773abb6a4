"""Claude Code's own rules, beside its loader (dialects/claude.py): its matchers and
``if`` permission rules (matchers, and the shell parsing they need: shellwords, wrappers,
wildcards), what its hooks' exit codes and JSON answers mean (answers), what its hooks read
on stdin (input), and the bounded Stop loop (stoploop)."""
