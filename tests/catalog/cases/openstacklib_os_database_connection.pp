# openstacklib's os_database_connection: SQLAlchemy URLs as Ruby's
# URI::Generic.build builds them.
$cases = [
  { 'dialect' => 'mysql+pymysql', 'host' => '127.0.0.1', 'port' => '3306', 'database' => 'nova',
    'username' => 'nova', 'password' => 'p@ss w/rd', 'charset' => 'utf8',
    'extra' => { 'read_timeout' => 60, 'x' => 'a b' } },
  { 'dialect' => 'sqlite', 'database' => '/var/lib/nova/nova.sqlite' },
  { 'dialect' => 'postgresql', 'host' => 'fd00::5', 'database' => 'db', 'username' => 'u', 'password' => '' },
  { 'dialect' => 'MySQL', 'host' => 'db.example.com', 'database' => 'x', 'username' => '', 'password' => 'p' },
  { 'dialect' => 'postgres', 'database' => 'db' },
]
$cases.each |$i, $c| { notify { "db ${i}": message => os_database_connection($c) } }
