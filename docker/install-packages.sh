#!/bin/sh
# install-packages.sh PACKAGE...: what every lockcheck image's one RUN
# starts with. scripts/images.sh copies it into each build context beside
# the machine's apt sources (apt/) and the clock shim; it brings those
# sources in, installs the packages without recommends, docs, man pages or
# locales, and takes the sources and apt's lists and caches out again, so
# that no mirror and no package cache stays in the image. Then it installs
# the clock shim as /usr/local/lib/libclockshim.so.
set -eux
ctx=/tmp/lockcheck-ctx
cp "$ctx"/apt/sources.list.d/* /etc/apt/sources.list.d/
cp "$ctx"/apt/apt.conf.d/* /etc/apt/apt.conf.d/
printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
	'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/locale/*' >/etc/dpkg/dpkg.cfg.d/lockcheck-nodoc
# A JRE's postinst wants the man1 folder even with man pages excluded.
mkdir -p /usr/share/man/man1
apt-get update
apt-get install -y --no-install-recommends "$@"
rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /var/cache/apt/*.bin \
	/etc/apt/sources.list.d/lockcheck-build-* /etc/apt/apt.conf.d/99lockcheck-build
install -m 644 "$ctx"/libclockshim.so /usr/local/lib/libclockshim.so
