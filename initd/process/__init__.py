"""The system tier's processes: spawning and stopping children (spawn, spec, procfs), who
they run as (users, limits), running one command with a capped log (runner, output,
pipes), what a dead child left behind (leftovers, rootleftovers), git, and root's channel to
the hook service."""
