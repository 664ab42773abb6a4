"""The system tier's configuration: settings and how their text becomes values, the
default paths, YAML and JSONC the agent may have written, parsed safely, and initd's own
log."""
