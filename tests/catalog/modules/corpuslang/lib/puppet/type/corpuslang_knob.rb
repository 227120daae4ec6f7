# A module resource type with one parameter and one property.
Puppet::Type.newtype(:corpuslang_knob) do
  ensurable
  newparam(:name, namevar: true)
  newproperty(:setting)
end
