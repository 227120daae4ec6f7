# stdlib's loadjson and loadyaml read files on the compiling machine (here
# Debian's module files); a missing file gives the default (issue 14).
$meta = loadjson('/usr/share/puppet/modules/stdlib/metadata.json')
notify { 'loadjson': message => [$meta['name'], $meta['license'], $meta['dependencies']] }
notify { 'loadjson-missing': message => [loadjson('/nonexistent/x.json', { 'd' => 1 }), loadjson('/nonexistent/x.json', 'dflt')] }
$h = loadyaml('/usr/share/puppet/modules/cron_core/hiera.yaml')
notify { 'loadyaml': message => [$h['version'], $h['hierarchy'], $h['defaults']] }
notify { 'loadyaml-missing': message => [loadyaml('/nonexistent/x.yaml', ['d']), loadyaml('/nonexistent/x.yaml')] }
