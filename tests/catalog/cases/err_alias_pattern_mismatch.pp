# A value that does not match an alias of a Pattern: Puppet names the alias
# with its definition (systemd's Systemd::Unit, Systemd::Dropin).
type Local::Unit = Pattern['^[^/]+\.(service|socket)$']
define unitfile(Local::Unit $unit) {}
unitfile { 'x': unit => 'x' }
