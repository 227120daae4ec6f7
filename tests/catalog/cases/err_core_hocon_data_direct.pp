# hocon_data called from a manifest.
notice(hocon_data({ 'path' => '/tmp/x.conf' }, {}))
