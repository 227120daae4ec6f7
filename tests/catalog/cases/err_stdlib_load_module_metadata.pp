# stdlib's load_module_metadata fails on a module without metadata.json.
notice(load_module_metadata('mymod'))
