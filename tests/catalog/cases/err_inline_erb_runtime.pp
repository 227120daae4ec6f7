# A Ruby error in an inline template: "Failed to parse inline template".
$x = 'text'
notify { inline_template('<%= @x.keys %>'): }
