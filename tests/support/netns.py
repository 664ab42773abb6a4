"""``netns.py CMD...``: the loopback interface up, then CMD in this process's place. The
first process of a new network namespace (``unshare --net``) runs it: there ``lo`` is
down, and no other suite's ports, nor this host's connection tracking, are shared. A
test that makes connections as fast as it can runs there: on the host's own network each
one would leave an entry in the conntrack table for two minutes, and filling it (262,144
here) drops every connection's packets, other suites' too (tests/support/flood.py).

The flags are set with the ioctls ``ip link set lo up`` makes, so no iproute2 is needed.
"""

from __future__ import annotations

import fcntl
import os
import socket
import struct
import sys

SIOCGIFFLAGS, SIOCSIFFLAGS = 0x8913, 0x8914  # <linux/sockios.h>
IFF_UP = 0x1  # <net/if.h>
IFREQ = "16sh22x"  # struct ifreq: a name of IFNAMSIZ bytes, then ifr_flags (40 bytes)


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        _, flags = struct.unpack(IFREQ, fcntl.ioctl(sock, SIOCGIFFLAGS,
                                                    struct.pack(IFREQ, b"lo", 0)))
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack(IFREQ, b"lo", flags | IFF_UP))


if __name__ == "__main__":
    loopback_up()
    os.execvp(sys.argv[1], sys.argv[1:])
