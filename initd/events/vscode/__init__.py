"""VS Code's agent hooks (its Local harness): where its hook files are (places.py), how its
agent calls initd (wire.py) and what a VS Code hook's answer means (answers.py); the
format itself is events/dialects/vscode.py (docs/vscode.md)."""
