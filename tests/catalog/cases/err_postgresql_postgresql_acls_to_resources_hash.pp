# postgresql_acls_to_resources_hash refuses a line with fewer than four parts.
$h = postgresql::postgresql_acls_to_resources_hash(['local all all md5', 'host all'], 'x', 0)
