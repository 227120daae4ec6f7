# A class a node group (or an ENC) declares with a parameter; $tier is a
# top-scope variable the classification sets.
class role::web (Integer $port = 80) {
  notify { "role::web port=${port} environment=${environment} tier=${tier}": }
}
