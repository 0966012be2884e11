#!/usr/bin/env bash
# images.sh builds lockcheck's container images with no registry: a minimal
# Debian bookworm root filesystem made by debootstrap from the machine's own
# apt mirror, imported as the base image, and one image per lock service
# built on it from the Dockerfiles in docker/ with Debian's packages.
#
#   scripts/images.sh [build] [NAME...]  build the named images (default: all
#                                        but check)
#   scripts/images.sh env                print the image variables (for
#                                        docker-compose --env-file)
#   scripts/images.sh list               print the image names, one per line
#   scripts/images.sh clean              remove lockcheck's images (by label)
#
# NAME is a short name of containers/images.txt (base redis zookeeper
# postgres mariadb etcd, or check: the matrix cell image, the check binary
# on the zookeeper image, docs/scale.md).
#
# Image names are variables, read by this script and by docker-compose.yml:
# LOCKCHECK_<NAME>_IMAGE names a whole image, else it is
# $LOCKCHECK_IMAGE_PREFIX (default "lockcheck") / the name:tag that
# containers/images.txt gives (this script reads the prefix; compose reads
# the per-image variables, which `scripts/images.sh env` prints).
#
# The apt mirror is read from the machine's apt sources (/etc/apt/sources.list
# and /etc/apt/sources.list.d/) at build time, or from LOCKCHECK_DEBIAN_MIRROR
# for debootstrap; it is never written into the repository. The base root
# filesystem is cached as a tarball under $LOCKCHECK_CACHE (default
# ~/.cache/lockcheck/images); an image whose inputs did not change (its
# org.lockcheck.hash label) is not rebuilt, so a second run takes seconds.
# Every image carries the label org.lockcheck.image=1.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PREFIX=${LOCKCHECK_IMAGE_PREFIX:-lockcheck}
SUITE=bookworm
CACHE=${LOCKCHECK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lockcheck/images}
LABEL=org.lockcheck.image=1
# The images, their default names and build order come from one list,
# containers/images.txt, which the Go code embeds too.
LIST=$ROOT/containers/images.txt
# ALL: every image but check (the matrix cell image, built only when asked).
mapfile -t ALL < <(awk '!/^#/ && NF == 2 && $1 != "check" { print $1 }' "$LIST")

var_of() { echo "LOCKCHECK_$(echo "$1" | tr a-z A-Z)_IMAGE"; }

image_of() {
	local def var
	def=$(awk -v n="$1" '!/^#/ && NF == 2 && $1 == n { print $2 }' "$LIST")
	if [ -z "$def" ]; then
		echo "images.sh: unknown image $1 (one of: ${ALL[*]} check; see containers/images.txt)" >&2
		return 1
	fi
	var=$(var_of "$1")
	echo "${!var:-$PREFIX/$def}"
}

log() { printf 'images: %s\n' "$*" >&2; }

# source_files lists the machine's enabled apt source files.
source_files() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && echo "$f"
	done
	return 0
}

# debian_mirror prints the URI of the first source that serves the suite's
# main component (one-line or deb822 format).
debian_mirror() {
	if [ -n "${LOCKCHECK_DEBIAN_MIRROR:-}" ]; then
		echo "$LOCKCHECK_DEBIAN_MIRROR"
		return
	fi
	local f m
	for f in $(source_files); do
		case $f in
		*.sources)
			m=$(awk -v suite="$SUITE" '
				function flush() { if (!done && types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") && uris != "") { split(uris, u, " "); print u[1]; done = 1; exit } types = suites = uris = "" }
				/^[ \t]*$/ { flush(); next }
				/^Types:/ { sub(/^Types:[ \t]*/, ""); types = $0 }
				/^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
				/^URIs:/ { sub(/^URIs:[ \t]*/, ""); uris = $0 }
				END { flush() }' "$f")
			;;
		*)
			m=$(sed -E 's/\[[^]]*\]//' "$f" | awk -v suite="$SUITE" '$1 == "deb" && $3 == suite { print $2; exit }')
			;;
		esac
		if [ -n "$m" ]; then
			echo "$m"
			return
		fi
	done
	echo "images.sh: no apt source for Debian $SUITE found in /etc/apt; set LOCKCHECK_DEBIAN_MIRROR" >&2
	return 1
}

# source_hosts prints the host names of every URI in the apt sources.
source_hosts() {
	source_files | xargs cat | grep -oE '(https?)://[^/ ]+' | sed -E 's#^[a-z]+://##; s#:[0-9]+$##' | sort -u
}

# add_host_flags pins each source host to the address the machine resolves
# it to, so a build container reaches the same mirror the host does.
add_host_flags() {
	local h ip
	for h in $(source_hosts); do
		ip=$(getent ahostsv4 "$h" 2>/dev/null | awk 'NR == 1 { print $1 }') || true
		[ -n "$ip" ] && printf -- '--add-host=%s:%s\n' "$h" "$ip"
	done
	return 0
}

hash_of() { sha256sum | cut -c1-16; }

# image_hash prints the org.lockcheck.hash label of an existing image.
image_hash() {
	docker image inspect --format '{{ index .Config.Labels "org.lockcheck.hash" }}' "$1" 2>/dev/null || true
}

build_base() {
	local name hash tarball mirror tmp
	name=$(image_of base)
	mirror=$(debian_mirror)
	# The mirror is not part of the hash: the same packages from another
	# mirror make the same image.
	hash=$(printf '%s\n' "$SUITE" minbase "$(cat "$0" | sed -n '/^build_base()/,/^}/p')" | hash_of)
	if [ "$(image_hash "$name")" = "$hash" ]; then
		log "$name is up to date"
		return
	fi
	mkdir -p "$CACHE"
	tarball=$CACHE/debian-$SUITE-minbase-$hash.tar
	if [ ! -s "$tarball" ]; then
		tmp=$(mktemp -d "${TMPDIR:-/tmp}/lockcheck-rootfs.XXXXXX")
		# shellcheck disable=SC2064
		trap "rm -rf '$tmp'" EXIT
		log "debootstrap --variant=minbase $SUITE (from the machine's apt mirror) into $tmp"
		debootstrap --variant=minbase "$SUITE" "$tmp/root" "$mirror" >"$tmp/debootstrap.log" 2>&1 || {
			tail -n 30 "$tmp/debootstrap.log" >&2
			return 1
		}
		# No mirror in the image (each service build brings the machine's
		# sources in and takes them out again), no package cache, and no
		# service started by a package's postinst during a build.
		rm -f "$tmp/root/etc/apt/sources.list"
		rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"* "$tmp/root/var/log/"*.log
		printf '#!/bin/sh\nexit 101\n' >"$tmp/root/usr/sbin/policy-rc.d"
		chmod 755 "$tmp/root/usr/sbin/policy-rc.d"
		printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$tmp/root/etc/apt/apt.conf.d/90lockcheck-norecommends"
		tar --numeric-owner -C "$tmp/root" -cf "$tarball.part" .
		mv "$tarball.part" "$tarball"
		rm -rf "$tmp"
		trap - EXIT
	else
		log "using cached root filesystem $tarball"
	fi
	log "docker import $tarball as $name"
	docker import \
		--change "LABEL $LABEL" \
		--change "LABEL org.lockcheck.hash=$hash" \
		--change 'ENV LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive' \
		--change 'CMD ["/bin/bash"]' \
		"$tarball" "$name" >/dev/null
}

# build_service builds docker/<name>/ on the base image in a temporary build
# context that also holds the machine's apt sources and the clock shim.
build_service() {
	local svc=$1 name base ctx hash hosts
	name=$(image_of "$svc")
	base=$(image_of base)
	[ -f "docker/$svc/Dockerfile" ] || { echo "images.sh: docker/$svc/Dockerfile missing" >&2; return 1; }
	ctx=$(mktemp -d "${TMPDIR:-/tmp}/lockcheck-build-$svc.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$ctx'" EXIT
	cp -a "docker/$svc/." "$ctx/"
	# What every image's RUN starts with (the apt sources in and out again).
	cp docker/install-packages.sh "$ctx/install-packages.sh"
	mkdir -p "$ctx/apt/sources.list.d" "$ctx/apt/apt.conf.d"
	local f i=0
	for f in $(source_files); do
		i=$((i + 1))
		case $f in
		*.sources) cp "$f" "$ctx/apt/sources.list.d/lockcheck-build-$i.sources" ;;
		*) cp "$f" "$ctx/apt/sources.list.d/lockcheck-build-$i.list" ;;
		esac
	done
	# The machine's acquire settings (a snapshot mirror's expired Release
	# dates, a proxy) go along with its sources.
	apt-config dump 2>/dev/null | grep -E '^Acquire::(Check-Valid-Until|Check-Date|https?::Proxy) ' >"$ctx/apt/apt.conf.d/99lockcheck-build" || true
	make --no-print-directory -s shim >/dev/null
	cp bin/libclockshim.so "$ctx/libclockshim.so"
	local from=$base
	if [ "$svc" = check ]; then
		# The cell image: this checkout's check binary on the zookeeper image.
		from=$(image_of zookeeper)
		docker image inspect "$from" >/dev/null 2>&1 || { echo "images.sh: $from missing: build zookeeper first" >&2; return 1; }
		PATH=$PATH:/usr/local/go/bin go build -o "$ctx/check" ./cmd/check
	fi
	hash=$( { image_hash "$from"; (cd "$ctx" && find . -type f ! -path './apt/*' -print0 | sort -z | xargs -0 sha256sum); } | hash_of)
	if [ "$(image_hash "$name")" = "$hash" ]; then
		log "$name is up to date"
		rm -rf "$ctx"
		trap - EXIT
		return
	fi
	# The labels as one instruction (each --label would be a layer commit).
	printf '\nLABEL %s org.lockcheck.hash=%s\n' "$LABEL" "$hash" >>"$ctx/Dockerfile"
	mapfile -t hosts < <(add_host_flags)
	local old
	old=$(docker image inspect --format '{{.Id}}' "$name" 2>/dev/null) || true
	log "docker build $name from docker/$svc/Dockerfile"
	DOCKER_BUILDKIT=0 docker build -q --force-rm \
		"${hosts[@]}" \
		--build-arg "BASE=$base" --build-arg "ZOOKEEPER_IMAGE=$(image_of zookeeper)" \
		-t "$name" "$ctx" >/dev/null 2>"$ctx.err" || {
		cat "$ctx.err" >&2
		rm -rf "$ctx" "$ctx.err"
		return 1
	}
	rm -rf "$ctx" "$ctx.err"
	trap - EXIT
	# The image this one replaced, if nothing else tags it now (by id, not
	# by a prune, which could take another build's image before its tag).
	if [ -n "$old" ] && [ "$old" != "$(docker image inspect --format '{{.Id}}' "$name" 2>/dev/null)" ]; then
		docker rmi "$old" >/dev/null 2>&1 || true
	fi
}

# main is one function, read whole before it runs: editing this file while
# a build runs does not change what the running build does.
main() {
	cmd=${1:-build}
	case $cmd in
	env)
		for n in "${ALL[@]}"; do echo "$(var_of "$n")=$(image_of "$n")"; done
		exit 0
		;;
	list)
		for n in "${ALL[@]}"; do image_of "$n"; done
		exit 0
		;;
	clean)
		# By name first: an image id with dependent children (the base
		# under the service images) is refused even with -f, while a name
		# is only untagged and its image goes with its last child.
		refs=$(docker images --filter "label=$LABEL" --format '{{.Repository}}:{{.Tag}}' | grep -v '<none>' | sort -u)
		[ -z "$refs" ] || docker rmi -f $refs >/dev/null
		ids=$(docker images -q --filter "label=$LABEL" | sort -u)
		[ -z "$ids" ] || docker rmi -f $ids >/dev/null
		exit 0
		;;
	build) shift || true ;;
	*) image_of "$1" >/dev/null 2>&1 || { echo "usage: scripts/images.sh [build|env|list|clean] [NAME...] (NAME: see containers/images.txt)" >&2; exit 3; } ;;
	esac

	if ! docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
		echo "images.sh: no Docker engine answers (docker version failed)" >&2
		exit 3
	fi
	# The base image needs debootstrap (Debian's package), installed here as
	# deps.sh installs the servers: only when missing.
	for svc in "$@"; do
		image_of "$svc" >/dev/null || exit 3
	done
	if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
		sudo=""
		[ "$(id -u)" = 0 ] || sudo="sudo"
		echo "images.sh: installing debootstrap" >&2
		$sudo apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends debootstrap >/dev/null || {
			echo "images.sh: debootstrap is missing and apt-get could not install it" >&2
			exit 3
		}
	fi
	want=("$@")
	[ ${#want[@]} -gt 0 ] || want=("${ALL[@]}")
	start=$(date +%s)
	build_base
	for svc in "${want[@]}"; do
		[ "$svc" = base ] && continue
		t=$(date +%s)
		build_service "$svc"
		log "$(image_of "$svc") ready ($(($(date +%s) - t)) s)"
	done
	log "done in $(($(date +%s) - start)) s"
	docker images --filter "label=$LABEL" --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' >&2
}

main "$@"
exit $?
