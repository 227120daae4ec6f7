# The device_config type ferry converges on network devices (the type's
# declaration, for the compiler; ferry applies it itself).
Puppet::Type.newtype(:device_config) do
  newparam(:name, namevar: true)
  newproperty(:content)
end
