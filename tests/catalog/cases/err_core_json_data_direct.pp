# json_data called from a manifest: no lookup context can be given.
notice(json_data({ 'path' => '/tmp/x.json' }, {}))
