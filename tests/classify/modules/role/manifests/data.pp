# A class whose parameters come from hiera only: `motd` from a node
# group's config_data (the classifier layer, before the environment's
# data), `source` from the environment's data/common.yaml.
class role::data (String $motd = 'class default', String $source = 'class default') {
  notify { "role::data motd=${motd} source=${source}": }
}
