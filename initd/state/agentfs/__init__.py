"""The only way root touches a tree the agent can write (ARCHITECTURE.md, invariant 8).

After boot the agent is hostile, and it owns its home and the workspace: any name there
may be a symbolic link to /etc/shadow, a hard link to a root file, a FIFO, a 100 MB file,
or be swapped for one of those between a check and a use. So root never opens a path
there by name. It walks to a directory from a base it trusts (the agent's home as passwd
says, the workspace as configured, root's own directories), one component at a time with
O_NOFOLLOW, so a link on the way is refused, never followed; then it works only relative
to that directory's descriptor:

- it reads only regular files that are the tree owner's (fstat on the open descriptor),
  opened non-blocking (a FIFO cannot hang it), never past a size limit;
- it writes only files it has just created under a random name (O_CREAT|O_EXCL|
  O_NOFOLLOW), gives them to the owner with fchown on the descriptor, and renames them
  into place (a link at the final name is replaced, never written through); a link it
  makes is given to the owner inside a 0700 staging directory of root's, then moved;
- it renames and removes names only inside that directory, and never changes the owner
  of anything it did not make, except a root-owned directory on the walk itself.

The hook service, which runs as the agent, uses the same functions: the rules cost an
unprivileged process nothing, and keep one code path for every writer of a state file.
Nothing else in initd changes an owner (a test greps for it).

One package, so that the door stays one however it is cut: ``common`` holds the flags,
Unsafe and the primitives every part uses; ``place`` walks to a directory; ``directory``
works inside one, relative to its descriptor; ``byname`` has the two calls that take a
path as named; ``scratch`` makes a file no name leads to. Callers use the names below,
from here.
"""

from __future__ import annotations

from initd.state.agentfs.byname import give_group, give_socket, read_regular
from initd.state.agentfs.common import DIRECTORY, LINKS, NEW, READ, Owner, Unsafe, refused_chowns
from initd.state.agentfs.directory import Dir
from initd.state.agentfs.place import Place, below
from initd.state.agentfs.scratch import unnamed

__all__ = ["DIRECTORY", "LINKS", "NEW", "READ", "Dir", "Owner", "Place", "Unsafe",
           "below", "give_group", "give_socket", "read_regular", "refused_chowns", "unnamed"]
