class st (Struct[{ 'name' => String, 'port' => Integer }] $cfg) {}
class { 'st': cfg => { 'name' => 'x', 'port' => 'eighty' } }
