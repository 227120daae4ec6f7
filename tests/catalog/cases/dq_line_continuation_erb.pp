# A backslash at the end of a line in a double-quoted string joins the
# lines (swift::proxy::tempauth splits an inline template written so).
$joined = "first,\
  second"
notify { 'joined': message => $joined }
$accounts = split(inline_template(
  "<% ['a', 'b'].each do |u| %>\
  user_<%= u %>,\
  key_<%= u %>;<% end %>"), ';')
notify { $accounts: }
$single = 'kept\
as is'
notify { 'single': message => $single }
