"""devcontainer.json: the file found and read (file, model, config), the environment and
users its commands get (env, procenv, users), and its lifecycle stages run before and after
the agent starts (lifecycle, markers, daemons)."""
