# eyaml_lookup_key called from a manifest.
notice(eyaml_lookup_key('k', { 'path' => '/tmp/x.eyaml' }, {}))
