#!/usr/bin/env bash
# compose-plugin.sh makes `docker compose` (Compose v2) work where only
# Debian bookworm's docker-compose 1.29 is installed: Compose v2 is not in
# bookworm's packages and no release binary can be downloaded here, but its
# source is a Go module, so this builds the pinned release from the Go module
# proxy (as `go install` would, in a temporary folder, nothing of it in this
# repository) and installs it as the Docker CLI plugin
# ~/.docker/cli-plugins/docker-compose. It does nothing when `docker compose
# version` already answers. `make images` runs it.
#
#   scripts/compose-plugin.sh            build and install when missing
#
# LOCKCHECK_COMPOSE_VERSION overrides the pinned release (default v2.40.3;
# it talks to Docker Engine 20.10 and later). The build takes a few minutes
# of CPU the first time (the module cache keeps the sources).
set -euo pipefail

VERSION=${LOCKCHECK_COMPOSE_VERSION:-v2.40.3}
MODULE=github.com/docker/compose/v2

if docker compose version >/dev/null 2>&1; then
	exit 0
fi
GO=${GO:-go}
if ! command -v "$GO" >/dev/null 2>&1; then
	GO=/usr/local/go/bin/go
fi
if ! command -v "$GO" >/dev/null 2>&1; then
	echo "compose-plugin: go not found: Compose v2 is built from the Go module proxy" >&2
	exit 3
fi
dest=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins
tmp=$(mktemp -d /tmp/lockcheck-compose-XXXXXX)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

echo "compose-plugin: building Docker Compose $VERSION from the Go module proxy (a few minutes, once)" >&2
# Outside any module, so that the download is of the release alone.
dir=$(cd "$tmp" && GOFLAGS=-mod=mod "$GO" mod download -json "$MODULE@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
	echo "compose-plugin: go mod download $MODULE@$VERSION gave no source folder" >&2
	exit 3
fi
# The release is built as its own main module (its go.mod has exclude
# directives, which `go install pkg@version` refuses).
cp -r "$dir" "$tmp/src"
chmod -R u+w "$tmp/src"
(cd "$tmp/src" && "$GO" build -trimpath -ldflags "-w -X $MODULE/internal.Version=$VERSION" -o "$tmp/docker-compose" ./cmd)
mkdir -p "$dest"
mv "$tmp/docker-compose" "$dest/docker-compose"
if ! docker compose version >&2; then
	echo "compose-plugin: $dest/docker-compose was built but docker compose does not answer" >&2
	exit 3
fi
