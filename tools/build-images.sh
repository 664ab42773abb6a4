#!/usr/bin/env bash
# make image: initd's base image and the demo image, with no registry and no network in
# the build: the base from Debian packages (mmdebstrap | podman import), initd and its
# dependencies as wheels built on the host by the venv's Python (Debian's, the same
# version as the base's), then podman build --network=none.
set -euo pipefail
python=${1:?usage: build-images.sh PYTHON}
cd "$(dirname "$0")/.."
base=localhost/initd-base:bookworm
if ! podman image exists "$base"; then
  echo "building $base from Debian packages (mmdebstrap, about a minute)" >&2
  mmdebstrap --quiet --variant=minbase \
    --include=python3,python3-venv,ca-certificates,git,procps bookworm - \
    | podman import --quiet - "$base" >/dev/null
fi
rm -rf build/wheels
"$python" -m pip wheel --quiet --wheel-dir build/wheels .
podman build --quiet --network=none --build-arg "BASE=$base" -t localhost/initd:dev \
  -f Containerfile . >/dev/null
podman build --quiet --network=none --build-arg INITD_IMAGE=localhost/initd:dev \
  -t localhost/initd-demo:dev -f images/demo/Containerfile images/demo >/dev/null
podman image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E 'localhost/initd(-demo)?:dev'
