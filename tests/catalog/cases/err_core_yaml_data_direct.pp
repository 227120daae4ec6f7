# yaml_data called from a manifest: no lookup context can be given.
notice(yaml_data({ 'path' => '/tmp/x.yaml' }, {}))
