# Packages, in a sandbox; setup_cmd builds the .deb files of debs/ into
# /tmp/ferry-pkgs and installs ferry-ver 1.0, ferry-rm and ferry-purge
# (both with a conffile). dpkg: a new package from a source file, one
# removed (its conffile stays: status config-files), one purged. apt: a
# version from a local .deb (an upgrade 1.0 -> 2.0), a package already
# installed (coreutils: no change), a package not installed made absent
# (no change). No network is used.
$root = '/tmp/ferry-puppet-case'

package { 'ferry-dummy':
  ensure   => installed,
  provider => dpkg,
  source   => '/tmp/ferry-pkgs/ferry-dummy_1.0_all.deb',
}

package { 'ferry-ver':
  ensure   => '2.0',
  provider => apt,
  source   => '/tmp/ferry-pkgs/ferry-ver_2.0_all.deb',
}

package { 'ferry-rm':
  ensure   => absent,
  provider => dpkg,
}

package { 'ferry-purge':
  ensure   => purged,
  provider => dpkg,
}

package { 'coreutils':
  ensure   => installed,
  provider => apt,
}

package { 'ferry-missing':
  ensure   => absent,
  provider => apt,
}
