# yaml_data with one argument.
notice(yaml_data({ 'path' => '/tmp/x.yaml' }))
