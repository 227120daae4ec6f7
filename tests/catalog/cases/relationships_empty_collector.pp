# A collector that collects nothing in a relationship chain: Puppet relates
# the operand on its left to the one on its right (the "empty alternative"),
# as OpenStack modules' deps classes rely on (anchor -> Type<||> ~> anchor).
class deps {
  anchor { 'install::begin': }
  -> Package<| tag == 'nothing-here' |>
  ~> anchor { 'install::end': }
  -> anchor { 'config::begin': }
  -> File<||>
  -> Exec<| title == 'none' |>
  ~> anchor { 'config::end': }

  Anchor['config::begin'] -> Service<||> ~> Anchor['config::end']
  Anchor['install::end'] ~> Anchor['config::end']
}
class full {
  package { 'pkg': tag => ['collected'] }
  anchor { 'full::begin': } -> Package<| tag == 'collected' |> ~> anchor { 'full::end': }
  notify { 'p': } -> [] -> notify { 'q': }
  Service <| title == 'none' |> <- notify { 'r': }
}
include deps
include full
