# A resource type that exists only in this test module. Its one provider is
# never suitable, so Puppet compiles it but cannot apply it: the material
# shows what Puppet does with a resource it cannot manage.
Puppet::Type.newtype(:ferry_fake) do
  @doc = 'Test type for ferry: compiles, never applies.'
  ensurable
  newparam(:name, namevar: true)
end
