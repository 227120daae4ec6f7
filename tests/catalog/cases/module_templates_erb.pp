# Real-world ERB templates from Debian's apache and mysql modules rendered
# with ferry's Ruby-subset interpreter (variables come from this class).
class erbcheck {
  $server_tokens = 'Prod'
  $server_signature = 'Off'
  $trace_enable = true
  $servername = 'node1.example.com'
  $server_root = '/etc/apache2'
  $pidfile = '/var/run/apache2.pid'
  $timeout = 60
  $keepalive = 'On'
  $max_keepalive_requests = 100
  $keepalive_timeout = 15
  $limitreqfieldsize = 8190
  $limitreqfields = 100
  $http_protocol_options = undef
  $apache_version = '2.4'
  $_apache_version = '2.4'
  $protocols = ['h2', 'http/1.1']
  $protocols_honor_order = true
  $rewrite_lock = undef
  $user = 'www-data'
  $group = 'www-data'
  $root_directory_options = ['FollowSymLinks']
  $root_directory_secured = false
  $default_charset = undef
  $hostname_lookups = 'Off'
  $error_log = 'error.log'
  $logroot = '/var/log/apache2'
  $log_level = 'warn'
  $sendfile = 'On'
  $allow_encoded_slashes = undef
  $file_e_tag = undef
  $use_canonical_name = undef
  $apxs_workaround = false
  $mod_load_dir = '/etc/apache2/mods-enabled'
  $confd_dir = '/etc/apache2/conf.d'
  $vhost_load_dir = '/etc/apache2/sites-enabled'
  $ports_file = '/etc/apache2/ports.conf'
  $log_formats = { 'vhost_common' => '%v %h %l %u %t "%r" %>s %b', 'combined' => '%h %l %u %t' }
  $conf_enabled = undef
  $vhost_include_pattern = '*'
  $ldap_verify_server_cert = undef
  $ldap_trusted_mode = undef
  $error_documents = true
  $error_documents_path = '/usr/share/apache2/error'
  $ssl_random_seed_bytes = 512
  $ssl_pass_phrase_dialog = 'builtin'
  $ssl_sessioncache = '/var/run/apache2/ssl_scache(512000)'
  $ssl_sessioncachetimeout = 300
  $_ssl_mutex = 'default'
  $ssl_compression = false
  $ssl_sessiontickets = undef
  $ssl_cryptodevice = 'builtin'
  $_ssl_honorcipherorder = true
  $ssl_cert = undef
  $ssl_key = '/etc/ssl/private/key.pem'
  $ssl_ca = undef
  $ssl_stapling = false
  $ssl_stapling_return_errors = undef
  $_stapling_cache = '/var/run/ocsp(32768)'
  $ssl_cipher = 'HIGH:MEDIUM:!aNULL:!MD5:!RC4:!3DES'
  $ssl_protocol = ['all', undef, '-SSLv2', '-SSLv3']
  $ssl_proxy_protocol = []
  $ssl_options = ['StdEnvVars']
  $ssl_openssl_conf_cmd = undef
  $status_path = '/server-status'
  $requires = undef
  $allow_from = ['127.0.0.1', '::1']
  $extended_status = 'On'
  $indexes = ['index.html', 'index.php']
  $timeouts = ['header=20-40,minrate=500', 'body=10,minrate=500']
  $startservers = 8
  $minspareservers = 5
  $maxspareservers = 20
  $serverlimit = 256
  $maxrequestworkers = undef
  $maxclients = 256
  $maxconnectionsperchild = undef
  $maxrequestsperchild = 4000
  $listenbacklog = 511
  $disable_root = true
  $_path = 'public_html'
  $unmanaged_path = false
  $overrides = ['FileInfo', 'AuthConfig']
  $options = ['Indexes', 'MultiViews']
  $custom_fragment = "# custom\n"

  file { '/t/httpd.conf': content => template('apache/httpd.conf.erb') }
  file { '/t/ssl.conf': content => template('apache/mod/ssl.conf.erb') }
  file { '/t/status.conf': content => template('apache/mod/status.conf.erb') }
  file { '/t/dir.conf': content => template('apache/mod/dir.conf.erb') }
  file { '/t/reqtimeout.conf': content => template('apache/mod/reqtimeout.conf.erb') }
  file { '/t/prefork.conf': content => template('apache/mod/prefork.conf.erb') }
  file { '/t/userdir.conf': content => template('apache/mod/userdir.conf.erb') }
  file { '/t/ports_header': content => template('apache/ports_header.erb') }
}
class erbcheck_mysql {
  $options = { 'client' => { 'socket' => '/run/mysqld.sock', 'port' => 3306 }, 'mysqld' => { 'ssl' => false, 'ssl-ca' => '/x', 'bind-address' => '127.0.0.1', 'skip-name-resolve' => true, 'replicate-do-db' => ['a', 'b'], 'empty' => '', 'nothing' => undef }, 'isamchk' => { 'key_buffer_size' => '16M' } }
  $includedir = '/etc/mysql/conf.d'
  file { '/t/my.cnf': content => template('mysql/my.cnf.erb') }
}
include erbcheck, erbcheck_mysql
