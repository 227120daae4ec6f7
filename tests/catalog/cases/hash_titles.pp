$files = { '/h1' => { 'mode' => '0600' }, '/h2' => { 'mode' => '0644' } }
$files.each |$path, $attrs| {
  file { $path: ensure => file, * => $attrs }
}
file { keys($files).map |$p| { "${p}.bak" }: ensure => absent }
