# EPP trimming is not ERB's: `-%>` removes the spaces and tabs after the
# tag even when no line break follows, then one line break; `<%-` removes
# the spaces and tabs before the tag anywhere on the line (apt's
# source.list.epp: `deb <% if ... { -%>[...] <% } -%> <%= $location %>`).
$options = {}
file { '/tmp/epp_trim_rules':
  content => inline_epp(@(EPP)),
    deb <% if !$options.empty() { -%>[opts] <% } -%> http://x main
    a <%- if true { -%>   b  <%- } -%>
      c
    d  <%= 'e' -%>	
    f
    | EPP
}
file { '/tmp/erb_chars':
  content => inline_template("<%= 'access.log'.chars.first %> <%= '/x'.chars.first == '/' %> <%= 'ab'.chars.inspect %>\n"),
}
