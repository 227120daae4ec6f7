# A custom fact that reaches agents by pluginsync.
Facter.add(:ferry_plugin_fact) do
  setcode { 'synced' }
end
