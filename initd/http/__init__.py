"""The system tier's one HTTP/1.x server: the server (server), its socket (bind) and its
wire format (wire), shared by the control API and root's health endpoint."""
