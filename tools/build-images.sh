#!/usr/bin/env bash
# make image: initd's base image, the demo image and the bundle, with no registry and no
# network in the build: bases from Debian packages (mmdebstrap | podman import), initd
# and its dependencies as wheels built on the host by the venv's Python (Debian's, the
# same version as the base's), then podman build --network=none.
set -euo pipefail
python=${1:?usage: build-images.sh PYTHON}
# INITD_IMAGE_TAG: the tag of the three images (dev by default; a branch's own, so that a
# build beside another checkout's leaves that one's images alone)
tag=${INITD_IMAGE_TAG:-dev}
cd "$(dirname "$0")/.."

# base NAME PACKAGES [SUITE]: a Debian minbase with PACKAGES, made once (about a minute)
base() {
  if ! podman image exists "$1"; then
    echo "building $1 from Debian packages (mmdebstrap, about a minute)" >&2
    mmdebstrap --quiet --variant=minbase --include="$2" "${3:-bookworm}" - \
      | podman import --quiet - "$1" >/dev/null
  fi
}
base localhost/initd-base:bookworm python3,python3-venv,ca-certificates,git,procps
# the agent images tests/e2e/test_adoption.py adds initd to, as the README shows: a Node
# image and a bare one, neither with Python (and initd's own base, above)
base localhost/initd-base-node:bookworm nodejs,ca-certificates,git
base localhost/initd-base-minimal:bookworm ca-certificates,git
# and the newest Debian (glibc 2.41), for "and newer"
base localhost/initd-base-trixie:trixie ca-certificates,git trixie

tools/build-bundle.sh "$python"  # the wheels too
podman build --quiet --network=none --build-arg "BASE=localhost/initd-base:bookworm" \
  -t "localhost/initd:$tag" -f Containerfile . >/dev/null
podman build --quiet --network=none --build-arg "INITD_IMAGE=localhost/initd:$tag" \
  -t "localhost/initd-demo:$tag" -f images/demo/Containerfile images/demo >/dev/null
podman image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' \
  | grep -E "localhost/initd(-demo|-bundle)?:$tag "
