# The global hiera layer (hiera_config) comes before the environment layer.
notify { 'common': message => lookup('common_key') }
notify { 'global_only': message => lookup('global_only') }
notify { 'global_os': message => lookup('global_os') }
notify { 'merged': message => lookup('merged_hash', Hash, 'hash') }
notify { 'env_only': message => lookup('packages') }
include profile::web
