type Myapp::Port = Integer[1024, 65535]
type Level = Enum['low', 'high']
class typed_alias (Myapp::Port $port = 8080, Level $level = 'low') {
  notify { "port ${port} ${level}": }
}
include typed_alias
notify { 'alias': message => [8080 =~ Myapp::Port, 80 =~ Myapp::Port, 'high' =~ Level] }
