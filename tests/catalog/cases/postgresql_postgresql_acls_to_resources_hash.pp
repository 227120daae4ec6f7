# postgresql::postgresql_acls_to_resources_hash: pg_hba lines as
# pg_hba_rule parameters (local, address, address and netmask, options).
$h = postgresql::postgresql_acls_to_resources_hash([
  'local all postgres ident',
  'local  all all md5 opt1 opt2',
  'host all all 10.0.0.0/8 md5',
  'host db user 10.0.0.0 255.0.0.0 cert clientcert=1 x',
  'hostssl all all ::1/128 trust',
  'host all all samenet',
  'host all all 10.0.0.0/8 md5',
], 'acl', 100)
$h.each |$k, $v| { notify { $k: message => String($v) } }
