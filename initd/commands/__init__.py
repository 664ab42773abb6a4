"""The verbs: ``initd hooks …``. Each is a function that returns an exit code."""
