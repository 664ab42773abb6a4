"""The hook service: file-hook evaluation behind a control API on a Unix socket."""
