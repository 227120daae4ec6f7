@@host { 'exported-host': ip => '10.0.0.9' }
Host <<| |>>
@notify { 'virt-notify': message => 'v' }
Notify <| title == 'virt-notify' |>
