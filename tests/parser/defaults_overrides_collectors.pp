File { owner => 'root' }
File['/x'] { mode +> '0700' }
User <| title == 'deploy' |> { shell => '/bin/sh' }
Host <<| |>>
