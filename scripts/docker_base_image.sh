#!/usr/bin/env bash
# Build a Python 3.11 base image for the Dockerfile from Debian packages alone, for machines that
# reach Debian's mirror and PyPI but not Docker Hub:
#   sudo bash scripts/docker_base_image.sh            # → image aeh-base/debian-python:3.11
#   docker build --build-arg BASE=aeh-base/debian-python:3.11 -t aeh .
#   AEH_BASE_IMAGE=aeh-base/debian-python:3.11 docker compose run --rm harness tasks validate
# When this machine reaches PyPI through a TLS-inspecting proxy, its CA bundle ($SSL_CERT_FILE) is
# copied into the image and named in PIP_CERT / SSL_CERT_FILE, so pip and uv inside trust it too.
set -euo pipefail
IMAGE="${1:-aeh-base/debian-python:3.11}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
command -v debootstrap >/dev/null || { echo "needs debootstrap: apt-get install debootstrap" >&2; exit 2; }
ROOTFS="$(mktemp -d)"
trap 'rm -rf "$ROOTFS"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$ROOTFS" "$MIRROR" >/dev/null
CHANGES=()
if [ -n "${SSL_CERT_FILE:-}" ] && [ -f "$SSL_CERT_FILE" ]; then
  cp "$SSL_CERT_FILE" "$ROOTFS/etc/ssl/certs/host-ca-bundle.crt"
  for var in PIP_CERT SSL_CERT_FILE REQUESTS_CA_BUNDLE; do
    CHANGES+=(-c "ENV $var=/etc/ssl/certs/host-ca-bundle.crt")
  done
fi
tar -C "$ROOTFS" -c . | docker import "${CHANGES[@]}" - "$IMAGE" >/dev/null
echo "$IMAGE"
