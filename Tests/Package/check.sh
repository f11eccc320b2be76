#!/bin/bash
# Runs inside the clean Debian 12 container that scripts/test-package boots (no Swift
# toolchain, nothing of imagecached), as its only job: the package's whole life the way an
# administrator lives it — apt-get install of the .deb over a hand-made cache.conf, the socket
# enabled and listening, a first `imagecache status` that starts the daemon, a search and a
# download against the provider simulator (run by the host, on loopback: the container shares
# its network), the man page, `systemctl reload`, the README's package commands, an upgrade,
# apt-get remove and apt-get purge. Each check appends "ok - NAME" or "not ok - NAME: why" to
# /report/results; the last line is "done" when the script ran to its end. Every wait is
# bounded.
set -u
# shellcheck disable=SC1091
source /report/env   # API, DEB, UPGRADE_DEB, VERSION, UPGRADE_VERSION, PROGRAM_VERSION
results=/report/results
: >"$results"
config=/etc/imagecached/cache.conf
unit=imagecached.service
downloads=/srv/imagecached/downloads

# shellcheck disable=SC1091
source /report/checks.sh   # ok, not_ok, check, wait_for (Tests/ContainerChecks/checks.sh)
# apt as a script runs it: no questions; a changed conffile is answered with dpkg's default
# (keep the administrator's file).
apt() {
  DEBIAN_FRONTEND=noninteractive timeout 300 apt-get -y -q \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"
}
ic() { timeout 60 imagecache "$@"; }
is() { [[ "$(systemctl is-active "$1")" == "$2" ]]; }
prop() { systemctl show -p "$1" --value "$unit"; }
journal_has() { journalctl -u "$unit" -o cat --no-pager | grep -qF -- "$1"; }
same() { [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$2" ]]; }
step() { echo "# $(date +%s.%N | cut -c1-14) $1" >>"$results"; }

step "apt-get update"
check "apt reaches the mirror" timeout 180 apt-get update -q
check "no Swift toolchain in this system" bash -c '! command -v swift && ! command -v swiftc && [[ ! -e /opt/swift ]]'

# 1. A hand-made cache.conf is there before the package: it points the daemon at the
# simulator, and the install must keep it.
install -d -m 0755 /etc/imagecached
cat >"$config" <<CONF
# Written by hand before imagecached was installed.
[network]
allowed_hosts = 127.0.0.1
allow_http = true

[search]
default_provider = unsplash

[providers.unsplash]
access_key = demo-unsplash-key
api_url = "$API/unsplash"
CONF
mine=$(sha256sum "$config" | cut -d' ' -f1)

step "install"
cd /root/pkg || exit 1
check "apt-get install ./$DEB installs it with its dependencies" apt install "./$DEB"
check "dpkg knows the version" bash -c "[[ \$(dpkg-query -W -f='\${Version}' imagecached) == '$VERSION' ]]"
check "the hand-made cache.conf is kept" same "$config" "$mine"
check "the shipped one is beside it as cache.conf.dpkg-dist" test -s "$config.dpkg-dist"
# The demo's simulator is a helper of imagecache, outside PATH, where `imagecache demo` looks.
simulator_exe=/usr/libexec/imagecached/imagecache-simulator
for exe in /usr/bin/imagecached /usr/bin/imagecache $simulator_exe; do
  check "every library of $exe is found (ldd)" bash -c "ldd $exe && ! ldd $exe | grep -q 'not found'"
done
check "the programs run without a toolchain" bash -c "[[ \$(imagecache --version) == '$PROGRAM_VERSION' && \$(imagecached --version) == '$PROGRAM_VERSION' && \$($simulator_exe --version) == '$PROGRAM_VERSION' ]]"
check "sysusers made the imagecached user" getent passwd imagecached
check "tmpfiles made the download root for it" bash -c "[[ \$(stat -c %U:%G:%a $downloads) == imagecached:imagecached:750 ]]"
check "the socket is enabled" bash -c "[[ \$(systemctl is-enabled imagecached.socket) == enabled ]]"
check "systemctl is-active imagecached.socket" wait_for 10 is imagecached.socket active
check "the daemon waits for its first connection" is "$unit" inactive

step "first use"
check "a first imagecache status starts the daemon and is answered" ic status
check "the daemon is active" is "$unit" active
pid=$(prop MainPID)
check "it runs as the imagecached user" bash -c "[[ \$(stat -c %U /proc/$pid) == imagecached ]]"
search=$(ic --json search "red fox" --provider unsplash 2>&1)
check "a search is answered from the simulator" grep -q '"unsplash:' <<<"$search"
photo=$(grep -o '"unsplash:[^"]*"' <<<"$search" | head -1 | tr -d '"')
echo "# photo: $photo" >>"$results"
check "a thumbnail is fetched into the cache" ic show "$photo" --size 200
check "a photo downloads into the download root" ic download "$photo"
saved=$(find "$downloads" -maxdepth 1 -type f ! -name '*.part' | head -1)
check "the saved photo is there" test -s "$saved"
check "man imagecache shows the page" bash -c "man -P cat imagecache 2>/dev/null | grep -q 'imagecache search'"
check "man 8 imagecached shows the page" bash -c "man -P cat 8 imagecached 2>/dev/null | grep -q 'check-config'"
check "systemctl reload imagecached" systemctl reload "$unit"
check "the reload reached the daemon" wait_for 10 journal_has "configuration reloaded"
check "…and it kept running" bash -c "[[ \$(systemctl show -p MainPID --value $unit) == $pid ]]"

step "README"
# The README's package blocks, as a reader runs them: root, in the folder holding the .deb.
check "the README's package commands run ($(grep -cv '^\s*\(#\|$\)' /report/readme-package.sh) lines)" \
  timeout 300 bash -euo pipefail /report/readme-package.sh

step "upgrade"
ic status >/dev/null 2>&1   # the daemon runs (again, if a README block stopped it)
pid=$(prop MainPID)
cached=$(cd /var/cache/imagecached && find . -type f | sort)
check "the cache holds files before the upgrade" test -n "$cached"
check "apt-get install of a higher version upgrades" apt install "/root/upgrade/$UPGRADE_DEB"
check "dpkg knows the new version" bash -c "[[ \$(dpkg-query -W -f='\${Version}' imagecached) == '$UPGRADE_VERSION' ]]"
check "the conffile is kept through the upgrade" same "$config" "$mine"
check "the cache is kept through the upgrade" bash -c "cd /var/cache/imagecached && comm -23 <(printf '%s\n' \"$cached\") <(find . -type f | sort) | (! grep -q .)"
check "the daemon was restarted" bash -c "[[ \$(systemctl is-active $unit) == active && \$(systemctl show -p MainPID --value $unit) != $pid ]]"
check "the socket still listens" is imagecached.socket active
check "the new daemon answers" ic status

step "remove"
check "apt-get remove" apt remove imagecached
check "the programs are gone" bash -c "[[ ! -e /usr/bin/imagecache && ! -e /usr/bin/imagecached && ! -e $simulator_exe ]]"
check "the daemon and its socket are stopped" bash -c "! systemctl is-active --quiet $unit && ! systemctl is-active --quiet imagecached.socket"
check "the config is kept (config-files)" bash -c "[[ \$(dpkg-query -W -f='\${Status}' imagecached) == 'deinstall ok config-files' ]]"
check "…byte for byte" same "$config" "$mine"

step "purge"
check "apt-get purge" apt purge imagecached
check "the user and group are gone" bash -c "! getent passwd imagecached && ! getent group imagecached"
check "the cache and state are gone" bash -c "[[ ! -e /var/cache/imagecached && ! -e /var/lib/imagecached ]]"
check "the config is gone" bash -c "[[ ! -e /etc/imagecached ]]"
check "the saved photo is left" test -s "$saved"
check "dpkg forgot the package" bash -c "! dpkg-query -W -f='\${Status}' imagecached 2>/dev/null | grep -q installed"

journalctl -o short-monotonic --no-pager >/report/journal.txt 2>&1
step "end"
echo done >>"$results"
