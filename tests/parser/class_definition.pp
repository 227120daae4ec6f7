class web (String $port = "80", Array[String] $hosts = []) inherits base {
  include apache
}
