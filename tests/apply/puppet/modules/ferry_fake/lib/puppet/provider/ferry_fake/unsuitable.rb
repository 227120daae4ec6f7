# The only provider of ferry_fake; confined away on every host.
Puppet::Type.type(:ferry_fake).provide(:unsuitable) do
  confine false: true

  def exists?
    false
  end

  def create; end

  def destroy; end
end
