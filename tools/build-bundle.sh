#!/usr/bin/env bash
# make bundle: initd's wheels (built on the host), the self-contained /opt/initd made from
# them and Debian's Python (images/bundle/build.py), and localhost/initd-bundle:dev, an
# image FROM scratch holding only that, for COPY --from (its tag: INITD_IMAGE_TAG, dev by
# default). No registry, no network.
set -euo pipefail
python=${1:?usage: build-bundle.sh PYTHON}
cd "$(dirname "$0")/.."
rm -rf build/wheels
"$python" -m pip wheel --quiet --wheel-dir build/wheels .
"$python" images/bundle/build.py build/bundle build/wheels
podman build --quiet --network=none -t "localhost/initd-bundle:${INITD_IMAGE_TAG:-dev}" \
  -f images/bundle/Containerfile build/bundle >/dev/null
