# A module function written in Ruby (Puppet's modern function API): ferry
# does not run it, and says which module defines it.
Puppet::Functions.create_function(:'rubyfns::shout') do
  dispatch :shout do
    param 'String', :text
  end

  def shout(text)
    text.upcase
  end
end
