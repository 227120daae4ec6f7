# In Ruby a local assigned from an instance variable names the same object:
# changing it in place (`aliases << x`) changes the Puppet variable and the
# defined type's parameter it came from, which the catalog then shows
# (apache::vhost's scriptaliases after vhost/_scriptalias.erb).
define shared(Array $aliases = [], Array $kept = ['k'], String $tail = 'x') {
  $out = inline_template(@(ERB))
    <%- a = @aliases -%>
    <%- a << { 'alias' => '/cgi-bin' } if @tail -%>
    <%- b = [@kept] -%>
    <%- b << 'not-in-kept' -%>
    <%- c = @tail.dup -%>
    <%- c << '-changed' -%>
    <%= a.inspect %> <%= @aliases.inspect %> <%= b.inspect %> <%= c %>
    | ERB
  notify { "shared ${title}": message => "${out} ${aliases} ${kept} ${tail}" }
}
shared { 'one': }
shared { 'two': aliases => ['given'] }
