#!/usr/bin/env bash
# make image / make e2e: podman, runc and mmdebstrap, and a containers.conf this machine
# needs, installed when run as root on Debian. Exits non-zero with one line saying why
# when containers cannot run here (make test then skips the container tests, and says so).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/system-packages.sh" podman runc mmdebstrap uidmap catatonit
conf=/etc/containers/containers.conf
if [ ! -e "$conf" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "no $conf, and only root can write it (runtime runc, ulimits)" >&2; exit 1
  fi
  # crun refuses hybrid cgroups (v1 + v2) and the default ulimits need CAP_SYS_RESOURCE,
  # which this kind of machine lacks: runc, and ulimits inside what it allows.
  mkdir -p /etc/containers
  cat > "$conf" <<'CONF'
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=16384:16384"]
[engine]
runtime = "runc"
CONF
  echo "wrote $conf (runtime runc, ulimits nofile/nproc 16384)" >&2
fi
podman info >/dev/null 2>&1 || { echo "podman is installed but cannot run here: podman info fails" >&2; exit 1; }
