# stdlib's basename: Ruby's File.basename, the suffix removed when it ends
# the name (cinder::backend::rbd: basename($rbd_ceph_conf, '.conf')).
notify { 'suffix': message => basename('/etc/ceph/ceph.conf', '.conf') }
notify { 'no-suffix': message => basename('/etc/ceph/ceph.conf') }
notify { 'trailing-slash': message => basename('/var/lib/x/') }
notify { 'whole-name': message => basename('ceph.conf', 'ceph.conf') }
notify { 'other-suffix': message => basename('/a/b.tar.gz', '.conf') }
notify { 'any-extension': message => basename('/a/b.tar.gz', '.*') }
notify { 'dotfile': message => basename('/home/u/.bashrc', '.*') }
notify { 'root': message => basename('/') }
