#!/usr/bin/env bash
# Runs ferry's test suite: installs the system tools the integration tests
# need (only those that are missing), then `cargo test --all-targets`.
# Extra arguments go to cargo, e.g. `scripts/test.sh -- --nocapture`.
# Needs root: the tests start sshd, create users and network namespaces.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# What the tests need, one "command-or-absolute-path package" pair per line.
# To add a requirement, add a line.
REQUIREMENTS=(
  "sshd openssh-server"
  "/usr/lib/openssh/sftp-server openssh-sftp-server"
  "ssh openssh-client"
  "ssh-keygen openssh-client"
  "sftp openssh-client"
  "sudo sudo"
  "visudo sudo"
  "ip iproute2"
  "useradd passwd"
  "chpasswd passwd"
  "sshpass sshpass"
  "dash dash"
  "dpkg-deb dpkg"
  "busybox busybox"
  "pgrep procps"
  "python3 python3"
  "puppet puppet"
  "openssl openssl"
  "/usr/share/puppet/modules/stdlib puppet-module-puppetlabs-stdlib"
  "/usr/share/puppet/modules/ntp puppet-module-puppetlabs-ntp"
  "/usr/share/puppet/modules/apt puppet-module-puppetlabs-apt"
  "/usr/share/puppet/modules/concat puppet-module-puppetlabs-concat"
  "/usr/share/puppet/modules/apache puppet-module-puppetlabs-apache"
  "/usr/share/puppet/modules/mysql puppet-module-puppetlabs-mysql"
  "/usr/share/puppet/modules/rsync puppet-module-puppetlabs-rsync"
  "/usr/share/puppet/modules/xinetd puppet-module-puppetlabs-xinetd"
  "/usr/share/puppet/modules/host_core puppet-module-puppetlabs-host-core"
  "/usr/share/puppet/modules/cron_core puppet-module-puppetlabs-cron-core"
  "/usr/share/puppet/modules/inifile puppet-module-puppetlabs-inifile"
  "/usr/share/puppet/modules/sshkeys_core puppet-module-puppetlabs-sshkeys-core"
  "/usr/share/puppet/modules/mount_core puppet-module-puppetlabs-mount-core"
  "/usr/share/puppet/modules/augeas_core puppet-module-puppetlabs-augeas-core"
  "/usr/share/puppet/modules/sysctl puppet-module-duritong-sysctl"
  "crontab cron"
  "augtool augeas-tools"
  "redis-server redis-server"
  "pg_ctlcluster postgresql"
  "psql postgresql-client"
  "runuser util-linux"
  "unshare util-linux"
  "nsenter util-linux"
  "pivot_root util-linux"
  "findmnt util-linux"
  "mount mount"
  "dnf dnf"
  "rpmbuild rpm"
  "createrepo_c createrepo-c"
  "/usr/bin/time time"
  "useradd passwd"
  "getent libc-bin"
  "update-rc.d init-system-helpers"
  "dpkg-deb dpkg"
  "setsid util-linux"
  "/usr/lib/frr/zebra frr"
  "/usr/lib/frr/bgpd frr"
  "/usr/lib/frr/staticd frr"
  "vtysh frr"
  "telnet telnet"
  "java default-jre-headless"
  "/usr/sbin/puppetdb puppetdb"
  "podman podman"
  "runc runc"
  "/bin/busybox busybox-static"
)

have() {
  if [[ $1 == /* ]]; then
    [[ -x $1 ]]
  else
    command -v "$1" >/dev/null 2>&1 || [[ -x /usr/sbin/$1 || -x /sbin/$1 ]]
  fi
}

if [[ $(id -u) -ne 0 ]]; then
  echo "scripts/test.sh: must run as root (the integration tests start sshd," \
    "create users, sudo rules and network namespaces)" >&2
  exit 1
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "scripts/test.sh: cargo not found; install a Rust toolchain first" >&2
  exit 1
fi

missing=()
for requirement in "${REQUIREMENTS[@]}"; do
  read -r command package <<<"$requirement"
  if ! have "$command"; then
    echo "scripts/test.sh: $command is missing (package $package)"
    [[ " ${missing[*]-} " == *" $package "* ]] || missing+=("$package")
  fi
done
# The Debian module corpus (tests/debian/, tests/catalog_debian.rs) compiles
# classes of every puppet-module-* package Debian ships.
while read -r package _; do
  [[ -n $package ]] || continue
  if ! dpkg-query -W -f '${Status}' "$package" 2>/dev/null | grep -q 'ok installed'; then
    [[ " ${missing[*]-} " == *" $package "* ]] || missing+=("$package")
  fi
done <tests/debian/packages.txt
if ((${#missing[@]})); then
  echo "scripts/test.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q </dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi

# sshd refuses to start without its privilege separation directory.
mkdir -p /run/sshd
chmod 0755 /run/sshd

exec cargo test --all-targets "$@"
